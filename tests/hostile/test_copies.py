#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Copies and long frames through `simdpath run` on net_pcap.

Usage: test_copies.py SIMDPATH

Every output of a packet must carry exactly the bytes the actions before
it produced: rules that move the frame's start or change its length
(push_vlan, strip_vlan) output to several ports, before and after those
actions, and every frame on every port is compared byte for byte with
tests/integration/model.py. Frames run from 60 bytes to 65,000; net_pcap
delivers each one over 2,048 bytes as a chain of mbufs, which simdpath
must parse, rewrite and send whole. Other flows' frames, full of a marker, go
between them, so a copy that takes bytes from elsewhere shows. Then: a
frame too long for any buffer is dropped as too_long, and 0-byte and
runt frames on a two-output rule are counted once and sent to both.

Runs end by counts: the control socket is polled until port 1 has
received every frame (the time limit is only a safety net).
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import model  # noqa: E402
from report import (RESULTS, check, conserved, counters, no_leak,
                    summary)  # noqa

EXE = os.path.abspath(sys.argv[1]) if len(sys.argv) == 2 else None
WORK = tempfile.mkdtemp(prefix="simdpath-copies-")
SAFETY_S = 300

# Over 2,048 bytes net_pcap chains mbufs; 65,000 leaves room for pushes.
SIZES = [60, 1514, 2048, 2049, 2100, 4000, 9000, 65000]
TAG = 0xB064  # PCP 5, DEI set (push_vlan must not copy it), VID 100
MARKER = b"SECRET-PASSWORD-"

# One rule per UDP port; every action that moves the frame's start or
# changes its length, before, between and after outputs.
RULES = {
    2001: "push_vlan:0x8100,mod_vlan_vid:5,output:2,IN_PORT",
    2002: "IN_PORT,push_vlan:0x88a8,output:2,output:3",
    2003: "push_vlan:0x8100,IN_PORT,push_vlan:0x88a8,mod_vlan_pcp:3,"
          "output:2,strip_vlan,output:3",
    2004: "strip_vlan,output:2,IN_PORT",
    2005: "output:3,strip_vlan,output:2,push_vlan:0x8100,mod_vlan_vid:7,"
          "IN_PORT",
    2006: "push_vlan:0x8100,mod_tp_dst:3006,IN_PORT,"
          "mod_nw_src:192.0.2.9,output:2",
    2007: "strip_vlan,mod_tp_src:7,IN_PORT,output:2",
    2008: "mod_tp_dst:3008,IN_PORT,output:2,output:3",
    2009: "output:2",
    2010: "push_vlan:0x8100,push_vlan:0x88a8,IN_PORT,strip_vlan,"
          "strip_vlan,output:2,strip_vlan,output:3",
}
FLOWS = "".join("priority=10,udp,tp_dst=%d,actions=%s\n" % (p, a)
                for p, a in sorted(RULES.items()))
FLOWS += ("priority=10,tcp,tp_dst=2000,actions=mod_tp_dst:3000,output:2\n"
          "priority=1,actions=output:3\n")


def ipv4_frame(size, proto, dport, seed, tag=None, fill=None):
    """An Ethernet (tagged if 'tag') IPv4 UDP or TCP frame of 'size' bytes
    with valid checksums; the payload is 'fill' repeated, or bytes that
    differ from frame to frame."""
    eth = bytes.fromhex("02000000000202000000%04x" % (seed & 0xFFFF))
    if tag is not None:
        eth += struct.pack("!HH", model.ETH_VLAN, tag)
    eth += struct.pack("!H", model.ETH_IP)
    l4_hdr = 20 if proto == 6 else 8
    n = size - len(eth) - 20 - l4_hdr
    if fill:
        payload = (fill * (n // len(fill) + 1))[:n]
    else:
        payload = bytes((seed * 31 + i * 7 + (i >> 8)) & 0xFF
                        for i in range(n))
    src, dst = bytes([10, 0, seed >> 8 & 0xFF, seed & 0xFF]), \
        bytes([10, 1, 0, 2])
    if proto == 6:
        l4 = struct.pack("!HHIIBBHHH", 1024 + seed % 1000, dport, seed, 0,
                         0x50, 0x10, 1000, 0, 0) + payload
        ofs = 16
    else:
        l4 = struct.pack("!HHHH", 1024 + seed % 1000, dport, 8 + n,
                         0) + payload
        ofs = 6
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4),
                               seed & 0xFFFF, 0, 64, proto, 0, src, dst))
    ip[10:12] = struct.pack("!H", model.csum(bytes(ip)))
    l4 = bytearray(l4)
    pseudo = src + dst + struct.pack("!xBH", proto, len(l4))
    c = model.csum(pseudo + bytes(l4))
    if proto == 17 and c == 0:
        c = 0xFFFF  # 0 would say "no checksum"
    l4[ofs:ofs + 2] = struct.pack("!H", c)
    frame = eth + bytes(ip) + bytes(l4)
    assert len(frame) == size
    return frame


def traffic():
    frames, seed = [], 1
    for size in SIZES:
        for port in sorted(RULES):
            for tag in (None, TAG):
                frames.append(ipv4_frame(size, 17, port, seed, tag))
                seed += 1
                # Another flow's frame of the same size, all marker.
                frames.append(ipv4_frame(size, 17, 9999, seed, tag,
                                         MARKER))
                seed += 1
        frames.append(ipv4_frame(size, 6, 2000, seed))
        seed += 1
    return frames


def env(sock):
    e = dict(os.environ, SIMDPATH_CTL=sock)
    e.pop("SIMDPATH_IMPL", None)
    return e


def run_capture(frames, flows, tag, impl=None):
    """Sends frames into port 1 of three net_pcap ports; stops once port
    1 has received all of them. Returns (rc, report, [frames on port N])."""
    d = os.path.join(WORK, tag)
    os.makedirs(d)
    pcap, flow_file = os.path.join(d, "in.pcap"), os.path.join(d, "flows")
    sock = os.path.join(d, "ctl.sock")
    model.write_pcap(pcap, frames)
    with open(flow_file, "w") as f:
        f.write(flows)
    outs = [os.path.join(d, "port%d.pcap" % p) for p in (1, 2, 3)]
    args = [EXE, "run",
            "--port", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (pcap, outs[0]),
            "--port", "net_pcap1,tx_pcap=" + outs[1],
            "--port", "net_pcap2,tx_pcap=" + outs[2],
            "--flows", flow_file, "--duration", str(SAFETY_S)]
    if impl:
        args += ["--impl", impl]
    proc = subprocess.Popen(args, cwd=d, env=env(sock),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + SAFETY_S
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            p = subprocess.run([EXE, "ctl", "counters-show"], env=env(sock),
                               capture_output=True, text=True, timeout=30)
            if counters(p.stdout).get(1, {}).get("rx", -1) >= len(frames):
                subprocess.run([EXE, "ctl", "stop"], env=env(sock),
                               capture_output=True, timeout=30)
                break
            time.sleep(0.05)
        out, err = proc.communicate(timeout=SAFETY_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    got = [model.read_pcap(o) if os.path.exists(o) else [] for o in outs]
    return proc.returncode, out + err, got


def supported_variants():
    p = subprocess.run([EXE, "impls"], capture_output=True, text=True,
                       env=env(os.path.join(WORK, "none.sock")))
    return re.findall(r"^  ([a-z0-9]+) +\d+ bits  supported", p.stdout,
                      re.M)


def compare(got, want, what):
    """Every port's frames equal the model's, byte for byte (packets of
    different rules may leave a burst in another order)."""
    for p in range(3):
        w = want.get(p + 1, [])
        if not check(sorted(got[p]) == sorted(w),
                     "%s: port %d sent %d frames, the model %d, or other "
                     "bytes" % (what, p + 1, len(got[p]), len(w))):
            extra = [f for f in got[p] if f not in w]
            for f in extra[:2]:
                print("  unexpected %d bytes: %s%s" % (
                    len(f), f[:40].hex(), " (marker inside)"
                    if MARKER in f and MARKER not in f[:60] else ""))


def test_copies_every_variant():
    frames = traffic()
    want, drops, skipped = model.forward(frames, FLOWS.splitlines(), 1)
    check(skipped == 0 and not drops, "the model takes every frame: "
          "%d skipped, drops %s" % (skipped, drops))
    for impl in supported_variants() + ["autovalidate"]:
        rc, report, got = run_capture(frames, FLOWS, "copies-" + impl, impl)
        check(rc == 0, "%s exits 0 (rc %d): %s" % (impl, rc, report[-800:]))
        ports = counters(report)
        check(ports.get(1, {}).get("rx") == len(frames),
              "%s: port 1 received %s of %d" % (impl, ports.get(1),
                                                len(frames)))
        check(conserved(ports), "%s: counters conserve: %s" % (impl, ports))
        check(all(not sum(p["drops"].values()) for p in ports.values()),
              "%s: nothing dropped: %s" % (impl, ports))
        check(re.search(r"parse errors 0;", report),
              "%s: every frame parsed whole" % impl)
        check(no_leak(report), "%s: no mbuf leaked" % impl)
        if impl == "autovalidate":
            check(re.search(r"autovalidate: [1-9]\d* checks, 0 mismatches",
                            report), "autovalidate: no mismatch")
        compare(got, want, impl)


def test_too_long():
    """A frame longer than the largest buffer: dropped, counted, and the
    frames around it go through."""
    frames = [ipv4_frame(100, 17, 2009, 1), ipv4_frame(65535, 17, 2009, 2),
              ipv4_frame(9000, 17, 2009, 3)]
    flows = "udp,tp_dst=2009,actions=output:2\n"
    rc, report, got = run_capture(frames, flows, "too-long")
    ports = counters(report)
    check(rc == 0, "too long: exits 0: " + report[-800:])
    check(ports.get(1, {}).get("drops", {}).get("too_long") == 1,
          "too long: one too_long drop: %s" % ports)
    check(conserved(ports), "too long: counters conserve: %s" % ports)
    check(sorted(got[1]) == sorted([frames[0], frames[2]]),
          "too long: port 2 sent the other two whole (%s)"
          % [len(f) for f in got[1]])
    check(no_leak(report), "too long: no mbuf leaked")


def test_empty_and_runt():
    """0-byte and 5-byte frames on a two-output rule: one copy each,
    both outputs, nothing counted twice."""
    frames = [b"", b"\x01\x02\x03\x04\x05"]
    rc, report, got = run_capture(frames, "actions=output:2,output:3\n",
                                  "empty")
    ports = counters(report)
    check(rc == 0, "empty: exits 0: " + report[-800:])
    check(conserved(ports), "empty: counters conserve: %s" % ports)
    p1 = ports.get(1, {})
    check(p1.get("rx") == 2 and p1.get("copies") == 2 and
          not sum(p1.get("drops", {1: 1}).values()),
          "empty: 2 received, 2 copies, none dropped: %s" % p1)
    check(got[1] == frames and got[2] == frames,
          "empty: ports 2 and 3 sent both frames: %s"
          % [[len(f) for f in g] for g in got])


def main():
    if not EXE:
        raise SystemExit(__doc__)
    if not os.path.exists(EXE):
        raise SystemExit("no simdpath at %s" % EXE)
    for t in (test_empty_and_runt, test_too_long, test_copies_every_variant):
        t()
    if not RESULTS["failed"]:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(summary("copies"))


if __name__ == "__main__":
    main()
