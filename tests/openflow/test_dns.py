#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""--controller by host name, with a DNS server that never answers.

Usage: test_dns.py SIMDPATH
In a network namespace of its own whose resolv.conf (ip netns exec binds
/etc/netns/NAME/resolv.conf) names a server behind a veth pair that
takes nothing, so that every query goes out and nothing comes back (30 s
a try, 5 tries),
simdpath runs with two controllers: first `tcp:hang.simdpath.invalid:P`,
whose lookup cannot end while the test runs, then `tcp:localhost:P` (a
name /etc/hosts answers) served by the test. The second must connect and
answer HELLO, FEATURES and 50 echo requests while the first lookup still
runs (`ctl openflow-show` says so): a lookup in the channel's own thread
would hold it, and every connection, for the 150 s. Then `ctl stop` ends the run (exit 0) with the
lookup still running. Root only; skips (77) without root or iproute2.
"""
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from report import check, summary  # noqa

sys.path.insert(0, HERE)
from traffic import start_run  # noqa

EXE = os.path.abspath(sys.argv[1])
CAP = 60  # seconds: a safety net, never the condition
NS = "spdns%d" % (os.getpid() % 100000)


def sh(*cmd):
    subprocess.run(cmd, check=True, capture_output=True, timeout=CAP)


def recv_msg(conn):
    """One OpenFlow message, or None at EOF."""
    buf = b""
    while len(buf) < 8 or len(buf) < struct.unpack("!H", buf[2:4])[0]:
        want = 8 if len(buf) < 8 else struct.unpack("!H", buf[2:4])[0]
        data = conn.recv(want - len(buf))
        if not data:
            return None
        buf += data
    return buf


def inside():
    """The test proper, run in the namespace."""
    ctrl = socket.socket()
    ctrl.bind(("127.0.0.1", 0))
    ctrl.listen(1)
    ctrl.settimeout(CAP)
    port = ctrl.getsockname()[1]
    work = tempfile.mkdtemp(prefix="simdpath-dns-")
    flows = os.path.join(work, "flows.txt")
    with open(flows, "w") as f:
        f.write("priority=0,actions=drop\n")
    ctl = os.path.join(work, "ctl.sock")
    proc = start_run(
        EXE, work,
        ["--port", "net_null0,no-rx=1", "--flows", flows, "--ctl", ctl,
         "--controller", "tcp:hang.simdpath.invalid:%d" % port,
         "--controller", "tcp:localhost:%d" % port,
         "--inactivity-probe", "0"], "simdpath-dns")
    try:
        try:
            conn, _ = ctrl.accept()
        except socket.timeout:
            conn = None
        if check(conn is not None, "the controller named localhost is "
                 "connected to while the other name's lookup runs"):
            conn.settimeout(CAP)
            hello = recv_msg(conn)
            check(hello and hello[1] == 0, "HELLO: %r" % hello)
            conn.sendall(struct.pack("!BBHI", 4, 0, 8, 1))
            conn.sendall(struct.pack("!BBHI", 4, 5, 8, 2))
            m = recv_msg(conn)
            check(m and m[1] == 6, "FEATURES_REPLY: %r" % m)
            answered = 0
            for xid in range(100, 150):
                conn.sendall(struct.pack("!BBHI", 4, 2, 8, xid))
                m = recv_msg(conn)
                answered += bool(m and m[1] == 3 and
                                 struct.unpack("!I", m[4:8])[0] == xid)
            check(answered == 50, "50 echo requests answered: %d"
                  % answered)
            show = subprocess.run([EXE, "ctl", "--socket", ctl,
                                   "openflow-show"], capture_output=True,
                                  text=True, timeout=CAP).stdout
            check("controller tcp:hang.simdpath.invalid:%d: looking its "
                  "name up\n" % port in show and
                  re.search(r"^controller tcp:localhost:%d: connected for "
                            r"\d+ s, role equal, errors answered 0$" % port,
                            show, re.M),
                  "openflow-show: one name being looked up, the other "
                  "connected: " + show)
        rc = subprocess.run([EXE, "ctl", "--socket", ctl, "stop"],
                            capture_output=True, text=True, timeout=CAP)
        check(rc.returncode == 0, "ctl stop: " + rc.stderr)
        try:
            out, err = proc.communicate(timeout=CAP)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        check(proc.returncode == 0, "simdpath exits 0 with the lookup "
              "still running: %d %s" % (proc.returncode, err[-800:]))
        check("hang.simdpath.invalid" not in out + err,
              "the lookup had not ended: " + (out + err)[-800:])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        shutil.rmtree(work, ignore_errors=True)
    return summary("dns")


def main():
    if len(sys.argv) > 2 and sys.argv[2] == "--inside":
        return inside()
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIP: a network namespace needs root and iproute2")
        return 77
    etc = "/etc/netns/" + NS
    try:
        sh("ip", "netns", "add", NS)
    except (subprocess.CalledProcessError, OSError) as e:
        print("SKIP: cannot make a network namespace: %s" % e)
        return 77
    try:
        os.makedirs(etc)
        with open(etc + "/resolv.conf", "w") as f:
            f.write("nameserver 10.77.0.2\noptions timeout:30 attempts:5\n")
        # The server's address is behind a veth pair whose other end
        # takes nothing, with a permanent neighbour entry: the queries
        # leave and no error comes back.
        for cmd in (("ip", "link", "set", "lo", "up"),
                    ("ip", "link", "add", "d0", "type", "veth", "peer",
                     "name", "d1"),
                    ("ip", "addr", "add", "10.77.0.1/24", "dev", "d0"),
                    ("ip", "link", "set", "d0", "up"),
                    ("ip", "link", "set", "d1", "up"),
                    ("ip", "neigh", "add", "10.77.0.2", "lladdr",
                     "02:00:00:00:77:02", "dev", "d0", "nud", "permanent")):
            sh("ip", "netns", "exec", NS, *cmd)
        return subprocess.run(
            ["ip", "netns", "exec", NS, sys.executable,
             os.path.abspath(__file__), EXE, "--inside"],
            timeout=4 * CAP).returncode
    finally:
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)
        shutil.rmtree(etc, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
