#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""OpenFlow 1.3 against a running `simdpath run`, with clients no one here
wrote and with malformed messages.

Usage: test_ofctl.py SIMDPATH
simdpath runs on DPDK vdevs (no hugepages): port 1 takes endless UDP and
TCP traffic from a pcap, ports 2 and 3 are net_null sinks. `ovs-ofctl -O
OpenFlow13` (openvswitch-common) adds, lists, modifies and deletes rules
through `--openflow ptcp:PORT`, and the port counters show the forwarding
follow them (a FLOOD to every port but the in_port too). Then a raw
socket sends truncated headers, wrong lengths, unknown types, a flood of
FLOW_MODs and a huge flow dump: each gets its error or answer, the
connection survives or closes cleanly, forwarding never stops. Every
wait is bounded by counts, with a time cap as a safety net only. Skips
(77) without ovs-ofctl.
"""
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from report import (check, conserved, counters, no_leak, summary,  # noqa
                    wait_until)

sys.path.insert(0, HERE)
from traffic import (frame, free_port, listening_port, pcap_ports,  # noqa
                     start_run, write_pcap)
from ofp_wire import (OFPP_CONTROLLER, apply_actions, flow_mod,  # noqa
                      flow_stats_body, match, message, multipart_request,
                      oxm, output, packet_out)

EXE = os.path.abspath(sys.argv[1])
OFCTL = shutil.which("ovs-ofctl")
WORK = tempfile.mkdtemp(prefix="simdpath-of-")
CTL = os.path.join(WORK, "ctl.sock")
CAP = 120  # seconds: a safety net, never the condition


# The kernel chooses the port (ptcp:0); main sets these from the log.
PORT = None
TARGET = None


def ofctl(*args, check_rc=True):
    p = subprocess.run([OFCTL, "-O", "OpenFlow13"] + list(args),
                       capture_output=True, text=True, timeout=60)
    if check_rc:
        check(p.returncode == 0, "ovs-ofctl %s: %s%s"
              % (" ".join(args), p.stdout, p.stderr))
    return p


def ctl(*args):
    p = subprocess.run([EXE, "ctl", "--socket", CTL] + list(args),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


# ---- traffic ----

def port_tx():
    """tx packets per port from dump-ports."""
    out = ofctl("dump-ports", TARGET).stdout
    tx = {}
    for m in re.finditer(r"port\s+(\d+): rx pkts=(\d+).*?\n\s+tx pkts=(\d+)",
                         out):
        tx[int(m.group(1))] = int(m.group(3))
    return tx


def wait_tx(port, more, base=None):
    """Waits until port has sent 'more' packets beyond base; returns the
    counters then (None if the cap passed)."""
    base = port_tx() if base is None else base
    deadline = time.time() + CAP
    while time.time() < deadline:
        now = port_tx()
        if now.get(port, 0) >= base.get(port, 0) + more:
            return now
        time.sleep(0.05)
    return None


def flows_counted():
    """dump-flows' rules without the fields that change, each with its
    (n_packets, n_bytes)."""
    out = ofctl("dump-flows", TARGET).stdout
    rules = {}
    for line in out.splitlines()[1:]:
        line = re.sub(r"duration=[\d.]+s, ", "", line.strip())
        m = re.search(r"n_packets=(\d+), n_bytes=(\d+), ", line)
        rules[line[:m.start()] + line[m.end():] if m else line] = \
            (int(m.group(1)), int(m.group(2))) if m else None
    return rules


def flows_text():
    return sorted(flows_counted())


# ---- raw OpenFlow ----

class Conn:
    def __init__(self, sock=None):
        self.s = sock or socket.create_connection(("127.0.0.1", PORT),
                                                  timeout=30)
        self.buf = b""
        hello = self.recv()
        if check(hello is not None and hello[1] == 0,
                 "the switch sends HELLO first"):
            self.s.sendall(message(0))

    def recv(self):
        """One message, or None at EOF."""
        while True:
            if len(self.buf) >= 8:
                n = struct.unpack("!H", self.buf[2:4])[0]
                if len(self.buf) >= n:
                    m, self.buf = self.buf[:n], self.buf[n:]
                    return m
            data = self.s.recv(65536)
            if not data:
                return None
            self.buf += data

    def error_of(self, m):
        return struct.unpack("!HH", m[8:12]) if m and m[1] == 1 else None

    def echo_ok(self, xid=77):
        self.s.sendall(message(2, b"ping", xid=xid))
        while True:
            m = self.recv()
            if m is None:
                return False
            if m[1] == 3 and struct.unpack("!I", m[4:8])[0] == xid:
                return m[8:] == b"ping"


# ---- the tests ----

def test_ofctl(proc):
    out = ofctl("show", TARGET).stdout
    check("n_tables:1" in out and "1(net_pcap0)" in out and
          "2(net_null0)" in out and "3(net_null1)" in out,
          "show lists the ports: " + out)
    # No groups, meters or queues, as a switch without them says: what
    # controllers and ovs-ofctl ask for are answered, empty or none.
    # A list is its reply's header line alone.
    for cmd, want, empty in (
            ("dump-groups", "OFPST_GROUP_DESC reply", True),
            ("dump-group-stats", "OFPST_GROUP reply", True),
            ("dump-group-features", "Types:  0x0", False),
            ("dump-meters", "OFPST_METER_CONFIG reply", True),
            ("meter-stats", "OFPST_METER reply", True),
            ("meter-features", "max_meter:0 max_bands:0", False),
            ("queue-stats", "): 0 queues", True),
            ("queue-get-config", "OFPT_QUEUE_GET_CONFIG_REPLY", True)):
        out = ofctl(cmd, TARGET).stdout
        check(want in out and (not empty or len(out.splitlines()) == 1),
              "%s: %r" % (cmd, out))

    # Only the catch-all drop from --flows: nothing leaves.
    base = port_tx()
    check(base.get(2) == 0 and base.get(3) == 0, "nothing sent yet: %s"
          % base)

    ofctl("add-flow", TARGET, "priority=100,udp,actions=output:2")
    check(wait_tx(2, 1000) is not None, "udp reaches port 2 after add-flow")
    before = port_tx()
    check(before.get(3) == 0, "tcp still dropped: %s" % before)

    rules = os.path.join(WORK, "rules.txt")
    with open(rules, "w") as f:
        f.write("cookie=0x7,priority=200,tcp,nw_dst=10.0.0.2,tp_dst=80,"
                "actions=dec_ttl,output:3\n"
                "priority=150,tcp,actions=drop\n"
                "priority=300,ipv6,actions=drop\n")
    ofctl("add-flows", TARGET, rules)
    check(wait_tx(3, 1000) is not None,
          "tcp to 10.0.0.2:80 reaches port 3 after add-flows")

    # A rule from ctl is one of the same rules.
    rc, _, err = ctl("flow-add", "priority=50,arp,actions=drop")
    check(rc == 0, "ctl flow-add: " + err)
    ipv6, tcp80, tcp, udp, arp, rest = (
        "cookie=0x0, table=0, priority=300,ipv6 actions=drop",
        "cookie=0x7, table=0, priority=200,tcp,nw_dst=10.0.0.2,tp_dst=80 "
        "actions=dec_ttl,output:3",
        "cookie=0x0, table=0, priority=150,tcp actions=drop",
        "cookie=0x0, table=0, priority=100,udp actions=output:2",
        "cookie=0x0, table=0, priority=50,arp actions=drop",
        "cookie=0x0, table=0, priority=0 actions=drop")
    want = sorted([ipv6, tcp80, tcp, udp, arp, rest])
    counted = flows_counted()
    got = sorted(counted)
    check(got == want, "dump-flows:\n%s\nwant\n%s"
          % ("\n".join(got), "\n".join(want)))
    # The counters: every UDP frame is 60 bytes, every TCP one 72, and
    # the port counters agree with the rules'.
    tx = port_tx()
    n_udp, n_tcp = counted.get(udp), counted.get(tcp80)
    check(n_udp and n_udp[0] >= 1000 and n_udp[1] == 60 * n_udp[0] and
          n_udp[0] <= tx[2], "udp rule counts %s, port 2 sent %d"
          % (n_udp, tx[2]))
    check(n_tcp and n_tcp[0] >= 1000 and n_tcp[1] == 72 * n_tcp[0] and
          n_tcp[0] <= tx[3], "tcp rule counts %s, port 3 sent %d"
          % (n_tcp, tx[3]))
    check(counted.get(ipv6) == (0, 0) and counted.get(arp) == (0, 0) and
          counted.get(rest)[0] > 0,
          "unmatched rules count 0, the catch-all the rest: %s" % counted)
    rc, out, _ = ctl("flow-dump")
    check(rc == 0 and "priority=200,tcp,nw_dst=10.0.0.2,tp_dst=80,"
          "actions=dec_ttl,output:3" in out, "ctl flow-dump: " + out)

    # mod-flows moves udp to port 3: port 2 stops (but for a burst in
    # flight), port 3 grows.
    ofctl("mod-flows", TARGET, "udp,actions=output:3")
    t1 = port_tx()
    t2 = wait_tx(3, 2000, t1)
    check(t2 is not None and t2[2] - t1[2] <= 64,
          "after mod-flows port 2 stops: %s -> %s" % (t1, t2))

    # mod-flows with reset_counts starts a rule's counts again from 0,
    # without it keeps them. A rule above shadows tcp80 meanwhile, so that
    # its counts stand still.
    shadow = "priority=250,tcp,nw_dst=10.0.0.2,tp_dst=80"
    tcp80_rule = "priority=200,tcp,nw_dst=10.0.0.2,tp_dst=80," \
        "actions=dec_ttl,output:3"
    ofctl("add-flow", TARGET, shadow + ",actions=output:3")
    shadow_key = "cookie=0x0, table=0, %s actions=output:3" % shadow
    deadline = time.time() + CAP
    while (flows_counted().get(shadow_key, (0, 0))[0] < 1000 and
           time.time() < deadline):
        time.sleep(0.05)
    kept = flows_counted().get(tcp80)
    ofctl("--strict", "mod-flows", TARGET, tcp80_rule)
    check(kept and kept[0] >= 1000 and flows_counted().get(tcp80) == kept,
          "mod-flows keeps the counts: %s -> %s"
          % (kept, flows_counted().get(tcp80)))
    ofctl("--strict", "mod-flows", TARGET, "reset_counts," + tcp80_rule)
    check(flows_counted().get(tcp80) == (0, 0),
          "mod-flows reset_counts zeroes them: %s"
          % (flows_counted().get(tcp80),))
    ofctl("--strict", "del-flows", TARGET, shadow)
    check(wait_tx(3, 2000) is not None and
          flows_counted().get(tcp80, (0, 0))[0] > 0,
          "and they count again: %s" % (flows_counted().get(tcp80),))

    # del-flows by cookie, then strict: tcp to port 3 ends.
    ofctl("del-flows", TARGET, "cookie=0x7/-1")
    ofctl("--strict", "del-flows", TARGET, "priority=100,udp")
    t1 = port_tx()
    time_cap = time.time() + CAP
    # Forwarding goes on (rx grows) while nothing leaves for 5,000 packets.
    rx0 = rx_packets()
    while rx_packets() < rx0 + 5000 and time.time() < time_cap:
        time.sleep(0.05)
    t2 = port_tx()
    check(t2[2] - t1[2] <= 64 and t2[3] - t1[3] <= 64,
          "after del-flows nothing leaves: %s -> %s" % (t1, t2))
    got = flows_text()
    check(len(got) == 4 and not any("udp" in r for r in got),
          "rules after del-flows: %s" % got)

    # Refusals ovs-ofctl reports with their names.
    for rule, err in (("actions=LOCAL", "OFPBAC_BAD_OUT_PORT"),
                      ("table=1,actions=drop", "OFPFMFC_BAD_TABLE_ID"),
                      ("actions=group:1", "OFPBAC_BAD_OUT_GROUP"),
                      ("actions=output:9", "OFPBAC_BAD_OUT_PORT"),
                      ("actions=meter:1,output:2", "OFPMMFC_INVALID_METER"),
                      ("actions=goto_table:1", "OFPBIC_BAD_TABLE_ID"),
                      ("actions=write_actions(output:2)",
                       "OFPBIC_UNSUP_INST"),
                      ("actions=set_queue:1,output:2", "OFPBAC_BAD_QUEUE")):
        p = ofctl("add-flow", TARGET, rule, check_rc=False)
        check(p.returncode != 0 and err in p.stderr,
              "add-flow %s: %s" % (rule, p.stderr))
    p = ofctl("dump-aggregate", TARGET)
    check("flow_count=4" in p.stdout, "dump-aggregate: " + p.stdout)
    ofctl("del-flows", TARGET)
    check(flows_text() == [], "del-flows empties the table")

    # FLOOD: every port but the in_port sends (port 1, the traffic's,
    # nothing); dump-flows prints it as ovs-ofctl writes it, and out_port
    # selects it.
    ofctl("add-flow", TARGET, "priority=100,udp,actions=flood")
    t1 = port_tx()
    t2 = wait_tx(2, 1000, t1)
    t3 = wait_tx(3, 1000, t1)
    check(t2 is not None and t3 is not None and t3[1] == t1[1],
          "after add-flow actions=flood ports 2 and 3 send, port 1 "
          "not: %s -> %s" % (t1, t3))
    got = flows_text()
    check(got == ["cookie=0x0, table=0, priority=100,udp actions=FLOOD"],
          "dump-flows with the flood: %s" % got)
    p = ofctl("dump-flows", TARGET, "out_port=2")
    check("FLOOD" not in p.stdout, "out_port=2 is not a FLOOD: " + p.stdout)
    ofctl("del-flows", TARGET, "out_port=flood")
    check(flows_text() == [], "del-flows out_port=flood removes it")

    # ovs-ofctl packet-out returns on the BARRIER_REPLY after it: by then
    # the frame has left, once per PACKET_OUT; actions its headers cannot
    # take, or a port that is not there, are refused.
    pkt = frame(17, [10, 0, 0, 9], 1234, 53).hex()
    t1 = port_tx()
    for _ in range(3):
        ofctl("packet-out", TARGET,
              "in_port=1 packet=%s actions=output:2,output:3" % pkt)
    t2 = port_tx()
    sent = (t2.get(2, 0) - t1.get(2, 0), t2.get(3, 0) - t1.get(3, 0))
    check(sent == (3, 3), "3 ovs-ofctl packet-outs to ports 2 and 3 sent "
          "by the time each returned: %s" % (sent,))
    for actions, err in (("output:9", "OFPBAC_BAD_OUT_PORT"),
                         ("set_field:80->tcp_dst,output:2",
                          "OFPBAC_MATCH_INCONSISTENT")):
        p = ofctl("packet-out", TARGET,
                  "in_port=1 packet=%s actions=%s" % (pkt, actions),
                  check_rc=False)
        check(p.returncode != 0 and err in p.stderr,
              "ovs-ofctl packet-out actions=%s: %s" % (actions, p.stderr))
    test_add_replaces()
    check(proc.poll() is None, "simdpath still runs")


def rule_packets(priority):
    """n_packets of the rule of this priority (None if there is none)."""
    for rule, counts in flows_counted().items():
        if "priority=%d," % priority in rule:
            return counts[0]
    return None


def test_add_replaces():
    """An ADD of a rule that is there replaces it in place, as OVS does:
    no packet finds it gone, its counters go on, RESET_COUNTS starts them
    again. Port 2 sends only the rule's packets, port 3 only those of a
    rule below it that takes the UDP traffic whenever the rule is gone."""
    rule = "priority=100,udp,actions=output:2"
    ofctl("add-flow", TARGET, "priority=1,udp,actions=output:3")
    t0 = port_tx()
    ofctl("add-flow", TARGET, rule)
    # Many packets counted, so that counters started again by a re-ADD
    # (which sees far fewer after it) would show.
    t1 = wait_tx(2, 5000000, t0)
    adds = os.path.join(WORK, "re-add.txt")
    with open(adds, "w") as f:
        f.write((rule + "\n") * 2000)
    ofctl("add-flows", TARGET, adds)
    t2 = port_tx()
    check(t1 is not None and t2[3] == t1[3],
          "2,000 ADDs of a rule that is there: no packet finds it gone "
          "(port 3 sent %d)" % (t2[3] - t1[3] if t1 else -1))
    kept = rule_packets(100)
    # Everything port 2 sent before t1 was the rule's, counted by the
    # BARRIER of add-flows at the latest.
    check(t1 is not None and kept is not None and
          kept >= t1[2] - t0[2],
          "re-ADDed, the rule keeps its counters: %s packets, %d sent "
          "before" % (kept, t1[2] - t0[2] if t1 else -1))
    t3 = port_tx()
    ofctl("add-flow", TARGET, "priority=100,udp,reset_counts,"
          "actions=output:2")
    reset = rule_packets(100)
    t4 = port_tx()
    # A packet is sent before its rule counts it; one burst (32) sent
    # before t3 may be counted after the reset.
    check(reset is not None and reset <= t4[2] - t3[2] + 32,
          "ADD with reset_counts starts the counters again: %s packets, "
          "%d sent since" % (reset, t4[2] - t3[2]))
    ofctl("del-flows", TARGET)


def wait_flows(done):
    """Polls dump-flows until done(rules) holds; the rules then, or None
    if the cap passed."""
    deadline = time.time() + CAP
    while time.time() < deadline:
        rules = flows_text()
        if done(rules):
            return rules
        time.sleep(0.2)
    return None


def test_idle(proc):
    """idle_timeout: a rule no packet hits goes, one that traffic hits all
    the time stays, and mod-flows keeps the timeout."""
    hit = "priority=500,udp actions=output:2"
    # The rule traffic hits has 10 s, so that a PMD starved of CPU on a
    # loaded machine for a while still keeps it; the other 1 s.
    ofctl("add-flow", TARGET,
          "priority=500,udp,idle_timeout=10,actions=output:2")
    ofctl("add-flow", TARGET,
          "priority=500,ipv6,idle_timeout=1,actions=drop")
    rules = flows_text()
    check(any("idle_timeout=10, priority=500,udp" in r for r in rules),
          "dump-flows shows the idle timeout: %s" % rules)
    check(wait_tx(2, 1000) is not None, "udp reaches port 2")
    rules = wait_flows(lambda rules: not any("ipv6" in r for r in rules))
    check(rules is not None, "the rule no packet hits goes")
    check(rules is not None and any(hit in r for r in rules),
          "the rule traffic hits stays: %s" % rules)
    check(wait_tx(2, 20000) is not None and
          any(hit in r for r in flows_text()),
          "and stays while 20,000 more packets flow: %s" % flows_text())
    ofctl("mod-flows", TARGET, "udp,actions=output:3")
    check(wait_tx(3, 20000) is not None,
          "udp reaches port 3 after mod-flows")
    rules = flows_text()
    check(any("idle_timeout=10, priority=500,udp actions=output:3" in r
              for r in rules), "mod-flows keeps idle_timeout: %s" % rules)
    ofctl("del-flows", TARGET)
    check(proc.poll() is None, "simdpath still runs")


def rx_packets():
    out = ofctl("dump-ports", TARGET, "1").stdout
    m = re.search(r"rx pkts=(\d+)", out)
    return int(m.group(1)) if m else 0


def wait_rx(more):
    """Waits until port 1 has received 'more' packets beyond now."""
    want = rx_packets() + more
    deadline = time.time() + CAP
    while time.time() < deadline:
        if rx_packets() >= want:
            return True
        time.sleep(0.05)
    return False


def port_drops():
    """Port 1's drops by reason, from ctl counters-show."""
    return counters(ctl("counters-show")[1]).get(1, {}).get("drops", {})


def port_config(port):
    """The config words dump-ports-desc prints for port."""
    out = ofctl("dump-ports-desc", TARGET).stdout
    m = re.search(r"^ %d\(.*\n\s+config:\s+(.*)$" % port, out, re.M)
    return m.group(1).split() if m else None


def test_port_config(proc):
    """mod-port as ovs-vswitchd takes it, under traffic: no-forward stops
    what goes to port 2 (no_fwd), no-receive what port 1 takes in
    (no_recv), down both ways (port_down; net_null and net_pcap set no
    link, so only simdpath's side changes); dump-ports-desc shows each,
    and undoing it brings the traffic back. ovs-ofctl waits for a
    BARRIER after the PORT_MOD, so what is counted after it is under the
    new config: port 2's tx does not move while 20,000 packets come in."""
    ofctl("add-flow", TARGET, "priority=600,udp,actions=output:2")
    check(wait_tx(2, 1000) is not None, "udp reaches port 2")
    for port, word, config, reason in (
            ("2", "no-forward", "NO_FWD", "no_fwd"),
            ("1", "no-receive", "NO_RECV", "no_recv"),
            ("2", "down", "PORT_DOWN", "port_down")):
        ofctl("mod-port", TARGET, port, word)
        check(port_config(int(port)) == [config],
              "mod-port %s %s: config %s: %s"
              % (port, word, config, port_config(int(port))))
        tx, before = port_tx().get(2), port_drops().get(reason, 0)
        check(wait_rx(20000) and port_tx().get(2) == tx and
              port_drops().get(reason, 0) >= before + 10000,
              "mod-port %s %s: nothing leaves on port 2 (tx %s, now %s), "
              "%s drops grow: %s" % (port, word, tx, port_tx().get(2),
                                     reason, port_drops()))
        undo = {"no-forward": "forward", "no-receive": "receive",
                "down": "up"}[word]
        ofctl("mod-port", TARGET, port, undo)
        check(port_config(int(port)) == ["0"],
              "mod-port %s %s: config 0: %s"
              % (port, undo, port_config(int(port))))
        check(wait_tx(2, 1000) is not None,
              "mod-port %s %s: udp reaches port 2 again" % (port, undo))
    ofctl("del-flows", TARGET)
    check(proc.poll() is None, "simdpath still runs")


def flow_stats_entries(m):
    """How many rules a flow MULTIPART_REPLY lists."""
    entries, ofs = 0, 16
    while ofs < len(m):
        ofs += struct.unpack("!H", m[ofs:ofs + 2])[0]
        entries += 1
    return entries


def test_malformed(proc):
    c = Conn()
    # A header in two pieces.
    req = message(5, xid=3)
    c.s.sendall(req[:4])
    time.sleep(0.05)
    c.s.sendall(req[4:])
    m = c.recv()
    check(m and m[1] == 6, "FEATURES_REQUEST in two pieces answered")
    # Unknown type, a group, a wrong length for a fixed message, a bad
    # version: errors, the connection goes on.
    for bad, want in ((message(99), (1, 1)),
                      (message(15, b"\0" * 8), (1, 1)),
                      (message(20, b"\0" * 4), (1, 6)),
                      (message(5, version=1), (1, 0)),
                      (multipart_request(77), (1, 2))):
        c.s.sendall(bad)
        m = c.recv()
        check(c.error_of(m) == want, "error %s for %s, got %s"
              % (want, bad.hex(), c.error_of(m)))
    check(c.echo_ok(), "the connection survives bad messages")

    # A flood of FLOW_MODs, then a barrier: all applied, in order.
    n = 20000
    flood = b"".join(
        flow_mod(1000, match(oxm(5, b"\x08\x00"),
                             oxm(12, struct.pack("!I", 0xc0000000 + i))),
                 apply_actions(output(2)), xid=i)
        for i in range(n))
    # A bad one in the middle is answered with its own xid.
    flood += flow_mod(1000, match(oxm(12, b"\x01\x02\x03\x04")),
                      apply_actions(output(2)), xid=n + 1)
    c.s.sendall(flood + message(20, xid=n + 2))
    errors = []
    while True:
        m = c.recv()
        if m is None or m[1] == 21:
            break
        errors.append((struct.unpack("!I", m[4:8])[0], c.error_of(m)))
    check(m is not None, "barrier reply after the flood")
    check(errors == [(n + 1, (4, 9))],
          "the flood's only error is BAD_PREREQ for its bad one: %s"
          % errors[:5])
    p = ofctl("dump-aggregate", TARGET)
    check("flow_count=%d" % n in p.stdout, "aggregate after the flood: "
          + p.stdout)

    # A huge flow dump, read slowly: in pieces, every rule once, while
    # another connection is served.
    c.s.sendall(multipart_request(1, flow_stats_body(match()), xid=5))
    time.sleep(0.2)
    other = Conn()
    check(other.echo_ok(), "another connection is served during a dump")
    other.s.close()
    entries = parts = 0
    while True:
        m = c.recv()
        if m is None or m[1] != 19:
            break
        parts += 1
        entries += flow_stats_entries(m)
        if not struct.unpack("!H", m[10:12])[0] & 1:
            break
    check(entries == n and parts > 1,
          "flow dump: %d entries in %d replies" % (entries, parts))
    check(c.echo_ok(), "the connection works after the dump")

    # A peer that closes its sending side once it has asked (nc -N): the
    # switch reads the EOF while megabytes of replies are still to be
    # sent (more than the sockets hold), yet every reply comes, then the
    # switch closes.
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(("127.0.0.1", PORT))
    half = Conn(s)
    echoes = 6000

    def ask():
        half.s.sendall(b"".join(message(2, bytes(1024), xid=i)
                                for i in range(echoes))
                       + message(20, xid=echoes))
        half.s.shutdown(socket.SHUT_WR)
    asking = threading.Thread(target=ask)
    asking.start()
    replies, last = 0, None
    while True:
        m = half.recv()
        if m is None:
            break
        replies += m[1] == 3 and len(m) == 8 + 1024
        last = m
    asking.join()
    check(replies == echoes and last is not None and last[1] == 21,
          "after the peer's EOF: %d of %d ECHO_REPLYs, then %s" %
          (replies, echoes, last and last[:8].hex()))
    half.s.close()

    # A length below the header's: an error, then the switch closes.
    c.s.sendall(message(5, length=4))
    m = c.recv()
    check(c.error_of(m) == (1, 6) and c.recv() is None,
          "length 4: BAD_LEN, then the connection closes")
    c.s.close()

    # A peer that sends half a message and leaves; a peer with a HELLO
    # of OpenFlow 1.0 only.
    h = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    h.sendall(message(14, length=200)[:8] + b"\0" * 20)
    h.close()
    old = socket.create_connection(("127.0.0.1", PORT), timeout=30)
    old.sendall(message(0, version=1))
    got = b""
    while True:
        data = old.recv(4096)
        if not data:
            break
        got += data
    check(b"\x04\x01" in got and b"OpenFlow 1.3" in got,
          "HELLO 1.0: HELLO_FAILED with text, then close: %r" % got[:80])
    old.close()

    ofctl("del-flows", TARGET)
    check(wait_tx(2, 0) is not None and proc.poll() is None,
          "simdpath still forwards and answers")
    before = rx_packets()
    deadline = time.time() + CAP
    while rx_packets() < before + 1000 and time.time() < deadline:
        time.sleep(0.05)
    check(rx_packets() >= before + 1000, "forwarding never stopped")


def pmd_packets():
    """PMD 0's packet count from ctl counters-show (a thread of its own,
    not the OpenFlow one)."""
    _, out, _ = ctl("counters-show")
    m = re.search(r"^pmd 0: packets (\d+)", out, re.M)
    return int(m.group(1)) if m else -1


def forwards_during(action):
    """Runs action() in a thread, again until PMD 0's packet count, read
    while it runs, has grown beyond its count when that run began (on a
    machine so loaded that the PMD got no CPU during one run, the next
    is tried; the cap is a safety net). Returns (the last run's result,
    whether the PMD was seen forwarding during a run)."""
    deadline = time.time() + CAP
    while True:
        result = []
        th = threading.Thread(target=lambda: result.append(action()))
        before = pmd_packets()
        th.start()
        seen = False
        while th.is_alive() and not seen:
            seen = pmd_packets() > before >= 0
        th.join()
        if seen or time.time() > deadline:
            return result[0] if result else None, seen


def test_malformed_more(proc):
    """What test_malformed leaves out: messages of the largest length,
    headers cut short at the end of a connection, a FLOW_MOD shorter than
    its fixed part or with a match longer than itself, and a flood of bad
    FLOW_MODs that the peer does not read while it sends (the switch stops
    reading once 256 KiB of errors wait, then goes on): every one
    answered with its error and xid, in order, the connection alive, and
    the PMD forwarding all along."""
    c = Conn()
    big = 65535
    # A multipart request of the largest length, of every type it can
    # carry a body for; an unknown message as large.
    huge_match = struct.pack("!HH", 1, 65530)
    for kind, body, want in ((13, b"", (1, 6)), (4, b"", (1, 6)),
                             (12, b"", (13, 5)),
                             (1, flow_stats_body(huge_match), (4, 1))):
        m = multipart_request(kind, body + b"\0" * (big - 16 - len(body)),
                              xid=31)
        c.s.sendall(m)
        r = c.recv()
        check(c.error_of(r) == want and len(r) == 12 + 64 and
              r[4:8] == struct.pack("!I", 31),
              "65535-byte multipart %d: error %s, got %s"
              % (kind, want, c.error_of(r)))
    c.s.sendall(message(99, b"\0" * (big - 8), xid=32))
    check(c.error_of(c.recv()) == (1, 1), "65535-byte unknown type: "
          "BAD_TYPE")
    # FLOW_MODs of wrong lengths: shorter than the fixed part, and a match
    # whose length runs past the message.
    fm = flow_mod(1, match(oxm(5, b"\x08\x00")), apply_actions(output(2)),
                  xid=33)
    c.s.sendall(message(14, fm[8:40], xid=33))
    check(c.error_of(c.recv()) == (1, 6), "FLOW_MOD of 40 bytes: BAD_LEN")
    long_match = fm[:50] + struct.pack("!H", 400) + fm[52:]
    c.s.sendall(long_match)
    r = c.recv()
    check(c.error_of(r) == (4, 1),
          "FLOW_MOD whose match runs past it: OFPBMC_BAD_LEN, got %s"
          % (c.error_of(r),))
    check(c.echo_ok(), "the connection survives the largest messages")

    # 20,000 bad FLOW_MODs (a prerequisite missing) sent by a thread while
    # nothing is read, then read: every error, in order.
    n = 20000
    bad = b"".join(flow_mod(7, match(oxm(12, b"\x01\x02\x03\x04")),
                            apply_actions(output(2)), xid=1000 + i)
                   for i in range(n))

    def error_flood():
        sender = threading.Thread(target=c.s.sendall,
                                  args=(bad + message(20, xid=999),))
        sender.start()
        xids = []
        while True:
            r = c.recv()
            if r is None or r[1] == 21:
                break
            if c.error_of(r) == (4, 9):
                xids.append(struct.unpack("!I", r[4:8])[0])
        sender.join()
        return xids

    xids, seen = forwards_during(error_flood)
    check(xids == list(range(1000, 1000 + n)),
          "every bad FLOW_MOD of the flood answered BAD_PREREQ in order "
          "(%d of %d)" % (len(xids or []), n))
    check(seen, "the PMD forwards during the flood of errors")
    check(c.echo_ok(), "the connection survives the flood of errors")
    c.s.close()

    # Headers cut short: 4 bytes then close; 8 bytes of a 65535-byte
    # message then close. The switch goes on.
    for part in (message(5)[:4], message(14, length=big)[:8]):
        h = socket.create_connection(("127.0.0.1", PORT), timeout=30)
        h.sendall(part)
        h.close()
    c = Conn()
    check(c.echo_ok(), "a new connection is served after cut headers")
    c.s.close()

    # A flood of good FLOW_MODs from ovs-ofctl add-flows while the PMD
    # forwards: it counts packets all along.
    rules = os.path.join(WORK, "flood.txt")
    with open(rules, "w") as f:
        for i in range(20000):
            f.write("priority=9,udp,nw_dst=10.%d.%d.%d,actions=output:3\n"
                    % (i >> 16, (i >> 8) & 255, i & 255))
    p, seen = forwards_during(lambda: ofctl("add-flows", TARGET, rules))
    check(seen, "the PMD forwards during add-flows")
    check("flow_count=20000" in ofctl("dump-aggregate", TARGET).stdout,
          "add-flows of 20,000 rules applied")
    # Then each of them by a MODIFY_STRICT and a DELETE_STRICT: 40,000
    # messages, each finding its rule by match and priority (a listing of
    # every rule for each took minutes here).
    c = Conn()
    c.s.settimeout(CAP)

    def strict_flood(command):
        out = apply_actions(output(2)) if command == 2 else b""
        c.s.sendall(b"".join(
            flow_mod(9, match(oxm(5, b"\x08\x00"), oxm(10, b"\x11"),
                              oxm(12, bytes([10, i >> 16, (i >> 8) & 255,
                                             i & 255]))),
                     out, command=command, xid=i) for i in range(20000)) +
            message(20, xid=77777))
        replies = []
        while True:
            r = c.recv()
            if r is None or r[1] == 21:
                return replies, r is not None
            replies.append(r)

    replies, barrier = strict_flood(2)
    check(barrier and not replies, "20,000 MODIFY_STRICT, no error: %s"
          % [c.error_of(r) for r in replies[:3]])
    out = ofctl("dump-flows", TARGET).stdout
    check(out.count("actions=output:2") == 20000,
          "every rule now outputs to 2: %d" % out.count("actions=output:2"))
    replies, barrier = strict_flood(4)
    check(barrier and not replies and
          "flow_count=0" in ofctl("dump-aggregate", TARGET).stdout,
          "20,000 DELETE_STRICT leave no rule")
    c.s.close()
    check(proc.poll() is None, "simdpath still runs")


def accept_switch(ctrl):
    """The switch's next connection to the controller socket."""
    ctrl.settimeout(CAP)
    try:
        sock, _ = ctrl.accept()
    except socket.timeout:
        return None
    sock.settimeout(30)
    return Conn(sock)


def flows_removed(c, n):
    """The next n FLOW_REMOVED from c: {cookie: (priority, reason,
    packets, bytes)}."""
    removed = {}
    while len(removed) < n:
        m = c.recv()
        if m is None:
            break
        if m[1] == 11:
            cookie, prio, reason = struct.unpack("!QHB", m[8:19])
            removed[cookie] = (prio, reason) + struct.unpack("!QQ",
                                                             m[32:48])
    return removed


def test_controller(proc, ctrl):
    """--controller: the switch connects, takes rules, connects again
    after the controller goes, and the rules stay (--fail-mode secure)."""
    c = accept_switch(ctrl)
    if not check(c is not None, "the switch connects to the controller"):
        return
    c.s.sendall(message(5, xid=9))
    m = c.recv()
    mac = re.search(r"addr:([0-9a-f:]{17})",
                    ofctl("show", TARGET).stdout).group(1)
    check(m and m[1] == 6 and m[8:16] == b"\0\0" + bytes.fromhex(
        mac.replace(":", "")), "FEATURES_REPLY with port 1's address as "
          "datapath id: %r" % (m and m[8:16]))
    udp = match(oxm(5, b"\x08\x00"), oxm(10, b"\x11"),
                oxm(12, bytes([10, 0, 0, 1])))
    c.s.sendall(flow_mod(400, udp, apply_actions(output(3)), xid=10) +
                flow_mod(401, match(), apply_actions(output(0xfffffffe)),
                         xid=11) + message(20, xid=12))
    m = c.recv()
    check(c.error_of(m) == (2, 4) and m[4:8] == struct.pack("!I", 11),
          "output:LOCAL is refused: %r" % m)
    m = c.recv()
    check(m and m[1] == 21, "barrier reply")
    check(wait_tx(3, 1000) is not None,
          "udp to 10.0.0.1 reaches port 3 by the controller's rule")
    test_packet_path(c)
    # A rule with a hard timeout and SEND_FLOW_REM: FLOW_REMOVED, reason
    # HARD_TIMEOUT, once it expires; a deleted one: reason DELETE.
    ipv6, arp = match(oxm(5, b"\x86\xdd")), match(oxm(5, b"\x08\x06"))
    c.s.sendall(flow_mod(402, ipv6, apply_actions(output(2)), xid=13,
                         hard=1, flags=1, cookie=0xabc) +
                flow_mod(403, arp, apply_actions(output(2)), xid=14,
                         flags=1, cookie=0xdef) +
                flow_mod(403, arp, command=4, xid=15))
    removed = {k: v[:2] for k, v in flows_removed(c, 2).items()}
    check(removed == {0xabc: (402, 1), 0xdef: (403, 2)},
          "FLOW_REMOVED for the expired and the deleted rule: %s" % removed)
    # Idle timeouts with SEND_FLOW_REM: a rule hit by udp to 10.0.0.1
    # until a rule above it takes that traffic goes with reason
    # IDLE_TIMEOUT and its counts (every udp frame is 60 bytes); one no
    # packet hits goes with zero counts.
    c.s.sendall(flow_mod(410, udp, apply_actions(output(2)), xid=16,
                         idle=3, flags=1, cookie=0x1d1e) +
                flow_mod(411, ipv6, apply_actions(output(2)), xid=17,
                         idle=1, flags=1, cookie=0x1d1f) +
                message(20, xid=18))
    m = c.recv()
    check(m and m[1] == 21, "barrier reply after the idle rules")
    check(wait_tx(2, 1000) is not None, "udp reaches port 2 by the idle rule")
    c.s.sendall(flow_mod(420, udp, apply_actions(output(3)), xid=19))
    removed = flows_removed(c, 2)
    hit = removed.get(0x1d1e)
    check(hit and hit[:2] == (410, 0) and hit[2] >= 1000 and
          hit[3] == 60 * hit[2] and removed.get(0x1d1f) == (411, 0, 0, 0),
          "FLOW_REMOVED IDLE_TIMEOUT with the rules' counts: %s" % removed)
    c.s.close()
    c = accept_switch(ctrl)
    check(c is not None and c.echo_ok(),
          "the switch connects again after the controller closed")
    check(any("priority=400,udp,nw_dst=10.0.0.1 actions=output:3" in r
              for r in flows_text()),
          "the controller's rule stays: %s" % flows_text())
    check(wait_tx(3, 1000) is not None, "and forwarding goes on")
    if c:
        c.s.close()
    ofctl("del-flows", TARGET)


def until_reply(c, type_, xid):
    """The messages before the reply of this type and xid."""
    before = []
    while True:
        m = c.recv()
        if m is None or (m[1] == type_ and
                         m[4:8] == struct.pack("!I", xid)):
            return before
        before.append(m)


def test_packet_path(c):
    """PACKET_IN from output:CONTROLLER (the rule's cookie, reason
    ACTION, in_port, the frame cut to max_len), none once the rule is
    gone; PACKET_OUT to a port, and a bad one answered."""
    tcp = match(oxm(5, b"\x08\x00"), oxm(10, b"\x06"))
    c.s.sendall(flow_mod(450, tcp, apply_actions(output(OFPP_CONTROLLER, 40)),
                         xid=16, cookie=0x77))
    want = frame(6, [10, 0, 0, 2], 2000, 80)
    # Any TCP frame of the capture: a rule added while a burst is being
    # looked up may match from the middle of it.
    tcp_frames = [frame(6, [10, 0, 0, 2], 2000 + i, 80)[:40]
                  for i in range(8)]
    pin = None
    for _ in range(100000):
        m = c.recv()
        if m is None or m[1] == 10:
            pin = m
            break
    ok = pin is not None and len(pin) >= 42
    if ok:
        buffer_id, total, reason, table, cookie = struct.unpack(
            "!IHBBQ", pin[8:24])
        oxm_in_port = pin[24:40]
        ok = (buffer_id == 0xffffffff and total == len(want) and
              reason == 1 and table == 0 and cookie == 0x77 and
              oxm_in_port == bytes.fromhex("0001000c800000040000000100000000")
              and pin[42:] in tcp_frames)
    check(ok, "PACKET_IN: no buffer, reason ACTION, cookie, in_port 1, "
          "40 bytes of the frame: %r" % pin)
    c.s.sendall(flow_mod(450, tcp, command=4, xid=17) +
                message(20, xid=18))
    until_reply(c, 21, 18)
    # Once the barrier is answered the rule is gone: what was queued
    # before it has been sent, and no PACKET_IN follows an echo.
    c.s.sendall(message(2, b"x", xid=19))
    late = sum(m[1] == 10 for m in until_reply(c, 3, 19))
    c.s.sendall(message(2, b"y", xid=20))
    after = sum(m[1] == 10 for m in until_reply(c, 3, 20))
    check(after == 0, "no PACKET_IN once the rule is deleted: %d (%d "
          "before the first echo)" % (after, late))
    base = port_tx()
    out2 = output(2, 0)
    c.s.sendall(packet_out(out2, want, xid=21) +
                packet_out(out2, want, buffer_id=5, xid=22) +
                packet_out(out2, want, in_port=9, xid=23) +
                message(20, xid=24))
    errors = [(struct.unpack("!I", m[4:8])[0], c.error_of(m))
              for m in until_reply(c, 21, 24) if m[1] == 1]
    check(errors == [(22, (1, 8)), (23, (1, 11))],
          "PACKET_OUT with a buffer or a bad in_port: BUFFER_UNKNOWN, "
          "BAD_PORT: %s" % errors)
    # A BARRIER_REPLY comes after what the PACKET_OUTs before it did:
    # sent on, or at the controller; a burst longer than the switch's
    # queue to its PMD is sent whole.
    sent = port_tx().get(2, 0) - base.get(2, 0)
    check(sent == 1, "PACKET_OUT sent on port 2 before the BARRIER_REPLY: "
          "%d" % sent)
    burst = 600
    base = port_tx()
    c.s.sendall(b"".join(packet_out(out2, want, xid=100 + i)
                         for i in range(burst)) +
                packet_out(output(OFPP_CONTROLLER, 0xffff), want, xid=30) +
                message(20, xid=31))
    before = until_reply(c, 21, 31)
    sent = port_tx().get(2, 0) - base.get(2, 0)
    errors = [c.error_of(m) for m in before if m[1] == 1]
    check(sent == burst and not errors, "a burst of %d PACKET_OUTs sent "
          "before the BARRIER_REPLY, none refused: %d sent, errors %s"
          % (burst, sent, errors))
    pins = [m for m in before if m[1] == 10]
    check(len(pins) == 1 and pins[0].endswith(b"\0\0" + want),
          "PACKET_OUT to CONTROLLER: its PACKET_IN, the whole frame, "
          "before the BARRIER_REPLY: %r" % before)


def test_probe(ctrl):
    """--inactivity-probe 1000, as OVS probes its controller: after a
    second with nothing from the controller the switch sends an
    ECHO_REQUEST; answered, the connection stays; unanswered, the switch
    closes it, logs why, and connects again. Values it cannot take are
    refused by name before anything starts."""
    for bad in ("999", "3600001", "x", "-1", ""):
        p = subprocess.run([EXE, "run", "--port", "net_null0",
                            "--inactivity-probe", bad],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and
              "--inactivity-probe: '%s'" % bad in p.stderr,
              "--inactivity-probe %r: exit 2 naming it: %d %s"
              % (bad, p.returncode, p.stderr))
    proc = start_run(
        EXE, WORK,
        ["--port", "net_null0,no-rx=1",
         "--flows", os.path.join(WORK, "flows.txt"),
         "--ctl", os.path.join(WORK, "probe.sock"),
         "--controller", "tcp:127.0.0.1:%d" % ctrl.getsockname()[1],
         "--inactivity-probe", "1000"], "simdpath-probe")
    try:
        c = accept_switch(ctrl)
        answered = 0
        while c is not None and answered < 3:
            m = c.recv()
            if m is None:
                break
            if m[1] == 2:
                c.s.sendall(message(3, m[8:],
                                    xid=struct.unpack("!I", m[4:8])[0]))
                answered += 1
        check(answered == 3, "3 echo requests of the switch answered on "
              "one connection: %d" % answered)
        kinds = []
        while c is not None:
            m = c.recv()
            if m is None:
                break
            kinds.append(m[1])
        check(kinds == [2], "unanswered: one more echo request, then the "
              "switch closes the connection: %s" % kinds)
        check(accept_switch(ctrl) is not None,
              "the switch connects to the controller again")
        proc.terminate()
        out, err = proc.communicate(timeout=CAP)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    check(proc.returncode == 0 and
          "no reply to an echo request in 1000 ms" in err,
          "simdpath exits 0 and logs the probe's disconnect: " + err[-800:])


def test_crowd():
    """16 connections to --openflow that never say HELLO, its most: the
    controller, which comes after them, still gets its connection and
    HELLO; they are closed 10 s after they came, each logged, and
    ovs-ofctl is then served."""
    ctrl_port = free_port()  # nothing listens yet: the switch retries
    sock = os.path.join(WORK, "crowd.sock")
    proc = start_run(
        EXE, WORK,
        ["--port", "net_null0,no-rx=1",
         "--flows", os.path.join(WORK, "flows.txt"), "--ctl", sock,
         "--openflow", "ptcp:0", "--controller",
         "tcp:127.0.0.1:%d" % ctrl_port, "--inactivity-probe", "0"],
        "simdpath-crowd")
    idle, ctrl = [], None
    try:
        port, _ = listening_port(proc)
        deadline = time.time() + CAP
        idle = [socket.create_connection(("127.0.0.1", port), timeout=CAP)
                for _ in range(16)]

        def held():
            show = subprocess.run([EXE, "ctl", "--socket", sock,
                                   "openflow-show"], capture_output=True,
                                  text=True).stdout
            return show.count("no HELLO yet") == 16

        check(wait_until(held, deadline),
              "the switch holds the 16 connections")
        ctrl = socket.socket()
        ctrl.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ctrl.bind(("127.0.0.1", ctrl_port))
        ctrl.listen(1)
        c = accept_switch(ctrl)  # reads the switch's HELLO
        try:
            answered = c is not None and c.echo_ok()
        except OSError:
            answered = False
        check(answered, "the controller still gets its connection: HELLO, "
              "an echo")
        closed = 0
        for s in idle:
            s.settimeout(CAP)
            try:
                while s.recv(4096):
                    pass  # the switch's HELLO, then its close
                closed += 1
            except OSError:
                pass
        check(closed == 16, "each is closed without a HELLO: %d" % closed)
        r = ofctl("dump-flows", "tcp:127.0.0.1:%d" % port, check_rc=False)
        check(r.returncode == 0, "ovs-ofctl is served after: " + r.stderr)
        subprocess.run([EXE, "ctl", "--socket", sock, "stop"],
                       capture_output=True, timeout=60)
        out, err = proc.communicate(timeout=CAP)
    finally:
        for s in idle + ([ctrl] if ctrl else []):
            s.close()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    check(proc.returncode == 0 and len(re.findall(
        r"OpenFlow: connection from 127\.0\.0\.1 port \d+: no HELLO in "
        r"10 s; closed", err)) == 16,
        "simdpath exits 0 and logs each: " + err[-800:])


def main():
    global PORT, TARGET
    if not OFCTL:
        print("SKIP: ovs-ofctl not found (Debian: openvswitch-common)")
        return 77
    pcap = os.path.join(WORK, "in.pcap")
    write_pcap(pcap, [frame(17, [10, 0, 0, 1], 1000 + i, 53)
                      for i in range(8)] +
               [frame(6, [10, 0, 0, 2], 2000 + i, 80) for i in range(8)])
    flows = os.path.join(WORK, "flows.txt")
    with open(flows, "w") as f:
        f.write("priority=0,actions=drop\n")
    ctrl = socket.socket()
    ctrl.bind(("127.0.0.1", 0))
    ctrl.listen(4)
    proc = start_run(
        EXE, WORK, pcap_ports(pcap) +
        ["--flows", flows, "--ctl", CTL, "--openflow", "ptcp:0",
         "--controller", "tcp:127.0.0.1:%d" % ctrl.getsockname()[1],
         "--fail-mode", "secure",
         # The controller socket takes the switch's connection long
         # before test_controller reads it: no probe (test_probe's run).
         "--inactivity-probe", "0"], "simdpath-of")
    try:
        PORT, before = listening_port(proc)
        if not check(PORT, "simdpath run logs its OpenFlow port: %s"
                     % "".join(before)[-800:]):
            return 1
        TARGET = "tcp:127.0.0.1:%d" % PORT
        test_ofctl(proc)
        test_idle(proc)
        test_port_config(proc)
        test_malformed(proc)
        test_malformed_more(proc)
        test_controller(proc, ctrl)
        rc, _, err = ctl("stop")
        check(rc == 0, "ctl stop: " + err)
        out, err = proc.communicate(timeout=CAP)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    check(proc.returncode == 0, "simdpath exits 0: " + err[-800:])
    check(conserved(counters(out)), "counters conserve: " + out[-800:])
    check(no_leak(out), "no mbuf leaked: " + out[-300:])
    test_probe(ctrl)
    test_crowd()
    shutil.rmtree(WORK, ignore_errors=True)
    return summary("openflow")


if __name__ == "__main__":
    sys.exit(main())
