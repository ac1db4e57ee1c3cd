#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""PORT_STATUS and PORT_MOD of a real run, seen by ovs-ofctl.

Usage: test_port_status.py SIMDPATH
simdpath runs with a net_tap port (a kernel interface the test takes down
and up with `ip link`), a net_null one and `--openflow ptcp:PORT`;
`ovs-ofctl -O OpenFlow13 monitor` must print a PORT_STATUS (MOD) with
state LINK_DOWN after the interface goes down and one with LIVE after it
comes up, and `dump-ports-desc` must show the same states; the net_null
port gets none. `mod-port down` takes the tap's kernel interface down
(PORT_STATUS with config PORT_DOWN, state LINK_DOWN), `mod-port up` brings
it back, `no-forward` shows as NO_FWD; `simdpath ctl port-mod` does the
same, told to the monitor as PORT_STATUS, and `ctl port-show` lists it;
each change is one PORT_STATUS, none repeated by the link polls. Waits
are bounded by what is seen, with a time cap as a safety net only. Root
only (a tap interface); skips (77) without root, /dev/net/tun, iproute2
or ovs-ofctl.
"""
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from report import check, summary  # noqa

sys.path.insert(0, HERE)
from traffic import listening_port, start_run  # noqa

EXE = os.path.abspath(sys.argv[1])
OFCTL = shutil.which("ovs-ofctl")
CAP = 120  # seconds: a safety net, never the condition
IFACE = "spps%d" % (os.getpid() % 100000)
# The kernel chooses the port (ptcp:0); main sets these from the log.
PORT = None
TARGET = None


def ofctl(*args):
    return subprocess.run([OFCTL, "-O", "OpenFlow13"] + list(args),
                          capture_output=True, text=True, timeout=60)


def port_states():
    """{port name: state} from dump-ports-desc."""
    states, name = {}, None
    for line in ofctl("dump-ports-desc", TARGET).stdout.splitlines():
        words = line.split()
        if "(" in line and "addr:" in line:
            name = line.split("(")[1].split(")")[0]
        elif words[:1] == ["state:"] and name:
            states[name] = words[1]
    return states


class Monitor:
    """ovs-ofctl monitor, its PORT_STATUS messages as (port name, reason,
    state, config) in a queue."""

    def __init__(self, work):
        env = dict(os.environ, OVS_RUNDIR=work)
        self.p = subprocess.Popen([OFCTL, "-O", "OpenFlow13", "monitor",
                                   TARGET], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  env=env)
        self.q = queue.Queue()
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        name = config = None
        for line in self.p.stdout:
            words = line.split()
            if "OFPT_PORT_STATUS" in line:
                name = line.split("(")[-1].split(")")[0]
                self.reason = line.split("): ")[1].split(":")[0]
            elif name and words[:1] == ["config:"]:
                config = " ".join(words[1:])
            elif name and words[:1] == ["state:"]:
                self.q.put((name, self.reason, words[1], config))
                name = None

    def next(self):
        try:
            return self.q.get(timeout=CAP)
        except queue.Empty:
            return None

    def stop(self):
        self.p.kill()
        self.p.wait()


def wait_accepted(client, server):
    """Waits until process 'server' has accepted the TCP connection of
    process 'client' (ss shows the server's end as its own once it called
    accept(), so from then on the switch sends it PORT_STATUS)."""
    deadline = time.time() + CAP
    while time.time() < deadline:
        lines = subprocess.run(["ss", "-tnpH", "state", "established"],
                               capture_output=True, text=True).stdout
        ends = [line.split() for line in lines.splitlines()]
        mine = [e[2].rsplit(":", 1)[1] for e in ends
                if "pid=%d," % client in e[-1]]
        if any(e[2].endswith(":%d" % PORT) and
               e[3].rsplit(":", 1)[1] in mine and
               "pid=%d," % server in e[-1] for e in ends):
            return True
        time.sleep(0.05)
    return False


def ctl_run(sock, *args):
    return subprocess.run([EXE, "ctl", "--socket", sock] + list(args),
                          capture_output=True, text=True, timeout=60)


def iface_flags():
    """The kernel's flags of the tap interface (UP, LOWER_UP, ...)."""
    out = subprocess.run(["ip", "-o", "link", "show", IFACE],
                         capture_output=True, text=True).stdout
    return out.split("<")[1].split(">")[0].split(",") if "<" in out else []


def wait_no_rules():
    """Waits until dump-flows no longer lists the priority=7 rule."""
    deadline = time.time() + CAP
    while time.time() < deadline:
        if "priority=7" not in ofctl("dump-flows", TARGET).stdout:
            return True
        time.sleep(0.1)
    return False


def wait_state(name, state):
    deadline = time.time() + CAP
    while time.time() < deadline:
        if port_states().get(name) == state:
            return True
        time.sleep(0.1)
    return False


def main():
    global PORT, TARGET
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIP: a tap interface needs root and iproute2")
        return 77
    if not os.path.exists("/dev/net/tun"):
        print("SKIP: no /dev/net/tun")
        return 77
    if not OFCTL or not shutil.which("ss"):
        print("SKIP: ovs-ofctl (Debian: openvswitch-common) or ss "
              "(iproute2) not found")
        return 77
    work = tempfile.mkdtemp(prefix="simdpath-ps-")
    flows = os.path.join(work, "flows.txt")
    with open(flows, "w") as f:
        f.write("priority=0,actions=drop\n")
    ctl = os.path.join(work, "ctl.sock")
    proc = start_run(
        EXE, work,
        ["--port", "net_tap0,iface=" + IFACE, "--port", "net_null0,no-rx=1",
         "--flows", flows, "--ctl", ctl, "--openflow", "ptcp:0"],
        "simdpath-ps")
    mon = None
    try:
        PORT, before = listening_port(proc)
        if not check(PORT, "simdpath run logs the OpenFlow port the "
                     "kernel chose: %s" % "".join(before)[-800:]):
            return 1
        TARGET = "tcp:127.0.0.1:%d" % PORT
        check(wait_state("net_tap0", "LIVE") and
              port_states().get("net_null0") == "LIVE",
              "both ports LIVE at the start: %s" % port_states())
        mon = Monitor(work)
        check(wait_accepted(mon.p.pid, proc.pid),
              "simdpath took the monitor's connection")
        subprocess.run(["ip", "link", "set", IFACE, "down"], check=True)
        got = mon.next()
        check(got == ("net_tap0", "MOD", "LINK_DOWN", "0"),
              "PORT_STATUS MOD LINK_DOWN after ip link down: %s" % (got,))
        check(wait_state("net_tap0", "LINK_DOWN"),
              "dump-ports-desc: LINK_DOWN: %s" % port_states())
        subprocess.run(["ip", "link", "set", IFACE, "up"], check=True)
        got = mon.next()
        check(got == ("net_tap0", "MOD", "LIVE", "0"),
              "PORT_STATUS MOD LIVE after ip link up: %s" % (got,))
        check(port_states().get("net_tap0") == "LIVE",
              "dump-ports-desc: LIVE: %s" % port_states())
        check(mon.q.empty(), "no other PORT_STATUS (net_null0 never "
              "changes): %s" % list(mon.q.queue))
        # mod-port down takes the device's link down, as ovs-vswitchd
        # does for a DPDK port: the kernel's side of net_tap goes down.
        p = ofctl("mod-port", TARGET, "1", "down")
        check(p.returncode == 0, "mod-port down: %s" % p.stderr)
        got = mon.next()
        check(got == ("net_tap0", "MOD", "LINK_DOWN", "PORT_DOWN"),
              "PORT_STATUS MOD PORT_DOWN LINK_DOWN after mod-port down: %s"
              % (got,))
        check(port_states().get("net_tap0") == "LINK_DOWN",
              "dump-ports-desc: LINK_DOWN: %s" % port_states())
        check("UP" not in iface_flags(),
              "the kernel's interface is down: %s" % iface_flags())
        p = ofctl("mod-port", TARGET, "1", "up")
        check(p.returncode == 0, "mod-port up: %s" % p.stderr)
        got = mon.next()
        check(got == ("net_tap0", "MOD", "LIVE", "0"),
              "PORT_STATUS MOD LIVE after mod-port up: %s" % (got,))
        check("UP" in iface_flags(),
              "the kernel's interface is up: %s" % iface_flags())
        p = ofctl("mod-port", TARGET, "2", "no-forward")
        check(p.returncode == 0 and mon.next() ==
              ("net_null0", "MOD", "LIVE", "NO_FWD"),
              "mod-port no-forward: PORT_STATUS MOD NO_FWD: %s" % p.stderr)
        # ctl port-mod is a PORT_MOD of the switch's own: the same
        # change, told to every connection.
        for port, word, line, status in (
                ("2", "forward", "port 2 (net_null0): link up, config: none",
                 ("net_null0", "MOD", "LIVE", "0")),
                ("1", "down", "port 1 (net_tap0): link down, config: down",
                 ("net_tap0", "MOD", "LINK_DOWN", "PORT_DOWN")),
                ("1", "up", "port 1 (net_tap0): link up, config: none",
                 ("net_tap0", "MOD", "LIVE", "0")),
                ("2", "no-packet-in",
                 "port 2 (net_null0): link up, config: no-packet-in",
                 ("net_null0", "MOD", "LIVE", "NO_PACKET_IN"))):
            r = ctl_run(ctl, "port-mod", port, word)
            check(r.returncode == 0 and r.stdout.strip() == line,
                  "ctl port-mod %s %s: %r %s" % (port, word, r.stdout,
                                                 r.stderr))
            got = mon.next()
            check(got == status, "ctl port-mod %s %s: PORT_STATUS %s: %s"
                  % (port, word, status, got))
            if word in ("down", "up"):
                check(("UP" in iface_flags()) == (word == "up"),
                      "ctl port-mod 1 %s: the kernel's interface too: %s"
                      % (word, iface_flags()))
        r = ctl_run(ctl, "port-show")
        check(r.returncode == 0 and r.stdout.splitlines() == [
            "port 1 (net_tap0): link up, config: none",
            "port 2 (net_null0): link up, config: no-packet-in"],
            "ctl port-show: %r" % r.stdout)
        for args, message in (
                (["3", "down"], "no port '3': ports are 1 to 2"),
                (["1", "sideways"], "port-mod: 'sideways': expected up, "
                 "down, receive, no-receive, forward, no-forward, "
                 "packet-in or no-packet-in"),
                (["1"], "port-mod '1': expected a port and up, down,")):
            r = ctl_run(ctl, "port-mod", *args)
            check(r.returncode == 1 and message in r.stderr,
                  "ctl port-mod %s refused: %s" % (" ".join(args), r.stderr))
        # Two rules expiring in turn prove a whole round of the channel's
        # once-a-second work (expiry, then the link poll) after the last
        # mod-port: a link poll that told a change again has sent it by
        # then, and the monitor prints all it got before it exits.
        for _ in range(2):
            ofctl("add-flow", TARGET,
                  "priority=7,hard_timeout=1,udp,actions=drop")
            check(wait_no_rules(), "the hard_timeout rule expires")
        rc = ctl_run(ctl, "stop")
        check(rc.returncode == 0, "ctl stop: " + rc.stderr)
        proc.communicate(timeout=CAP)
        mon.reader.join(timeout=CAP)
        check(not mon.reader.is_alive() and mon.q.empty(),
              "one PORT_STATUS a change, none from the link polls after "
              "mod-port: %s" % list(mon.q.queue))
        check(proc.returncode == 0, "simdpath exits 0")
    finally:
        if mon:
            mon.stop()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        shutil.rmtree(work, ignore_errors=True)
    return summary("port_status")


if __name__ == "__main__":
    sys.exit(main())
