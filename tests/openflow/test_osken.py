#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""simdpath under an os-ken controller (Debian's python3-os-ken), an
OpenFlow implementation that shares nothing with simdpath's or OVS's.

Usage: test_osken.py SIMDPATH
osken-manager runs tests/openflow/osken_app.py; simdpath run connects to
it with --controller, with endless UDP traffic to 10.0.0.1:53 on port 1.
The app installs rules with os-ken's encoder and reads them back with its
decoder: the matches, actions, cookie and ports must read as it sent them,
simple_switch_13's table-miss rule to the CONTROLLER among them, and the
traffic must follow the app's rule. The learning switch between network
namespaces is tests/openflow/test_learning.py. Skips (77) without
osken-manager.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, HERE)
from report import (RESULTS, check, conserved, counters, no_leak,
                    summary)  # noqa
from traffic import frame, pcap_ports, start_run, write_pcap  # noqa

EXE = os.path.abspath(sys.argv[1])
CAP = 120  # seconds: a safety net, never the condition


def main():
    manager = shutil.which("osken-manager")
    if not manager:
        print("SKIP: osken-manager not found (Debian: python3-os-ken)")
        return 77
    work = tempfile.mkdtemp(prefix="simdpath-osken-")
    out = os.path.join(work, "result.json")
    ctl = os.path.join(work, "ctl.sock")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    pcap = os.path.join(work, "in.pcap")
    write_pcap(pcap, [frame(17, [10, 0, 0, 1], 1000 + i, 53)
                      for i in range(8)])
    flows = os.path.join(work, "flows.txt")
    with open(flows, "w") as f:
        f.write("priority=0,actions=drop\n")
    osken = subprocess.Popen(
        [manager, "--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port",
         str(port), os.path.join(HERE, "osken_app.py")],
        env=dict(os.environ, SP_OSKEN_OUT=out), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    sp = None
    try:
        deadline = time.time() + CAP
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 1).close()
                break
            except OSError:
                time.sleep(0.1)
        sp = start_run(
            EXE, work, pcap_ports(pcap) +
            ["--flows", flows, "--ctl", ctl,
             "--controller", "tcp:127.0.0.1:%d" % port], "simdpath-osken")
        while not os.path.exists(out) and time.time() < deadline:
            time.sleep(0.1)
        result = json.load(open(out)) if os.path.exists(out) else {}
        check(result.get("n_tables") == 1, "os-ken sees one table: %s"
              % result)
        check(result.get("errors") == [],
              "no rule is refused: %s" % result.get("errors"))
        flows = {f["priority"]: f for f in result.get("flows", [])}
        f = flows.get(500, {})
        check(f.get("cookie") == 0x55 and f.get("match") == {
            "eth_type": 0x0800, "ip_proto": 17, "ipv4_dst": "10.0.0.1",
            "udp_dst": 53} and f.get("actions") == [
                "OFPActionSetField(ipv4_src='192.0.2.1')",
                "OFPActionOutput(len=16,max_len=0,port=2,type=0)"],
              "rule 500 reads back as sent: %s" % f)
        f = flows.get(400, {})
        check(f.get("match") == {"eth_type": 0x86dd, "ipv6_dst": [
            "2001:db8::", "ffff:ffff::"]} and
            f.get("actions", [""])[0].startswith("OFPActionDecNwTtl"),
            "rule 400 reads back as sent: %s" % f)
        f = flows.get(300, {})
        check(f.get("match") == {"vlan_vid": [0x1000, 0x1000]} and
              f.get("actions", [""])[0].startswith("OFPActionPopVlan"),
              "rule 300 reads back as sent: %s" % f)
        check(sorted(flows) == [0, 300, 400, 500] and
              flows[0]["actions"] == [
                  "OFPActionOutput(len=16,max_len=65535,port=4294967293,"
                  "type=0)"] and
              all(f["packets"] < 2 ** 63 for f in flows.values()),
              "four rules, with their packet counts: %s" % flows)
        check(result.get("ports") == [[1, "net_pcap0"], [2, "net_null0"],
                                      [3, "net_null1"]],
              "ports: %s" % result.get("ports"))
        # The app's rule forwards: port 2 sends.
        tx = 0
        while time.time() < deadline:
            rc, text = subprocess.getstatusoutput(
                "%s ctl --socket %s counters-show" % (EXE, ctl))
            m = re.search(r"^port 2 \([^)]*\): rx \d+ tx (\d+)", text, re.M)
            tx = int(m.group(1)) if m else 0
            if tx >= 1000:
                break
            time.sleep(0.1)
        check(tx >= 1000, "udp to 10.0.0.1:53 leaves on port 2: %d" % tx)
        subprocess.run([EXE, "ctl", "--socket", ctl, "stop"],
                       capture_output=True, timeout=60)
        sp_out, sp_err = sp.communicate(timeout=CAP)
        check(sp.returncode == 0, "simdpath exits 0: " + sp_err[-500:])
        check(conserved(counters(sp_out)), "counters conserve: "
              + sp_out[-500:])
        check(no_leak(sp_out), "no mbuf leaked")
    finally:
        for p in (sp, osken):
            if p and p.poll() is None:
                p.kill()
                p.communicate()
    if RESULTS["failed"]:
        print(osken.stdout.read() if osken.stdout else "")
    shutil.rmtree(work, ignore_errors=True)
    return summary("osken")


if __name__ == "__main__":
    sys.exit(main())
