#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The PMD's cycles per packet while an OpenFlow controller installs (and
then deletes) many rules.

One `simdpath run`, one PMD thread: 60-byte UDP packets of 8192 flows
replayed forever by net_pcap (infinite_rx) into port 1, forwarded to
net_null by 8192 exact rules (in_port, udp, nw_dst, tp_src, tp_dst) from
--flows, one per flow. With two CPUs or more, the PMD thread runs on the
second and the main and OpenFlow threads and ovs-ofctl on the first.
`ovs-ofctl -O OpenFlow13 add-flows` over tcp:127.0.0.1 then installs
COUNT more rules of the same shape for flows the traffic does not have (a
controller adding connections), and `del-flows` by their cookie removes
them. Cycles per packet are the PMD's busy TSC cycles over a window of
packets (pmd0_busy_cycles and pmd0_packets of DPDK telemetry's
/simdpath/pmds, read at its start and once it has that many packets):
windows before the install, during it, after it (COUNT more rules in the
table) and during the delete; medians per phase over ROUNDS rounds. Last
in each round, the control: windows while a loop that copies memory, and
talks to no one, runs for as long as the add-flows took, on the CPU that
ovs-ofctl and the OpenFlow thread had: what the PMD loses to the machine
alone. Also how long add-flows and del-flows took (until ovs-ofctl's
barrier is answered), and that the table holds 8192 + COUNT rules after
the install and 8192 after the delete.

Usage: bench_openflow.py SIMDPATH [--count N] [--rounds R] [--no-emc]
                          [--quick]
--no-emc: with the EMC off (--emc-entries 0), every packet looked up in
the classifier; by default the EMC is on (8192 entries).
--quick: 2,000 rules, one round, few windows; fails only if it did not
run or the rules did not arrive (no timing checks). Exits 77 without
ovs-ofctl.
"""
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "openflow"))
from traffic import frame, free_port, write_pcap  # noqa

CAP = 600  # seconds: a safety net for each wait
TRAFFIC_FLOWS = 8192
CPUS = sorted(os.sched_getaffinity(0))
PINNED = len(CPUS) >= 2


def flow(i):
    """Flow i's address and ports."""
    return [10, 1 + (i >> 16), (i >> 8) & 255, i & 255], 1024 + i % 50000, \
        4000 + i % 1000


def write_rules(path, first, n, prefix=""):
    with open(path, "w") as f:
        for i in range(first, first + n):
            dst, sport, dport = flow(i)
            f.write("%spriority=10,in_port=1,udp,nw_dst=%d.%d.%d.%d,"
                    "tp_src=%d,tp_dst=%d,actions=output:2\n"
                    % ((prefix,) + tuple(dst) + (sport, dport)))


class Run:
    def __init__(self, exe, work, emc):
        self.exe = exe
        self.ctl_path = os.path.join(work, "ctl.sock")
        self.port = free_port()
        self.target = "tcp:127.0.0.1:%d" % self.port
        prefix = "simdpath-bench-of%d" % os.getpid()
        self.telemetry_path = os.path.join(
            "/var/run/dpdk" if os.geteuid() == 0 else os.path.join(
                os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk"),
            prefix, "dpdk_telemetry.v2")
        self.telemetry = None
        pcap = os.path.join(work, "traffic.pcap")
        write_pcap(pcap, [frame(17, *flow(i)) for i in range(TRAFFIC_FLOWS)])
        flows = os.path.join(work, "flows.txt")
        write_rules(flows, 0, TRAFFIC_FLOWS)
        pin = ["--main-cpu", str(CPUS[0]), "--pmd-cpus",
               str(CPUS[1])] if PINNED else []
        self.proc = subprocess.Popen(
            [exe, "run"] + pin + ["--port",
             "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
             "--port", "net_null0,no-rx=1", "--flows", flows,
             "--ctl", self.ctl_path, "--openflow", "ptcp:%d" % self.port,
             "--emc-entries", "8192" if emc else "0",
             "--duration", "3600", "--", "-m", "1024",
             "--file-prefix=" + prefix],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + CAP
        while time.time() < deadline and self.proc.poll() is None:
            try:
                if self.pmd()[0] > 0:
                    return
            except (OSError, ValueError, KeyError, TypeError):
                # Not up yet (no socket, or the commands not registered).
                self.telemetry = None
            time.sleep(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
        raise SystemExit("simdpath did not start forwarding: " +
                         self.proc.communicate()[1][-800:])

    def ctl(self, *args):
        return subprocess.run([self.exe, "ctl", "--socket", self.ctl_path] +
                              list(args), capture_output=True, text=True,
                              timeout=CAP).stdout

    def pmd(self):
        """PMD 0's packets and busy cycles, from telemetry (one
        connection, kept)."""
        if not self.telemetry:
            self.telemetry = socket.socket(socket.AF_UNIX,
                                           socket.SOCK_SEQPACKET)
            self.telemetry.connect(self.telemetry_path)
            self.telemetry.recv(4096)
        self.telemetry.send(b"/simdpath/pmds")
        c = json.loads(self.telemetry.recv(65536))["/simdpath/pmds"]
        return c["pmd0_packets"], c["pmd0_busy_cycles"]

    def window(self, packets):
        """Busy cycles per packet over the next 'packets' packets."""
        p0, b0 = self.pmd()
        deadline = time.time() + CAP
        while time.time() < deadline:
            p, b = self.pmd()
            if p >= p0 + packets:
                return (b - b0) / (p - p0)
            time.sleep(0.01)
        raise SystemExit("the PMD stopped forwarding")

    def flow_count(self):
        p = ofctl("dump-aggregate", self.target)
        m = re.search(r"flow_count=(\d+)", p.stdout)
        return int(m.group(1)) if m else -1

    def stop(self):
        self.ctl("stop")
        try:
            self.proc.wait(timeout=CAP)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return self.proc.returncode


def ofctl(*args):
    pin = ["taskset", "-c", str(CPUS[0])] if PINNED else []
    return subprocess.run(pin + ["ovs-ofctl", "-O", "OpenFlow13"] +
                          list(args), capture_output=True, text=True,
                          timeout=CAP)


def hog(seconds):
    """The control: as long as an add-flows took, a loop that copies 64 MiB
    over and over on the CPU ovs-ofctl and simdpath's channel use, and
    talks to no one."""
    pin = ["taskset", "-c", str(CPUS[0])] if PINNED else []
    return subprocess.run(pin + [sys.executable, "-c",
                                 "import time\n"
                                 "b = bytearray(64 << 20)\n"
                                 "t = time.monotonic() + %f\n"
                                 "while time.monotonic() < t:\n"
                                 "    c = bytes(b)\n" % seconds],
                          capture_output=True, text=True, timeout=CAP)


def during(run, work_fn, packets):
    """Runs work_fn() while taking windows; its time, its result and the
    windows (at least one, the first starting before it)."""
    result = {}

    def work():
        t = time.monotonic()
        result["p"] = work_fn()
        result["seconds"] = time.monotonic() - t

    th = threading.Thread(target=work)
    windows = []
    th.start()
    while th.is_alive() or not windows:
        windows.append(run.window(packets))
    th.join()
    return result["seconds"], result["p"], windows


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    exe = os.path.abspath(sys.argv[1])
    quick = "--quick" in sys.argv
    count, rounds, n_windows, packets = 100000, 3, 9, 2000000
    if quick:
        count, rounds, n_windows, packets = 2000, 1, 2, 20000
    if "--count" in sys.argv:
        count = int(sys.argv[sys.argv.index("--count") + 1])
    if "--rounds" in sys.argv:
        rounds = int(sys.argv[sys.argv.index("--rounds") + 1])
    if not shutil.which("ovs-ofctl"):
        print("SKIP: ovs-ofctl not found (Debian: openvswitch-common)")
        return 77
    work = tempfile.mkdtemp(prefix="simdpath-bench-of-")
    rules = os.path.join(work, "controller.txt")
    # Rules of the --flows rules' shape for flows the traffic does not
    # have, with a cookie to delete them by.
    write_rules(rules, TRAFFIC_FLOWS, count, "cookie=0x1,")
    emc = "--no-emc" not in sys.argv
    run = Run(exe, work, emc)
    phases = {k: [] for k in ("before", "add", "after", "delete", "hog")}
    times = {"add": [], "delete": []}
    ok = True
    try:
        for r in range(rounds):
            base = run.flow_count()
            ok &= base == TRAFFIC_FLOWS
            phases["before"] += [run.window(packets)
                                 for _ in range(n_windows)]
            secs, p, w = during(
                run, lambda: ofctl("add-flows", run.target, rules), packets)
            ok &= p.returncode == 0
            times["add"].append(secs)
            phases["add"] += w
            got = run.flow_count()
            if got != TRAFFIC_FLOWS + count:
                print("round %d: %d rules after add-flows, expected %d: %s"
                      % (r, got, TRAFFIC_FLOWS + count, p.stderr[-400:]))
                ok = False
            phases["after"] += [run.window(packets)
                                for _ in range(n_windows)]
            secs, p, w = during(
                run, lambda: ofctl("del-flows", run.target, "cookie=0x1/-1"),
                packets)
            ok &= p.returncode == 0 and run.flow_count() == TRAFFIC_FLOWS
            times["delete"].append(secs)
            phases["delete"] += w
            phases["hog"] += during(run, lambda: hog(times["add"][-1]),
                                    packets)[2]
    finally:
        rc = run.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("load average %s at the end; %s" % (
        " ".join("%.2f" % x for x in os.getloadavg()),
        "PMD on CPU %d, the rest on CPU %d" % (CPUS[1], CPUS[0]) if PINNED
        else "not pinned (one CPU)"))
    print("one PMD thread, EMC %s, %d exact rules from --flows hit by "
          "60-byte UDP packets of %d flows; ovs-ofctl add-flows of %d "
          "more rules over tcp:127.0.0.1, then del-flows by cookie; %d "
          "round(s); windows of %d packets; busy TSC cycles per packet"
          % ("on" if emc else "off", TRAFFIC_FLOWS, TRAFFIC_FLOWS, count,
             rounds, packets))
    for name, label in (("before", "before"),
                        ("add", "during add-flows"),
                        ("after", "after (+%d rules)" % count),
                        ("delete", "during del-flows"),
                        ("hog", "during a copy loop")):
        w = phases[name]
        print("%-24s median %7.1f  min %7.1f  max %7.1f  (%d windows)"
              % (label, statistics.median(w), min(w), max(w), len(w)))
    for name in ("add", "delete"):
        t = times[name]
        print("%s-flows of %d rules: median %.2f s (%s), %.0f rules/s"
              % ("add" if name == "add" else "del", count,
                 statistics.median(t), ", ".join("%.2f" % x for x in t),
                 count / statistics.median(t)))
    if rc != 0 or not ok:
        print("FAILED: simdpath exit %s, rules %s" % (rc, "arrived" if ok
                                                      else "missing"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
