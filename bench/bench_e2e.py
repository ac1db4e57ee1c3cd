#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""End-to-end forwarding speed of `simdpath run` on one PMD thread.

Traffic: a capture of 64-byte UDP packets of up to 8192 distinct flows,
replayed forever by DPDK's pcap driver (infinite_rx) into port 1 (net_null
can only receive identical all-zero frames, which would match one rule);
port 2 is net_null (drops what it is sent). Rules: N exact 5-tuple rules, one per
flow (with N above 8192 the traffic uses the first 8192 of them). For each
N, EMC on and off, and several action lists, it reports packets per second
(ratio to the floor) and the PMD's own busy TSC cycles per packet (receive
included). dpdk-testpmd io forwarding on the same two ports in the same run
is the I/O floor.

Usage: bench_e2e.py SIMDPATH [--quick] [--seconds S]
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

FLOWS = [1, 1000, 10000, 100000, 1000000]
# The action mixes of the IPv4 rewrite seed table.
SRC, DST = "mod_nw_src:192.0.2.1", "mod_nw_dst:198.51.100.1"
MIXES = [("output", "output:2"),
         ("+dec_ttl", "dec_ttl,output:2"),
         ("+mod_nw_tos", "mod_nw_tos:32,output:2"),
         ("+mod_nw_src", SRC + ",output:2"),
         ("+mod_nw_dst", DST + ",output:2"),
         ("src+dst", SRC + "," + DST + ",output:2"),
         ("ttl+src+dst", "dec_ttl," + SRC + "," + DST + ",output:2"),
         ("ttl+tos+src+dst",
          "dec_ttl,mod_nw_tos:32," + SRC + "," + DST + ",output:2")]
TRAFFIC_FLOWS = 8192
EAL = ["--no-huge", "-m", "1024", "--no-shconf", "--no-pci",
       "--file-prefix=testpmd-bench"]


def csum(data):
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def flow_addr(i):
    return bytes([10, (i >> 16) & 0xFF, (i >> 8) & 0xFF, i & 0xFF])


def write_traffic(path, n):
    """TRAFFIC_FLOWS packets cycling through flows 0..n-1 (a capture of
    any other size can stall testpmd's pcap replay)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for j in range(TRAFFIC_FLOWS):
            i = j % n
            udp = struct.pack("!HHHH", 1024 + i % 50000, 4000 + i % 1000,
                              8 + 18, 0) + bytes(18)
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0,
                             0, 64, 17, 0, bytes([192, 168, 0, 1]),
                             flow_addr(i))
            ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
            frame = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0]) + \
                ip + udp
            f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)))
            f.write(frame)


def write_rules(path, n, actions):
    with open(path, "w") as f:
        for i in range(n):
            a = flow_addr(i)
            f.write("priority=10,in_port=1,udp,nw_src=192.168.0.1,"
                    "nw_dst=%d.%d.%d.%d,tp_src=%d,tp_dst=%d,actions=%s\n"
                    % (a[0], a[1], a[2], a[3], 1024 + i % 50000,
                       4000 + i % 1000, actions))


def run_simdpath(exe, pcap, rules, seconds, emc):
    args = [exe, "run", "--port",
            "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
            "--port", "net_null0,no-rx=1", "--flows", rules,
            "--duration", str(seconds), "--emc-entries",
            "8192" if emc else "0", "--", "-m", "1024",
            "--file-prefix=simdpath-bench"]
    env = dict(os.environ, SIMDPATH_CTL=os.path.join(
        os.path.dirname(pcap), "ctl.sock"))
    p = subprocess.run(args, capture_output=True, text=True, env=env,
                       timeout=seconds + 600)
    if p.returncode:
        raise SystemExit("simdpath failed: " + p.stderr[-1000:])
    m = re.search(r"^pmd 0: packets (\d+) .*emc hits (\d+).*; ([\d.]+) "
                  r"cycles/packet", p.stdout, re.M)
    pkts, hits, busy = int(m.group(1)), int(m.group(2)), float(m.group(3))
    return pkts, hits, busy


def run_testpmd(pcap, seconds):
    """testpmd's own receive rate on port 0 (median of its once-a-second
    reports), or None without testpmd."""
    testpmd = shutil.which("dpdk-testpmd")
    if not testpmd:
        return None
    args = [testpmd, "-l", "0-1"] + EAL + [
        "--vdev", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
        "--vdev", "net_null0,no-rx=1", "--",
        "--forward-mode=io", "--auto-start", "--total-num-mbufs=65536",
        "--stats-period=1"]
    # With --stats-period testpmd forwards and reports until SIGINT.
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    time.sleep(seconds + 1)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    rates = sorted(int(r) for r in re.findall(
        r"NIC statistics for port 0 .*?Rx-pps:\s+(\d+)", out, re.S)
        if int(r) > 0)
    return rates[len(rates) // 2] if rates else None


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    exe = os.path.abspath(sys.argv[1])
    quick = "--quick" in sys.argv
    seconds = 3
    if "--seconds" in sys.argv:
        seconds = int(sys.argv[sys.argv.index("--seconds") + 1])
    flows = [1, 1000] if quick else FLOWS
    mixes = MIXES[:1] if quick else MIXES
    work = tempfile.mkdtemp(prefix="simdpath-bench-")
    pcap = os.path.join(work, "traffic.pcap")
    print("%d s per run, one PMD thread, 64-byte UDP packets of min(N, %d)"
          " flows; cycles are TSC cycles; floor: dpdk-testpmd io forwarding "
          "of the same capture, same ports" % (seconds, TRAFFIC_FLOWS))
    print("%-8s %-4s %-16s %9s %11s %10s %12s %9s" % (
        "rules", "emc", "actions", "Mpps", "floor Mpps", "vs floor",
        "busy cyc/pkt", "emc hit"))
    for n in flows:
        write_traffic(pcap, min(n, TRAFFIC_FLOWS))
        floor_pps = run_testpmd(pcap, seconds)
        for name, actions in mixes:
            rules = os.path.join(work, "rules.txt")
            write_rules(rules, n, actions)
            for emc in (True, False):
                pkts, hits, busy = run_simdpath(exe, pcap, rules, seconds,
                                                emc)
                mpps = pkts / seconds / 1e6
                floor = floor_pps / 1e6 if floor_pps else 0
                print("%-8d %-4s %-16s %9.2f %11.2f %9.0f%% %12.1f %8.0f%%"
                      % (n, "on" if emc else "off", name, mpps, floor,
                         100.0 * mpps / floor if floor else 0, busy,
                         100.0 * hits / pkts if pkts else 0))
                sys.stdout.flush()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
