#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two simdpath builds, A and B, forwarding the same traffic in turns on
one CPU: both run at once, pinned to the same PMD CPU, and all but the
one measured are stopped (SIGSTOP), so many short alternating rounds
cost no start-up and a slow spell of the machine hits both. Each round
reads the busy cycles per packet and, with --pmd-perf, each stage's,
from the counters' growth over the round. A loaded machine deschedules
the PMD thread mid-burst, and the TSC counts that time as busy: 'on-cpu'
scales the busy cycles and the stages by the share of the round the
thread ran (schedstat). 'ns' is the nanoseconds the thread ran per
packet forwarded (schedstat over the packets counted), which no
system's own clock reading is in. Prints the medians of A and B and B/A
and, with --floor, of dpdk-testpmd on the same ports and CPU in the same
turns (with --floor-pool's mbuf pool, xbuf unless told: bench_e2e.py
says why) (its busy cycles per packet, --record-core-cycles, which reads
the TSC twice a burst; with --floor-bare it runs without and only its
'ns' is measured).

Traffic: net_pcap replays (infinite_rx) a capture of FLOWS distinct
64-byte UDP packets into port 1 (with --active K, of K of those flows,
spread over them); port 2 is net_null. Rules: one wildcard
rule (a: in_port=1,actions=output:2; b: ip,actions=dec_ttl,output:2; c:
the rewrites of issue 20) or, with --exact, one exact rule per flow with
that rule's actions (as bench_e2e.py's exact rules).

Usage: bench_ab.py A B [--flows N] [--active K] [--rule a|b|c] [--exact]
                   [--emc-entries N] [--rounds R] [--seconds S]
                   [--cpu C] [--main-cpu C] [--pmd-perf] [--floor]
                   [--floor-pool native|xbuf] [--floor-bare]
"""
import argparse
import os
import queue
import re
import signal
import statistics
import struct
import subprocess
import tempfile
import threading
import time

from bench_e2e import csum

ACTIONS = {
    "a": "in_port=1,actions=output:2",
    "b": "ip,actions=dec_ttl,output:2",
    "c": "ip,actions=mod_nw_src:10.0.0.1,mod_nw_dst:10.0.0.2,dec_ttl,"
         "mod_nw_tos:4,output:2",
}
STAGES = ["receive", "parse", "hash_emc", "classifier", "actions",
          "transmit"]


def flow(i):
    """Flow i's addresses and ports."""
    dst = bytes([10, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])
    return bytes([192, 168, 0, 1]), dst, 1024 + i % 50000, 4000 + i % 1000


def write_traffic(path, n, active):
    """A capture of 'active' of the n flows (all if None), spread over
    them: flow i * 999983 % n, a prime stride, distinct unless n is a
    multiple of it."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(n if active is None else active):
            src, dst, sport, dport = flow(i if active is None
                                          else i * 999983 % n)
            udp = struct.pack("!HHHH", sport, dport, 26, 0) + bytes(18)
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0,
                             64, 17, 0, src, dst)
            ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
            frame = bytes.fromhex("020000000002020000000001") + \
                b"\x08\x00" + ip + udp
            f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)))
            f.write(frame)


def write_rules(path, n, rule, exact):
    with open(path, "w") as f:
        if not exact:
            f.write(ACTIONS[rule] + "\n")
            return
        actions = ACTIONS[rule].split("actions=")[1]
        for i in range(n):
            src, dst, sport, dport = flow(i)
            f.write("priority=10,in_port=1,udp,nw_src=%s,nw_dst=%s,"
                    "tp_src=%d,tp_dst=%d,actions=%s\n"
                    % (".".join(map(str, src)), ".".join(map(str, dst)),
                       sport, dport, actions))


def run_share(ran0, wall0, ran1, wall1):
    """The share of the wall time a thread ran, or None when its run
    time did not move (schedstat updates at scheduler events: a thread
    nobody preempted may show none)."""
    return min(1.0, (ran1 - ran0) / (wall1 - wall0)) if ran1 > ran0 else None


def scaled(value, share):
    return value * share if share is not None else None


def median(values):
    """The median of the values that are not None, or None."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


class Run:
    def __init__(self, name, exe, work, pcap, rules, args):
        self.name = name
        self.env = dict(os.environ,
                        SIMDPATH_CTL=os.path.join(work, name + ".sock"))
        self.exe = exe
        # A buffer of about 2.3 KB per packet of the capture and per
        # descriptor and burst (run sizes its pool so); at a million
        # packets EAL's --no-huge memory takes about twice that before
        # the pool fits, for builds whose pool is in EAL's memory (a
        # build's since is its own: the -m is then unused).
        mem = str(max(512, 256 + (args.packets + 16384) * 4600 // 2**20))
        cmd = [exe, "run", "--port",
               "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, "--port",
               "net_null0,no-rx=1", "--flows", rules, "--pmd-cpus",
               str(args.cpu), "--main-cpu", str(args.main_cpu),
               "--emc-entries", str(args.emc_entries), "--duration",
               "100000"]
        if args.pmd_perf:
            cmd.append("--pmd-perf")
        cmd += ["--", "--no-huge", "-m", mem, "--no-shconf",
                "--file-prefix=sp-ab-%s-%d" % (name, os.getpid())]
        self.log = open(os.path.join(work, name + ".log"), "w")
        self.proc = subprocess.Popen(cmd, env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        for _ in range(600):
            if "pmd 0" in self.ctl("counters-show"):
                break
            if self.proc.poll() is not None:
                raise SystemExit("%s did not start: see %s" %
                                 (exe, self.log.name))
            time.sleep(0.1)

    def ctl(self, *args):
        return subprocess.run([self.exe, "ctl"] + list(args), env=self.env,
                              text=True, capture_output=True).stdout

    def signal(self, sig):
        self.proc.send_signal(sig)

    def on_cpu(self):
        """Nanoseconds the PMD thread has run (schedstat), and now."""
        if not hasattr(self, "pmd_task"):
            task = "/proc/%d/task" % self.proc.pid
            for tid in os.listdir(task):
                with open("%s/%s/comm" % (task, tid)) as f:
                    if f.read().startswith("rte-worker"):
                        self.pmd_task = "%s/%s/schedstat" % (task, tid)
        with open(self.pmd_task) as f:
            return int(f.read().split()[0]), time.monotonic_ns()

    def snapshot(self, perf):
        """The PMD's packets, busy cycles, EMC hits and, profiled, each
        stage's cycles so far (counters-show, pmd-perf-show)."""
        out = self.ctl("counters-show")
        m = re.search(r"^pmd 0: packets (\d+) .*emc hits (\d+).*; "
                      r"([\d.]+) cycles/packet", out, re.M)
        packets = int(m.group(1))
        got = {"packets": packets, "emc": int(m.group(2)),
               "busy": float(m.group(3)) * packets}
        out = self.ctl("pmd-perf-show") if perf else ""
        m = re.search(r"packets: (\d+)", out)
        for s in STAGES if m else []:
            cpp = re.search(r"\b%s\s+([\d.]+)" % s, out)
            got[s] = float(cpp.group(1)) * int(m.group(1))
        return got

    def round(self, seconds, perf):
        """Cycles per packet of a round from the counters' growth (a
        clear is applied by the PMD, which a loaded machine may not run
        in time); None for a round that forwarded too little."""
        self.signal(signal.SIGCONT)
        time.sleep(0.05)
        snap0 = self.snapshot(perf)
        ran0, wall0 = self.on_cpu()
        time.sleep(seconds)
        snap1 = self.snapshot(perf)
        ran1, wall1 = self.on_cpu()
        self.signal(signal.SIGSTOP)
        # The busy cycles are TSC cycles of wall time, the time the thread
        # was descheduled included; 'on-cpu' counts only those it ran.
        share = run_share(ran0, wall0, ran1, wall1)
        packets = snap1["packets"] - snap0["packets"]
        if packets < 10000:
            return {k: None for k in ["busy", "on-cpu", "ns", "emc%"] +
                    STAGES}
        got = {k: (snap1[k] - snap0[k]) / packets
               for k in snap1 if k in STAGES or k == "busy"}
        got["on-cpu"] = scaled(got["busy"], share)
        got["ns"] = (ran1 - ran0) / packets
        for k in STAGES:
            if k in got:
                got[k] = scaled(got[k], share)
        got["emc%"] = 100.0 * (snap1["emc"] - snap0["emc"]) / packets
        return got

    def ask_to_stop(self):
        self.ctl("stop")

    def stop(self):
        self.signal(signal.SIGCONT)
        self.ask_to_stop()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Testpmd(Run):
    """dpdk-testpmd on the same ports and CPU, the floor: io forwarding
    for rule a, macswap for the others; its own busy cycles per packet
    (--record-core-cycles, unless bare), each round a start and a stop,
    and the nanoseconds it ran per packet sent (port statistics)."""

    def __init__(self, work, pcap, args):
        self.name = "floor"
        mode = "io" if args.rule == "a" else "macswap"
        mbufs = max(65536, args.packets + 16384)
        mem = str(max(1024, 256 + mbufs * 4600 // 2**20))
        # Its output is read line by line: not left in a pipe's buffer.
        cmd = ["stdbuf", "-oL", "dpdk-testpmd", "-l", "%d,%d" % (args.main_cpu, args.cpu),
               "--no-huge", "-m", mem, "--no-shconf", "--no-pci",
               "--file-prefix=sp-ab-floor-%d" % os.getpid(), "--vdev",
               "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, "--vdev",
               "net_null0,no-rx=1", "--", "-i", "--forward-mode=" + mode,
               "--mp-alloc=" + args.floor_pool,
               "--total-num-mbufs=%d" % mbufs]
        self.bare = args.floor_bare
        if not self.bare:
            cmd.append("--record-core-cycles")
        self.lines = queue.Queue()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self.read, daemon=True).start()
        self.command("start")
        self.wait_for(r"packet forwarding - ports=")
        self.command("stop")
        self.wait_for(r"Done\.")

    def read(self):
        for line in self.proc.stdout:
            self.lines.put(line)

    def command(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def wait_for(self, pattern):
        while True:
            try:
                line = self.lines.get(timeout=120)
            except queue.Empty:
                raise SystemExit("dpdk-testpmd: no '%s'" % pattern)
            m = re.search(pattern, line)
            if m:
                return m

    def round(self, seconds, perf):
        self.signal(signal.SIGCONT)
        while not self.lines.empty():
            self.lines.get()
        self.command("start")
        time.sleep(0.05)
        sent0 = self.sent()
        ran0, wall0 = self.on_cpu()
        time.sleep(seconds)
        sent1 = self.sent()
        ran1, wall1 = self.on_cpu()
        self.command("stop")
        busy = None if self.bare else float(
            self.wait_for(r"CPU cycles/packet=([\d.]+)").group(1))
        self.wait_for(r"Done\.")
        self.signal(signal.SIGSTOP)
        share = run_share(ran0, wall0, ran1, wall1)
        return {"busy": busy,
                "on-cpu": None if busy is None else scaled(busy, share),
                "ns": (ran1 - ran0) / (sent1 - sent0)
                if sent1 > sent0 else None}

    def sent(self):
        """Packets its port 1 (net_null) has sent so far."""
        self.command("show port stats 1")
        return int(self.wait_for(r"TX-packets: (\d+)").group(1))

    def ask_to_stop(self):
        self.command("quit")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--flows", type=int, default=1)
    ap.add_argument("--active", type=int,
                    help="a capture of this many of the flows")
    ap.add_argument("--rule", choices="abc", default="a")
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--emc-entries", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--main-cpu", type=int, default=0)
    ap.add_argument("--pmd-perf", action="store_true")
    ap.add_argument("--floor", action="store_true",
                    help="dpdk-testpmd in the same turns")
    ap.add_argument("--floor-pool", choices=["native", "xbuf"],
                    default="xbuf", help="testpmd's --mp-alloc")
    ap.add_argument("--floor-bare", action="store_true",
                    help="testpmd without --record-core-cycles: only ns")
    args = ap.parse_args()
    if args.active is not None and not 0 < args.active <= args.flows:
        ap.error("--active %d: from 1 to --flows (%d)"
                 % (args.active, args.flows))
    args.packets = args.flows if args.active is None else args.active
    work = tempfile.mkdtemp(prefix="sp-ab-")
    pcap, rules = os.path.join(work, "t.pcap"), os.path.join(work, "r.txt")
    write_traffic(pcap, args.flows, args.active)
    write_rules(rules, args.flows, args.rule, args.exact)
    runs = []
    try:
        for name, exe in (("A", args.a), ("B", args.b)):
            runs.append(Run(name, os.path.abspath(exe), work, pcap, rules,
                            args))
            runs[-1].signal(signal.SIGSTOP)
        if args.floor:
            runs.append(Testpmd(work, pcap, args))
            runs[-1].signal(signal.SIGSTOP)
        got = {r.name: [] for r in runs}
        for i in range(args.rounds):
            for r in runs if i % 2 == 0 else runs[::-1]:
                got[r.name].append(r.round(args.seconds, args.pmd_perf))
    finally:
        for r in runs:
            r.stop()
    print("%d flows%s, rule %s%s, EMC %d, %d rounds of %.2f s in turns, "
          "CPU %d; medians of TSC cycles/packet"
          % (args.flows, "" if args.active is None
             else " (%d active)" % args.active, args.rule,
             " (exact rules)" if args.exact else "",
             args.emc_entries, args.rounds, args.seconds, args.cpu))
    keys = [k for k in ["busy", "on-cpu", "ns"] + STAGES + ["emc%"]
            if any(g.get(k) is not None for g in got["A"])]
    floor = {k: median(g[k] for g in got["floor"])
             for k in ("busy", "on-cpu", "ns")} if args.floor else {}
    print("%-11s %8s %8s %7s" % ("", "A", "B", "B/A") +
          (" %8s %7s %7s" % ("floor", "A/floor", "B/floor") if floor else ""))
    for k in keys:
        a = median(g.get(k) for g in got["A"])
        b = median(g.get(k) for g in got["B"])
        if a is None or b is None:
            continue
        line = "%-11s %8.2f %8.2f %7.3f" % (k, a, b, b / a if a else 0)
        if floor.get(k):
            line += " %8.2f %7.3f %7.3f" % (floor[k], a / floor[k],
                                            b / floor[k])
        print(line)
    for name in got:
        for k in ("busy", "on-cpu", "ns"):
            print("%s %s: %s" % (name, k, " ".join(
                "%.1f" % g[k] if g[k] is not None else "-"
                for g in got[name])))

if __name__ == "__main__":
    main()
