#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end forwarding cost of simdpath, dpdk-testpmd and Open vSwitch
on the same DPDK vdev ports, captures and CPU.

Port 1 is net_pcap replaying a capture of N distinct 64-byte UDP packets
forever (infinite_rx=1), port 2 net_null,no-rx=1; one PMD thread on
--pmd-cpu. For each N of --flows, rule a, b, c (README's benchmark), one
wildcard rule or N exact 5-tuple rules, EMC on and off, it measures:

  simdpath  `simdpath run`, busy TSC cycles per packet from ctl
            counters-show (cycles of receive calls that brought
            packets, divided by the packets)
  testpmd   dpdk-testpmd io (the floor for rule a) and macswap (the floor
            for b and c), from its --record-core-cycles statistics: TSC
            cycles of the bursts that brought packets over the packets,
            the same quantity; each with its native mbuf pool and with
            --mp-alloc=xbuf (mbufs of their own, buffers in one zone),
            the floor the cheaper of the two
  ovs       Debian's ovs-vswitchd-dpdk with its own database, run folder,
            file prefix and bridge (never the system's), one PMD, rules
            by ovs-ofctl, EMC off as other_config:emc-insert-inv-prob=0;
            busy cycles per packet from dpif-netdev/pmd-perf-show

Each measurement is a warm-up (for OVS, also until its upcalls settle), a
counter reset and --seconds of counting. Per N and round the floors come
first, then each case on every system in turn (OVS paused with SIGSTOP
while the others run), the order reversed every other round; the table
has the median of the rounds. It prints a
markdown table and writes e2e.md (table, command, CPU, date), e2e.json
(every sample) and e2e.png (cycles per packet against flows, one panel
per rule and table, one line per system) into --out.

--quick: rule a, one wildcard rule, at 1 flow and rule c, 100 exact
rules, at 100 flows, EMC on and off, one round of 0.5 s: every system
once, no timing asserted; it checks that each produced a number and that
the table and plot were written (exit 77 without testpmd, OVS or
matplotlib, 1 on any failure).

Usage: bench_e2e.py SIMDPATH [--quick] [--out DIR] [--flows N,N...]
       [--rules a,b,c] [--rounds R] [--seconds S] [--warm S]
       [--pmd-cpu CPU] [--no-ovs]
"""
import argparse
import datetime
import importlib.util
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
from model import csum, write_pcap  # noqa: E402

FLOWS = [1, 1000, 10000, 100000, 1000000]
# Every rule table, both EMC modes and both floors.
QUICK_CASES = [(1, "a", "wildcard"), (100, "c", "exact")]
RULES = {"a": "in_port=1,actions=output:2",
         "b": "ip,actions=dec_ttl,output:2",
         "c": "ip,actions=mod_nw_src:10.0.0.1,mod_nw_dst:10.0.0.2,"
              "dec_ttl,mod_nw_tos:4,output:2"}
TABLES = ("wildcard", "exact")
OVS_VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
EMC_ENTRIES = 8192  # simdpath's default, and OVS's EMC size
OVS_WARM_CAP = 15  # seconds
OVS_WINDOWS = 3  # counted windows at most, while one shows no busy cycles
CAP = 300  # seconds: a safety net for any one step, never a condition


class BenchError(Exception):
    """A system failed; the message names it."""


CHILDREN = []


def spawn(args, log, env=None, stdin=subprocess.DEVNULL):
    with open(log, "w") as f:
        p = subprocess.Popen(args, stdout=f, stderr=subprocess.STDOUT,
                             stdin=stdin, env=env)
    CHILDREN.append(p)
    return p


def reap(p, seconds=60):
    """Waits for p to end, killing it if it does not; its status."""
    try:
        p.wait(seconds)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(30)
    CHILDREN.remove(p)
    return p.returncode


def stop(p):
    """Ends p: SIGTERM, then after 10 s SIGKILL."""
    if p.poll() is None:
        p.terminate()
        p.send_signal(signal.SIGCONT)  # OVS may be paused
    reap(p, 10)


def kill_children():
    for p in list(CHILDREN):
        stop(p)


def tail(path, n=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)"


def run(what, args, env=None, seconds=CAP, stdin=None):
    """Runs a command to its end; its output, or BenchError naming what."""
    try:
        p = subprocess.run(args, capture_output=True, text=True, env=env,
                           timeout=seconds, input=stdin)
    except subprocess.TimeoutExpired:
        raise BenchError("%s: %s took over %d s" % (what, args[0], seconds))
    if p.returncode:
        raise BenchError("%s: %s exited %d: %s" % (
            what, " ".join(args[:3]), p.returncode,
            (p.stderr or p.stdout)[-800:]))
    return p.stdout


def wait_for(what, cond, proc, log, seconds=CAP):
    end = time.monotonic() + seconds
    while not cond():
        if proc.poll() is not None:
            raise BenchError("%s exited %d before it was ready:\n%s" % (
                what, proc.returncode, tail(log)))
        if time.monotonic() > end:
            raise BenchError("%s not ready after %d s:\n%s" % (
                what, seconds, tail(log)))
        time.sleep(0.1)


def flow_addr(i):
    return bytes([10, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])


def flow_ports(i):
    return 1024 + i % 50000, 4000 + i % 1000


def frames(n):
    """n 64-byte (60 and the FCS) UDP frames, all of distinct flows."""
    for i in range(n):
        sport, dport = flow_ports(i)
        udp = bytes([sport >> 8, sport & 0xFF, dport >> 8, dport & 0xFF,
                     0, 26, 0, 0]) + bytes(18)
        ip = bytes([0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0,
                    192, 168, 0, 1]) + flow_addr(i)
        c = csum(ip)
        ip = ip[:10] + bytes([c >> 8, c & 0xFF]) + ip[12:]
        yield bytes.fromhex("020000000002020000000001") + b"\x08\x00" + \
            ip + udp


def write_rules(path, rule, table, n):
    """Rule `rule` as one wildcard rule, or as n exact 5-tuple rules with
    its actions, one per flow of the capture."""
    actions = RULES[rule].split("actions=")[1]
    with open(path, "w") as f:
        if table == "wildcard":
            f.write(RULES[rule] + "\n")
            return
        for i in range(n):
            a = flow_addr(i)
            f.write("priority=10,in_port=1,udp,nw_src=192.168.0.1,"
                    "nw_dst=%d.%d.%d.%d,tp_src=%d,tp_dst=%d,actions=%s\n"
                    % ((a[0], a[1], a[2], a[3]) + flow_ports(i) +
                       (actions,)))


def eal_mb(n, per_packet_kb):
    """EAL memory for a pool holding every packet of an n-packet capture
    (net_pcap's infinite_rx keeps one buffer per packet)."""
    return 1024 + n * per_packet_kb // 1024


class Bench:
    def __init__(self, opts, work):
        self.o = opts
        self.work = work
        self.exe = opts.simdpath
        self.seq = 0

    def path(self, name):
        return os.path.join(self.work, name)

    def prefix(self, system):
        self.seq += 1
        return "spbench-%d-%s-%d" % (os.getpid(), system, self.seq)

    def pcap_dev(self, n):
        return "net_pcap0,rx_pcap=%s,infinite_rx=1" % self.path(
            "flows%d.pcap" % n)

    # simdpath

    def ctl(self, sock, *args):
        return run("simdpath", [self.exe, "ctl", "--socket", sock] +
                   list(args), seconds=60)

    def simdpath(self, n, rules, emc):
        sock, log = self.path("simdpath.ctl"), self.path("simdpath.log")
        p = spawn([self.exe, "run", "--port", self.pcap_dev(n), "--port",
                   "net_null0,no-rx=1", "--flows", rules, "--emc-entries",
                   str(EMC_ENTRIES if emc else 0), "--emc-insert-inv-prob",
                   "100", "--pmd-cpus", str(self.o.pmd_cpu), "--main-cpu",
                   str(self.o.main_cpu), "--ctl", sock, "--", "-m",
                   str(eal_mb(n, 6)), "--file-prefix=" + self.prefix("sp")],
                  log)
        try:
            wait_for("simdpath", lambda: "forwarding on" in tail(log, 1000),
                     p, log)
            time.sleep(self.o.warm)
            self.ctl(sock, "counters-clear")
            time.sleep(self.o.seconds)
            text = self.ctl(sock, "counters-show")
            self.ctl(sock, "stop")
        except BaseException:
            stop(p)
            raise
        rc = reap(p)
        if rc:
            raise BenchError("simdpath exited %d:\n%s" % (rc, tail(log)))
        m = re.search(r"^pmd 0: packets (\d+) .*; ([\d.]+) cycles/packet",
                      text, re.M)
        tx = re.search(r"^port 2 \([^)]*\): rx \d+ tx (\d+)", text, re.M)
        if not m or not tx:
            raise BenchError("simdpath: no PMD or port 2 counters in:\n"
                             + text)
        pkts = int(m.group(1))
        if pkts == 0 or int(tx.group(1)) < 0.99 * pkts:
            raise BenchError("simdpath forwarded %s of %d packets:\n%s" % (
                tx.group(1), pkts, text))
        return float(m.group(2))

    # dpdk-testpmd

    def testpmd(self, n, mode, pool):
        log = self.path("testpmd.log")
        p = spawn(["dpdk-testpmd", "--main-lcore", str(self.o.main_cpu),
                   "-l", "%d,%d" % (self.o.main_cpu, self.o.pmd_cpu),
                   "--no-huge", "-m", str(eal_mb(n, 6)), "--no-shconf",
                   "--no-pci", "--file-prefix=" + self.prefix("testpmd"),
                   "--vdev", self.pcap_dev(n), "--vdev", "net_null0,no-rx=1",
                   "--", "-i", "--forward-mode=" + mode,
                   "--record-core-cycles", "--mp-alloc=" + pool,
                   "--total-num-mbufs=%d" % (n + 16384)],
                  log, stdin=subprocess.PIPE)
        what = "dpdk-testpmd %s, %s pool" % (mode, pool)

        def say(line):
            p.stdin.write((line + "\n").encode())
            p.stdin.flush()

        try:
            wait_for(what, lambda: "testpmd> " in tail(log, 5), p, log)
            # Each start zeroes the forwarding statistics: the second
            # window counts without the warm-up.
            say("start")
            time.sleep(self.o.warm)
            say("stop")
            say("start")
            time.sleep(self.o.seconds)
            say("stop")
            say("quit")
            p.stdin.close()
        except BaseException:
            stop(p)
            raise
        rc = reap(p)
        if rc:
            raise BenchError("%s exited %d:\n%s" % (what, rc, tail(log)))
        with open(log) as f:
            got = re.findall(r"CPU cycles/packet=([\d.]+) \(\w+ cycles=\d+ "
                             r"/ total \w+ packets=(\d+)\)", f.read())
        if len(got) != 2 or int(got[1][1]) == 0:
            raise BenchError("%s: no cycles per packet for the counted "
                             "window:\n%s" % (what, tail(log)))
        return float(got[1][0])


class Ovs:
    """ovs-vswitchd-dpdk and its ovsdb-server in a folder of their own."""

    def __init__(self, bench, n):
        self.b = bench
        self.dir = tempfile.mkdtemp(prefix="ovs-", dir=bench.work)
        self.env = dict(os.environ, OVS_RUNDIR=self.dir, OVS_LOGDIR=self.dir,
                        OVS_DBDIR=self.dir, OVS_SYSCONFDIR=self.dir)
        self.db = "unix:" + os.path.join(self.dir, "db.sock")
        # The bridge's local port is a tap device of this name.
        self.br = "spb%d" % (os.getpid() % 100000)
        self.procs = []
        self.rules = None
        try:
            self._start(n)
        except BaseException:
            self.stop()
            raise

    def vsctl(self, *args, seconds=CAP):
        return run("OVS", ["ovs-vsctl", "--db=" + self.db, "--timeout=%d" %
                           seconds] + list(args), self.env, seconds + 10)

    def appctl(self, target, *args, seconds=CAP):
        return run("OVS", ["ovs-appctl", "-t", os.path.join(
            self.dir, target + ".ctl"), "--timeout=%d" % seconds] +
            list(args), self.env, seconds + 10)

    def _start(self, n):
        d, o = self.dir, self.b.o
        db_log = os.path.join(d, "ovsdb-server.log")
        sw_log = os.path.join(d, "ovs-vswitchd.log")
        run("OVS", ["ovsdb-tool", "create", os.path.join(d, "conf.db"),
                    OVS_SCHEMA], self.env)
        self.procs.append(spawn(
            ["ovsdb-server", os.path.join(d, "conf.db"),
             "--remote=punix:" + os.path.join(d, "db.sock"),
             "--unixctl=" + os.path.join(d, "ovsdb-server.ctl"),
             "--log-file=" + db_log], os.path.join(d, "ovsdb.out"),
            self.env))
        wait_for("ovsdb-server", lambda: os.path.exists(
            os.path.join(d, "db.sock")), self.procs[-1], db_log)
        # net_pcap keeps a buffer per packet of the capture: OVS sizes a
        # port's own pool from its queues and their descriptors, so ask
        # for enough queues of 4,096 (the driver gets the one it has).
        rxqs = n // 4096 + 1
        self.vsctl("--no-wait", "init", "--", "set", "Open_vSwitch", ".",
                   "other_config:dpdk-init=true",
                   "other_config:dpdk-extra=--no-huge -m %d --legacy-mem "
                   "--no-shconf --no-pci --file-prefix=%s" % (
                       eal_mb(n, 4), self.b.prefix("ovs")),
                   "other_config:dpdk-lcore-mask=0x%x" % (1 << o.main_cpu),
                   "other_config:pmd-cpu-mask=0x%x" % (1 << o.pmd_cpu),
                   "other_config:per-port-memory=true",
                   "other_config:flow-limit=%d" % max(200000, 2 * n))
        self.procs.append(spawn(
            [OVS_VSWITCHD, self.db,
             "--unixctl=" + os.path.join(d, "ovs-vswitchd.ctl"),
             "--log-file=" + sw_log], os.path.join(d, "vswitchd.out"),
            self.env))
        wait_for("ovs-vswitchd", lambda: os.path.exists(
            os.path.join(d, "ovs-vswitchd.ctl")), self.procs[-1], sw_log)
        self.vsctl("add-br", self.br, "--", "set", "bridge", self.br,
                   "datapath_type=netdev", "fail-mode=secure",
                   "--", "add-port", self.br, "p1", "--", "set", "Interface",
                   "p1", "type=dpdk", "ofport_request=1",
                   "options:dpdk-devargs=" + self.b.pcap_dev(n),
                   "options:n_rxq=%d" % rxqs, "options:n_rxq_desc=4096",
                   "--", "add-port", self.br, "p2", "--", "set", "Interface",
                   "p2", "type=dpdk", "ofport_request=2",
                   "options:dpdk-devargs=net_null0,no-rx=1")
        for port, want in (("p1", "1"), ("p2", "2")):
            err = self.vsctl("get", "Interface", port, "error").strip()
            got = self.vsctl("get", "Interface", port, "ofport").strip()
            if got != want:
                raise BenchError("OVS: port %s (ofport %s): %s\n%s" % (
                    port, got, err, tail(sw_log)))

    def pause(self):
        self.procs[-1].send_signal(signal.SIGSTOP)

    def measure(self, rules, emc):
        self.procs[-1].send_signal(signal.SIGCONT)
        try:
            return self._measure(rules, emc)
        finally:
            self.pause()

    def _measure(self, rules, emc):
        o = self.b.o
        self.vsctl("set", "Open_vSwitch", ".",
                   "other_config:emc-insert-inv-prob=%d" % (100 if emc
                                                            else 0))
        if rules != self.rules:
            # One transaction: flow by flow, every change would revalidate
            # the datapath flows of the traffic meanwhile (quadratic), and
            # between a delete and the adds the misses would install drop
            # flows that linger.
            with open(rules) as f:
                text = "delete\n" + f.read()
            run("OVS", ["ovs-ofctl", "-O", "OpenFlow14", "--bundle",
                        "add-flows", self.br, "-"], self.env,
                seconds=CAP * 2, stdin=text)
            self.rules = rules
        time.sleep(o.warm)
        # Until the upcalls have installed what datapath flows they can:
        # misses under 0.1%, or falling by less than a tenth in 3 s (OVS's
        # datapath flow limit starts at 10,000 and grows by 1,000 a
        # revalidation while its dumps take under a second), or a cap.
        shares, end = [], time.monotonic() + OVS_WARM_CAP
        while time.monotonic() < end:
            self.appctl("ovs-vswitchd", "dpif-netdev/pmd-stats-clear")
            time.sleep(0.5)
            st = perf_stats(self.appctl("ovs-vswitchd",
                                        "dpif-netdev/pmd-perf-show"))
            shares.append((st["upcalls"] + st["lost"]) / max(st["rx"], 1))
            if shares[-1] < 0.001 or (len(shares) > 6 and
                                      shares[-1] > 0.9 * shares[-7]):
                break
        # OVS reads its counters against the values pmd-stats-clear took,
        # relaxed and clamped at 0: a window may then show packets and no
        # busy cycles (seen on a first window right after OVS started).
        # Such a window is counted again, a few times at most.
        for _ in range(OVS_WINDOWS):
            self.appctl("ovs-vswitchd", "dpif-netdev/pmd-stats-clear")
            time.sleep(o.seconds)
            text = self.appctl("ovs-vswitchd", "dpif-netdev/pmd-perf-show")
            st = perf_stats(text)
            if st["cycles"] or not st["rx"]:
                break
            print("  (OVS counted %d packets and no busy cycles: the window "
                  "again)" % st["rx"])
        else:
            raise BenchError("OVS counted %d packets and no busy cycles in "
                             "%d windows:\n%s" % (st["rx"], OVS_WINDOWS,
                                                  text))
        if not st["rx"] or st["tx"] < 0.99 * st["rx"]:
            raise BenchError("OVS forwarded %d of %d packets:\n%s" % (
                st["tx"], st["rx"], text))
        missed = st["upcalls"] + st["lost"]
        if missed < 0.001 * st["rx"]:
            return st["cycles"]
        return st["cycles"], "%.0f%% missed (%.0f%% lost)" % (
            100.0 * missed / st["rx"], 100.0 * st["lost"] / st["rx"])

    def stop(self):
        """Stops both daemons; the bridge's tap device goes with del-br,
        or after them if they could not remove it."""
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT)
        for what in (lambda: self.vsctl("--if-exists", "del-br", self.br,
                                        seconds=30),
                     lambda: self.appctl("ovs-vswitchd", "exit", seconds=30),
                     lambda: self.appctl("ovsdb-server", "exit", seconds=30)):
            if any(p.poll() is None for p in self.procs):
                try:
                    what()
                except BenchError as e:
                    print("note: while stopping OVS: %s" % e)
        for p in reversed(self.procs):
            if p in CHILDREN:
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    pass
                stop(p)
        if os.path.exists("/sys/class/net/" + self.br):
            subprocess.run(["ip", "link", "del", self.br], timeout=30)


def perf_stats(text):
    """The PMD's counters from pmd-perf-show."""
    m = re.search(r"Rx packets:\s+(\d+)\s+\(\s*\d+ Kpps,\s*(\d+) cycles/pkt",
                  text)
    up = re.search(r"- Upcalls:\s+(\d+)", text)
    lost = re.search(r"- Lost upcalls:\s+(\d+)", text)
    tx = re.search(r"Tx packets:\s+(\d+)", text)
    if not m or not up or not lost or not tx:
        if re.search(r"Rx packets:\s+0\b", text):
            return {"rx": 0, "cycles": 0, "upcalls": 0, "lost": 0, "tx": 0}
        raise BenchError("OVS: no PMD counters in pmd-perf-show:\n" + text)
    return {"rx": int(m.group(1)), "cycles": float(m.group(2)),
            "upcalls": int(up.group(1)), "lost": int(lost.group(1)),
            "tx": int(tx.group(1))}


def cases(opts):
    if opts.quick:
        return [(n, r, t, e) for (n, r, t) in QUICK_CASES
                for e in (True, False)]
    return [(n, r, t, e) for n in opts.flows for r in opts.rules
            for t in TABLES for e in (True, False)]


def measure_flows(bench, n, n_cases, systems, samples, errors, notes):
    """Every case at n flows: per round the floors, then each case on
    every system in turn, the order reversed every other round. OVS runs
    throughout, stopped (SIGSTOP) while the others measure, so that its
    PMD leaves them the CPU."""
    def record(key, fn):
        start = time.monotonic()
        try:
            got = fn()
            if isinstance(got, tuple):
                got, note = got
                notes.setdefault(key, []).append(note)
            samples.setdefault(key, []).append(got)
            print("  %-36s %8.1f  (%.0f s)" % (
                fmt_key(key), got, time.monotonic() - start))
        except BenchError as e:
            errors.setdefault(key, str(e))
            print("  %-36s FAILED: %s" % (fmt_key(key), e))
        sys.stdout.flush()

    ovs = None
    if "ovs" in systems:
        try:
            ovs = Ovs(bench, n)
            ovs.pause()
        except BenchError as e:
            for (_, r, t, emc) in n_cases:
                errors.setdefault((n, "ovs", r, t, emc), str(e))
            print("  OVS at %d flows FAILED: %s" % (n, e))
    try:
        for rnd in range(bench.o.rounds):
            print("%d flows, round %d" % (n, rnd + 1))
            for mode in sorted({floor_mode(r) for (_, r, _, _) in n_cases}):
                for pool in FLOOR_POOLS:
                    record((n, mode, pool),
                           lambda: bench.testpmd(n, mode, pool))
            order = [s for s in systems if s != "testpmd"]
            if rnd % 2:
                order.reverse()
            for (_, r, t, emc) in n_cases:
                rules = bench.path("%s-%s-%d.txt" % (r, t, n))
                if not os.path.exists(rules):
                    write_rules(rules, r, t, n)
                for system in order:
                    if system == "simdpath":
                        record((n, system, r, t, emc),
                               lambda: bench.simdpath(n, rules, emc))
                    elif ovs:
                        record((n, system, r, t, emc),
                               lambda: ovs.measure(rules, emc))
    finally:
        if ovs:
            ovs.stop()


def fmt_key(key):
    """(n, system, rule, table, emc) or (n, floor mode, pool) as
    words."""
    if len(key) == 3:
        return "%d flows, testpmd %s, %s pool" % key
    n, system, r, t, emc = key
    return "%d flows, %s, rule %s %s, EMC %s" % (
        n, system, r, t, "on" if emc else "off")


def note_text(got):
    return "of the counted packets, %s: missed the datapath flows " \
        "(upcalls), lost: upcalls whose flow was not installed" % (
            ", ".join(got))


def floor_mode(rule):
    """The floor: testpmd io moves packets as rule a does; b and c write
    the packet, as macswap does."""
    return "io" if rule == "a" else "macswap"


# testpmd's mbuf pools (--mp-alloc). Without hugepages DPDK's native pool
# puts one buffer in each 4 KB page, all at the same offset, so that a
# burst's mbufs share one L1 cache set; xbuf packs the mbufs apart from
# their buffers. simdpath packs its pool (src/io/port.c): the floor is the
# cheaper of the two.
FLOOR_POOLS = ["native", "xbuf"]


def floor_of(samples, n, rule):
    """The floor's cycles at n flows for the rule and its label ("37 io,
    xbuf"), or (None, None)."""
    got = [(median(samples, (n, floor_mode(rule), p)), p)
           for p in FLOOR_POOLS]
    got = [g for g in got if g[0] is not None]
    if not got:
        return None, None
    value, pool = min(got)
    return value, "%s%s" % (floor_mode(rule),
                            "" if pool == "native" else ", " + pool)


def median(samples, key):
    got = samples.get(key)
    return statistics.median(got) if got else None


def fmt_pair(a, b, form):
    return " / ".join("-" if v is None else form % v for v in (a, b))


def ratio(a, b):
    return a / b if a is not None and b else None


def table(samples, case_list):
    lines = ["| flows | rules | rule | floor | simdpath EMC on / off | "
             "OVS EMC on / off | simdpath / floor | OVS / simdpath |",
             "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    rows = sorted({(n, r, t) for (n, r, t, _) in case_list},
                  key=lambda k: (k[0], k[1], TABLES.index(k[2])))
    for n, r, t in rows:
        floor, label = floor_of(samples, n, r)
        sp = [median(samples, (n, "simdpath", r, t, e)) for e in (1, 0)]
        ovs = [median(samples, (n, "ovs", r, t, e)) for e in (1, 0)]
        lines.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
            n, "1" if t == "wildcard" else "%d exact" % n, r,
            "-" if floor is None else "%.0f %s" % (floor, label),
            fmt_pair(sp[0], sp[1], "%.0f"), fmt_pair(ovs[0], ovs[1], "%.0f"),
            fmt_pair(ratio(sp[0], floor), ratio(sp[1], floor), "%.2fx"),
            fmt_pair(ratio(ovs[0], sp[0]), ratio(ovs[1], sp[1]), "%.2fx")))
    return "\n".join(lines)


def plot(path, samples, case_list, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    rules = sorted({r for (_, r, _, _) in case_list})
    tables = [t for t in TABLES if any(c[2] == t for c in case_list)]
    flows = sorted({n for (n, _, _, _) in case_list})
    fig, axes = plt.subplots(len(tables), len(rules), squeeze=False,
                             figsize=(4.5 * len(rules), 3.8 * len(tables)))
    for row, t in enumerate(tables):
        for col, r in enumerate(rules):
            ax = axes[row][col]
            if not any(c[1:3] == (r, t) for c in case_list):
                ax.axis("off")
                continue
            lines = [("simdpath EMC on", "C0", "-", lambda n, r=r, t=t:
                      (n, "simdpath", r, t, True)),
                     ("simdpath EMC off", "C0", "--", lambda n, r=r, t=t:
                      (n, "simdpath", r, t, False)),
                     ("OVS EMC on", "C1", "-", lambda n, r=r, t=t:
                      (n, "ovs", r, t, True)),
                     ("OVS EMC off", "C1", "--", lambda n, r=r, t=t:
                      (n, "ovs", r, t, False)),
                     ("testpmd " + floor_mode(r) + " (floor)", "k", ":",
                      None)]
            for label, color, style, key in lines:
                pts = [(n, floor_of(samples, n, r)[0] if key is None else
                        median(samples, key(n))) for n in flows]
                pts = [(n, v) for n, v in pts if v is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts],
                            color=color, linestyle=style, marker="o",
                            markersize=3, label=label)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.set_title("rule %s, %s" % (r, "one wildcard rule" if
                                          t == "wildcard" else
                                          "N exact rules"), fontsize=10)
            ax.set_xlabel("distinct flows (N)")
            ax.set_ylabel("TSC cycles per packet")
            ax.grid(True, which="both", alpha=0.3)
            if row == 0:
                ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def cpu_model():
    with open("/proc/cpuinfo") as f:
        m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
    return m.group(1) if m else "unknown CPU"


def have_matplotlib():
    return importlib.util.find_spec("matplotlib") is not None


def parse_args():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("simdpath")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=".")
    ap.add_argument("--flows", type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--rules", type=lambda s: s.split(","),
                    default=sorted(RULES))
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--warm", type=float)
    ap.add_argument("--pmd-cpu", type=int)
    ap.add_argument("--no-ovs", action="store_true")
    o = ap.parse_args()
    if o.quick:
        defaults = {"rounds": 1, "seconds": 0.5, "warm": 0.3}
    else:
        defaults = {"rounds": 2, "seconds": 2.0, "warm": 1.0,
                    "flows": FLOWS}
    for k, v in defaults.items():
        if getattr(o, k) is None:
            setattr(o, k, v)
    bad = [r for r in o.rules if r not in RULES]
    if bad or (o.flows and min(o.flows) < 1) or o.rounds < 1 or \
            o.seconds <= 0 or o.warm < 0:
        ap.error("bad --rules (a, b, c), --flows (>= 1), --rounds, "
                 "--seconds or --warm")
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        ap.error("needs two CPUs (a main thread and a PMD); has %s" % cpus)
    if o.pmd_cpu is None:
        o.pmd_cpu = cpus[-1]
    if o.pmd_cpu not in cpus:
        ap.error("--pmd-cpu %d: not one of this process's CPUs %s" % (
            o.pmd_cpu, cpus))
    o.main_cpu = min(c for c in cpus if c != o.pmd_cpu)
    o.simdpath = os.path.abspath(o.simdpath)
    return o


def stop_on_signal(signum, _frame):
    raise SystemExit(128 + signum)


def main():
    o = parse_args()
    missing = []
    if not os.access(o.simdpath, os.X_OK):
        raise SystemExit("bench_e2e: %s is not a program" % o.simdpath)
    if not shutil.which("dpdk-testpmd"):
        missing.append("dpdk-testpmd (Debian: dpdk-dev)")
    ovs_tools = ["ovsdb-tool", "ovsdb-server", "ovs-vsctl", "ovs-appctl",
                 "ovs-ofctl"]
    ovs = not o.no_ovs and os.access(OVS_VSWITCHD, os.X_OK) and \
        all(shutil.which(t) for t in ovs_tools)
    if not ovs and not o.no_ovs:
        missing.append("Open vSwitch with DPDK (Debian: "
                       "openvswitch-switch-dpdk)")
    if not have_matplotlib():
        missing.append("matplotlib (Debian: python3-matplotlib, for "
                       "/usr/bin/python3)")
    if missing and o.quick:
        print("SKIP: not installed: " + "; ".join(missing))
        return 77
    for m in missing:
        print("note: not installed, left out: " + m)
    if not shutil.which("dpdk-testpmd"):
        return 2
    case_list = cases(o)
    systems = ["simdpath", "testpmd"] + (["ovs"] if ovs else [])
    os.makedirs(o.out, exist_ok=True)
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, stop_on_signal)
    work = tempfile.mkdtemp(prefix="simdpath-e2e-")
    bench = Bench(o, work)
    samples, errors, notes = {}, {}, {}
    load = os.getloadavg()
    started = datetime.datetime.now(datetime.timezone.utc)
    print("one PMD thread on CPU %d (main on %d), %s; %g s per measurement "
          "after %g s of warm-up, %d round(s); load average %.2f" % (
              o.pmd_cpu, o.main_cpu, cpu_model(), o.seconds, o.warm,
              o.rounds, load[0]))
    try:
        for n in sorted({c[0] for c in case_list}):
            write_pcap(bench.path("flows%d.pcap" % n), frames(n))
            measure_flows(bench, n, [c for c in case_list if c[0] == n],
                          systems, samples, errors, notes)
            for f in os.listdir(work):
                if f.endswith("-%d.txt" % n) or f == "flows%d.pcap" % n:
                    os.unlink(bench.path(f))
    finally:
        kill_children()
        shutil.rmtree(work, ignore_errors=True)
    text = table(samples, case_list)
    print("\n" + text)
    for key, err in sorted(errors.items(), key=str):
        print("failed: %s: %s" % (fmt_key(key), err))
    for key, got in sorted(notes.items(), key=str):
        print("note: %s: %s" % (fmt_key(key), note_text(got)))
    report(o, text, samples, errors, notes, started, load)
    if have_matplotlib():
        plot(os.path.join(o.out, "e2e.png"), samples, case_list,
             "%s, one PMD thread, %s UTC (median of %d round(s))" % (
                 cpu_model(), started.strftime("%Y-%m-%d %H:%M"),
                 o.rounds))
    if o.quick:
        return quick_checks(o, samples, case_list, systems)
    return 1 if errors else 0


def report(o, text, samples, errors, notes, started, load):
    root = os.path.dirname(HERE) + os.sep
    cmd = " ".join(os.path.relpath(a, root) if os.path.exists(a) and
                   os.path.abspath(a).startswith(root) else a
                   for a in sys.argv)
    with open(os.path.join(o.out, "e2e.md"), "w") as f:
        f.write("Command: `%s`\n\nCPU: %s, %d CPUs online; %s UTC to %s; "
                "load average %.2f at the start, %.2f at the end.\n"
                "One PMD thread on CPU %d; %g s counted after %g s of "
                "warm-up; median of %d round(s). TSC cycles per packet "
                "(busy: polls that brought packets).\n\n%s\n" % (
                    cmd, cpu_model(), os.cpu_count(),
                    started.strftime("%Y-%m-%d %H:%M"),
                    datetime.datetime.now(datetime.timezone.utc).strftime(
                        "%H:%M"), load[0], os.getloadavg()[0], o.pmd_cpu,
                    o.seconds, o.warm, o.rounds, text))
        for key, err in sorted(errors.items(), key=str):
            f.write("\n- %s failed: %s" % (fmt_key(key),
                                           err.splitlines()[0]))
        for key, got in sorted(notes.items(), key=str):
            f.write("\n- %s: %s" % (fmt_key(key), note_text(got)))
        f.write("\n")
    with open(os.path.join(o.out, "e2e.json"), "w") as f:
        json.dump({what: {fmt_key(k): v for k, v in got.items()}
                   for what, got in (("samples", samples),
                                     ("errors", errors), ("notes", notes))},
                  f, indent=1)


def quick_checks(o, samples, case_list, systems):
    """What --quick asserts: a number from every system for every case,
    and the table and plot written."""
    want = [(n, s, r, t, e) for (n, r, t, e) in case_list
            for s in systems if s != "testpmd"]
    want += [(n, floor_mode(r), p) for (n, r, _, _) in case_list
             for p in FLOOR_POOLS]
    bad = [k for k in want if not samples.get(k) or
           not all(v > 0 for v in samples[k])]
    for k in bad:
        print("FAIL: no cycles per packet for %s" % fmt_key(k))
    md = os.path.join(o.out, "e2e.md")
    with open(md) as f:
        rows = [line for line in f if re.match(r"\| \d+ \|", line)]
    if len(rows) != len({c[:3] for c in case_list}) or \
            any(" - " in r.split("|", 4)[4] for r in rows):
        print("FAIL: %s: %d rows, or a row with a missing value" % (
            md, len(rows)))
        bad.append(md)
    png = os.path.join(o.out, "e2e.png")
    with open(png, "rb") as f:
        if f.read(8) != b"\x89PNG\r\n\x1a\n":
            print("FAIL: %s is not a PNG" % png)
            bad.append(png)
    print("%d of %d checks failed" % (len(bad), len(want) + 2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
