#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Match semantics as OVS's: `simdpath parse-pcap` against `ovs-ofctl
parse-pcap` (OVS's own flow_extract), field by field, on every packet of
the corpus and on generated packets of every protocol the key has, with
malformed and truncated variants of each.

Usage: ovs_parity.py SIMDPATH CORPUS_DIR FLOW_SYNTAX_MD [OUT_DIR]
Exit 77 (skip) without ovs-ofctl or the corpus.

Every field either program prints must be printed by both with the same
value, except the fields docs/flow-syntax.md lists as not matchable (its
"Not matchable" table, read from there so the list has one copy). in_port
is not compared: a capture has none (OVS prints ANY, simdpath 0).
Empty frames are left out: OVS's pcap reader takes one for the end of the
file.
"""
import ipaddress
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SHORTHANDS = {
    "ip": (0x0800, None), "ipv6": (0x86dd, None), "arp": (0x0806, None),
    "rarp": (0x8035, None), "mpls": (0x8847, None), "mplsm": (0x8848, None),
    "tcp": (0x0800, 6), "udp": (0x0800, 17), "sctp": (0x0800, 132),
    "icmp": (0x0800, 1), "igmp": (0x0800, 2), "tcp6": (0x86dd, 6),
    "udp6": (0x86dd, 17), "sctp6": (0x86dd, 132), "icmp6": (0x86dd, 58),
}
TCP_FLAGS = {"fin": 0x1, "syn": 0x2, "rst": 0x4, "psh": 0x8, "ack": 0x10,
             "urg": 0x20, "ece": 0x40, "cwr": 0x80, "ns": 0x100}
# Spellings of one field.
ALIASES = {"nw_frag": "ip_frag"}


def not_matchable(md_path):
    """The OVS field names of the "Not matchable" table of flow-syntax.md."""
    names, in_section = set(), False
    with open(md_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                in_section = line.strip() == "## Not matchable"
            elif in_section and line.startswith("| `"):
                names.update(re.findall(r"`([a-z0-9_]+)`",
                                        line.split("|")[1]))
    if not names:
        sys.exit("%s: no 'Not matchable' table" % md_path)
    return names


def tcp_flags(text):
    if re.fullmatch(r"(0x)?[0-9a-f]+", text):
        return int(text, 0)
    value = 0
    for name in text.split("|"):
        value |= TCP_FLAGS[name] if name in TCP_FLAGS else int(name, 0)
    return value


def value(name, text):
    if name == "tcp_flags":
        return tcp_flags(text)
    if name in ("ipv6_src", "ipv6_dst", "nd_target"):
        return ipaddress.IPv6Address(text).compressed
    if re.fullmatch(r"0x[0-9a-fA-F]+|[0-9]+", text):
        return int(text, 0)
    return text.lower()


def canonical(text):
    """A printed flow as {field: value}, shorthands and VLAN spellings
    resolved into dl_type, nw_proto and vlan_tci/vlan_tci1."""
    fields = {}
    vlan = {}
    for item in text.strip().split(","):
        if "=" not in item:
            if item not in SHORTHANDS:
                raise ValueError("unknown shorthand %r in %r" % (item, text))
            dl_type, proto = SHORTHANDS[item]
            fields["dl_type"] = dl_type
            if proto is not None:
                fields["nw_proto"] = proto
            continue
        name, text_value = item.split("=", 1)
        name = ALIASES.get(name, name)
        m = re.fullmatch(r"dl_vlan(_pcp)?(1?)", name)
        if m:
            vlan.setdefault(m.group(2), [0, 0])[bool(m.group(1))] = \
                int(text_value, 0)
            continue
        fields[name] = value(name, text_value)
    for suffix, (vid, pcp) in vlan.items():
        fields["vlan_tci" + suffix] = 0x1000 | pcp << 13 | vid
    fields.pop("in_port", None)
    return fields


# --- pcap files ---------------------------------------------------------

def read_pcap(path):
    """The frames of a classic pcap of link type Ethernet, else []."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    for endian in "<>":
        magic, = struct.unpack(endian + "I", data[:4])
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            break
    else:
        return []
    if struct.unpack(endian + "I", data[20:24])[0] != 1:
        return []
    frames, ofs = [], 24
    while ofs + 16 <= len(data):
        caplen = struct.unpack(endian + "I", data[ofs + 8:ofs + 12])[0]
        ofs += 16
        if ofs + caplen > len(data):
            break
        frames.append(data[ofs:ofs + caplen])
        ofs += caplen
    return frames


def write_pcap(path, frames):
    # OVS refuses records over 65535 bytes: both programs see the first
    # 65535 bytes of the few larger frames of the corpus.
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, frame in enumerate(frames):
            frame = frame[:65535]
            if not frame:
                continue
            f.write(struct.pack("<IIII", i, 0, len(frame), len(frame)))
            f.write(frame)


# --- generated packets -------------------------------------------------

MACS = bytes.fromhex("0a0000000002 0a0000000001")


def be16(v):
    return struct.pack("!H", v)


def ipv4(proto, payload, tos=0x2e, ttl=64, frag=0, opts=b"", ihl=None,
         total=None, version=4):
    ihl = (20 + len(opts)) // 4 if ihl is None else ihl
    total = 20 + len(opts) + len(payload) if total is None else total
    return (bytes([version << 4 | ihl, tos]) + be16(total) + be16(0x1234) +
            be16(frag) + bytes([ttl, proto]) + b"\0\0" +
            bytes([10, 0, 0, 1, 192, 168, 1, 2]) + opts + payload)


def ipv6(next_header, payload, plen=None, version=6):
    plen = len(payload) if plen is None else plen
    return (struct.pack("!I", version << 28 | 0xab << 20 | 0xcdef1) +
            be16(plen) + bytes([next_header, 63]) +
            bytes.fromhex("20010db8000000000000000000000001") +
            bytes.fromhex("20010db8000000000000000000000002") + payload)


def tcp(flags=0x012, doff=5):
    return (be16(1234) + be16(80) + struct.pack("!II", 1, 2) +
            be16(doff << 12 | flags) + be16(0xffff) + b"\0" * 4 +
            b"\x01" * (4 * doff - 20 if doff > 5 else 0) + b"data")


UDP = be16(53) + be16(1234) + be16(12) + b"\0\0" + b"abcd"
SCTP = be16(2905) + be16(2906) + b"\0" * 8 + b"chunk..."
ICMP = bytes([8, 0]) + b"\0\0" + be16(7) + be16(1) + b"ping"
IGMP = bytes([0x16, 0]) + b"\0\0" + bytes([239, 1, 2, 3])
ICMP6 = bytes([128, 0]) + b"\0\0" + be16(7) + be16(1) + b"ping"
TARGET = bytes.fromhex("fe800000000000000000000000000001")
ND_NS = bytes([135, 0, 0, 0]) + b"\0" * 4 + TARGET + \
    bytes([1, 1]) + bytes.fromhex("020000000001")
ND_NA = bytes([136, 0, 0, 0]) + bytes([0x60, 0, 0, 0]) + TARGET + \
    bytes([2, 1]) + bytes.fromhex("020000000002")


def ext(next_header, body=b"\0" * 6):
    return bytes([next_header, (len(body) + 2) // 8 - 1]) + body


def ah(next_header):
    # AH's length is in 4-byte words minus 2: 24 bytes with a 12-byte ICV.
    return bytes([next_header, 4]) + b"\0\0" + b"\0" * 20


def frag6(next_header, offset, more):
    return bytes([next_header, 0]) + be16(offset << 3 | more) + b"\0\0\0\x2a"


def arp(op=1, hrd=1, pro=0x0800, hln=6, pln=4):
    return (be16(hrd) + be16(pro) + bytes([hln, pln]) + be16(op) +
            bytes.fromhex("a0a1a2a3a4a5 0a000001 b0b1b2b3b4b5 0a000002"))


def mpls(*labels):
    out = b""
    for i, label in enumerate(labels):
        bos = i == len(labels) - 1
        out += struct.pack("!I", label << 12 | 5 << 9 | bos << 8 | 64)
    return out


def l3_payloads():
    """(ethertype, payload) for every protocol of the key."""
    v4 = [
        ipv4(6, tcp()), ipv4(6, tcp(0x1ff)), ipv4(6, tcp(0x002, 8)),
        ipv4(17, UDP), ipv4(132, SCTP), ipv4(1, ICMP), ipv4(2, IGMP),
        ipv4(47, b"\0" * 8), ipv4(17, UDP, opts=b"\x01\x01\x01\x00"),
        ipv4(17, UDP, frag=0x2000), ipv4(17, UDP, frag=0x0010),
        ipv4(17, UDP, frag=0x2010), ipv4(17, UDP, frag=0x4000, tos=0xff,
                                         ttl=1),
        # malformed: header length, total length, version, TCP offset,
        # short ICMP/IGMP/UDP
        ipv4(17, UDP, ihl=4), ipv4(17, UDP, ihl=15), ipv4(17, UDP, total=16),
        ipv4(17, UDP, total=400), ipv4(17, UDP, total=24),
        ipv4(17, UDP, version=6), ipv4(6, tcp(doff=4)),
        ipv4(6, tcp(doff=15)), ipv4(1, ICMP[:4]), ipv4(2, IGMP[:4]),
        ipv4(17, UDP[:4]), ipv4(6, tcp()[:12]), ipv4(58, ICMP6),
    ]
    v6 = [
        ipv6(6, tcp()), ipv6(17, UDP), ipv6(132, SCTP), ipv6(58, ICMP6),
        ipv6(58, ND_NS), ipv6(58, ND_NA), ipv6(58, ND_NS[:24]),
        ipv6(58, ND_NS[:4]), ipv6(58, ICMP6[:6]), ipv6(59, b""),
        ipv6(1, ICMP), ipv6(2, IGMP),
        ipv6(0, ext(17) + UDP), ipv6(43, ext(6) + tcp()),
        ipv6(60, ext(17, b"\0" * 14) + UDP), ipv6(51, ah(89) + b"\0" * 8),
        ipv6(51, ah(6) + tcp()), ipv6(0, ext(51) + ah(17) + UDP),
        ipv6(44, frag6(17, 0, 1) + UDP), ipv6(44, frag6(17, 0, 0) + UDP),
        ipv6(44, frag6(17, 100, 0) + UDP), ipv6(44, frag6(6, 5, 1) + UDP),
        ipv6(0, b"".join(ext(0) for _ in range(9)) + ext(17) + UDP),
        # malformed: payload length, version, truncated extension
        ipv6(17, UDP, plen=200), ipv6(17, UDP, plen=4), ipv6(17, UDP,
                                                              version=4),
        ipv6(0, ext(17)[:6], plen=6), ipv6(0, ext(17, b"\0" * 14)[:12]),
        ipv6(51, ah(17)[:12]),
    ]
    out = [(0x0800, p) for p in v4] + [(0x86dd, p) for p in v6]
    out += [(0x0806, arp()), (0x0806, arp(2)), (0x0806, arp(0x0101)),
            (0x0806, arp(hrd=6)), (0x0806, arp(pln=16)), (0x8035, arp(3)),
            (0x8035, arp(4)[:20]), (0x8847, mpls(100)),
            (0x8847, mpls(0xfffff, 17) + ipv4(17, UDP)), (0x8848, mpls(1)),
            (0x8847, mpls(1, 2, 3, 4)), (0x8847, b"\x00\x01"),
            (0x88cc, b"\x02\x07\x04" + b"\0" * 20), (0x0600, b"\0" * 30)]
    return out


def llc_frames():
    """802.3 frames: a length where the type is, then LLC, maybe SNAP."""
    snap = bytes.fromhex("aaaa03 000000")
    bodies = [
        bytes.fromhex("424203") + b"\0" * 35,           # STP
        bytes.fromhex("aaaa03 00000c 2000") + b"\0" * 30,  # CDP
        snap + be16(0x0800) + ipv4(17, UDP),
        snap + be16(0x86dd) + ipv6(6, tcp()),
        snap + be16(0x0806) + arp(),
        snap + be16(0x8100) + be16(5) + be16(0x0800) + ipv4(6, tcp()),
        snap + be16(0x0500) + b"\0" * 20,
        snap + be16(0x0800)[:1], snap, b"\xaa\xaa",
    ]
    return [MACS + be16(min(len(b), 0x5ff)) + b for b in bodies]


def generated():
    frames = llc_frames()
    tags = [b"", be16(0x8100) + be16(0xa064),
            be16(0x88a8) + be16(0x2005) + be16(0x8100) + be16(0x6007),
            be16(0x8100) + be16(0x0001) + be16(0x8100) + be16(0x0002),
            (be16(0x8100) + be16(0x0003)) * 3]
    for i, tag in enumerate(tags):
        for ethertype, payload in l3_payloads():
            frame = MACS + tag + be16(ethertype) + payload
            frames.append(frame)
            if len(frame) < 60:
                frames.append(frame + b"\xee" * (60 - len(frame)))
            # Every truncation, for the untagged, one-tag and QinQ forms.
            if i < 3:
                frames.extend(frame[:n] for n in range(len(frame)))
    return frames


# --- comparison ---------------------------------------------------------

def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        sys.exit("%s: exit %d: %s" % (" ".join(cmd), proc.returncode,
                                      proc.stderr.strip()))
    return proc.stdout.splitlines()


def compare(simdpath, pcap, origins, ignored):
    ovs = run(["ovs-ofctl", "parse-pcap", pcap])
    ours = run(simdpath + ["parse-pcap", pcap])
    if len(ovs) != len(origins) or len(ours) != len(origins):
        sys.exit("%s: %d packets, ovs-ofctl printed %d lines, simdpath %d"
                 % (pcap, len(origins), len(ovs), len(ours)))
    bad = []
    for origin, theirs_text, ours_line in zip(origins, ovs, ours):
        ours_text = ours_line.split(": ", 2)[2]
        theirs, mine = canonical(theirs_text), canonical(ours_text)
        diffs = []
        for name in sorted(set(theirs) | set(mine)):
            if name in ignored:
                continue
            a, b = theirs.get(name, "(none)"), mine.get(name, "(none)")
            if a != b:
                diffs.append((name, a, b))
        if diffs:
            bad.append((origin, diffs, theirs_text, ours_line))
    return bad


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    simdpath = os.environ.get("SP_WRAPPER", "").split() + [sys.argv[1]]
    corpus, md = sys.argv[2], sys.argv[3]
    if not shutil.which("ovs-ofctl"):
        print("skip: ovs-ofctl not installed (openvswitch-common)")
        return 77
    if not os.path.isdir(corpus):
        print("skip: no corpus at %s" % corpus)
        return 77
    ignored = not_matchable(md)
    out = sys.argv[4] if len(sys.argv) == 5 else tempfile.mkdtemp()
    os.makedirs(out, exist_ok=True)
    sets = []
    frames, origins = [], []
    for name in sorted(os.listdir(corpus)):
        for i, frame in enumerate(read_pcap(os.path.join(corpus, name))):
            if not frame:
                continue
            frames.append(frame)
            origins.append("%s #%d" % (name, i + 1))
    sets.append(("corpus", frames, origins))
    frames = [f for f in generated() if f]
    sets.append(("generated", frames,
                 ["generated #%d (%s)" % (i + 1, f.hex())
                  for i, f in enumerate(frames)]))
    failed = False
    for label, frames, origins in sets:
        pcap = os.path.join(out, label + ".pcap")
        write_pcap(pcap, frames)
        bad = compare(simdpath, pcap, origins, ignored)
        print("%s: %d packets, %d disagree (fields not compared: %s)"
              % (label, len(frames), len(bad), ",".join(sorted(ignored))))
        if not bad:
            continue
        failed = True
        counts = {}
        for _, diffs, _, _ in bad:
            for name, _, _ in diffs:
                counts[name] = counts.get(name, 0) + 1
        for name, n in sorted(counts.items(), key=lambda kv: -kv[1]):
            print("  %-12s %d packets" % (name, n))
        for origin, diffs, theirs, ours in bad[:15]:
            print("%s:" % origin)
            print("  " + "; ".join("%s: ovs %s, simdpath %s" % d
                                   for d in diffs))
            print("  ovs:      " + theirs)
            print("  simdpath: " + ours)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
