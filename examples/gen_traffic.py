#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes examples/traffic.pcap, the demo's bundled traffic (deterministic).

A mix a small site's uplink sees: IPv4 TCP and UDP, DNS, VLAN-tagged
traffic, IPv6, ICMP, ARP, and a few malformed frames (truncated, bad IHL,
bad version) that must be counted, not crash anything.
Run from the project root: python3 examples/gen_traffic.py
"""
import random
import struct
import sys


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def mac(n):
    return bytes([0x02, 0, 0, 0, (n >> 8) & 0xFF, n & 0xFF])


def eth(dst, src, ethertype, vlan=None):
    hdr = dst + src
    if vlan is not None:
        hdr += struct.pack("!HH", 0x8100, vlan)
    return hdr + struct.pack("!H", ethertype)


def ipv4(src, dst, proto, payload, ttl=64, tos=0, ident=0):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), ident,
                      0x4000, ttl, proto, 0, bytes(src), bytes(dst))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + payload


def l4(proto, src, dst, sport, dport, payload, pseudo_v6=False):
    if proto == 6:
        seg = struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x18,
                          65535, 0, 0) + payload
        off = 16
    else:
        seg = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
        off = 6
    if pseudo_v6:
        pseudo = bytes(src) + bytes(dst) + struct.pack("!IxxxB", len(seg),
                                                         proto)
    else:
        pseudo = bytes(src) + bytes(dst) + struct.pack("!xBH", proto,
                                                         len(seg))
    c = csum(pseudo + seg)
    if proto == 17 and c == 0:
        c = 0xFFFF
    return seg[:off] + struct.pack("!H", c) + seg[off + 2:]


def ipv6(src, dst, nh, payload, hlim=64):
    return struct.pack("!IHBB16s16s", 0x60000000 | 0x12345, len(payload), nh,
                       hlim, bytes(src), bytes(dst)) + payload


def v4(a, b, c, d):
    return bytes([a, b, c, d])


def v6(n):
    return bytes([0x20, 0x01, 0x0D, 0xB8] + [0] * 10 + [n >> 8, n & 0xFF])


def frames(rng):
    gw, host = mac(1), mac(2)
    for i in range(2000):
        kind = rng.choice(["web", "web", "tls", "dns", "vlan", "v6tcp",
                           "v6udp", "icmp", "arp", "other", "bad"])
        client = v4(192, 168, 1, 1 + rng.randrange(50))
        server = v4(10, 0, 0, 1 + rng.randrange(20))
        sport = 1024 + rng.randrange(60000)
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
        if kind in ("web", "tls"):
            dport = 80 if kind == "web" else 443
            seg = l4(6, client, server, sport, dport, body)
            yield eth(gw, host, 0x0800) + ipv4(client, server, 6, seg,
                                               ident=i)
        elif kind == "dns":
            seg = l4(17, client, v4(10, 0, 1, 53), sport, 53, body[:60])
            yield eth(gw, host, 0x0800) + ipv4(client, v4(10, 0, 1, 53), 17,
                                               seg, ident=i)
        elif kind == "vlan":
            seg = l4(17, client, server, sport, 4789, body)
            yield eth(gw, host, 0x0800, vlan=100) + ipv4(client, server, 17,
                                                         seg, ident=i)
        elif kind in ("v6tcp", "v6udp"):
            proto = 6 if kind == "v6tcp" else 17
            a, b = v6(1 + rng.randrange(30)), v6(0x100 + rng.randrange(5))
            seg = l4(proto, a, b, sport, 8080, body, pseudo_v6=True)
            yield eth(gw, host, 0x86DD) + ipv6(a, b, proto, seg)
        elif kind == "icmp":
            msg = struct.pack("!BBHHH", 8, 0, 0, 7, i) + body[:56]
            msg = msg[:2] + struct.pack("!H", csum(msg)) + msg[4:]
            yield eth(gw, host, 0x0800) + ipv4(client, server, 1, msg,
                                               ident=i)
        elif kind == "arp":
            arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, host,
                              client, b"\0" * 6, v4(192, 168, 1, 254))
            yield eth(b"\xff" * 6, host, 0x0806) + arp + b"\0" * 18
        elif kind == "other":
            seg = l4(17, client, server, sport, 9999, body)
            yield eth(gw, host, 0x0800) + ipv4(client, server, 17, seg,
                                               ttl=1 + rng.randrange(3),
                                               ident=i)
        else:
            seg = l4(6, client, server, sport, 80, body)
            good = eth(gw, host, 0x0800) + ipv4(client, server, 6, seg,
                                                ident=i)
            how = rng.randrange(3)
            if how == 0:
                yield good[:14 + rng.randrange(20)]  # truncated IPv4
            elif how == 1:
                yield good[:14] + bytes([0x42]) + good[15:]  # IHL 2
            else:
                yield good[:14] + bytes([0x75]) + good[15:]  # version 7


def main(path):
    rng = random.Random(20261130)
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for n, frame in enumerate(frames(rng)):
            f.write(struct.pack("<IIII", 1700000000 + n // 1000,
                                (n % 1000) * 1000, len(frame), len(frame)))
            f.write(frame)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/traffic.pcap")
