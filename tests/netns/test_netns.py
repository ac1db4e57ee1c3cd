#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""simdpath run on real Linux interfaces: network namespaces joined by
veth pairs to net_af_packet ports (DPDK, no hugepages).

Usage: test_netns.py SIMDPATH
Root only; exit 77 when namespaces cannot be created. Every namespace and
veth pair is named after this process and removed at the end, also on
failure. Traffic stays inside the namespaces: simdpath's side of each pair
has no address, and IPv6 is off on every interface, so the kernels send
nothing but the test's frames. Waits are bounded by packet and byte
counts; CAP seconds is only the safety net that turns a hang into a
failure.
"""
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
from model import csum, read_pcap, write_pcap  # noqa: E402
from report import RESULTS, check, conserved, counters, no_leak, \
    offered, sent, summary  # noqa

EXE = os.path.abspath(sys.argv[1])
CAP = 120
TAG = "sp%d" % (os.getpid() % 100000)
WORK = tempfile.mkdtemp(prefix="simdpath-netns-")
NAMESPACES, LINKS, RUNS = [], [], []


def sh(*cmd, ns=None, check_rc=True, timeout=CAP):
    """Runs cmd (in namespace ns); returns its stdout."""
    if ns:
        cmd = ("ip", "netns", "exec", ns) + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check_rc and p.returncode:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode,
                                                p.stderr.strip()))
    return p.stdout


def namespace(name):
    name = TAG + name
    sh("ip", "netns", "add", name)
    NAMESPACES.append(name)
    sh("ip", "link", "set", "lo", "up", ns=name)
    return name


def veth(host, ns, peer, mtu=1500, addr=None):
    """A veth pair: 'host' (for simdpath, no address) in the root
    namespace, 'peer' in ns with addr (CIDR). Returns both names."""
    host, peer = TAG + host, TAG + peer
    sh("ip", "link", "add", host, "mtu", str(mtu), "type", "veth", "peer",
       "name", peer, "mtu", str(mtu), "netns", ns)
    LINKS.append(host)
    sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % host)
    sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % peer, ns=ns)
    sh("ip", "link", "set", host, "up")
    if addr:
        sh("ip", "addr", "add", addr, "dev", peer, ns=ns)
    sh("ip", "link", "set", peer, "up", ns=ns)
    return host, peer


def mac(ns, dev):
    out = sh("ip", "-o", "link", "show", dev, ns=ns)
    return re.search(r"link/ether ([0-9a-f:]+)", out).group(1)


def cleanup():
    for proc in RUNS:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    for link in LINKS:
        sh("ip", "link", "del", link, check_rc=False)
    for ns in NAMESPACES:
        sh("ip", "netns", "del", ns, check_rc=False)
    shutil.rmtree(WORK, ignore_errors=True)


class Run:
    """A `simdpath run` in the background, driven through its socket."""

    def __init__(self, tag, ports, flows, extra=()):
        d = os.path.join(WORK, tag)
        os.makedirs(d)
        self.sock = os.path.join(d, "ctl.sock")
        flow_file = os.path.join(d, "flows.txt")
        with open(flow_file, "w") as f:
            f.write(flows)
        args = [EXE, "run", "--ctl", self.sock, "--flows", flow_file]
        for p in ports:
            args += ["--port", p]
        args += list(extra) + ["--", "--file-prefix=" + TAG + tag]
        env = dict(os.environ)
        env.pop("SIMDPATH_IMPL", None)
        self.proc = subprocess.Popen(args, cwd=d, env=env, text=True,
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        RUNS.append(self.proc)
        self.ready = False
        deadline = time.monotonic() + CAP
        while time.monotonic() < deadline and self.proc.poll() is None:
            if self.ctl("counters-show")[0] == 0:
                self.ready = True
                break
            time.sleep(0.1)

    def ctl(self, *args):
        p = subprocess.run([EXE, "ctl", "--socket", self.sock] + list(args),
                           capture_output=True, text=True, timeout=CAP)
        return p.returncode, p.stdout, p.stderr

    def counters(self):
        rc, out, _ = self.ctl("counters-show")
        return counters(out) if rc == 0 else {}, out

    def wait(self, done):
        """Polls counters-show until done(ports, text) or CAP."""
        deadline = time.monotonic() + CAP
        ports, text = {}, ""
        while time.monotonic() < deadline and self.proc.poll() is None:
            ports, text = self.counters()
            if done(ports, text):
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        """Stops it; returns (exit status, stdout, stderr)."""
        if self.proc.poll() is None:
            self.ctl("stop")
        try:
            out, err = self.proc.communicate(timeout=CAP)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        return self.proc.returncode, out, err


def udp_frame(dst_mac, src_mac, flow, size=128):
    """An Ethernet/IPv4/UDP frame of 'size' bytes; flow picks the source
    address and ports."""
    payload = bytes(size - 42)
    src = bytes([10, 200, flow >> 8 & 0xff, flow & 0xff])
    dst = bytes([10, 201, 0, 1])
    udp = struct.pack("!HHHH", 1024 + flow, 5000 + flow % 7,
                      8 + len(payload), 0) + payload
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), flow, 0, 64,
                     17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return (bytes.fromhex(dst_mac.replace(":", "")) +
            bytes.fromhex(src_mac.replace(":", "")) + b"\x08\x00" + ip + udp)


SENDER = r"""
import socket, sys
dev, n, frames = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
frames = [bytes.fromhex(f) for f in frames]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((dev, 0))
for i in range(n):
    s.send(frames[i % len(frames)])
"""


# ping(8) as a stdlib script (iputils may be missing): N echo requests,
# prints how many were answered, each waited for up to 5 seconds.
PING = r"""
import os, socket, struct, sys
addr, n = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(5)
def csum(d):
    t = sum(struct.unpack("!%dH" % (len(d) // 2), d))
    t = (t & 0xffff) + (t >> 16)
    return ~((t & 0xffff) + (t >> 16)) & 0xffff
answered = 0
for seq in range(n):
    body = struct.pack("!HH", os.getpid() & 0xffff, seq) + bytes(56)
    s.sendto(struct.pack("!BBH", 8, 0, csum(b"\x08\x00\x00\x00" + body))
             + body, (addr, 0))
    try:
        while True:
            d, _ = s.recvfrom(2048)
            if d[20] == 0 and d[26:28] == struct.pack("!H", seq):
                answered += 1
                break
    except socket.timeout:
        pass
print(answered)
"""


# Loopback traffic: N UDP datagrams to 127.0.0.1's discard port.
FLOOD = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[1])):
    s.sendto(bytes(200), ("127.0.0.1", 9))
"""


def send_frames(ns, dev, frames, n):
    """Sends n frames (cycling through 'frames') out of dev in ns."""
    sh(sys.executable, "-c", SENDER, dev, str(n),
       *[f.hex() for f in frames], ns=ns)


def link_stats(dev, ns=None):
    """The kernel's packet counters of an interface."""
    return dict((k, int(sh("cat", "/sys/class/net/%s/statistics/%s"
                           % (dev, k), ns=ns)))
                for k in ("rx_packets", "tx_packets", "rx_bytes",
                          "tx_bytes"))


def pmd_packets(text):
    return [int(n) for n in re.findall(r"^pmd \d+: packets (\d+)", text,
                                       re.M)]


def spread(run, ns, dev, frames):
    """Sends rounds of 'frames' (many flows) out of dev until every PMD
    thread of run has forwarded some, at most 64 rounds."""
    sent = 0
    while sent < 64 * len(frames):
        send_frames(ns, dev, frames, 4 * len(frames))
        sent += 4 * len(frames)
        if run.wait(lambda p, t: p.get(1, {}).get("rx", 0) >= sent // 2):
            _, text = run.counters()
            if min(pmd_packets(text) or [0]) > 0:
                return


def test_rss_two_queues():
    """net_af_packet with qpairs=2 (the kernel's fanout hash spreads the
    flows over its two sockets) polled by two PMD threads: both forward
    and the counters conserve."""
    ns = namespace("rss")
    host, peer = veth("rh", ns, "rp")
    run = Run("rss", ["net_af_packet0,iface=%s,qpairs=2" % host,
                      "net_null0,no-rx=1"], "in_port=1,actions=output:2\n",
              ["--pmd-threads", "2"])
    if not check(run.ready, "simdpath on af_packet started"):
        print(run.stop())
        return
    src = mac(ns, peer)
    frames = [udp_frame("02:00:00:00:00:01", src, f) for f in range(256)]
    spread(run, ns, peer, frames)
    rc, out, err = run.stop()
    check(rc == 0, "rss run exits 0: " + err[-500:])
    check("offers no RSS hash" in out,
          "af_packet says it offers no RSS hash: " + out[:600])
    ports = counters(out)
    packets = pmd_packets(out)
    check(len(packets) == 2 and min(packets) > 0,
          "both PMD threads forwarded: %s" % packets)
    check(conserved(ports), "rss counters conserve: %s" % ports)
    check(ports.get(2, {}).get("tx") == ports.get(1, {}).get("rx"),
          "every frame received went out of port 2: %s" % ports)
    check(no_leak(out), "rss run leaks no mbuf: " + out[-300:])


def test_rss_tap():
    """net_tap with two queues offers RSS, which simdpath configures; the
    kernel's tun driver spreads the flows over the queues, so both PMD
    threads forward. The tap is simdpath's own interface, with no
    address; the frames go to it alone."""
    tap = TAG + "t"
    run = Run("tap", ["net_tap0,iface=" + tap, "net_null0,no-rx=1"],
              "in_port=1,actions=output:2\n", ["--pmd-threads", "2"])
    if not check(run.ready, "simdpath on net_tap started"):
        print(run.stop())
        return
    sh("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % tap)
    frames = [udp_frame("02:00:00:00:00:01", "02:00:00:00:00:02", f)
              for f in range(256)]
    spread(run, None, tap, frames)
    rc, out, err = run.stop()
    check(rc == 0, "tap run exits 0: " + err[-500:])
    check("offers no RSS" not in out, "net_tap takes RSS: " + out[:600])
    packets = pmd_packets(out)
    check(len(packets) == 2 and min(packets) > 0,
          "both PMD threads forwarded from the tap: %s" % packets)
    check(conserved(counters(out)), "tap counters conserve: " + out[-900:])
    check(no_leak(out), "tap run leaks no mbuf: " + out[-300:])


def test_nic_counters():
    """The devices' own counters: every frame the namespace sent is
    received or counted lost by the device (a small receive ring under a
    burst); frames too long for af_packet's transmit ring are taken and
    counted tx_errors; port-xstats lists the driver's counters."""
    ns = namespace("nic")
    host, peer = veth("nh", ns, "np")
    pcap = os.path.join(WORK, "long.pcap")
    write_pcap(pcap, [udp_frame("02:00:00:00:00:01", "02:00:00:00:00:02",
                                f, size=3000) for f in range(10)])
    run = Run("nic", ["net_af_packet0,iface=%s,framecnt=64" % host,
                      "net_null0,no-rx=1", "net_pcap0,rx_pcap=" + pcap],
              "in_port=1,actions=output:2\nin_port=3,actions=output:1\n")
    if not check(run.ready, "simdpath on af_packet started"):
        print(run.stop())
        return
    run.wait(lambda p, t: p.get(3, {}).get("rx") == 10)
    before = link_stats(peer, ns)["tx_packets"]
    frames = [udp_frame("02:00:00:00:00:01", mac(ns, peer), f)
              for f in range(64)]
    # Stopped, simdpath cannot drain the 64-frame ring, which must lose
    # most of the burst; the device counts what it lost.
    run.proc.send_signal(signal.SIGSTOP)
    try:
        send_frames(ns, peer, frames, 2000)
    finally:
        run.proc.send_signal(signal.SIGCONT)
    n = link_stats(peer, ns)["tx_packets"] - before
    check(n == 2000, "the namespace sent 2000 frames: %d" % n)
    check(run.wait(lambda p, t: p.get(1) and offered(p[1]) >= n),
          "every frame the namespace sent reached port 1's device")
    rc, xstats, err = run.ctl("port-xstats", "1")
    check(rc == 0 and re.search(r"^rx_good_packets \d+$", xstats, re.M),
          "port-xstats 1: %s%s" % (xstats[:300], err))
    for bad in ("0", "4", "x", "1x"):
        rc, _, err = run.ctl("port-xstats", bad)
        check(rc == 1 and "no port '%s': ports are 1 to 3" % bad in err,
              "port-xstats %s refused: %s" % (bad, err))
    rc, out, err = run.stop()
    check(rc == 0, "nic run exits 0: " + err[-500:])
    ports = counters(out)
    p1 = ports.get(1, {"rx": 0, "tx": 0, "nic": {}})
    check(offered(p1) == n and p1["nic"].get("rx_missed", 0) > 0,
          "rx %d + lost %s = %d sent, some missed" % (p1["rx"], p1["nic"],
                                                       n))
    check(p1["tx"] == 10 and p1["nic"].get("tx_errors") == 10 and
          sent(p1) == 0, "10 frames too long for af_packet's ring: taken "
          "and counted tx_errors: %s" % p1)
    check(conserved(ports), "nic run conserves: %s" % ports)
    print("measured: %d frames in a burst into a 64-frame ring: %d "
          "received, %s lost" % (n, p1["rx"], p1["nic"]))


def test_jumbo_af_packet():
    """--mtu 9000 on an af_packet port of a veth: 9,000-byte packets from
    the namespace arrive whole (the ring's frames and the buffers hold
    them) and leave whole into it; a ring too small for the MTU is
    refused with the devargs that fit."""
    ns = namespace("jumbo")
    host, peer = veth("jh", ns, "jp", mtu=9000)
    src = mac(ns, peer)
    rc, out, err = Run("jumbo-small", ["net_af_packet0,iface=" + host],
                       "actions=drop\n", ["--mtu", "9000"]).stop()
    check(rc == 1 and "port 1 (net_af_packet): --mtu 9000 needs frames of "
          "up to 9026 bytes; its ring's frames hold 1980 (framesz=2048): "
          "give framesz=9216,blocksz=36864" in err,
          "a ring too small for --mtu 9000 is refused: %d %s" % (rc, err))
    sh("ip", "link", "set", host, "mtu", "1500")
    frames = [udp_frame("02:00:00:00:00:01", src, f, size=size)
              for f, size in enumerate([9014, 60, 1514, 2100, 9014, 9014])]
    into_ns = [udp_frame(src, "02:00:00:00:00:01", f, size=size)
               for f, size in enumerate([9014, 4000, 9014])]
    back = os.path.join(WORK, "into-ns.pcap")
    write_pcap(back, into_ns)
    out_pcap = os.path.join(WORK, "jumbo-out.pcap")
    start = link_stats(peer, ns)
    run = Run("jumbo", ["net_af_packet0,iface=%s,framesz=9216,"
                        "blocksz=36864" % host,
                        "net_pcap0,tx_pcap=" + out_pcap,
                        "net_pcap1,rx_pcap=" + back],
              "in_port=1,actions=output:2\nin_port=3,actions=output:1\n",
              ["--mtu", "9000"])
    if not check(run.ready, "simdpath with --mtu 9000 started"):
        print(run.stop())
        return
    check(sh("cat", "/sys/class/net/%s/mtu" % host).strip() == "9000",
          "--mtu set the interface's MTU to 9000")
    check(run.wait(lambda p, t: p.get(3, {}).get("rx") == len(into_ns)),
          "the capture's frames went in")
    send_frames(ns, peer, frames, len(frames))
    check(run.wait(lambda p, t: p.get(1, {}).get("rx") == len(frames)),
          "port 1 received all %d frames" % len(frames))
    rc, out, err = run.stop()
    after = link_stats(peer, ns)
    check(rc == 0, "jumbo run exits 0: " + err[-500:])
    got = read_pcap(out_pcap)
    check(got == frames, "the namespace's frames left whole: %s, want %s"
          % ([len(f) for f in got], [len(f) for f in frames]))
    check(after["rx_packets"] - start["rx_packets"] == len(into_ns) and
          after["rx_bytes"] - start["rx_bytes"] == sum(map(len, into_ns)),
          "the namespace received the capture's frames whole: %s -> %s"
          % (start, after))
    ports = counters(out)
    check(ports.get(1, {}).get("tx") == len(into_ns) and
          sent(ports[1]) == len(into_ns),
          "port 1 sent the capture's %d frames: %s" % (len(into_ns),
                                                      ports.get(1)))
    check(conserved(ports), "jumbo run conserves: %s" % ports)
    check(no_leak(out), "jumbo run leaks no mbuf: " + out[-300:])


def tcp_in_csum_errors(ns):
    """Tcp InCsumErrors of a namespace (/proc/net/snmp)."""
    lines = [l.split() for l in sh("cat", "/proc/net/snmp", ns=ns)
             .splitlines() if l.startswith("Tcp:")]
    return int(lines[1][lines[0].index("InCsumErrors")])


def iperf(server_ns, client_ns, addr, nbytes, port=5201, cap=CAP):
    """A bounded TCP transfer (iperf3 -n); returns the bytes received, or
    -1 when it did not complete within cap seconds."""
    server = subprocess.Popen(["ip", "netns", "exec", server_ns, "iperf3",
                               "-s", "-1", "-B", "10.77.0.2", "-p",
                               str(port)],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    RUNS.append(server)
    try:
        for _ in range(100):  # until it listens
            if ":%d " % port in sh("ss", "-ltn", ns=server_ns):
                break
            time.sleep(0.05)
        p = subprocess.run(["ip", "netns", "exec", client_ns, "iperf3", "-c",
                            addr, "-p", str(port), "-n", str(nbytes), "-J",
                            "--connect-timeout", "10000"],
                           capture_output=True, text=True, timeout=cap)
        result = json.loads(p.stdout or "{}")
        if p.returncode:
            print("iperf3 to %s: exit %d: %s %s" % (addr, p.returncode,
                                                   p.stdout[-400:],
                                                   p.stderr[-400:]))
            return -1
        if "error" in result:
            print("iperf3 to %s: %s" % (addr, result["error"]))
            return -1
        # Sent is acknowledged: TCP had the receiver's word for every byte.
        return int(result["end"]["sum_sent"]["bytes"])
    except (subprocess.TimeoutExpired, ValueError):
        return -1
    finally:
        server.kill()
        server.communicate()


def test_af_packet_start_isolated():
    """DPDK 22.11's net_af_packet opens its sockets for every interface's
    frames and binds them to its own only after their rings exist: with
    loopback traffic during start-up, a ring held 127.0.0.1's frames and
    simdpath forwarded them. The namespace sends nothing here, so nothing
    may leave, however much loopback traffic there was."""
    ns = namespace("iso")
    host, _ = veth("ih", ns, "ip")
    out_pcap = os.path.join(WORK, "iso-out.pcap")
    # Another process, so that it runs while simdpath's EAL starts.
    flood = subprocess.Popen([sys.executable, "-c", FLOOD, "10000000"])
    RUNS.append(flood)
    try:
        run = Run("iso", ["net_af_packet0,iface=" + host,
                          "net_pcap0,tx_pcap=" + out_pcap],
                  "in_port=1,actions=output:2\n")
    finally:
        flood.kill()
        flood.communicate()
    if not check(run.ready, "simdpath on af_packet started"):
        print(run.stop())
        return
    rc, out, err = run.stop()
    check(rc == 0, "isolation run exits 0: " + err[-500:])
    got = read_pcap(out_pcap)
    check(not got and counters(out).get(1, {}).get("rx") == 0,
          "loopback traffic during start-up: %d frames left port 2 (%s), "
          "port 1 received %s" % (len(got), got[0][:40].hex() if got else
                                  "", counters(out).get(1)))


def test_real_traffic():
    """Two namespaces through simdpath on two af_packet ports: ping, a
    TCP transfer, and one to a virtual address that simdpath rewrites to
    the real one and back (completes only if every checksum is right),
    with transmit checksum offload off. With it on (the veth default) the
    TCP segments leave with unfinished checksums, which af_packet cannot
    flag: the receiver counts checksum errors and the transfer fails, as
    README says."""
    if not shutil.which("iperf3") or not shutil.which("ethtool"):
        print("SKIP: iperf3 or ethtool missing")
        RESULTS["skipped"] += 1
        return
    a, b = namespace("a"), namespace("b")
    ha, pa = veth("ha", a, "pa", addr="10.77.0.1/24")
    hb, pb = veth("hb", b, "pb", addr="10.77.0.2/24")
    mac_b = mac(b, pb)
    sh("ip", "neigh", "add", "10.77.0.99", "lladdr", "02:00:00:00:00:99",
       "dev", pa, ns=a)
    for ns, dev in ((a, pa), (b, pb)):
        sh("ethtool", "-K", dev, "tx", "off", ns=ns)
    flows = ("priority=10,in_port=1,ip,nw_dst=10.77.0.99,actions="
             "mod_nw_dst:10.77.0.2,mod_dl_dst:%s,output:2\n"
             "priority=10,in_port=2,ip,nw_src=10.77.0.2,nw_dst=10.77.0.1,"
             "tcp,tp_src=5202,actions=mod_nw_src:10.77.0.99,output:1\n"
             "priority=1,in_port=1,actions=output:2\n"
             "priority=1,in_port=2,actions=output:1\n" % mac_b)
    run = Run("real", ["net_af_packet0,iface=" + ha,
                       "net_af_packet1,iface=" + hb], flows)
    if not check(run.ready, "simdpath on two af_packet ports started"):
        print(run.stop())
        return
    replies = sh(sys.executable, "-c", PING, "10.77.0.2", "3", ns=a)
    check(replies.strip() == "3", "ping: 3 echo replies through simdpath, "
          "got %s" % replies.strip())
    n = 4 << 20
    got = iperf(b, a, "10.77.0.2", n)
    check(got >= n, "TCP transfer of %d bytes through simdpath: %d" % (n,
                                                                     got))
    got = iperf(b, a, "10.77.0.99", n, port=5202)
    check(got >= n, "TCP transfer to the rewritten virtual address: %d"
          % got)
    for ns, dev in ((a, pa), (b, pb)):
        sh("ethtool", "-K", dev, "tx", "on", ns=ns)
    errors = tcp_in_csum_errors(b)
    got = iperf(b, a, "10.77.0.2", n, cap=30)
    check(got < n and tcp_in_csum_errors(b) > errors,
          "with tx checksum offload on, the receiver counts checksum "
          "errors (%d -> %d) and the transfer fails (%d)"
          % (errors, tcp_in_csum_errors(b), got))
    rc, out, err = run.stop()
    check(rc == 0, "real traffic run exits 0: " + err[-500:])
    ports = counters(out)
    check(conserved(ports), "real traffic conserves: %s" % ports)
    check(no_leak(out), "real traffic leaks no mbuf: " + out[-300:])


def main():
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIP: network namespaces need root and iproute2")
        sys.exit(77)
    try:
        sh("ip", "netns", "add", TAG + "probe")
        sh("ip", "netns", "del", TAG + "probe")
    except (RuntimeError, OSError) as e:
        print("SKIP: cannot create a network namespace: %s" % e)
        sys.exit(77)
    tests = [test_rss_two_queues, test_rss_tap, test_nic_counters,
             test_jumbo_af_packet, test_af_packet_start_isolated,
             test_real_traffic]
    try:
        for t in tests:
            try:
                t()
            except Exception:  # a broken set-up fails, the rest still runs
                traceback.print_exc()
                check(False, "%s raised" % t.__name__)
    finally:
        cleanup()
    sys.exit(summary("netns"))


if __name__ == "__main__":
    main()
