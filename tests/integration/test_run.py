#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Integration tests of `simdpath run` on DPDK virtual devices.

Usage: test_run.py SIMDPATH SOURCE_DIR [CORPUS_DIR]
Every run uses net_pcap/net_ring vdevs without hugepages. Expected output
comes from tests/integration/model.py, which shares no code with simdpath.
"""
import json
import os
import re
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import model  # noqa: E402
from report import (RESULTS, check, conserved, counters, no_leak,
                    summary)  # noqa

EXE, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
# SP_WRAPPER (e.g. "qemu-aarch64 -L SYSROOT") runs simdpath on another CPU.
CMD = shlex.split(os.environ.get("SP_WRAPPER", "")) + [EXE]
# SP_REFERENCE: a simdpath built for another architecture that runs here
# natively (the x86 build beside an arm64 one under qemu); both must write
# byte-identical output captures for the same traffic and rules.
REFERENCE = os.environ.get("SP_REFERENCE", "")
CORPUS = sys.argv[3] if len(sys.argv) > 3 else ""
EXAMPLES = os.path.join(SRC, "examples")
WORK = tempfile.mkdtemp(prefix="simdpath-it-")


def run(args, cwd=WORK, env=None, timeout=120, cmd=None):
    e = dict(os.environ)
    e.pop("SIMDPATH_IMPL", None)
    e["SIMDPATH_CTL"] = os.path.join(WORK, "ctl.sock")
    if env:
        e.update(env)
    p = subprocess.run((cmd or CMD) + args, cwd=cwd, env=e,
                       capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def flow_of(frame):
    """The header fields that tell a packet's flow apart."""
    pkt = model.Packet(frame, 0)
    return (pkt.vlan, tuple(sorted((k, v) for k, v in pkt.f.items()
                                   if k not in ("nw_ttl", "nw_tos"))))


def same_traffic(got, want):
    """The same frames, in the same order within each flow. Packets of
    different flows in one burst may leave in another order: the datapath
    handles a burst rule by rule."""
    def by_flow(frames):
        flows = {}
        for f in frames:
            flows.setdefault(flow_of(f), []).append(f)
        return flows
    return sorted(got) == sorted(want) and by_flow(got) == by_flow(want)


def pcap_port(i, rx=None, tx=None, infinite=False):
    spec = "net_pcap%d" % i
    if rx:
        spec += ",rx_pcap=" + rx
        if infinite:
            spec += ",infinite_rx=1"
    if tx:
        spec += ",tx_pcap=" + tx
    return spec


def test_demo():
    """The bundled demo, checked packet by packet against the model."""
    rc, out, err = run(["run"])
    check(rc == 0, "demo exits 0 (rc %d): %s" % (rc, err[-500:]))
    ports = counters(out)
    check(set(ports) == {1, 2}, "demo reports ports 1 and 2: " + out)
    check(all(set(p["nic"]) == {"rx_missed", "rx_errors", "rx_nombuf",
                                "tx_errors"} for p in ports.values()),
          "demo reports the NIC counters: " + out)
    check(conserved(ports), "demo counters conserve: %s" % ports)
    check(no_leak(out), "demo leaks no mbuf: " + out[-300:])
    check("kernels: mfex=" in out, "demo prints the kernels in use")
    expect = os.path.join(WORK, "expect-demo")
    subprocess.run([sys.executable, os.path.join(HERE, "model.py"),
                    os.path.join(EXAMPLES, "traffic.pcap"),
                    os.path.join(EXAMPLES, "flows.txt"), "1", expect],
                   check=True, capture_output=True)
    for port in (1, 2):
        got = model.read_pcap(os.path.join(WORK, "simdpath-demo",
                                           "port%d.pcap" % port))
        want_path = os.path.join(expect, "port%d.pcap" % port)
        want = model.read_pcap(want_path) if os.path.exists(want_path) \
            else []
        # The model leaves out malformed frames: compare the well-formed.
        got_modelled = [f for f in got if model.Packet(f, 1).ok]
        check(len(want) > 0, "model expects port %d traffic" % port)
        check(same_traffic(got_modelled, want),
              "port %d: %d modelled packets, %d expected, or different "
              "bytes or order within a flow" % (port, len(got_modelled),
                                                len(want)))
    tcpdump = shutil.which("tcpdump")
    if tcpdump:
        for port in (1, 2):
            p = subprocess.run([tcpdump, "-nn", "-r",
                                os.path.join(WORK, "simdpath-demo",
                                             "port%d.pcap" % port)],
                               capture_output=True, text=True)
            check(p.returncode == 0, "tcpdump reads port%d.pcap: %s"
                  % (port, p.stderr[-300:]))


def merged_corpus():
    """Every Ethernet capture of the corpus as one pcap, or None."""
    if not CORPUS or not os.path.isdir(CORPUS):
        return None
    frames = []
    for name in sorted(os.listdir(CORPUS)):
        path = os.path.join(CORPUS, name)
        if not name.endswith(".pcap"):
            continue
        with open(path, "rb") as f:
            head = f.read(24)
        if len(head) < 24:
            continue
        endian = "<" if head[:4] in (b"\xd4\xc3\xb2\xa1",
                                     b"\x4d\x3c\xb2\xa1") else ">"
        if struct.unpack(endian + "I", head[20:24])[0] != 1:
            continue  # not Ethernet
        frames += [fr for fr in model.read_pcap(path) if fr]
    out = os.path.join(WORK, "corpus.pcap")
    model.write_pcap(out, frames)
    return out, len(frames)


# Rules that send every packet somewhere through most actions.
CORPUS_FLOWS = """\
priority=300,in_port=1,tcp,actions=dec_ttl,mod_nw_src:192.0.2.1,mod_tp_dst:8080,output:2
priority=300,in_port=1,udp,actions=mod_nw_dst:10.9.8.7,mod_nw_tos:32,output:2,output:3
priority=250,in_port=1,tcp6,actions=dec_ttl,set_field:2001:db8::1->ipv6_src,output:3
priority=200,in_port=1,dl_vlan=100,actions=strip_vlan,output:3
priority=150,in_port=1,ip,actions=dec_ttl,output:2
priority=150,in_port=1,ipv6,actions=mod_dl_src:02:00:00:00:00:99,output:3
priority=100,in_port=1,arp,actions=push_vlan:0x8100,mod_vlan_vid:42,output:2
priority=1,in_port=1,actions=output:3
"""


def run_capture(pcap, flows, tag, impl=None, cmd=None):
    """Runs pcap through port 1 with flows; returns (rc, report, outputs)."""
    d = os.path.join(WORK, tag)
    os.makedirs(d, exist_ok=True)
    flow_file = os.path.join(d, "flows.txt")
    with open(flow_file, "w") as f:
        f.write(flows)
    args = ["run", "--port", pcap_port(0, rx=pcap,
                                       tx=os.path.join(d, "port1.pcap")),
            "--port", pcap_port(1, tx=os.path.join(d, "port2.pcap")),
            "--port", pcap_port(2, tx=os.path.join(d, "port3.pcap")),
            "--flows", flow_file, "--exit-when-idle", "400"]
    if impl:
        args += ["--impl", impl]
    rc, out, err = run(args, cmd=cmd)
    outputs = [model.read_pcap(os.path.join(d, "port%d.pcap" % p))
               if os.path.exists(os.path.join(d, "port%d.pcap" % p)) else []
               for p in (1, 2, 3)]
    return rc, out + err, outputs


def supported_variants():
    rc, out, _ = run(["impls"])
    return re.findall(r"^  ([a-z0-9]+) +\d+ bits  supported", out, re.M)


def test_every_impl_on_corpus():
    """Every variant, and autovalidate, forward the whole corpus to the
    same bytes, with zero autovalidate mismatches."""
    merged = merged_corpus()
    if not merged:
        print("SKIP: corpus not found (%s)" % (CORPUS or "not given"))
        RESULTS["skipped"] += 1
        return
    pcap, n = merged
    results = {}
    for impl in supported_variants() + ["autovalidate"]:
        rc, report, outputs = run_capture(pcap, CORPUS_FLOWS, impl, impl)
        check(rc == 0, "corpus under %s exits 0: %s" % (impl, report[-800:]))
        ports = counters(report)
        check(ports.get(1, {}).get("rx") == n,
              "corpus under %s: %d frames received, want %d"
              % (impl, ports.get(1, {}).get("rx", -1), n))
        check(conserved(ports), "corpus under %s conserves: %s"
              % (impl, ports))
        check(no_leak(report), "corpus under %s leaks no mbuf" % impl)
        results[impl] = outputs
        if impl == "autovalidate":
            check(re.search(r"autovalidate: [1-9]\d* checks, 0 mismatches",
                            report),
                  "autovalidate reports no mismatch: " + report[-600:])
    base = results.get("scalar")
    for impl, outputs in results.items():
        for p in range(3):
            check(sorted(outputs[p]) == sorted(base[p]),
                  "corpus: port %d output under %s equals scalar's "
                  "(%d vs %d frames)" % (p + 1, impl, len(outputs[p]),
                                         len(base[p])))


def test_cross_arch():
    """With SP_REFERENCE, the demo and the corpus give the same output
    captures, byte for byte and in order, from both builds, each with the
    variants auto picks on its CPU."""
    if not REFERENCE:
        return
    if not check(os.access(REFERENCE, os.X_OK),
                 "SP_REFERENCE %s is a program" % REFERENCE):
        return
    demo = {}
    for tag, cmd in (("ref", [REFERENCE]), ("own", CMD)):
        d = os.path.join(WORK, "demo-" + tag)
        os.makedirs(d, exist_ok=True)
        rc, _, err = run(["run"], cwd=d, cmd=cmd)
        check(rc == 0, "demo (%s) exits 0: %s" % (tag, err[-300:]))
        demo[tag] = [model.read_pcap(os.path.join(d, "simdpath-demo",
                                                  "port%d.pcap" % p))
                     for p in (1, 2)]
    for p in range(2):
        check(demo["own"][p] == demo["ref"][p] and demo["ref"][p],
              "demo: port %d output equals the reference build's (%d vs %d "
              "frames)" % (p + 1, len(demo["own"][p]), len(demo["ref"][p])))
    merged = merged_corpus()
    if not check(merged is not None, "corpus for the cross-arch check"):
        return
    _, _, ref = run_capture(merged[0], CORPUS_FLOWS, "xarch-ref",
                            cmd=[REFERENCE])
    _, _, own = run_capture(merged[0], CORPUS_FLOWS, "xarch-own")
    for p in range(3):
        check(own[p] == ref[p],
              "corpus: port %d output equals the reference build's (%d vs "
              "%d frames)" % (p + 1, len(own[p]), len(ref[p])))


def test_multiport_ring():
    """Port 1 (pcap) -> port 2 (net_ring, loops back) -> port 3 (pcap)."""
    d = os.path.join(WORK, "ring")
    os.makedirs(d, exist_ok=True)
    flows = os.path.join(d, "flows.txt")
    with open(flows, "w") as f:
        f.write("in_port=1,actions=output:2\nin_port=2,ip,actions=dec_ttl,"
                "output:3\nin_port=2,actions=output:3\n")
    traffic = os.path.join(EXAMPLES, "traffic.pcap")
    rc, out, err = run(["run", "--port", pcap_port(0, rx=traffic),
                        "--port", "net_ring0", "--port",
                        pcap_port(1, tx=os.path.join(d, "out.pcap")),
                        "--flows", flows, "--exit-when-idle", "400"])
    check(rc == 0, "ring run exits 0: " + err[-500:])
    ports = counters(out)
    sent = model.read_pcap(os.path.join(d, "out.pcap"))
    check(ports.get(2, {}).get("rx") == 2000 and
          ports.get(2, {}).get("tx") == 2000,
          "all 2000 frames went through the ring: %s" % ports.get(2))
    drops = ports.get(1, {}).get("drops", {})
    check(len(sent) + drops.get("ttl", 0) + ports.get(2, {}).get(
        "drops", {}).get("ttl", 0) == 2000,
          "every frame reached port 3 or expired: %d sent" % len(sent))
    check(conserved(ports), "ring counters conserve: %s" % ports)


def ctl(*args):
    return run(["ctl"] + list(args), timeout=30)


def test_control_under_traffic():
    """Kernel switches, rule changes and counters through the control
    socket while endless traffic flows."""
    d = os.path.join(WORK, "ctl")
    os.makedirs(d, exist_ok=True)
    flows = os.path.join(d, "flows.txt")
    with open(flows, "w") as f:
        f.write(CORPUS_FLOWS)
    traffic = os.path.join(EXAMPLES, "traffic.pcap")
    e = dict(os.environ, SIMDPATH_CTL=os.path.join(WORK, "ctl.sock"))
    e.pop("SIMDPATH_IMPL", None)
    proc = subprocess.Popen(
        CMD + ["run", "--port", pcap_port(0, rx=traffic, infinite=True),
         "--port", "net_null0,no-rx=1", "--port", "net_null1,no-rx=1",
         "--flows", flows,
         "--duration", "60"], cwd=WORK, env=e, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(100):
            if ctl("counters-show")[0] == 0:
                break
            time.sleep(0.1)
        rc, out, err = ctl("impl-show")
        check(rc == 0 and "Kernels" in out, "impl-show: " + out + err)
        variants = supported_variants() + ["autovalidate"]
        for i in range(40):
            v = variants[i % len(variants)]
            rc, out, err = ctl("impl-set", "mfex=%s,classifier=%s" % (v, v))
            check(rc == 0 and "mfex=" in out, "impl-set %s: %s%s"
                  % (v, out, err))
            rule = "priority=500,in_port=1,udp,tp_dst=%d,actions=output:2" \
                % (1000 + i)
            check(ctl("flow-add", rule)[0] == 0, "flow-add " + rule)
            if i % 2:
                check(ctl("flow-del", rule)[0] == 0, "flow-del " + rule)
        rc, out, err = ctl("impl-set", "bogus")
        check(rc == 1 and "unknown variant 'bogus'" in err and
              "valid here: scalar" in err, "impl-set bogus: " + err)
        rc, out, err = ctl("flow-add", "ip,nw_dst=1.2.3.400,actions=drop")
        check(rc == 1 and "column 4" in err, "bad flow-add: " + err)
        rc, out, err = ctl("flow-dump")
        check(rc == 0 and out.count("\n") == 8 + 20,
              "flow-dump lists %d rules: %s" % (out.count("\n"), out))
        check(all(re.match(r" duration=\d+\.\d{3}s, n_packets=\d+, "
                           r"n_bytes=\d+, idle_age=\d+, priority=\d+,", line)
                  for line in out.splitlines()),
              "flow-dump prints the counters as ovs-ofctl: " + out)
        rule = "priority=600,in_port=1,udp,tp_dst=7,actions=output:2"
        check(ctl("flow-add", rule)[0] == 0, "flow-add " + rule)
        check(ctl("flow-mod", "--strict", rule.replace(":2", ":3"))[0] == 0,
              "flow-mod --strict")
        rc, out, err = ctl("flow-dump")
        check("priority=600,udp,in_port=1,tp_dst=7,actions=output:3\n" in out,
              "flow-mod applied: " + out)
        rc, out, err = ctl("flow-del", "--strict", "in_port=1,udp,tp_dst=7")
        check(rc == 1 and "no rule with this match and priority" in err,
              "flow-del --strict of another priority: " + err)
        check(ctl("flow-del", "in_port=1,udp,tp_dst=7")[0] == 0,
              "loose flow-del")
        check(ctl("flow-dump")[1].count("\n") == 8 + 20,
              "loose flow-del deleted the rule")
        rc, out, err = ctl("autovalidate-show")
        check(rc == 0 and "mismatches" in out, "autovalidate-show: " + out)
        rc, out, err = ctl("counters-show")
        before = counters(out)
        check(rc == 0 and before.get(1, {}).get("rx", 0) > 0,
              "traffic flows: " + out)
        check(ctl("counters-clear")[0] == 0, "counters-clear")
        rc, out, err = ctl("pmd-perf-enable", "sometimes")
        check(rc == 1 and "expected on or off" in err,
              "pmd-perf-enable sometimes: " + err)
        check(ctl("pmd-perf-enable", "on") == (0, "pmd profile: on\n", ""),
              "pmd-perf-enable on")
        check(ctl("pmd-perf-clear")[0] == 0, "pmd-perf-clear")
        for _ in range(100):
            rc, out, err = ctl("pmd-perf-show")
            m = re.search(r"^  packets: (\d+), batches: (\d+) "
                          r"\([\d.]+ packets/batch\)$", out, re.M)
            if m and int(m.group(2)) > 0:
                break
            time.sleep(0.05)
        stages = re.findall(r"^    (\S+) +[\d.]+ cycles/packet "
                            r"\([\d.]+%\)$", out, re.M)
        check(rc == 0 and out.startswith("pmd profile: on\npmd 0:\n") and m
              and re.search(r"^  busy cycles: \d+ \([\d.]+%\), idle cycles:"
                            r" \d+ \([\d.]+%\)$", out, re.M)
              and stages == ["receive", "parse", "hash_emc", "classifier",
                             "actions", "transmit"],
              "pmd-perf-show: " + out)
        check(ctl("stop")[0] == 0, "stop")
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    check(proc.returncode == 0, "run under control exits 0: " + err[-500:])
    check(conserved(counters(out)),
          "counters conserve after changes: " + out[-800:])
    check(no_leak(out), "no mbuf leaked under changes: " + out[-300:])
    check(re.search(r"autovalidate: [1-9]\d* checks, 0 mismatches", out),
          "no autovalidate mismatch under traffic: " + out[-500:])


def test_errors():
    """Bad input: a clear message, a non-zero exit, nothing started."""
    d = os.path.join(WORK, "errors")
    os.makedirs(d, exist_ok=True)
    bad = os.path.join(d, "bad.txt")
    with open(bad, "w") as f:
        f.write("# rules\nip,actions=output:1\ntcp,tp_dst=99999,"
                "actions=output:1\n")
    one_port = os.path.join(d, "one-port.txt")
    with open(one_port, "w") as f:
        f.write("actions=output:1\n")
    out_pcap = os.path.join(d, "never.pcap")
    port = pcap_port(0, rx=os.path.join(EXAMPLES, "traffic.pcap"),
                     tx=out_pcap)
    cases = [
        (["run", "--port", port, "--flows", bad], 2,
         bad + ":3:5: invalid value '99999' for tp_dst"),
        (["run", "--port", port, "--flows", os.path.join(d, "none.txt")],
         2, "none.txt: cannot read flow rules"),
        (["run", "--port", port], 2, "no --flows given"),
        (["run", "--pmd-threads", "0", "--port", port, "--flows", bad], 2,
         "--pmd-threads: at least 1"),
        (["run", "--emc-entries", "x"], 2, "--emc-entries: invalid value"),
        (["run", "--port", port, "--flows", bad, "extra"], 2,
         "EAL arguments go after --"),
        (["run", "--impl", "bogus"], 2, "unknown variant 'bogus'"),
        (["run", "--port", pcap_port(0, rx=os.path.join(d, "missing.pcap")),
          "--flows", one_port], 2, "missing.pcap: No such file"),
        (["run", "--port", "net_bogus0", "--flows", one_port], 1,
         "DPDK EAL initialisation failed"),
        (["run", "--port", port, "--flows", one_port, "--pmd-cpus", "0,0"],
         2, "--pmd-cpus 0,0: CPU 0 is given twice"),
        (["run", "--port", port, "--flows", one_port, "--pmd-cpus",
          "0-1,x"], 2, "--pmd-cpus '0-1,x': invalid CPU list at column 5"),
        (["run", "--port", port, "--flows", one_port, "--pmd-cpus", "4095"],
         2, "--pmd-cpus 4095: CPU 4095 is not one this process may run on"),
        (["run", "--port", port, "--flows", one_port, "--pmd-threads", "2",
          "--pmd-cpus", "0"], 2, "1 CPU(s) for 2 PMD threads"),
        (["run", "--port", port, "--flows", one_port, "--main-cpu", "4095"],
         2, "--main-cpu 4095: not a CPU this process may run on"),
        (["run", "--port", port, "--flows", one_port, "--mtu", "9001"], 2,
         "--mtu: invalid value '9001'; expected a number from 0 to 9000"),
        (["run", "--port", port, "--flows", one_port, "--mtu", "67"], 2,
         "--mtu: 67 is below 68"),
    ]
    for args, code, needle in cases:
        rc, out, err = run(args)
        check(rc == code and needle in err,
              "%s: exit %d (want %d), stderr %r lacks %r"
              % (" ".join(args[1:3]), rc, code, err[-300:], needle))
    check(not os.path.exists(out_pcap),
          "a rejected run created no output (%s)" % out_pcap)


def test_two_pmds():
    """Two PMD threads on two receive queues; counters still balance."""
    d = os.path.join(WORK, "pmds")
    os.makedirs(d, exist_ok=True)
    flows = os.path.join(d, "flows.txt")
    with open(flows, "w") as f:
        f.write("in_port=1,actions=output:2\n")
    rc, out, err = run(["run", "--port", "net_null0", "--port",
                        "net_null1,no-rx=1", "--flows", flows,
                        "--pmd-threads", "2", "--duration", "1"])
    check(rc == 0, "two PMDs exit 0: " + err[-500:])
    ports = counters(out)
    check(conserved(ports), "two PMDs conserve: %s" % ports)
    check(no_leak(out), "two PMDs leak no mbuf: " + out[-300:])
    for pmd in (0, 1):
        m = re.search(r"^pmd %d: packets (\d+)" % pmd, out, re.M)
        check(m and int(m.group(1)) > 0, "PMD %d forwarded packets" % pmd)


def jumbo_frame(size, seed):
    """An Ethernet/IPv4/UDP frame of 'size' bytes, payload from seed."""
    payload = bytes((seed + i) & 0xff for i in range(size - 42))
    udp = struct.pack("!HHHH", 1000 + seed, 2000, 8 + len(payload), 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(payload), seed, 0,
                     64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    return (b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
            + ip + udp + payload)


def test_jumbo_pcap():
    """Frames of up to 9,000 bytes through net_pcap: with --mtu 9000 each
    fits one buffer, without it the device delivers them in segments,
    which rx gathers; either way every frame leaves whole, in order."""
    d = os.path.join(WORK, "jumbo")
    os.makedirs(d, exist_ok=True)
    frames = [jumbo_frame(size, i) for i, size in
              enumerate([9000, 64, 1514, 2049, 4096, 9000, 8999, 9000])]
    pcap = os.path.join(d, "in.pcap")
    model.write_pcap(pcap, frames)
    flows = os.path.join(d, "flows.txt")
    with open(flows, "w") as f:
        f.write("in_port=1,actions=output:2\n")
    for tag, extra in (("mtu", ["--mtu", "9000"]), ("segments", [])):
        out_pcap = os.path.join(d, tag + ".pcap")
        rc, out, err = run(["run", "--port", pcap_port(0, rx=pcap),
                            "--port", pcap_port(1, tx=out_pcap),
                            "--flows", flows, "--exit-when-idle", "300"]
                           + extra)
        check(rc == 0, "jumbo (%s) exits 0: %s" % (tag, err[-300:]))
        got = model.read_pcap(out_pcap) if os.path.exists(out_pcap) else []
        check(got == frames, "jumbo (%s): %d frames out, want the %d "
              "in, byte for byte" % (tag, len(got), len(frames)))
        check(conserved(counters(out)), "jumbo (%s) conserves" % tag)
        check(no_leak(out), "jumbo (%s) leaks no mbuf" % tag)


def thread_cpus(pid):
    """{thread name: [allowed CPU sets]} of a process's threads."""
    threads = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                name = f.read().strip()
            cpus = os.sched_getaffinity(int(tid))
        except OSError:
            continue
        threads.setdefault(name if tid != str(pid) else "main",
                           []).append(cpus)
    return threads


def test_pinning():
    """--pmd-cpus and --main-cpu pin the PMD threads and the main thread:
    each runs on its CPU alone (the reverse of the default order when
    there are two CPUs)."""
    cpus = sorted(os.sched_getaffinity(0))
    pmd_cpu, main_cpu = cpus[0], cpus[-1]
    d = os.path.join(WORK, "pinning")
    os.makedirs(d, exist_ok=True)
    flows = os.path.join(d, "flows.txt")
    with open(flows, "w") as f:
        f.write("in_port=1,actions=output:2\n")
    e = dict(os.environ, SIMDPATH_CTL=os.path.join(d, "ctl.sock"))
    e.pop("SIMDPATH_IMPL", None)
    proc = subprocess.Popen(
        CMD + ["run", "--port", "net_null0", "--port", "net_null1,no-rx=1",
               "--flows", flows, "--pmd-cpus", str(pmd_cpu), "--main-cpu",
               str(main_cpu), "--duration", "60"],
        cwd=WORK, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    threads = {}
    try:
        for _ in range(300):
            if run(["ctl", "counters-show"], env=e, timeout=30)[0] == 0:
                break
            time.sleep(0.1)
        threads = thread_cpus(proc.pid)
        run(["ctl", "stop"], env=e, timeout=30)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    check(proc.returncode == 0, "pinned run exits 0: " + err[-500:])
    check(threads.get("rte-worker-1") == [{pmd_cpu}],
          "the PMD thread runs on CPU %d alone: %s" % (pmd_cpu, threads))
    check(threads.get("main") == [{main_cpu}],
          "the main thread runs on CPU %d alone: %s" % (main_cpu, threads))
    check(re.search(r"^pmd 0: packets [1-9]", out, re.M),
          "the pinned PMD forwarded: " + out[-500:])


def test_long_replay():
    """A capture of more packets than the fixed pool once held replays
    (net_pcap infinite_rx keeps one mbuf per packet); too few --mbufs, a
    pool over the memory and bad descriptor counts are refused."""
    d = os.path.join(WORK, "replay")
    os.makedirs(d, exist_ok=True)
    flows = os.path.join(d, "flows.txt")
    with open(flows, "w") as f:
        f.write("in_port=1,actions=output:2\n")
    pcap = os.path.join(d, "many.pcap")
    frame = bytes.fromhex("020000000002020000000001" "0800"
                          "4500002e000000004011000a0a0000010a010001") \
        + bytes(26)
    model.write_pcap(pcap, [frame] * 20000)
    port = "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap
    rc, out, err = run(["run", "--port", port, "--port", "net_null0,no-rx=1",
                        "--flows", flows, "--duration", "1"])
    check(rc == 0 and conserved(counters(out)) and no_leak(out) and
          counters(out).get(2, {}).get("tx", 0) > 20000,
          "a 20,000-packet capture replays: %s %s" % (out[-400:], err[-400:]))
    for extra, code, needle in [
            (["--mbufs", "8192"], 1, "port 1 (net_pcap): set-up failed"),
            # About 9 TB, which no memory holds; its size in MB depends
            # on the architecture's mbuf.
            (["--mbufs", "4000000000"], 2,
             "need a packet pool of 4000000000 mbufs ("),
            (["--rxd", "100"], 2, "--rxd: 100: a power of two"),
            (["--txd", "x"], 2, "--txd: invalid value")]:
        rc, out, err = run(["run", "--port", port, "--port",
                            "net_null0,no-rx=1", "--flows", flows,
                            "--duration", "1"] + extra)
        check(rc == code and needle in err,
              "%s: exit %d (want %d): %s" % (extra, rc, code, err[-400:]))


def telemetry(path, command):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    json.loads(s.recv(1024).decode())
    s.send(command.encode())
    reply = json.loads(s.recv(65536).decode())
    s.close()
    return reply[command]


def test_telemetry():
    """The counters through DPDK telemetry while traffic flows."""
    d = os.path.join(WORK, "telemetry")
    os.makedirs(d, exist_ok=True)
    flows = os.path.join(d, "flows.txt")
    with open(flows, "w") as f:
        f.write("in_port=1,actions=output:2\n")
    runtime = "/var/run/dpdk" if os.geteuid() == 0 else os.path.join(
        os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
    sock = os.path.join(runtime, "simdpath-it", "dpdk_telemetry.v2")
    proc = subprocess.Popen(
        CMD + ["run", "--port", "net_null0", "--port", "net_null1,no-rx=1",
         "--flows", flows, "--duration", "3", "--pmd-perf", "--",
         "--file-prefix=simdpath-it"], cwd=WORK, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, SIMDPATH_CTL=os.path.join(d, "ctl.sock")))
    ports = pmds = perf = None
    for _ in range(50):
        time.sleep(0.1)
        try:
            ports = telemetry(sock, "/simdpath/ports")
            pmds = telemetry(sock, "/simdpath/pmds")
            perf = telemetry(sock, "/simdpath/pmd_perf")
            if ports and ports.get("port1_rx") and perf.get("pmd0_packets"):
                break
        except (OSError, ValueError, KeyError):
            continue
    proc.communicate(timeout=60)
    check(ports and ports.get("port1_rx", 0) > 0 and "port2_tx" in ports,
          "telemetry /simdpath/ports: %s" % ports)
    check(ports and all("port%d_%s" % (p, k) in ports for p in (1, 2)
                        for k in ("rx_missed", "rx_errors", "rx_nombuf",
                                  "tx_errors")),
          "telemetry has the NIC counters: %s" % ports)
    check(pmds and pmds.get("pmd0_packets", 0) > 0,
          "telemetry /simdpath/pmds: %s" % pmds)
    stages = ("receive", "parse", "hash_emc", "classifier", "actions",
              "transmit")
    check(perf and perf.get("enabled") == 1 and perf["pmd0_packets"] > 0
          and all(perf.get("pmd0_%s_cycles" % s, 0) > 0 for s in stages),
          "telemetry /simdpath/pmd_perf under --pmd-perf: %s" % perf)


def main():
    tests = [test_demo, test_errors, test_multiport_ring, test_two_pmds,
             test_pinning, test_jumbo_pcap,
             test_telemetry, test_long_replay,
             test_control_under_traffic, test_every_impl_on_corpus,
             test_cross_arch]
    for t in tests:
        t()
    shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(summary("integration"))


if __name__ == "__main__":
    main()
