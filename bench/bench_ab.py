#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two simdpath builds, A and B, forwarding the same traffic in turns on
one CPU: both run at once, pinned to the same PMD CPU, and all but the
one measured are stopped (SIGSTOP), so many short alternating rounds cost
no start-up and a slow spell of the machine hits both. Each round clears
the counters, waits, and reads the busy cycles per packet and, with
--pmd-perf, each stage's. Prints the medians of A and B and B/A.

Traffic: net_pcap replays (infinite_rx) a capture of FLOWS distinct
64-byte UDP packets into port 1; port 2 is net_null. Rules: one wildcard
rule (a: in_port=1,actions=output:2; b: ip,actions=dec_ttl,output:2; c:
the rewrites of issue 20) or, with --exact, one exact rule per flow with
rule a's actions.

Usage: bench_ab.py A B [--flows N] [--rule a|b|c] [--exact]
                   [--emc-entries N] [--rounds R] [--seconds S]
                   [--cpu C] [--pmd-perf]
"""
import argparse
import os
import re
import signal
import statistics
import struct
import subprocess
import tempfile
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


def write_traffic(path, n):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(n):
            src, dst, sport, dport = flow(i)
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
        for i in range(n):
            src, dst, sport, dport = flow(i)
            f.write("priority=10,in_port=1,udp,nw_src=%s,nw_dst=%s,"
                    "tp_src=%d,tp_dst=%d,actions=output:2\n"
                    % (".".join(map(str, src)), ".".join(map(str, dst)),
                       sport, dport))


class Run:
    def __init__(self, name, exe, work, pcap, rules, args):
        self.name = name
        self.env = dict(os.environ,
                        SIMDPATH_CTL=os.path.join(work, name + ".sock"))
        self.exe = exe
        mem = str(max(512, 256 + os.path.getsize(pcap) * 12 // 2**20))
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

    def round(self, seconds, perf):
        self.signal(signal.SIGCONT)
        time.sleep(0.05)
        self.ctl("counters-clear")
        time.sleep(seconds)
        out = self.ctl("counters-show")
        stages = self.ctl("pmd-perf-show") if perf else ""
        self.signal(signal.SIGSTOP)
        busy = float(re.search(r"([\d.]+) cycles/packet", out).group(1))
        got = {"busy": busy}
        for s in STAGES if perf else []:
            m = re.search(r"\b%s\s+([\d.]+)" % s, stages)
            if m:
                got[s] = float(m.group(1))
        m = re.search(r"emc hits (\d+)", out)
        p = re.search(r"packets (\d+)", out)
        if m and p and int(p.group(1)):
            got["emc%"] = 100.0 * int(m.group(1)) / int(p.group(1))
        return got

    def stop(self):
        self.signal(signal.SIGCONT)
        self.ctl("stop")
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--flows", type=int, default=1)
    ap.add_argument("--rule", choices="abc", default="a")
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--emc-entries", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=0.5)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--main-cpu", type=int, default=0)
    ap.add_argument("--pmd-perf", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sp-ab-")
    pcap, rules = os.path.join(work, "t.pcap"), os.path.join(work, "r.txt")
    write_traffic(pcap, args.flows)
    write_rules(rules, args.flows, args.rule, args.exact)
    runs = []
    try:
        for name, exe in (("A", args.a), ("B", args.b)):
            runs.append(Run(name, os.path.abspath(exe), work, pcap, rules,
                            args))
            runs[-1].signal(signal.SIGSTOP)
        got = {r.name: [] for r in runs}
        for i in range(args.rounds):
            for r in runs if i % 2 == 0 else runs[::-1]:
                got[r.name].append(r.round(args.seconds, args.pmd_perf))
    finally:
        for r in runs:
            r.stop()
    print("%d flows, rule %s%s, EMC %d, %d rounds of %.2f s in turns, "
          "CPU %d; medians of TSC cycles/packet"
          % (args.flows, args.rule, " (exact rules)" if args.exact else "",
             args.emc_entries, args.rounds, args.seconds, args.cpu))
    keys = [k for k in ["busy"] + STAGES + ["emc%"] if k in got["A"][0]]
    print("%-11s %8s %8s %7s" % ("", "A", "B", "B/A"))
    for k in keys:
        a = statistics.median(g[k] for g in got["A"])
        b = statistics.median(g[k] for g in got["B"])
        print("%-11s %8.1f %8.1f %7.3f" % (k, a, b, b / a if a else 0))
    print("A busy: " + " ".join("%.1f" % g["busy"] for g in got["A"]))
    print("B busy: " + " ".join("%.1f" % g["busy"] for g in got["B"]))


if __name__ == "__main__":
    main()
