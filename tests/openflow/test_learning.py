#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""simdpath as a learning switch driven by an os-ken controller, between
two network namespaces (issue 22).

Usage: test_learning.py SIMDPATH
osken-manager (python3-os-ken) runs tests/openflow/learning_switch.py, the
equivalent of os-ken's simple_switch_13; `simdpath run --controller`
connects to it, its two net_af_packet ports on veth pairs into the
namespaces (tests/netns's helpers). With only the app's table-miss rule
at first, the first frames (ARP, the first echo request) reach the app as
PACKET_INs, it installs in_port+eth_dst+eth_src rules (ctl flow-dump shows
them) and sends the frames on with PACKET_OUT; ping and a 4 MiB TCP
transfer then work, and while the transfer flows no further frame reaches
the controller: simdpath's packet_in count and the app's stay where they
were. Waits are bounded by counts; CAP seconds is a safety net. Skips
(77) without root, network namespaces, osken-manager, iperf3 or ethtool.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "netns"))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
import test_netns as nn  # noqa: E402
from report import (RESULTS, check, conserved, counters, no_leak,
                    summary)  # noqa
from traffic import free_port  # noqa

CAP = nn.CAP


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def wait_for(cond):
    """Polls cond() until it is true or CAP passed; returns its value."""
    deadline = time.monotonic() + CAP
    value = cond()
    while not value and time.monotonic() < deadline:
        time.sleep(0.05)
        value = cond()
    return value


def app_state(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def packet_ins(run):
    """simdpath's count of frames handed to the controller, all ports."""
    ports, _ = run.counters()
    return sum(p["packet_in"] for p in ports.values()), \
        sum(p["rx"] for p in ports.values())


def learning(manager):
    a, b = nn.namespace("la"), nn.namespace("lb")
    ha, pa = nn.veth("lha", a, "lpa", addr="10.77.0.1/24")
    hb, pb = nn.veth("lhb", b, "lpb", addr="10.77.0.2/24")
    mac_a, mac_b = nn.mac(a, pa), nn.mac(b, pb)
    for ns, dev in ((a, pa), (b, pb)):
        nn.sh("ethtool", "-K", dev, "tx", "off", ns=ns)
    port = free_port()
    out = os.path.join(nn.WORK, "learning.json")
    osken = subprocess.Popen(
        [manager, "--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port",
         str(port), os.path.join(HERE, "learning_switch.py")],
        env=dict(os.environ, SP_OSKEN_OUT=out), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    nn.RUNS.append(osken)

    def listening():
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return True
        except OSError:
            return osken.poll() is not None

    wait_for(listening)
    run = nn.Run("learn", ["net_af_packet0,iface=" + ha,
                           "net_af_packet1,iface=" + hb],
                 "priority=0,actions=drop\n",
                 extra=("--controller", "tcp:127.0.0.1:%d" % port))
    if not check(run.ready, "simdpath on two af_packet ports started"):
        print(run.stop())
        return

    def dump():
        rc, text, _ = run.ctl("flow-dump")
        return text if rc == 0 else ""

    check(wait_for(lambda: app_state(out).get("connected") and
                   "priority=0,actions=controller" in dump()),
          "the app's table-miss rule is in: " + dump())
    replies = nn.sh(sys.executable, "-c", nn.PING, "10.77.0.2", "3", ns=a)
    check(replies.strip() == "3", "ping through the learning switch: 3 "
          "echo replies, got %s" % replies.strip())
    rules = [l for l in dump().splitlines() if "priority=1," in l]
    want = {(1, mac_b, mac_a, 2), (2, mac_a, mac_b, 1)}
    got = set()
    for in_port, dst, src, out_port in want:
        for line in rules:
            if ("in_port=%d," % in_port in line and "dl_dst=" + dst in line
                    and "dl_src=" + src in line and
                    line.endswith("actions=output:%d" % out_port)):
                got.add((in_port, dst, src, out_port))
    check(got == want, "flow-dump has the learnt rules both ways: %s"
          % rules)
    # Every frame simdpath handed to the controller reached the app.
    pin0, rx0 = packet_ins(run)
    state = wait_for(lambda: (lambda s: s if s.get("packet_ins") == pin0
                              else None)(app_state(out))) or \
        app_state(out)
    check(pin0 >= 3 and state.get("packet_ins") == pin0,
          "the first frames reached the app as PACKET_INs: simdpath %d, "
          "the app %s" % (pin0, state.get("packet_ins")))
    check(state.get("floods", 0) >= 1 and state.get("packet_outs") == pin0,
          "the app flooded the unknown and sent every frame back: %s"
          % state)
    check(set(state.get("reasons", [])) == {0} and
          set(state.get("cookies", [])) == {0} and not state.get("errors"),
          "PACKET_INs of the table-miss rule: reason NO_MATCH, cookie 0, "
          "no error: %s" % state)
    n = 4 << 20
    got = nn.iperf(b, a, "10.77.0.2", n)
    check(got >= n, "TCP transfer of %d bytes through the learning switch: "
          "%d" % (n, got))
    replies = nn.sh(sys.executable, "-c", nn.PING, "10.77.0.2", "3", ns=a)
    check(replies.strip() == "3", "ping again: %s" % replies.strip())
    pin1, rx1 = packet_ins(run)
    check(rx1 - rx0 >= 1000 and pin1 == pin0 and
          app_state(out).get("packet_ins") == pin0,
          "with the rules in, %d frames later none reached the controller "
          "(packet_in %d -> %d, the app %s)"
          % (rx1 - rx0, pin0, pin1, app_state(out).get("packet_ins")))
    rc, text, err = run.stop()
    check(rc == 0, "learning switch run exits 0: " + err[-500:])
    ports = counters(text)
    check(conserved(ports), "learning switch run conserves: %s" % ports)
    check(no_leak(text), "learning switch run leaks no mbuf: "
          + text[-300:])


def main():
    if os.geteuid() != 0 or not shutil.which("ip"):
        skip("network namespaces need root and iproute2")
    manager = shutil.which("osken-manager")
    if not manager:
        skip("osken-manager not found (Debian: python3-os-ken)")
    if not shutil.which("iperf3") or not shutil.which("ethtool"):
        skip("iperf3 or ethtool missing")
    try:
        nn.sh("ip", "netns", "add", nn.TAG + "probe")
        nn.sh("ip", "netns", "del", nn.TAG + "probe")
    except (RuntimeError, OSError) as e:
        skip("cannot create a network namespace: %s" % e)
    try:
        learning(manager)
    except Exception:
        traceback.print_exc()
        check(False, "the learning switch test raised")
    finally:
        # The controller's log, when something failed, before cleanup
        # kills it.
        osken = [p for p in nn.RUNS if p.args[0] == manager]
        if RESULTS["failed"] and osken:
            osken[0].kill()
            print(osken[0].communicate()[0][-3000:])
        nn.cleanup()
    return summary("learning")


if __name__ == "__main__":
    sys.exit(main())
