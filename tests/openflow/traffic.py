# SPDX-License-Identifier: BSD-3-Clause
"""Traffic for the OpenFlow tests: IPv4 UDP and TCP frames and a pcap of
them (no checksums: the rules do not look at them), a free port, the
switch started on its ports, and a wait for the port it listens on. The
pcap writer is the integration suite's, shared by every test."""
import os
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from model import write_pcap  # noqa: E402

__all__ = ["frame", "free_port", "listening_port", "pcap_ports",
           "start_run", "write_pcap"]


def frame(proto, dst_ip, sport, dport):
    l4 = struct.pack("!HHHH", sport, dport, 8 + 18, 0) if proto == 17 else \
        struct.pack("!HHIIBBHHH", sport, dport, 1, 0, 0x50, 0x10, 8192, 0, 0)
    payload = b"x" * 18
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4) + len(payload),
                     1, 0, 64, proto, 0, bytes([10, 0, 0, 9]),
                     bytes(dst_ip))
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    return eth + ip + l4 + payload


def free_port():
    """A TCP port of 127.0.0.1 nothing listens on now."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening_port(proc):
    """The port simdpath run, started with --openflow ptcp:0 and its
    stdout (where it logs) a pipe, says it listens on: (port, the lines
    before), port None if it exited first."""
    before = []
    for line in proc.stdout:
        words = line.split()
        if words[1:4] == ["OpenFlow:", "listening", "on"]:
            return int(words[-1]), before
        before.append(line)
    return None, before


def pcap_ports(pcap):
    """The tests' three ports: the capture replayed forever on port 1,
    ports 2 and 3 sending nowhere."""
    return ["--port", "net_pcap0,rx_pcap=%s,infinite_rx=1" % pcap,
            "--port", "net_null0,no-rx=1", "--port", "net_null1,no-rx=1"]


def start_run(exe, work, args, prefix):
    """simdpath run with 'args' in folder 'work', its kernels as auto
    picks them (without the caller's SIMDPATH_IMPL), for 600 s at most
    (the test stops it), DPDK's files under a prefix of its own; stdout
    and stderr are text pipes."""
    env = dict(os.environ)
    env.pop("SIMDPATH_IMPL", None)
    return subprocess.Popen(
        [exe, "run"] + list(args) +
        ["--duration", "600", "--",
         "--file-prefix=%s%d" % (prefix, os.getpid())],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
