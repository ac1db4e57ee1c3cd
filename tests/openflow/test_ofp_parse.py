#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""simdpath's OpenFlow encoder against an independent decoder.

Usage: test_ofp_parse.py OF_ENCODE
OF_ENCODE (tests/openflow/of_encode.c) writes the FLOW_MODs simdpath's
encoder makes for the rules below, and a session's replies; each is decoded
by `ovs-ofctl ofp-parse` (openvswitch-common) and must read as the text
OVS gives the same rule. Skips (77) without ovs-ofctl.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# (simdpath rule, what ovs-ofctl prints for its match and actions)
RULES = [
    ("priority=100,in_port=1,tcp,nw_src=10.0.0.0/8,tp_dst=80,"
     "actions=dec_ttl,mod_nw_src:1.2.3.4,output:2",
     "priority=100,tcp,in_port=1,nw_src=10.0.0.0/8,tp_dst=80 "
     "actions=dec_ttl,set_field:1.2.3.4->ip_src,output:2"),
    ("dl_dst=00:11:22:33:44:55,dl_src=66:77:88:99:aa:bb/ff:ff:ff:00:00:00,"
     "actions=mod_dl_src:02:00:00:00:00:01,mod_dl_dst:02:00:00:00:00:02,"
     "output:1",
     "dl_src=66:77:88:00:00:00/ff:ff:ff:00:00:00,dl_dst=00:11:22:33:44:55 "
     "actions=set_field:02:00:00:00:00:01->eth_src,"
     "set_field:02:00:00:00:00:02->eth_dst,output:1"),
    ("dl_vlan=100,dl_vlan_pcp=5,actions=strip_vlan,output:2",
     "dl_vlan=100,dl_vlan_pcp=5 actions=pop_vlan,output:2"),
    ("dl_vlan=0xffff,actions=push_vlan:0x8100,mod_vlan_vid:10,"
     "mod_vlan_pcp:3,output:2",
     "vlan_tci=0x0000 actions=push_vlan:0x8100,set_field:4106->vlan_vid,"
     "set_field:3->vlan_pcp,output:2"),
    ("vlan_tci=0x1000/0x1000,actions=mod_vlan_vid:11,output:1",
     "vlan_tci=0x1000/0x1000 actions=set_field:4107->vlan_vid,output:1"),
    ("vlan_tci=0x2000/0x2000,actions=drop",
     "vlan_tci=0x2000/0x2000 actions=drop"),
    ("ip,ip_dscp=46,nw_ecn=1,nw_ttl=64,actions=mod_nw_tos:8,mod_nw_ecn:2,"
     "mod_nw_ttl:9,output:1",
     "ip,nw_tos=184,nw_ecn=1,nw_ttl=64 actions=set_field:2->ip_dscp,"
     "set_field:2->nw_ecn,mod_nw_ttl:9,output:1"),
    ("ip,ip_frag=later,actions=drop", "ip,nw_frag=later actions=drop"),
    ("tcp,tp_src=0x400/0xff00,tcp_flags=+syn-ack,actions=mod_tp_src:1,"
     "mod_tp_dst:2,output:1",
     "tcp,tp_src=0x400/0xff00,tcp_flags=+syn-ack "
     "actions=set_field:1->tcp_src,set_field:2->tcp_dst,output:1"),
    ("udp,nw_dst=192.168.0.0/16,tp_src=53,actions=mod_tp_dst:5353,output:2",
     "udp,nw_dst=192.168.0.0/16,tp_src=53 "
     "actions=set_field:5353->udp_dst,output:2"),
    ("sctp,tp_dst=9,actions=mod_tp_src:10,output:1",
     "sctp,tp_dst=9 actions=set_field:10->sctp_src,output:1"),
    ("icmp,icmp_type=8,icmp_code=0,actions=output:1",
     "icmp,icmp_type=8,icmp_code=0 actions=output:1"),
    ("arp,arp_op=2,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/24,"
     "arp_sha=00:11:22:33:44:55,"
     "arp_tha=00:00:00:00:00:01/ff:ff:00:00:00:ff,actions=output:2",
     "arp,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/24,arp_op=2,"
     "arp_sha=00:11:22:33:44:55,"
     "arp_tha=00:00:00:00:00:01/ff:ff:00:00:00:ff actions=output:2"),
    ("ipv6,ipv6_src=2001:db8::/32,ipv6_dst=2001:db8::1,ipv6_label=0x12345,"
     "actions=set_field:2001:db8::9->ipv6_src,"
     "set_field:2001:db8::a->ipv6_dst,set_field:5->ipv6_hlimit,dec_ttl,"
     "output:1",
     "ipv6,ipv6_src=2001:db8::/32,ipv6_dst=2001:db8::1,ipv6_label=0x12345 "
     "actions=set_field:2001:db8::9->ipv6_src,"
     "set_field:2001:db8::a->ipv6_dst,mod_nw_ttl:5,dec_ttl,output:1"),
    ("icmp6,icmp_type=135,icmp_code=0,actions=output:2",
     "icmp6,icmp_type=135,icmp_code=0 actions=output:2"),
    ("tcp6,ipv6_label=0x10000/0xf0000,tp_dst=443,"
     "actions=set_field:32->ipv6_tclass,output:1",
     "tcp6,ipv6_label=0x10000/0xf0000,tp_dst=443 "
     "actions=set_field:8->ip_dscp,set_field:0->nw_ecn,output:1"),
    ("mpls,mpls_label=1000,mpls_tc=5,mpls_bos=1,mpls_ttl=64,actions=output:1",
     "mpls,mpls_label=1000,mpls_tc=5,mpls_ttl=64,mpls_bos=1 "
     "actions=output:1"),
    ("mplsm,mpls_label=7,actions=drop", "mplsm,mpls_label=7 actions=drop"),
    ("rarp,arp_op=3,arp_sha=00:11:22:33:44:55,actions=output:2",
     "rarp,arp_op=3,arp_sha=00:11:22:33:44:55 actions=output:2"),
    ("priority=0,actions=drop", "priority=0 actions=drop"),
    ("priority=0,actions=controller", "priority=0 actions=CONTROLLER:65535"),
    ("in_port=1,actions=controller:128,output:2",
     "in_port=1 actions=CONTROLLER:128,output:2"),
    ("ip,actions=mod_nw_ttl:9,FLOOD,output:2,IN_PORT",
     "ip actions=mod_nw_ttl:9,FLOOD,output:2,IN_PORT"),
    ("in_port=2,actions=ALL", "in_port=2 actions=ALL"),
]

# Replies: lines ovs-ofctl must print for each.
REPLIES = {
    "features": ["OFPT_FEATURES_REPLY (OF1.3) (xid=0x1): "
                 "dpid:000000000000abcd",
                 "n_tables:1, n_buffers:0",
                 "capabilities: FLOW_STATS TABLE_STATS PORT_STATS"],
    "desc": ["OFPST_DESC reply (OF1.3) (xid=0x2):",
             "Manufacturer: simdpath", "Software: simdpath 0.1.0"],
    "table": ["OFPST_TABLE reply (OF1.3) (xid=0x2):", "table 0:",
              "active=%d, lookup=100, matched=90" % len(RULES)],
    # Bytes and errors are not kept: "?", not 0.
    "table_features": ["OFPST_TABLE_FEATURES reply (OF1.3) (xid=0x9):",
                       'table 0 ("classifier"):',
                       "instructions: apply_actions clear_actions",
                       "actions: output set_field strip_vlan push_vlan "
                       "mod_nw_ttl dec_ttl"],
    "port_stats": ["OFPST_PORT reply (OF1.3) (xid=0x3): 2 ports",
                   "port  1: rx pkts=10, bytes=?, drop=1, errs=?, frame=?, "
                   "over=?, crc=?",
                   "tx pkts=20, bytes=?, drop=0, errs=?, coll=?",
                   "port  2: rx pkts=20, bytes=?, drop=1, errs=?, frame=?, "
                   "over=?, crc=?"],
    "port_desc": ["OFPST_PORT_DESC reply (OF1.3) (xid=0x4):",
                  "1(net_pcap0): addr:02:00:00:00:00:01",
                  "2(net_pcap1): addr:02:00:00:00:00:02", "state:      LIVE"],
    "aggregate": ["OFPST_AGGREGATE reply (OF1.3) (xid=0x6): "
                  "packet_count=%d byte_count=%d flow_count=%d"
                  % (10 * sum(range(1, len(RULES) + 1)),
                     1000 * sum(range(1, len(RULES) + 1)), len(RULES))],
    "error": ["OFPT_ERROR (OF1.3) (xid=0x7): OFPBRC_BAD_TYPE",
              "OFPT_GROUP_MOD (OF1.3) (xid=0x7):"],
    # The whole 60-byte frame, then 20 of it; OVS prints the frame's flow
    # (table 0 it leaves out).
    "packet_in_miss": ["OFPT_PACKET_IN (OF1.3) (xid=0x0): "
                       "cookie=0x0 total_len=60 in_port=1 (via no_match) "
                       "data_len=60 (unbuffered)\n",
                       "udp,vlan_tci=0x0000,dl_src=02:00:00:00:00:01,"
                       "dl_dst=02:00:00:00:00:02,nw_src=10.0.0.1,"
                       "nw_dst=10.0.0.2,nw_tos=0,nw_ecn=0,nw_ttl=64,"
                       "nw_frag=no,tp_src=7,tp_dst=9"],
    "packet_in_cut": ["OFPT_PACKET_IN (OF1.3) (xid=0x0): "
                      "cookie=0x1234 total_len=60 in_port=2 (via action) "
                      "data_len=20 (unbuffered)"],
    "hello_failed": ["OFPT_ERROR (OF1.3) (xid=0x8): OFPHFC_INCOMPATIBLE",
                     "simdpath speaks OpenFlow 1.3 (version 0x04) only; "
                     "the peer offers version 0x01"],
}


def main():
    ofctl = shutil.which("ovs-ofctl")
    if not ofctl:
        print("SKIP: ovs-ofctl not found (Debian: openvswitch-common)")
        return 77
    out = subprocess.run([sys.argv[1]] + [r for r, _ in RULES],
                         capture_output=True, text=True, check=True).stdout
    work = tempfile.mkdtemp(prefix="simdpath-ofp-")
    decoded = {}
    for line in out.splitlines():
        name, hexbytes = line.split()
        path = os.path.join(work, name + ".bin")
        with open(path, "wb") as f:
            f.write(bytes.fromhex(hexbytes))
        p = subprocess.run([ofctl, "ofp-parse", path], capture_output=True,
                           text=True)
        if p.returncode or "decode error" in p.stdout or p.stderr.strip():
            print("FAIL %s: ovs-ofctl says:\n%s%s" % (name, p.stdout,
                                                     p.stderr))
            return 1
        decoded.setdefault(name, []).append(p.stdout)
    shutil.rmtree(work)
    failures = 0
    stats = "".join(decoded.get("flow_stats", []))
    for i, (rule, want) in enumerate(RULES, 1):
        got = decoded.get("flow_mod%d" % i, [""])[0]
        cookie = "0x%x" % (0x10 + i)
        want_mod = ("OFPT_FLOW_MOD (OF1.3) (xid=0x%x): ADD %s"
                    % (i, want.replace(" actions=", " cookie:%s actions="
                                       % cookie)))
        if got.strip() != want_mod:
            print("FAIL flow_mod for %s:\n  got  %s\n  want %s"
                  % (rule, got.strip(), want_mod))
            failures += 1
        want_stat = ("cookie=%s, duration=3s, table=0, n_packets=%d, "
                     "n_bytes=%d, %s" % (cookie, 10 * i, 1000 * i, want))
        if want_stat not in stats.splitlines() and \
                " " + want_stat not in stats.splitlines():
            print("FAIL flow stats for %s: want\n  %s\nin\n%s"
                  % (rule, want_stat, stats))
            failures += 1
    for name, lines in REPLIES.items():
        text = "".join(decoded.get(name, []))
        for want in lines:
            if want not in text:
                print("FAIL %s: want %r in\n%s" % (name, want, text))
                failures += 1
    print("%d rules, %d replies decoded; %d failures"
          % (len(RULES), len(REPLIES), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
