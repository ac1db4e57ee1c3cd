#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""OpenFlow over TLS: --openflow pssl: with ovs-ofctl and --controller ssl:
with an os-ken controller (osken-manager's --ctl-privkey), certificates
made by the openssl command for the run.

Usage: test_tls.py SIMDPATH
- Each TLS file missing, a key that is not the certificate's, a CA file
  that holds no certificate, pssl: without the files, a version or a
  cipher list not offered exit 2 before DPDK starts, naming the option
  and the value (and the --config line).
- pssl: ovs-ofctl with a certificate of the CA adds a rule that forwards
  the traffic and dumps it; a client whose certificate another CA signed,
  one that does not trust the switch's CA and one without TLS are each
  refused and logged with the reason, and the channel serves on.
  openflow-show names the certificate. Its files renewed (renamed over)
  while it runs, the next client of the new CA is served and the old
  CA's refused; a renewal that does not load keeps the last, logged.
- --ssl-protocols and --ssl-ciphers: a client offering only what they
  leave out is refused, one offering what they keep is served and
  openflow-show names its version and cipher.
- ssl: osken_app.py's rules read back as sent and forward (as in
  test_osken.py), while every packet of half the traffic goes to the
  controller as a PACKET_IN over the same TLS; a second --controller
  whose server shows a certificate of another CA is refused and logged,
  and simdpath stops cleanly, its counters conserved.
Skips (77) without openssl, ovs-ofctl or osken-manager.
"""
import json
import os
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
from report import (RESULTS, check, conserved, counters, no_leak,
                    summary, wait_until)  # noqa
from traffic import (frame, free_port, pcap_ports, start_run,  # noqa
                     write_pcap)

EXE = os.path.abspath(sys.argv[1])
CAP = 120  # seconds: a safety net, never the condition


def make_certs(work):
    """ca and rogue-ca (self-signed), switch and controller (signed by
    ca), rogue (signed by rogue-ca): NAME-key.pem and NAME-cert.pem."""
    def run(*args):
        subprocess.run(["openssl"] + list(args), cwd=work, check=True,
                       capture_output=True)

    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    for ca in ("ca", "rogue-ca"):
        run("req", "-x509", *ec, "-keyout", ca + "-key.pem", "-out",
            ca + "-cert.pem", "-days", "2", "-subj", "/CN=" + ca)
    for name, ca in (("switch", "ca"), ("controller", "ca"),
                     ("rogue", "rogue-ca"), ("switch2", "rogue-ca")):
        run("req", *ec, "-keyout", name + "-key.pem", "-out",
            name + ".csr", "-subj", "/CN=" + name)
        run("x509", "-req", "-in", name + ".csr", "-CA", ca + "-cert.pem",
            "-CAkey", ca + "-key.pem", "-CAcreateserial", "-out",
            name + "-cert.pem", "-days", "2")
    return lambda name, kind: os.path.join(work, "%s-%s.pem" % (name, kind))


def tls_options(pem, name, ca="ca"):
    return ["--private-key", pem(name, "key"), "--certificate",
            pem(name, "cert"), "--ca-cert", pem(ca, "cert")]


def ctl(sock, *args):
    return subprocess.run([EXE, "ctl", "--socket", sock] + list(args),
                          capture_output=True, text=True, timeout=60)


def count(sock, port, name):
    """Port's counter 'name' (tx, packet_in) in counters-show."""
    text = ctl(sock, "counters-show").stdout
    m = re.search(r"^port %d \([^)]*\):.* %s (\d+)" % (port, name), text,
                  re.M)
    return int(m.group(1)) if m else 0


def stop(proc, sock):
    ctl(sock, "stop")
    out, err = proc.communicate(timeout=CAP)
    check(proc.returncode == 0, "simdpath exits 0: " + err[-500:])
    check(conserved(counters(out)), "counters conserve: " + out[-500:])
    check(no_leak(out), "no mbuf leaked")
    return err


def option_errors(work, pem, base):
    missing = os.path.join(work, "missing.pem")
    not_pem = os.path.join(work, "flows.txt")
    cases = [
        (["--openflow", "pssl:0"],
         "--openflow pssl: needs --private-key, --certificate and "
         "--ca-cert"),
        (["--controller", "ssl:127.0.0.1:1", "--private-key", missing,
          "--certificate", pem("switch", "cert"), "--ca-cert",
          pem("ca", "cert")],
         "--private-key: '%s': No such file or directory" % missing),
        (["--openflow", "pssl:0", "--private-key", pem("rogue", "key"),
          "--certificate", pem("switch", "cert"), "--ca-cert",
          pem("ca", "cert")],
         "--private-key '%s' is not the key of --certificate '%s'"
         % (pem("rogue", "key"), pem("switch", "cert"))),
        (["--openflow", "pssl:0", "--private-key", pem("switch", "key"),
          "--certificate", pem("switch", "cert"), "--ca-cert", not_pem],
         "--ca-cert: '%s': " % not_pem),
        (["--ssl-protocols", "TLSv1.2,TLSv1.1"],
         "--ssl-protocols: 'TLSv1.1' in 'TLSv1.2,TLSv1.1'; expected TLSv1.2 "
         "and TLSv1.3, comma-separated (none older is offered)"),
        (["--ssl-ciphers", "NO-SUCH-CIPHER"],
         "--ssl-ciphers: 'NO-SUCH-CIPHER'; no TLS 1.2 cipher OpenSSL "
         "offers"),
    ]
    # What a file holds is judged at its --config line too: a key with a
    # passphrase (no prompt), a certificate that is not PEM.
    locked = os.path.join(work, "locked-key.pem")
    subprocess.run(["openssl", "pkey", "-in", pem("switch", "key"),
                    "-aes256", "-passout", "pass:secret", "-out", locked],
                   check=True, capture_output=True)
    for n, (lines, message) in enumerate((
            (["private-key " + missing],
             "2:13: run: --private-key: '%s': No such file or directory"
             % missing),
            (["private-key " + locked],
             "2:13: run: --private-key: '%s': no PEM private key without "
             "a passphrase (" % locked),
            (["private-key " + pem("switch", "key"),
              "certificate " + not_pem],
             "3:13: run: --certificate: '%s': no PEM certificate (no "
             "start line)" % not_pem),
            (["private-key " + pem("rogue", "key"),
              "certificate " + pem("switch", "cert")],
             "3:13: run: --private-key '%s' is not the key of "
             "--certificate '%s'" % (pem("rogue", "key"),
                                     pem("switch", "cert"))),
            (["ssl-protocols TLSv1"],
             "2:15: run: --ssl-protocols: 'TLSv1' in 'TLSv1'"))):
        conf = os.path.join(work, "tls%d.conf" % n)
        with open(conf, "w") as f:
            f.write("\n".join(["openflow pssl:0"] + lines) + "\n")
        cases.append((["--config", conf], "%s:%s" % (conf, message)))
    for extra, message in cases:
        r = subprocess.run([EXE, "run"] + base + extra, capture_output=True,
                           text=True, timeout=60)
        check(r.returncode == 2 and message in r.stderr
              and "forwarding" not in r.stdout,
              "%s: exit 2 naming it: %d %s" % (" ".join(extra[:2]),
                                               r.returncode, r.stderr))


def ofctl(pem, name, ca, target, *args):
    return subprocess.run(
        ["ovs-ofctl", "-O", "OpenFlow13", "--private-key=" + pem(name, "key"),
         "--certificate=" + pem(name, "cert"),
         "--ca-cert=" + pem(ca, "cert"), args[0], target] + list(args[1:]),
        capture_output=True, text=True, timeout=60)


def replace(path, source):
    """Puts source's bytes at path as a renewal does: a new file renamed
    over the old."""
    with open(source, "rb") as f:
        data = f.read()
    with open(path + ".new", "wb") as f:
        f.write(data)
    os.rename(path + ".new", path)


def listener(work, pem, base):
    """--openflow pssl: against ovs-ofctl."""
    sock = os.path.join(work, "pssl.sock")
    port = free_port()
    # The switch's own copies, renewed while it runs.
    live = lambda name, kind: os.path.join(work, "live-%s.pem" % kind)
    for kind in ("key", "cert"):
        shutil.copy(pem("switch", kind), live("switch", kind))
    shutil.copy(pem("ca", "cert"), live("ca", "ca"))
    live_options = ["--private-key", live("switch", "key"), "--certificate",
                    live("switch", "cert"), "--ca-cert", live("ca", "ca")]
    sp = start_run(EXE, work, base + ["--ctl", sock, "--openflow",
                                      "pssl:%d" % port] + live_options,
                   "simdpath-pssl")
    try:
        deadline = time.time() + CAP
        wait_until(lambda: os.path.exists(sock) and
                   ctl(sock, "openflow-show").returncode == 0, deadline)
        target = "ssl:127.0.0.1:%d" % port
        r = ofctl(pem, "controller", "ca", target, "add-flow",
                  "priority=9,udp,actions=output:2")
        check(r.returncode == 0, "add-flow over TLS: " + r.stderr)
        check(wait_until(lambda: count(sock, 2, "tx") >= 1000, deadline),
              "the rule added over TLS forwards")
        refused = [
            ("rogue", "ca", "a client certificate of another CA"),
            ("controller", "rogue-ca", "a client not trusting the CA"),
        ]
        for name, ca, what in refused:
            r = ofctl(pem, name, ca, target, "dump-flows")
            check(r.returncode != 0, "%s is refused: %s" % (what, r.stdout))
        r = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows",
                            "tcp:127.0.0.1:%d" % port], capture_output=True,
                           text=True, timeout=60)
        check(r.returncode != 0, "a client without TLS is refused")
        r = ofctl(pem, "controller", "ca", target, "dump-flows")
        check(r.returncode == 0 and "priority=9,udp actions=output:2"
              in r.stdout, "the channel serves on: " + r.stdout + r.stderr)
        show = ctl(sock, "openflow-show").stdout
        check("listening on port %d (TLS)" % port in show and
              re.search(r"^TLS certificate: CN = switch, issuer CN = ca, "
                        r"not after \w+ +\d+ [\d:]+ \d{4} GMT$", show, re.M),
              "openflow-show says TLS and the certificate: " + show)
        # Renewed: a certificate and CA of rogue-ca, taken by the next
        # connection without a restart.
        replace(live("switch", "key"), pem("switch2", "key"))
        replace(live("switch", "cert"), pem("switch2", "cert"))
        replace(live("ca", "ca"), pem("rogue-ca", "cert"))
        r = ofctl(pem, "rogue", "rogue-ca", target, "dump-flows")
        check(r.returncode == 0 and "priority=9,udp" in r.stdout,
              "after the renewal the new CA's client is served: "
              + r.stderr)
        r = ofctl(pem, "controller", "ca", target, "dump-flows")
        check(r.returncode != 0, "and the old CA's is refused")
        check("CN = switch2, issuer CN = rogue-ca" in
              ctl(sock, "openflow-show").stdout, "openflow-show has it")
        # A renewal that does not load leaves the one in use.
        with open(live("switch", "cert"), "w") as f:
            f.write("not a certificate\n")
        r = ofctl(pem, "rogue", "rogue-ca", target, "dump-flows")
        check(r.returncode == 0, "a broken renewal keeps the last: "
              + r.stderr)
        err = stop(sp, sock)
        check(re.search(r"OpenFlow: TLS: a file changed and does not load, "
                        r"the one read before stays in use: --certificate: "
                        r"'%s': " % re.escape(live("switch", "cert")), err),
              "the broken renewal is logged: " + err[-600:])
        verify = re.findall(r"OpenFlow: connection from 127\.0\.0\.1 port "
                            r"\d+: TLS: (.*)", err)
        # The client that refuses simdpath's certificate says so with an
        # alert, unless its socket's close overtakes it.
        check(len(verify) == 4 and
              "certificate verify failed: unable to get local issuer "
              "certificate" in verify and "wrong version number" in verify
              and any("unknown ca" in v or "handshake" in v or "reset" in v
                      for v in verify),
              "each refused client is logged with its reason: %s" % verify)
    finally:
        if sp.poll() is None:
            sp.kill()
            sp.communicate()


def handshake(pem, port, version, cipher=None):
    """A TLS client of controller's certificate offering only 'version'
    (and 'cipher'): the connected socket, or the reason it failed."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.load_cert_chain(pem("controller", "cert"),
                            pem("controller", "key"))
    context.load_verify_locations(pem("ca", "cert"))
    context.minimum_version = context.maximum_version = version
    if cipher:
        context.set_ciphers(cipher)
    raw = None
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=30)
        conn = context.wrap_socket(raw)
        # OpenFlow 1.3 HELLO: the channel lists the connection with its
        # session once the handshake is done.
        conn.sendall(bytes([4, 0, 0, 8, 0, 0, 0, 1]))
        return conn
    except (ssl.SSLError, OSError) as e:
        if raw:
            raw.close()
        return str(e)


def policy(work, pem, base):
    """--ssl-protocols and --ssl-ciphers against ovs-ofctl (which offers
    both versions and ECDHE-ECDSA-AES256-GCM-SHA384) and Python's ssl,
    offering one version or cipher."""
    tls12 = ssl.TLSVersion.TLSv1_2
    tls13 = ssl.TLSVersion.TLSv1_3
    only = "ECDHE-ECDSA-AES256-GCM-SHA384"
    for options, served, refused in (
            (["--ssl-protocols", "TLSv1.2", "--ssl-ciphers", only],
             (tls12, only, "TLSv1.2 " + only),
             [(tls13, None, "TLS 1.3"),
              (tls12, "ECDHE-ECDSA-AES128-GCM-SHA256", "another cipher")]),
            (["--ssl-protocols", "TLSv1.3"],
             (tls13, None, "TLSv1.3 TLS_"), [(tls12, None, "TLS 1.2")])):
        sock = os.path.join(work, "policy.sock")
        port = free_port()
        sp = start_run(EXE, work, base + ["--ctl", sock, "--openflow",
                                          "pssl:%d" % port] + options
                       + tls_options(pem, "switch"), "simdpath-policy")
        what = " ".join(options)
        try:
            deadline = time.time() + CAP
            wait_until(lambda: sp.poll() is not None or (
                os.path.exists(sock) and
                ctl(sock, "openflow-show").returncode == 0), deadline)
            if sp.poll() is not None:
                check(False, "%s: simdpath serves: %s" % (
                    what, sp.communicate()[1][-300:]))
                continue
            r = ofctl(pem, "controller", "ca", "ssl:127.0.0.1:%d" % port,
                      "dump-flows")
            check(r.returncode == 0, "%s: ovs-ofctl is served: %s" % (
                what, r.stderr[-300:]))
            for version, cipher, name in refused:
                got = handshake(pem, port, version, cipher)
                check(isinstance(got, str), "%s: a client of %s only is "
                      "refused: %s" % (what, name, got))
            conn = handshake(pem, port, served[0], served[1])
            check(not isinstance(conn, str), "%s: a client of %s is served:"
                  " %s" % (what, served[2], conn))
            if not isinstance(conn, str):
                show = lambda: ctl(sock, "openflow-show").stdout
                check(wait_until(lambda: re.search(
                    r"^connection from 127\.0\.0\.1 port %d: connected .*, "
                    r"%s" % (conn.getsockname()[1], re.escape(served[2])),
                    show(), re.M), deadline),
                    "%s: openflow-show names the session's version and "
                    "cipher: %s" % (what, show()))
                conn.close()
            versions = options[1].replace(",", " ")
            ciphers = options[3] if len(options) > 2 else "OpenSSL's default"
            check("TLS versions: %s, TLS 1.2 ciphers: %s\n" % (
                versions, ciphers) in ctl(sock, "openflow-show").stdout,
                "%s: openflow-show says what is offered" % what)
            stop(sp, sock)
        finally:
            if sp.poll() is None:
                sp.kill()
                sp.communicate()


def rogue_server(pem, port, stop_event):
    """A TLS server showing a certificate of another CA, as a controller
    that is not the cluster's: simdpath must refuse it."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pem("rogue", "cert"), pem("rogue", "key"))
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(4)
    s.settimeout(0.2)
    while not stop_event.is_set():
        try:
            conn, _ = s.accept()
        except OSError:
            continue
        try:
            conn.settimeout(5)
            context.wrap_socket(conn, server_side=True).close()
        except (OSError, ssl.SSLError):
            conn.close()
    s.close()


def controller(work, pem, base, manager):
    """--controller ssl: to os-ken, and one to a server of another CA."""
    out = os.path.join(work, "result.json")
    sock = os.path.join(work, "ssl.sock")
    port, rogue_port = free_port(), free_port()
    log = open(os.path.join(work, "osken.log"), "w+")
    osken = subprocess.Popen(
        [manager, "--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port",
         str(free_port()), "--ofp-ssl-listen-port", str(port),
         "--ctl-privkey", pem("controller", "key"), "--ctl-cert",
         pem("controller", "cert"), "--ca-certs", pem("ca", "cert"),
         os.path.join(HERE, "osken_app.py")],
        env=dict(os.environ, SP_OSKEN_OUT=out), stdout=log,
        stderr=subprocess.STDOUT, text=True)
    done = threading.Event()
    rogue = threading.Thread(target=rogue_server,
                             args=(pem, rogue_port, done))
    rogue.start()
    sp = None
    try:
        deadline = time.time() + CAP
        wait_until(lambda: subprocess.run(
                  ["ss", "-Hltn", "sport = :%d" % port], capture_output=True,
                  text=True).stdout.strip() != "", deadline)
        sp = start_run(EXE, work,
                       base + ["--ctl", sock, "--controller",
                               "ssl:127.0.0.1:%d" % port, "--controller",
                               "ssl:127.0.0.1:%d" % rogue_port] +
                       tls_options(pem, "switch"), "simdpath-ssl")
        wait_until(lambda: os.path.exists(out), deadline)
        result = json.load(open(out)) if os.path.exists(out) else {}
        check(result.get("errors") == [],
              "no rule is refused: %s" % result.get("errors"))
        flows = {f["priority"]: f for f in result.get("flows", [])}
        check(sorted(flows) == [0, 300, 400, 500] and
              flows[500]["cookie"] == 0x55 and flows[500]["match"] == {
                  "eth_type": 0x0800, "ip_proto": 17,
                  "ipv4_dst": "10.0.0.1", "udp_dst": 53},
              "the rules read back over TLS: %s" % flows)
        check(wait_until(lambda: count(sock, 2, "tx") >= 1000, deadline),
              "udp to 10.0.0.1:53 leaves on port 2 by the app's rule")
        check(wait_until(lambda: count(sock, 1, "packet_in") >= 1000,
                               deadline),
              "packets to 10.0.0.2 go to the controller")
        show = ctl(sock, "openflow-show").stdout
        check(re.search(r"controller ssl:127\.0\.0\.1:%d: connected for"
                        % port, show) and
              re.search(r"controller ssl:127\.0\.0\.1:%d: "
                        r"(not connected|connecting)" % rogue_port, show),
              "openflow-show: os-ken connected, the rogue not: " + show)
        err = stop(sp, sock)
        check(re.search(r"controller ssl:127\.0\.0\.1:%d: TLS: certificate "
                        r"verify failed" % rogue_port, err),
              "the rogue controller is refused and logged: " + err[-800:])
    finally:
        done.set()
        rogue.join()
        for p in (sp, osken):
            if p and p.poll() is None:
                p.kill()
                p.communicate()
    if RESULTS["failed"]:
        log.seek(0)
        print(log.read()[-3000:])
    log.close()


def main():
    manager = shutil.which("osken-manager")
    for tool in ("openssl", "ovs-ofctl", "ss"):
        if not shutil.which(tool):
            print("SKIP: %s not found" % tool)
            return 77
    if not manager:
        print("SKIP: osken-manager not found (Debian: python3-os-ken)")
        return 77
    work = tempfile.mkdtemp(prefix="simdpath-tls-")
    os.chmod(work, 0o700)
    pem = make_certs(work)
    pcap = os.path.join(work, "in.pcap")
    # Half to 10.0.0.1:53 (os-ken's rule 500 forwards it), half to
    # 10.0.0.2, which its table-miss rule sends to the controller.
    write_pcap(pcap, [frame(17, [10, 0, 0, 1 + i % 2], 1000 + i, 53)
                      for i in range(8)])
    flows = os.path.join(work, "flows.txt")
    with open(flows, "w") as f:
        f.write("priority=0,actions=drop\n")
    base = pcap_ports(pcap) + ["--flows", flows]
    option_errors(work, pem, base + ["--ctl", os.path.join(work, "x.sock")])
    listener(work, pem, base)
    policy(work, pem, base)
    controller(work, pem, base, manager)
    shutil.rmtree(work, ignore_errors=True)
    return summary("tls")


if __name__ == "__main__":
    sys.exit(main())
