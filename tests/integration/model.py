#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""An independent model of simdpath's forwarding, for integration tests.

It reads a pcap, a flow file and the input port, and writes what each
output port should send, one pcap per port, computed without any simdpath
code: its own packet parser, its own rule matching (highest priority wins;
equal priorities: the rule added first), its own header rewrites with full
checksum recomputation. Only well-formed Ethernet/VLAN/IPv4/IPv6/ARP/TCP/
UDP/ICMP packets are modelled; others are reported and left out, so tests
feed it well-formed traffic.

Usage: model.py IN.pcap FLOWS IN_PORT OUT_DIR
writes OUT_DIR/port<N>.pcap and prints "expected: port N: K packets" lines
and "dropped: REASON K" lines.
"""
import ipaddress
import os
import struct
import sys

ETH_IP, ETH_IP6, ETH_ARP, ETH_VLAN, ETH_QINQ = 0x0800, 0x86DD, 0x0806, \
    0x8100, 0x88A8


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    pos, out = 24, []
    while pos + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + "IIII", data[pos:pos + 16])
        out.append(bytes(data[pos + 16:pos + 16 + incl]))
        pos += 16 + incl
    return out


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for fr in frames:
            f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr)


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


class Packet:
    """The fields a rule can match, parsed from a well-formed frame."""

    def __init__(self, frame, in_port):
        self.frame = bytearray(frame)
        self.in_port = in_port
        self.ok = self.parse()

    def parse(self):
        f = self.frame
        self.vlan = None
        self.f = {"in_port": self.in_port}
        if len(f) < 14:
            return False
        pos = 12
        etype = struct.unpack("!H", f[pos:pos + 2])[0]
        if etype in (ETH_VLAN, ETH_QINQ):
            if len(f) < 18:
                return False
            self.vlan = struct.unpack("!H", f[14:16])[0]
            pos = 16
            etype = struct.unpack("!H", f[pos:pos + 2])[0]
            if etype in (ETH_VLAN, ETH_QINQ):
                return False  # QinQ is not modelled
        if etype < 0x600:
            return False  # 802.3 and LLC/SNAP are not modelled
        self.l3 = pos + 2
        self.f.update(dl_src=bytes(f[6:12]), dl_dst=bytes(f[0:6]),
                      dl_type=etype)
        if etype == ETH_IP:
            return self.parse_ipv4()
        if etype == ETH_IP6:
            return self.parse_ipv6()
        if etype == ETH_ARP:
            a = f[self.l3:self.l3 + 28]
            if len(a) < 28:
                return False
            self.f.update(nw_proto=a[7], nw_src=bytes(a[14:18]),
                          nw_dst=bytes(a[24:28]))
            return True
        return True

    def parse_ipv4(self):
        f, l3 = self.frame, self.l3
        if len(f) < l3 + 20 or f[l3] >> 4 != 4:
            return False
        ihl = (f[l3] & 15) * 4
        total = struct.unpack("!H", f[l3 + 2:l3 + 4])[0]
        frag = struct.unpack("!H", f[l3 + 6:l3 + 8])[0]
        if ihl < 20 or total < ihl or len(f) < l3 + total or frag & 0x3FFF:
            return False  # fragments and bad lengths are not modelled
        self.l4 = l3 + ihl
        self.f.update(nw_src=bytes(f[l3 + 12:l3 + 16]),
                      nw_dst=bytes(f[l3 + 16:l3 + 20]), nw_proto=f[l3 + 9],
                      nw_tos=f[l3 + 1], nw_ttl=f[l3 + 8])
        return self.parse_l4(self.f["nw_proto"], l3 + total)

    def parse_ipv6(self):
        f, l3 = self.frame, self.l3
        if len(f) < l3 + 40 or f[l3] >> 4 != 6:
            return False
        plen = struct.unpack("!H", f[l3 + 4:l3 + 6])[0]
        if len(f) < l3 + 40 + plen:
            return False
        self.l4 = l3 + 40
        self.f.update(nw_src=bytes(f[l3 + 8:l3 + 24]),
                      nw_dst=bytes(f[l3 + 24:l3 + 40]), nw_proto=f[l3 + 6],
                      nw_ttl=f[l3 + 7])
        if f[l3 + 6] not in (6, 17, 58):
            return False  # extension headers are not modelled
        return self.parse_l4(f[l3 + 6], l3 + 40 + plen)

    def parse_l4(self, proto, end):
        f, l4 = self.frame, self.l4
        need = {6: 20, 17: 8, 1: 8, 58: 8}.get(proto, 0)  # ICMP: as OVS
        if end - l4 < need:
            return False
        if proto in (6, 17):
            self.f["tp_src"], self.f["tp_dst"] = struct.unpack(
                "!HH", f[l4:l4 + 4])
        elif proto in (1, 58):
            self.f["tp_src"], self.f["tp_dst"] = f[l4], f[l4 + 1]
        return True

    # --- rewrites, each followed by full checksum recomputation ---
    def fix_checksums(self):
        f = self.frame
        if self.f["dl_type"] == ETH_IP:
            l3 = self.l3
            ihl = (f[l3] & 15) * 4
            f[l3 + 10:l3 + 12] = b"\0\0"
            f[l3 + 10:l3 + 12] = struct.pack("!H", csum(bytes(f[l3:l3 + ihl])))
            total = struct.unpack("!H", f[l3 + 2:l3 + 4])[0]
            proto = f[l3 + 9]
            pseudo = bytes(f[l3 + 12:l3 + 20]) + struct.pack(
                "!xBH", proto, total - ihl)
            self.fix_l4(proto, pseudo, l3 + total)

    def fix_l4(self, proto, pseudo, end):
        f, l4 = self.frame, self.l4
        off = {6: 16, 17: 6}.get(proto)
        if off is None:
            return
        if proto == 17 and f[l4 + 6:l4 + 8] == b"\0\0":
            return  # no UDP checksum stays none
        f[l4 + off:l4 + off + 2] = b"\0\0"
        c = csum(pseudo + bytes(f[l4:end]))
        if proto == 17 and c == 0:
            c = 0xFFFF
        f[l4 + off:l4 + off + 2] = struct.pack("!H", c)


def parse_ip_match(text, v6):
    net = ipaddress.ip_network(text, strict=False) if "/" in text and \
        text.split("/")[1].isdigit() else None
    if net is None and "/" in text:
        addr, mask = text.split("/")
        net = ipaddress.ip_network("%s/%s" % (addr, mask), strict=False)
    if net is None:
        net = ipaddress.ip_network(text)
    return net


SHORT = {"ip": (ETH_IP, None), "ipv6": (ETH_IP6, None), "arp": (ETH_ARP, None),
         "tcp": (ETH_IP, 6), "udp": (ETH_IP, 17), "icmp": (ETH_IP, 1),
         "tcp6": (ETH_IP6, 6), "udp6": (ETH_IP6, 17),
         "icmp6": (ETH_IP6, 58)}


class Rule:
    def __init__(self, line, order):
        self.order = order
        self.priority = 32768
        self.match = []
        body, actions = line.split("actions=", 1)
        for tok in [t for t in body.replace(" ", ",").split(",") if t]:
            if tok in SHORT:
                dl, proto = SHORT[tok]
                self.match.append(("dl_type", lambda v, dl=dl: v == dl))
                if proto is not None:
                    self.match.append(("nw_proto",
                                       lambda v, p=proto: v == p))
                continue
            name, value = tok.split("=", 1)
            if name == "priority":
                self.priority = int(value, 0)
            elif name in ("nw_src", "nw_dst", "ipv6_src", "ipv6_dst"):
                net = parse_ip_match(value, name.startswith("ipv6"))
                key = "nw_src" if name.endswith("src") else "nw_dst"
                self.match.append((key, lambda v, n=net: v is not None and
                                   len(v) == n.network_address.max_prefixlen
                                   // 8 and ipaddress.ip_address(v) in n))
            elif name == "dl_vlan":
                vid = int(value, 0)
                self.match.append(("vlan", lambda v, vid=vid: (
                    v is None) if vid == 0xFFFF else (
                    v is not None and v & 0xFFF == vid)))
            elif name in ("in_port", "tp_src", "tp_dst", "nw_proto",
                          "dl_type", "nw_ttl"):
                want = int(value, 0)
                self.match.append((name, lambda v, w=want: v == w))
            else:
                raise SystemExit("model.py: field %s is not modelled" % name)
        self.actions = [a for a in split_actions(actions.strip())]

    def matches(self, pkt):
        for name, test in self.match:
            value = pkt.vlan if name == "vlan" else pkt.f.get(name)
            if not test(value):
                return False
        return True


def split_actions(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        out.append(cur)
    return out


def vlan_tagged(f):
    """An outer 802.1Q or 802.1ad tag, whole."""
    return len(f) >= 18 and struct.unpack("!H", f[12:14])[0] in (
        ETH_VLAN, ETH_QINQ)


def shift_headers(pkt, by):
    pkt.l3 += by
    if hasattr(pkt, "l4"):
        pkt.l4 += by


def set_tci(pkt, keep, value):
    """The outer tag's TCI bits outside 'keep' set from 'value'."""
    f = pkt.frame
    if vlan_tagged(f):
        tci = struct.unpack("!H", f[14:16])[0] & keep | value
        f[14:16] = struct.pack("!H", tci)
        pkt.vlan = tci


def apply(rule, pkt, outputs, drops):
    f = pkt.frame
    for act in rule.actions:
        name, _, arg = act.partition(":")
        if act.upper() in ("IN_PORT", "OUTPUT:IN_PORT"):
            outputs.setdefault(pkt.in_port, []).append(bytes(f))
        elif name == "output":
            # As OpenFlow: back out of the in_port only by IN_PORT.
            if int(arg) != pkt.in_port:
                outputs.setdefault(int(arg), []).append(bytes(f))
        elif name == "drop":
            break
        elif name == "dec_ttl":
            if pkt.f["dl_type"] == ETH_IP:
                if f[pkt.l3 + 8] <= 1:
                    drops["ttl"] = drops.get("ttl", 0) + 1
                    return
                f[pkt.l3 + 8] -= 1
                pkt.fix_checksums()
            elif pkt.f["dl_type"] == ETH_IP6:
                if f[pkt.l3 + 7] <= 1:
                    drops["ttl"] = drops.get("ttl", 0) + 1
                    return
                f[pkt.l3 + 7] -= 1
        elif name in ("mod_nw_src", "mod_nw_dst"):
            off = 12 if name == "mod_nw_src" else 16
            f[pkt.l3 + off:pkt.l3 + off + 4] = ipaddress.ip_address(
                arg).packed
            pkt.fix_checksums()
        elif name == "mod_nw_tos":
            f[pkt.l3 + 1] = (f[pkt.l3 + 1] & 3) | (int(arg, 0) & 0xFC)
            pkt.fix_checksums()
        elif name == "strip_vlan":
            if vlan_tagged(f):
                del f[12:16]
                shift_headers(pkt, -4)
                pkt.vlan = struct.unpack("!H", f[14:16])[0] \
                    if vlan_tagged(f) else None
        elif name == "push_vlan":
            # OpenFlow's push: the new outer tag takes VID and PCP (not
            # DEI) from the tag it goes in front of, none: 0.
            tci = struct.unpack("!H", f[14:16])[0] & 0xEFFF \
                if vlan_tagged(f) else 0
            f[12:12] = struct.pack("!HH", int(arg, 0), tci)
            shift_headers(pkt, 4)
            pkt.vlan = tci
        elif name == "mod_vlan_vid":
            set_tci(pkt, 0xF000, int(arg, 0) & 0xFFF)
        elif name == "mod_vlan_pcp":
            set_tci(pkt, 0x1FFF, (int(arg, 0) & 7) << 13)
        elif name in ("mod_tp_src", "mod_tp_dst"):
            off = 0 if name == "mod_tp_src" else 2
            f[pkt.l4 + off:pkt.l4 + off + 2] = struct.pack("!H", int(arg))
            pkt.fix_checksums()
        elif name in ("mod_dl_src", "mod_dl_dst"):
            off = 6 if name == "mod_dl_src" else 0
            f[off:off + 6] = bytes(int(b, 16) for b in arg.split(":"))
        else:
            raise SystemExit("model.py: action %s is not modelled" % name)
    else:
        outs = [a for a in rule.actions
                if a.startswith("output:") or a.upper() == "IN_PORT"]
        if not outs:
            drops["action_drop"] = drops.get("action_drop", 0) + 1
        elif outs[-1] == "output:%d" % pkt.in_port:
            drops["in_port"] = drops.get("in_port", 0) + 1
        return
    drops["action_drop"] = drops.get("action_drop", 0) + 1


def forward(frames, lines, in_port):
    """What the rules (flow file lines) do to frames received on in_port:
    ({port: [frame, ...]}, {reason: count}, frames not modelled)."""
    rules = []
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            rules.append(Rule(line, len(rules)))
    rules.sort(key=lambda r: (-r.priority, r.order))
    outputs, drops, skipped = {}, {}, 0
    for frame in frames:
        pkt = Packet(frame, in_port)
        if not pkt.ok:
            skipped += 1
            continue
        rule = next((r for r in rules if r.matches(pkt)), None)
        if rule is None:
            drops["no_match"] = drops.get("no_match", 0) + 1
            continue
        apply(rule, pkt, outputs, drops)
    return outputs, drops, skipped


def main():
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    with open(sys.argv[2]) as fl:
        lines = fl.readlines()
    in_port, out_dir = int(sys.argv[3]), sys.argv[4]
    outputs, drops, skipped = forward(read_pcap(sys.argv[1]), lines, in_port)
    os.makedirs(out_dir, exist_ok=True)
    for port, out in sorted(outputs.items()):
        write_pcap(os.path.join(out_dir, "port%d.pcap" % port), out)
        print("expected: port %d: %d packets" % (port, len(out)))
    for reason, n in sorted(drops.items()):
        print("dropped: %s %d" % (reason, n))
    print("not modelled: %d" % skipped)


if __name__ == "__main__":
    main()
