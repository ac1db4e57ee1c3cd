#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What the per-stage profile costs: one `simdpath run` forwarding a
one-packet capture replayed forever (net_pcap infinite_rx) to net_null,
rule in_port=1,actions=output:2, with the profile switched off and on in
alternating rounds (ctl pmd-perf-enable), each round's cycles per packet
read from counters-show (busy cycles, measured either way).

Usage: bench_profile.py SIMDPATH [ROUNDS [SECONDS]]
"""
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def one_packet_pcap(path):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 1, 0, 1]))
    udp = struct.pack("!HHHH", 1024, 80, 26, 0) + bytes(18)
    frame = bytes.fromhex("020000000002020000000001") + b"\x08\x00" + ip + udp
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)


def main():
    exe = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5
    work = tempfile.mkdtemp(prefix="sp-profile-")
    pcap, flows = os.path.join(work, "one.pcap"), os.path.join(work, "f.txt")
    one_packet_pcap(pcap)
    with open(flows, "w") as f:
        f.write("in_port=1,actions=output:2\n")
    env = dict(os.environ, SIMDPATH_CTL=os.path.join(work, "ctl.sock"))

    def ctl(*args):
        return subprocess.run([exe, "ctl"] + list(args), env=env, text=True,
                              capture_output=True).stdout

    proc = subprocess.Popen(
        [exe, "run", "--port",
         "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap, "--port",
         "net_null0,no-rx=1", "--flows", flows, "--duration", "600", "--",
         "--file-prefix=sp-profile"], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    for _ in range(100):
        if "pmd 0" in ctl("counters-show"):
            break
        time.sleep(0.1)
    got = {"off": [], "on": []}
    for r in range(rounds):
        mode = ("off", "on")[r % 2]
        ctl("pmd-perf-enable", mode)
        ctl("counters-clear")
        time.sleep(seconds)
        m = re.search(r"([\d.]+) cycles/packet", ctl("counters-show"))
        got[mode].append(float(m.group(1)))
    ctl("stop")
    proc.wait(timeout=60)
    off, on = statistics.median(got["off"]), statistics.median(got["on"])
    print("off: %s\non: %s" % (got["off"], got["on"]))
    print("median cycles/packet: off %.1f, on %.1f: the profile costs %.1f%%"
          % (off, on, 100 * (on - off) / off))


if __name__ == "__main__":
    main()
