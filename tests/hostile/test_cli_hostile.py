#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile and careless use of the simdpath program (issue 17, items 7, 9,
11, 12): flow files, numbers, EAL arguments, captures and signals.

Usage: test_cli_hostile.py SIMDPATH EAL_SIGNAL_PLUGIN

What can be checked before DPDK starts must be, with exit status 2 and a
message naming the value, file, line and column; a stop signal at any
point must end in the counters, the ports closed and the control socket
removed, and a second one in a prompt exit. Signals are sent at known
points: after the "forwarding" line, or from inside DPDK's start-up by the
EAL plugin eal_signal.c. Waits are bounded by generous caps only.
"""
import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from report import RESULTS, check, summary  # noqa: E402

EXE, PLUGIN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
CAP = 60  # seconds: a safety net for a hang, never an expected duration
WORK = tempfile.mkdtemp(prefix="sp-cli-hostile-")
os.chmod(WORK, 0o700)
# One DPDK prefix per run: nothing shared with other DPDK processes.
EAL = ["--file-prefix=sp-cli-hostile-%d" % os.getpid()]


def path(name):
    return os.path.join(WORK, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path(name)


def run(args, env=None):
    """Runs simdpath to its end (a hang is a failure, after CAP)."""
    try:
        p = subprocess.run([EXE] + args, capture_output=True, text=True,
                           errors="replace", timeout=CAP, cwd=WORK,
                           env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        return None, "", "hung for %d s" % CAP
    return p.returncode, p.stdout, p.stderr


def pcap(link_type):
    """A capture of one 60-byte frame with the given link type."""
    return (struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535,
                        link_type) +
            struct.pack("<IIII", 0, 0, 60, 60) + bytes(60))


def refused(args, needle, what):
    """Exit 2 before DPDK started, stderr naming the fault."""
    rc, out, err = run(args)
    check(rc == 2 and needle in err and "EAL:" not in err and
          "hugepages" not in out,
          "%s: exit %s (want 2 before DPDK), stderr %r lacks %r"
          % (what, rc, err[-400:], needle))


def test_before_dpdk():
    drop = write("drop.txt", "actions=drop\n")
    port = "net_null0"
    # Flow files.
    refused(["run", "--port", port, "--flows", WORK],
            WORK + ": cannot read flow rules: a directory", "--flows DIR")
    cr = write("cr.txt", "priority=1,ip,actions=drop\rpriority=2,arp,"
               "actions=drop\rudp,tp_dst=x,actions=drop\r")
    refused(["run", "--port", port, "--flows", cr],
            cr + ":3:5: invalid value 'x'", "CR-only lines are all read")
    crlf = write("crlf.txt", "ip,actions=drop\r\n\r\nudp,tp_dst=x,"
                 "actions=drop\r\n")
    refused(["run", "--port", port, "--flows", crlf],
            crlf + ":3:5: invalid value 'x'", "CRLF lines")
    nul = write("nul.txt", b"ip,actions=drop\nip,act\0ions=drop\n")
    refused(["run", "--port", port, "--flows", nul],
            nul + ":2:7: NUL byte", "a NUL byte")
    pre = write("pre.txt", "priority=5,tp_dst=80,actions=drop\n")
    refused(["run", "--port", port, "--flows", pre],
            pre + ":1:12: tp_dst: needs", "a prerequisite's column")
    esc = write("esc.txt", "tcp,\x1b[2J,actions=drop\n")
    refused(["run", "--port", port, "--flows", esc],
            esc + ":1:5: byte 0x1b", "a control byte")
    # Numbers: digits only, in range.
    for value in ["-1", "+5", " 5", "99999999999999999999"]:
        rc, out, err = run(["check", "--rounds", value])
        check(rc == 2 and "--rounds: invalid value '%s'" % value in err,
              "check --rounds %r: exit %s, %r" % (value, rc, err[-300:]))
        refused(["run", "--port", port, "--flows", drop, "--pmd-threads",
                 value], "--pmd-threads: invalid value '%s'" % value,
                "--pmd-threads %r" % value)
        refused(["run", "--port", port, "--flows", drop, "--duration",
                 value], "--duration: invalid value '%s'" % value,
                "--duration %r" % value)
    rc, out, err = run(["run", "--help"])
    check(rc == 0 and "default 0: no limit" in out,
          "run --help says what --duration 0 means")
    # A packet pool no memory here holds: 64 threads on 8 ports with
    # 32,768 descriptors a queue, about 88 GB.
    ports = []
    for i in range(8):
        ports += ["--port", "net_null%d" % i]
    refused(["run"] + ports + ["--flows", drop, "--pmd-threads", "64",
                               "--rxd", "32768", "--txd", "32768"],
            "run: 64 PMD threads on 8 port(s) need a packet pool of",
            "--pmd-threads 64")
    # EAL arguments simdpath sets itself or cannot honour (secondary hung).
    for eal in (["-l", "0"], ["-c0x1"], ["--lcores=0"], ["-v", "-l0"],
                ["--proc-type=secondary"], ["--proc-type", "secondary"],
                ["--proc-type=auto"], ["--proc=secondary"]):
        needle = ("primary process only" if "proc" in eal[0]
                  else "gives EAL its cores itself")
        refused(["run", "--port", port, "--flows", drop, "--"] + EAL + eal,
                needle, "EAL %s" % " ".join(eal))
    # Ports: a device each, named.
    refused(["run", "--port", port, "--port", port + ",size=64", "--flows",
             drop], "port 2 (net_null0,size=64) is port 1's device",
            "a port twice")
    refused(["run", "--port", "0000:3b:00.0", "--port", "3b:00.0",
             "--flows", drop], "port 2 (3b:00.0) is port 1's device",
            "a PCI port twice")
    refused(["run", "--port", ",size=64", "--flows", drop],
            "',size=64' names no device", "a port without a device")
    # Captures run cannot parse are refused as parse-pcap refuses them.
    tx = path("never.pcap")
    for link, name in ((113, "LINUX_SLL"), (101, "RAW")):
        cap = write("link%d.pcap" % link, pcap(link))
        refused(["run", "--port", "net_pcap0,rx_pcap=%s,tx_pcap=%s"
                 % (cap, tx), "--flows", drop],
                "%s: link type %s" % (cap, name), "rx_pcap %s" % name)
        rc, out, err = run(["parse-pcap", cap])
        check(rc == 2 and "%s: link type %s" % (cap, name) in err,
              "parse-pcap refuses %s alike: %s %r" % (name, rc, err))
    refused(["run", "--port", "net_pcap0,rx_pcap=%s" % path("none.pcap"),
             "--flows", drop], "none.pcap: No such file", "rx_pcap missing")
    refused(["run", "--port", "net_pcap0,rx_pcap=", "--flows", drop],
            "rx_pcap= names no file", "rx_pcap empty")
    good = write("good.pcap", pcap(1))
    for out, needle in ((path("no/such/dir/out.pcap"),
                         "cannot write in %s: No such file"
                         % path("no/such/dir/")),
                        (WORK, WORK + ": a directory, not a file")):
        refused(["run", "--port", "net_pcap0,rx_pcap=%s,tx_pcap=%s"
                 % (good, out), "--flows", drop], needle,
                "tx_pcap %s" % out)
    check(not os.path.exists(tx), "a refused run created no output")


def start(args):
    # Unbuffered bytes: select() then sees all that simdpath wrote.
    return subprocess.Popen([EXE] + args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0, cwd=WORK)


def wait_for_line(proc, needle):
    """Reads stdout until it holds needle: (what was read, whether)."""
    fd, got = proc.stdout.fileno(), b""
    while needle.encode() not in got:
        ready, _, _ = select.select([fd], [], [], CAP)
        chunk = os.read(fd, 65536) if ready else b""
        if not chunk:
            return got.decode(errors="replace"), False
        got += chunk
    return got.decode(errors="replace"), True


def finish(proc):
    try:
        out, err = proc.communicate(timeout=CAP)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        err += b"\n(hung for %d s)" % CAP
    return (proc.returncode, out.decode(errors="replace"),
            err.decode(errors="replace"))


def stopped_cleanly(rc, out, err, sock, name, what):
    check(rc == 0 and "simdpath: %s: stopping" % name in out and
          "port 1 (net_null0): rx" in out and
          "mbufs in use after the ports closed: 0" in out and
          not os.path.exists(sock),
          "%s: exit %s, socket left: %s, stdout %r, stderr %r"
          % (what, rc, os.path.exists(sock), out[-400:], err[-400:]))


def test_signals_while_forwarding():
    drop = path("drop.txt")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP,
                signal.SIGQUIT):
        sock = path("ctl-%s" % sig.name)
        proc = start(["run", "--port", "net_null0", "--flows", drop,
                      "--ctl", sock, "--"] + EAL)
        head, up = wait_for_line(proc, "simdpath: forwarding on")
        if up:
            proc.send_signal(sig)
        else:
            proc.kill()
        rc, out, err = finish(proc)
        stopped_cleanly(rc, head + out, err, sock, sig.name,
                        "%s while forwarding" % sig.name)


def world_writable_above(p):
    """Whether p or a directory above it is writable by anyone: EAL loads
    no plugin from there (the build may sit below /tmp)."""
    while True:
        if os.stat(p).st_mode & 0o002:
            return True
        if p == os.path.dirname(p):
            return False
        p = os.path.dirname(p)


def loadable_plugin():
    """PLUGIN, or a copy of it in a private folder EAL accepts."""
    d = os.path.dirname(PLUGIN)
    if not world_writable_above(d):
        return PLUGIN
    for parent in ("/run", os.path.expanduser("~")):
        if os.access(parent, os.W_OK) and not world_writable_above(parent):
            d = tempfile.mkdtemp(prefix="sp-eal-plugin-", dir=parent)
            PRIVATE.append(d)
            shutil.copy(PLUGIN, d)
            return os.path.join(d, os.path.basename(PLUGIN))
    return PLUGIN


PRIVATE = []  # folders loadable_plugin() made, removed at the end


def test_signals_during_start_up():
    """The plugin signals from inside rte_eal_init()."""
    drop = path("drop.txt")
    plugin = ["-d", loadable_plugin()]
    sock = path("ctl-eal")
    rc, out, err = run(["run", "--port", "net_null0", "--flows", drop,
                        "--ctl", sock, "--"] + EAL + plugin,
                       env={"SP_TEST_SIGNALS": "TERM"})
    if "insecure" in err:
        # EAL loads no plugin below a world-writable directory.
        print("SKIP: signals during start-up: " + err.strip()[-200:])
        RESULTS["skipped"] += 1
        return
    stopped_cleanly(rc, out, err, sock, "SIGTERM",
                    "SIGTERM during DPDK's start-up")
    # A second signal exits at once, 128 + its number, no report.
    rc, out, err = run(["run", "--port", "net_null0", "--flows", drop,
                        "--ctl", sock, "--"] + EAL + plugin,
                       env={"SP_TEST_SIGNALS": "TERM,INT"})
    check(rc == 128 + signal.SIGINT and "second stop signal" in err and
          "port 1 (" not in out and not os.path.exists(sock),
          "a second signal forces the exit: exit %s, %r" % (rc, err[-300:]))


def main():
    rc, out, err = run(["run", "--help"])
    if rc != 0:
        print("SKIP: simdpath run is not built here: " + err.strip())
        sys.exit(77)
    test_before_dpdk()
    test_signals_while_forwarding()
    test_signals_during_start_up()
    for d in [WORK] + PRIVATE:
        shutil.rmtree(d, ignore_errors=True)
    sys.exit(summary("hostile_cli"))


if __name__ == "__main__":
    main()
