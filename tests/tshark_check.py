#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Known answers for the scalar parser from an independent dissector.

Every capture of the corpus goes through `simdpath parse-pcap --impl
scalar` and through Wireshark's `tshark -T fields`; the fields both report
(Ethernet, VLAN, IPv4/IPv6, TCP/UDP/SCTP ports, TCP flags, ICMP, ARP) must
agree. Usage: tshark_check.py SIMDPATH CORPUS_DIR. Exit 77 (skip) without
tshark, mergecap or the corpus.

Systematic differences, and why they are not compared:
- Packets whose parse status is not "ok": simdpath stops at the first
  inconsistency (a length past the frame, a truncated header) where
  tshark keeps dissecting what is there, marking it malformed.
- L4 fields of IP fragments: simdpath has ports for a first fragment and
  none for later ones; tshark (reassembly off, so frames stay separate)
  dissects no L4 header in any fragment.
- The outer tag of 802.1ad (0x88a8) is tshark's ieee8021ad.*, an inner or
  802.1Q tag its vlan.*: the key keeps the outer tag, compared with
  whichever tshark reports first.
- Tunnels (GRE, MPLS, VXLAN, types simdpath does not know): tshark
  dissects the inner packet, so its first VLAN tag or L4 port may come from
  there. The key describes the outer headers only: a tag is compared when
  tshark's protocol chain starts eth:ethertype:vlan (or ieee8021ad), L4
  fields only for the protocols the key has.
- ARP opcodes above 255: the key's 8-bit arp_op slot (nw_proto) holds 0
  for them, as in OVS; tshark reports the 16-bit value.
"""
import os
import shutil
import subprocess
import sys
import tempfile

FIELDS = [
    "frame.number", "frame.protocols", "eth.src", "eth.dst", "ieee8021ad.id",
    "ieee8021ad.priority", "vlan.id", "vlan.priority", "ip.src", "ip.dst",
    "ip.proto", "ip.ttl", "ip.dsfield", "ipv6.src", "ipv6.dst", "ipv6.hlim",
    "ipv6.tclass", "ipv6.flow", "tcp.srcport", "tcp.dstport", "tcp.flags",
    "udp.srcport", "udp.dstport", "sctp.srcport", "sctp.dstport",
    "icmp.type", "icmp.code", "icmpv6.type", "icmpv6.code", "arp.opcode",
    "arp.src.proto_ipv4", "arp.dst.proto_ipv4", "arp.src.hw_mac",
    "arp.dst.hw_mac",
]

# flow field -> tshark fields by protocol family, compared as numbers when
# both parse as one.
L4 = {
    "tcp": {"tp_src": "tcp.srcport", "tp_dst": "tcp.dstport",
            "tcp_flags": "tcp.flags"},
    "udp": {"tp_src": "udp.srcport", "tp_dst": "udp.dstport"},
    "sctp": {"tp_src": "sctp.srcport", "tp_dst": "sctp.dstport"},
    "icmp": {"icmp_type": "icmp.type", "icmp_code": "icmp.code"},
    "icmp6": {"icmp_type": "icmpv6.type", "icmp_code": "icmpv6.code"},
}
IPV4 = {"nw_src": "ip.src", "nw_dst": "ip.dst", "nw_ttl": "ip.ttl"}
IPV6 = {"ipv6_src": "ipv6.src", "ipv6_dst": "ipv6.dst", "nw_ttl": "ipv6.hlim",
        "ipv6_label": "ipv6.flow"}
ARP = {"arp_op": "arp.opcode", "arp_spa": "arp.src.proto_ipv4",
       "arp_tpa": "arp.dst.proto_ipv4", "arp_sha": "arp.src.hw_mac",
       "arp_tha": "arp.dst.hw_mac"}


def same(ours, theirs):
    if theirs == "":
        return False
    try:
        return int(ours, 0) == int(theirs, 0)
    except ValueError:
        return ours.lower() == theirs.lower()


def parse_flow(text):
    items = text.split(",")
    fields = dict(i.split("=", 1) for i in items if "=" in i)
    short = items[0] if "=" not in items[0] else ""
    return short, fields


def compare(short, ours, t):
    """Yields (field, ours, theirs) for each disagreement."""
    pairs = [("dl_src", "eth.src"), ("dl_dst", "eth.dst")]
    tci = int(ours.get("vlan_tci", "0"), 16)
    outer_id = t["ieee8021ad.id"] or t["vlan.id"]
    outer_pcp = t["ieee8021ad.priority"] or t["vlan.priority"]
    if tci & 0x1000:
        if not same(str(tci & 0xfff), outer_id):
            yield "dl_vlan", str(tci & 0xfff), outer_id
        if not same(str(tci >> 13), outer_pcp):
            yield "dl_vlan_pcp", str(tci >> 13), outer_pcp
    elif t["frame.protocols"].split(":")[2:3] in (["vlan"], ["ieee8021ad"]):
        yield "vlan_tci", ours.get("vlan_tci"), outer_id
    family = short.rstrip("6") if short not in ("ip", "ipv6") else ""
    if short in ("ip", "tcp", "udp", "sctp", "icmp"):
        pairs += IPV4.items()
        tos = int(ours["nw_tos"]) | int(ours["nw_ecn"])
        if not same(str(tos), t["ip.dsfield"]):
            yield "nw_tos", str(tos), t["ip.dsfield"]
    elif short in ("ipv6", "tcp6", "udp6", "sctp6", "icmp6"):
        pairs += IPV6.items()
        tos = int(ours["nw_tos"]) | int(ours["nw_ecn"])
        if not same(str(tos), t["ipv6.tclass"]):
            yield "nw_tos", str(tos), t["ipv6.tclass"]
        if short == "icmp6":
            family = "icmp6"
    elif short == "arp":
        pairs += ARP.items()
        if int(t["arp.opcode"] or "0") > 255:
            pairs.remove(("arp_op", "arp.opcode"))
            if ours["arp_op"] != "0":
                yield "arp_op", ours["arp_op"], t["arp.opcode"]
    if ours.get("ip_frag", "no") == "no" and family in L4:
        pairs += L4[family].items()
    for flow_field, tshark_field in pairs:
        if not same(ours[flow_field], t[tshark_field]):
            yield flow_field, ours[flow_field], t[tshark_field]


def main():
    simdpath, corpus = sys.argv[1], sys.argv[2]
    for tool in ("tshark", "mergecap"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (scripts/setup-debian)")
            return 77
    if not os.path.isdir(corpus):
        print(f"SKIP: no capture corpus at {corpus}")
        return 77
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus)
                   if f.endswith((".pcap", ".pcapng")))
    with tempfile.TemporaryDirectory() as tmp:
        merged = os.path.join(tmp, "all.pcap")
        # One capture, in file order: tshark starts once, not per file.
        subprocess.run(["mergecap", "-a", "-F", "pcap", "-w", merged] +
                       files, check=True)
        ours = subprocess.run([simdpath, "parse-pcap", merged, "--impl",
                               "scalar"], check=True, capture_output=True,
                              text=True).stdout.splitlines()
        cmd = ["tshark", "-n", "-r", merged, "-o", "ip.defragment:FALSE",
               "-o", "ipv6.defragment:FALSE", "-T", "fields", "-E",
               "separator=/t", "-E", "occurrence=f"]
        for f in FIELDS:
            cmd += ["-e", f]
        theirs = subprocess.run(cmd, check=True, capture_output=True,
                                text=True).stdout.splitlines()
    if len(ours) != len(theirs):
        print(f"FAIL: {len(ours)} packets from simdpath, {len(theirs)} "
              "from tshark")
        return 1
    compared = skipped = failed = 0
    for line, row in zip(ours, theirs):
        number, status, flow = line.split(": ", 2)
        t = dict(zip(FIELDS, row.split("\t")))
        if status != "ok":
            skipped += 1
            continue
        compared += 1
        short, fields = parse_flow(flow)
        diffs = list(compare(short, fields, t))
        if diffs:
            failed += 1
            if failed <= 20:
                print(f"packet {number}: {flow}")
                for name, a, b in diffs:
                    print(f"  {name}: simdpath {a}, tshark {b}")
    print(f"tshark: {len(files)} captures, {compared} packets compared, "
          f"{skipped} not compared (status not ok), {failed} disagree")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
