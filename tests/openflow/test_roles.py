#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two os-ken controllers of one cluster (Debian's python3-os-ken) and
simdpath connected to both (--controller twice), with every packet of
endless UDP traffic sent to the controllers (priority=0,actions=controller).

Usage: test_roles.py SIMDPATH
Each osken-manager runs tests/openflow/osken_roles_app.py. The first asks
to be master (generation 10), the second to be a slave (10): the slave's
FLOW_MOD and PACKET_OUT are refused with OFPBRC_IS_SLAVE and it gets no
PACKET_IN after its role reply while the master gets hundreds. Then the
second takes over (generation 11): the first becomes a slave, gets no
PACKET_IN after it learns so, and its old generation is stale; the new
master's rule is installed and it gets the PACKET_INs; `ctl openflow-show`
shows both roles and the generation. The test moves the
apps on by files once the counts are reached, never by time. A
controller given twice, or a ninth, is refused by name. Skips (77)
without osken-manager.
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
                    summary, wait_until)  # noqa
from traffic import (frame, free_port, pcap_ports, start_run,  # noqa
                     write_pcap)

EXE = os.path.abspath(sys.argv[1])
CAP = 240  # seconds: a safety net, never the condition
OFPCR_ROLE_MASTER, OFPCR_ROLE_SLAVE = 2, 3
OFPET_BAD_REQUEST, OFPBRC_IS_SLAVE = 1, 10
OFPET_ROLE_REQUEST_FAILED, OFPRRFC_STALE = 11, 1


def read(work, name):
    try:
        with open(os.path.join(work, name + ".json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), 1).close()
        return True
    except OSError:
        return False


def has_role(result, phase, role):
    return any(r[0] == phase and r[1] == role
               for r in result.get("roles", []))


def main():
    manager = shutil.which("osken-manager")
    if not manager:
        print("SKIP: osken-manager not found (Debian: python3-os-ken)")
        return 77
    # A controller given twice, and a ninth, are refused by name before
    # anything starts.
    twice = ["--controller", "tcp:127.0.0.1:6653"] * 2
    nine = sum((["--controller", "tcp:127.0.0.1:%d" % (6600 + i)]
                for i in range(9)), [])
    for args, why in ((twice, "'tcp:127.0.0.1:6653' is given twice"),
                      (nine, "'tcp:127.0.0.1:6608'; at most 8")):
        p = subprocess.run([EXE, "run", "--port", "net_null0"] + args,
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and "--controller: " + why in p.stderr,
              "%s: exit 2 naming it: %d %s" % (why, p.returncode, p.stderr))
    work = tempfile.mkdtemp(prefix="simdpath-roles-")
    ctl = os.path.join(work, "ctl.sock")
    pcap = os.path.join(work, "in.pcap")
    write_pcap(pcap, [frame(17, [10, 0, 0, 1], 1000 + i, 53)
                      for i in range(8)])
    flows = os.path.join(work, "flows.txt")
    with open(flows, "w") as f:
        f.write("priority=0,actions=controller\n")
    ports = {}
    apps = {}
    sp = None
    try:
        for name in ("first", "second"):
            ports[name] = free_port()
            apps[name] = subprocess.Popen(
                [manager, "--ofp-listen-host", "127.0.0.1",
                 "--ofp-tcp-listen-port", str(ports[name]),
                 os.path.join(HERE, "osken_roles_app.py")],
                env=dict(os.environ, SP_ROLES_NAME=name, SP_ROLES_DIR=work),
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.time() + CAP
        for name in ports:
            wait_until(lambda: listening(ports[name]) or
                       apps[name].poll() is not None, deadline)
        sp = start_run(
            EXE, work, pcap_ports(pcap) +
            ["--flows", flows, "--ctl", ctl,
             "--controller", "tcp:127.0.0.1:%d" % ports["first"],
             "--controller", "tcp:127.0.0.1:%d" % ports["second"]],
            "simdpath-roles")

        # The first is master and counts PACKET_INs; the second is a
        # slave that was refused and has had its BARRIER reply.
        check(wait_until(lambda: read(work, "first").get("packet_ins", {})
                         .get("master", 0) >= 100 and
                         read(work, "second").get("barriers", 0) >= 1,
                         deadline),
              "master gets PACKET_INs, the slave its BARRIER reply: %s %s"
              % (read(work, "first"), read(work, "second")))
        first, second = read(work, "first"), read(work, "second")
        check(has_role(first, "master", OFPCR_ROLE_MASTER) and
              [10] == [r[2] for r in first["roles"]],
              "the first is master, generation 10: %s" % first.get("roles"))
        check(has_role(second, "slave", OFPCR_ROLE_SLAVE),
              "the second is a slave: %s" % second.get("roles"))
        check(second.get("errors") == [
            ["slave", OFPET_BAD_REQUEST, OFPBRC_IS_SLAVE]] * 2,
            "the slave's FLOW_MOD and PACKET_OUT are refused IS_SLAVE: %s"
            % second.get("errors"))

        # The second takes over.
        open(os.path.join(work, "takeover"), "w").close()
        check(wait_until(lambda: has_role(read(work, "second"), "master",
                                          OFPCR_ROLE_MASTER), deadline),
              "the second becomes master: %s" % read(work, "second"))
        open(os.path.join(work, "takeover-done"), "w").close()
        check(wait_until(lambda: read(work, "second").get("packet_ins", {})
                         .get("master", 0) >= 100 and
                         read(work, "first").get("errors") and
                         read(work, "second").get("barriers", 0) >= 2,
                         deadline),
              "the new master gets PACKET_INs, the old one's generation "
              "is stale: %s %s" % (read(work, "first"), read(work, "second")))
        first, second = read(work, "first"), read(work, "second")
        check(has_role(first, "check", OFPCR_ROLE_SLAVE) and
              [r[2] for r in first["roles"]] == [10, 11],
              "the first is a slave once the second took over, generation "
              "11: %s" % first.get("roles"))
        check(first.get("errors") == [
            ["asked stale", OFPET_ROLE_REQUEST_FAILED, OFPRRFC_STALE]],
            "generation 10 is stale: %s" % first.get("errors"))

        rc, show = subprocess.getstatusoutput(
            "%s ctl --socket %s openflow-show" % (EXE, ctl))
        check(rc == 0 and re.search(
            r"^controller tcp:127\.0\.0\.1:%d: connected for \d+ s, role "
            r"slave, errors answered 1$" % ports["first"], show, re.M) and
            re.search(r"^controller tcp:127\.0\.0\.1:%d: connected for \d+ "
                      r"s, role master, errors answered 2$" % ports["second"],
                      show, re.M) and
            "master election: generation 11" in show,
            "openflow-show: the first a slave, the second master, "
            "generation 11: " + show)
        rc, dump = subprocess.getstatusoutput(
            "%s ctl --socket %s flow-dump" % (EXE, ctl))
        check(rc == 0 and re.search(r"priority=101,.*tp_dst=2", dump) and
              not re.search(r"tp_dst=1\b", dump),
              "the master's rule is in, the slave's is not: " + dump)
        subprocess.run([EXE, "ctl", "--socket", ctl, "stop"],
                       capture_output=True, timeout=60)
        sp_out, sp_err = sp.communicate(timeout=CAP)
        check(sp.returncode == 0, "simdpath exits 0: " + sp_err[-500:])
        first, second = read(work, "first"), read(work, "second")
        check(second["packet_ins"].get("slave", 0) == 0,
              "no PACKET_IN reaches the slave after its role reply: %s"
              % second["packet_ins"])
        late = sum(first["packet_ins"].get(p, 0)
                   for p in ("check", "asked stale"))
        check(late == 0, "no PACKET_IN reaches the old master once it is "
              "a slave: %s" % first["packet_ins"])
        c = counters(sp_out)
        check(conserved(c), "counters conserve: " + sp_out[-500:])
        check(c.get(2, {}).get("tx", 1) == 0 and
              c.get(0, {}).get("packet_out", 0) == 0,
              "the slave's PACKET_OUT to port 2 was not sent: %s" % c)
        check(no_leak(sp_out), "no mbuf leaked")
    finally:
        for p in [sp] + list(apps.values()):
            if p and p.poll() is None:
                p.kill()
                p.communicate()
    if RESULTS["failed"]:
        for name, p in apps.items():
            print("--- %s:\n%s" % (name, p.stdout.read() if p.stdout
                                    else ""))
    shutil.rmtree(work, ignore_errors=True)
    return summary("roles")


if __name__ == "__main__":
    sys.exit(main())
