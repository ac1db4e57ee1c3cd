#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The control socket of a real `simdpath run` (DPDK net_null vdevs, no
hugepages) against hostile and careless clients (docs/control.md).

Usage: test_ctl.py SIMDPATH
Every wait is bounded by a count or by an event (a reply, an EOF); CAP
seconds is only the safety net that turns a hang into a failure.
"""
import os
import pwd
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from report import RESULTS, check, summary  # noqa: E402

EXE = os.path.abspath(sys.argv[1])
CAP = 60
MAX_CLIENTS = 16  # docs/control.md
LINE_MAX = 4095
DEFAULT = "/run/simdpath/simdpath.ctl"  # root's, without XDG_RUNTIME_DIR
WORK = tempfile.mkdtemp(prefix="simdpath-ctl-")
RUNS = []  # every run started, killed at the end if still going


def skip(why):
    print("SKIP: " + why)
    RESULTS["skipped"] += 1


def environment(**extra):
    e = dict(os.environ)
    for k in ("SIMDPATH_IMPL", "SIMDPATH_CTL", "XDG_RUNTIME_DIR"):
        e.pop(k, None)
    e.update(extra)
    return e


def ctl(path, *args, env=None):
    """`simdpath ctl`: (rc, stdout, stderr) as bytes."""
    p = subprocess.run([EXE, "ctl", "--socket", path] + list(args),
                       env=env or environment(), capture_output=True,
                       timeout=CAP)
    return p.returncode, p.stdout, p.stderr


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(CAP)
    s.connect(path)
    return s


def read_to_eof(s):
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            return data
        data += chunk


def read_replies(s, n):
    """Reads until n replies (each ending in a status line) arrived."""
    data, got = b"", []
    while len(got) < n:
        try:
            chunk = s.recv(1 << 16)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
        while True:
            lines = data.split(b"\n")
            end = next((i for i, ln in enumerate(lines[:-1])
                        if ln == b"OK" or ln.startswith(b"ERROR: ")), None)
            if end is None:
                break
            got.append(b"\n".join(lines[:end + 1]) + b"\n")
            data = b"\n".join(lines[end + 1:])
    return got


def request(path, data):
    """Sends data, ends our side, returns everything the server sent."""
    s = connect(path)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        return read_to_eof(s)
    except OSError as e:
        return ("%s" % e).encode()
    finally:
        s.close()


class Run:
    """A `simdpath run` on two net_null ports with its control socket."""

    def __init__(self, tag, rules="in_port=1,actions=output:2\n",
                 ctl_path=None, env=None, wait=True):
        self.dir = os.path.join(WORK, tag)
        os.makedirs(self.dir, exist_ok=True)
        self.flows = os.path.join(self.dir, "flows.txt")
        with open(self.flows, "w") as f:
            f.write(rules)
        self.path = ctl_path or os.path.join(self.dir, "ctl.sock")
        args = [EXE, "run", "--port", "net_null0,no-rx=1", "--port",
                "net_null1,no-rx=1", "--flows", self.flows]
        if self.path != DEFAULT:
            args += ["--ctl", self.path]
        self.proc = subprocess.Popen(args, cwd=self.dir,
                                     env=env or environment(),
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.out = self.err = b""
        RUNS.append(self)
        self.ready = wait and self.wait_ready()

    def wait_ready(self):
        # Polls for the socket by count; the reply itself is the event.
        for _ in range(CAP * 20):
            if self.proc.poll() is not None:
                break
            try:
                if request(self.path, b"counters-show\n").endswith(b"OK\n"):
                    return True
            except OSError:
                pass
            time.sleep(0.05)
        check(False, "%s: run became ready" % self.dir)
        return False

    def alive(self):
        return self.proc.poll() is None

    def finish(self, how="stop"):
        """Stops the run (ctl stop) and returns its exit status."""
        if how == "stop" and self.alive():
            ctl(self.path, "stop")
        try:
            self.out, self.err = self.proc.communicate(timeout=CAP)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.out, self.err = self.proc.communicate()
        return self.proc.returncode

    def check_clean_exit(self, what):
        rc = self.finish()
        check(rc == 0, "%s: run exits 0 (rc %s): %r" % (what, rc,
                                                        self.err[-400:]))
        check(b"mbufs in use after the ports closed: 0\n" in self.out,
              "%s: run reports its counters and no leak" % what)
        check(not os.path.lexists(self.path),
              "%s: the socket is removed at exit" % what)


# The counters flow-dump prints before each rule, as ovs-ofctl does.
COUNTERS = re.compile(r"^ duration=\d+\.\d{3}s, n_packets=\d+, n_bytes=\d+, "
                      r"idle_age=\d+, ")


def dump(path):
    """The rules flow-dump lists, without their counters."""
    rc, out, _ = ctl(path, "flow-dump")
    return ([COUNTERS.sub("", ln) for ln in
             out.decode(errors="replace").splitlines()] if rc == 0 else None)


def test_sigpipe_and_slow_readers():
    """Item 2 and a slow reader: clients that leave before (or never
    finish) reading a long reply neither kill nor hold the server."""
    n = 100000
    rules = "".join("priority=1,udp,nw_dst=10.%d.%d.%d,actions=output:2\n"
                    % (i >> 16 & 255, i >> 8 & 255, i & 255)
                    for i in range(n))
    r = Run("sigpipe", rules)
    if not r.ready:
        r.finish("kill")
        return
    for _ in range(3):
        s = connect(r.path)
        s.sendall(b"flow-dump\n")
        s.close()
    # `simdpath ctl flow-dump | head -2`
    p = subprocess.Popen([EXE, "ctl", "--socket", r.path, "flow-dump"],
                         env=environment(), stdout=subprocess.PIPE)
    head = [p.stdout.readline() for _ in range(2)]
    p.stdout.close()
    p.wait(timeout=CAP)
    check(all(COUNTERS.sub("", h.decode()).startswith("priority=1,udp")
              for h in head),
          "ctl flow-dump | head -2 read two rules: %r" % head)
    # A client that asks for the dump and does not read it yet.
    try:
        slow = connect(r.path)
        slow.sendall(b"flow-dump\n")
        rc, out, err = ctl(r.path, "counters-show")
        check(rc == 0 and b"port 1" in out,
              "counters-show answered while a client does not read its "
              "dump (rc %d): %r" % (rc, err))
        slow.shutdown(socket.SHUT_WR)
        got = read_to_eof(slow).split(b"\n")
        slow.close()
    except OSError as e:
        got = [("%s" % e).encode()]
    check(len(got) == n + 2 and got[-2] == b"OK",
          "the slow reader got every rule: %d lines" % len(got))
    check(r.alive(), "the run outlived clients that left early")
    r.check_clean_exit("sigpipe")


def test_concurrency():
    """Item 5: silent, dripping and crowding clients cost others nothing;
    ctl stop gets through."""
    r = Run("concurrency")
    if not r.ready:
        r.finish("kill")
        return
    a = connect(r.path)
    a.sendall(b"counters-sh")
    got = request(r.path, b"counters-show\n")
    check(got.endswith(b"OK\n"),
          "answered while another client's line is unfinished: %r"
          % got[-200:])
    try:
        a.sendall(b"ow\n")
        a.shutdown(socket.SHUT_WR)
        got = read_to_eof(a)
    except OSError as e:
        got = ("%s" % e).encode()
    a.close()
    check(got.endswith(b"OK\n"), "the unfinished line is served once "
          "complete: %r" % got[-200:])

    drip = connect(r.path)
    served = 0
    for byte in b"counters-show\n":
        try:
            drip.sendall(bytes([byte]))
        except OSError:
            break
        served += request(r.path, b"counters-show\n").endswith(b"OK\n")
    check(served == len(b"counters-show\n"),
          "every client answered between a dripping client's bytes: %d "
          "of %d" % (served, len(b"counters-show\n")))
    drip.shutdown(socket.SHUT_WR)
    got = read_to_eof(drip)
    drip.close()
    check(got.endswith(b"OK\n"), "the dripped line is served: %r" % got)

    crowd = []
    try:
        for _ in range(40):
            crowd.append(connect(r.path))
    except OSError as e:
        check(False, "40 clients connect: %d did: %s" % (len(crowd), e))
    rc, out, err = ctl(r.path, "counters-show")
    check(rc == 0, "counters-show with 40 silent clients: %r" % err)
    closed = 0
    for s in crowd:
        s.setblocking(False)
        try:
            closed += s.recv(1) == b""
        except BlockingIOError:
            pass
    check(len(crowd) - closed <= MAX_CLIENTS and closed < len(crowd),
          "at most %d connections are kept: %d of %d closed"
          % (MAX_CLIENTS, closed, len(crowd)))
    rc, _, err = ctl(r.path, "stop")
    check(rc == 0, "ctl stop gets through the crowd: %r" % err)
    r.check_clean_exit("concurrency")
    for s in crowd:
        s.close()


def test_lines():
    """Items 6, 10 and 12: what a command line may hold, one reply per
    line, every rule dumped whole."""
    r = Run("lines")
    if not r.ready:
        r.finish("kill")
        return
    rule = "priority=%d,udp,actions=output:2"

    def padded(prio, total):
        text = "flow-add" + " " * (total - 8 - len(rule % prio)) + \
            rule % prio
        assert len(text) == total
        return text.encode()

    s = connect(r.path)
    # 4,095 bytes of a valid rule, then more: cut, it would be valid.
    s.sendall(padded(7, LINE_MAX) + b",bogus\n" + padded(6, LINE_MAX) +
              b"\nflow-add " + (rule % 10).encode() + b"\nflow-add " +
              (rule % 11).encode() + b"\n")
    s.shutdown(socket.SHUT_WR)
    got = read_replies(s, 4)
    s.close()
    check(len(got) == 4 and got[0].startswith(b"ERROR: line longer than "
                                              b"4095 bytes"),
          "an over-long line is refused: %r" % got[:1])
    check(got[1:] == [b"OK\n"] * 3,
          "the lines after it, a 4,095-byte one and two more on the same "
          "connection, are each executed: %r" % got[1:])
    cases = [(8, b"\x00,bogus", "0x00"), (9, b"\r,bogus", "0x0d"),
             (13, b"\x1b[2J", "0x1b")]
    for prio, tail, name in cases:
        got = request(r.path, b"flow-add " + (rule % prio).encode() + tail +
                      b"\n")
        check(got.startswith(("ERROR: control byte %s at column %d"
                              % (name, 9 + len(rule % prio) + 1)).encode()),
              "control byte %s refused: %r" % (name, got))
    got = request(r.path, b"flow-add " + (rule % 12).encode())
    check(got.startswith(b"ERROR: line without a newline"),
          "a line ended by EOF is not executed: %r" % got)
    long_rule = ("priority=20,udp,actions=" +
                 ",".join("mod_nw_src:192.168.%d.%d" % (i, 200 + i % 50)
                          for i in range(61)) + ",output:2")
    rc, _, err = ctl(r.path, "flow-add", long_rule)
    check(rc == 0, "flow-add of a %d-byte rule: %r" % (len(long_rule), err))
    rules = dump(r.path) or []
    prios = set(ln.split(",")[0] for ln in rules)
    check({"priority=6", "priority=10", "priority=11"} <= prios,
          "the executed lines' rules are in: %s" % sorted(prios))
    check(not prios & {"priority=%d" % p for p in (7, 8, 9, 12, 13)},
          "no refused line added a rule: %s" % sorted(prios))
    check(long_rule in rules, "flow-dump prints the %d-byte rule whole: "
          "%r" % (len(long_rule), [ln[-40:] for ln in rules]))
    rc, out, _ = ctl(r.path, "help")
    check(rc == 0 and b"hit count" not in out and b"flow-dump" in out,
          "help promises no hit counts: %r" % out)
    rc, out, _ = ctl(r.path, "openflow-show")
    check(rc == 0 and out == b"OpenFlow: off\n",
          "openflow-show without --openflow or --controller: %r" % out)

    # What reaches the terminal: bytes from bad input come back escaped.
    rc, out, err = ctl(r.path, "flow-add", b"ip,\x9b31m=1,actions=drop")
    check(rc == 1 and b"\\x9b31m" in err and b"\x9b" not in err,
          "a non-ASCII byte is echoed as \\x9b: %r" % err)
    rc, out, err = ctl(r.path, "flow-add", "ip,\x1b[2J,actions=drop")
    check(rc == 2 and b"\x1b" not in err and b"control byte 0x1b" in err,
          "ctl refuses an argument with a control byte: rc %d %r"
          % (rc, err))
    rc, out, err = ctl(r.path, "flow-add", "ip,actions=drop\nstop")
    check(rc == 2 and r.alive(), "an argument cannot smuggle a second "
          "command (rc %d)" % rc)
    rc, out, err = ctl(r.path, "flow-add", "x" * LINE_MAX)
    check(rc == 2 and b"longer than 4095 bytes" in err,
          "ctl refuses a command over 4,095 bytes: %r" % err)
    for cmd in ("flow-add", "flow-del", "impl-set"):
        got = request(r.path, cmd.encode() + b" \n")
        check(got.startswith(("ERROR: %s needs an argument" % cmd)
                             .encode()), "%s without argument: %r"
              % (cmd, got))
    for cmd in ("help", "impl-show", "autovalidate-show", "flow-dump",
                "counters-show", "counters-clear", "openflow-show", "stop"):
        got = request(r.path, cmd.encode() + b" x\n")
        check(got.startswith(("ERROR: %s takes no arguments" % cmd)
                             .encode()), "%s x refused: %r" % (cmd, got))
    check(r.alive(), "'stop x' did not stop the run")

    rc, _, err = ctl(r.path, "stop", env=environment(SIMDPATH_IMPL="bogus"))
    check(rc == 0, "ctl stop under SIMDPATH_IMPL=bogus: %r" % err)
    r.check_clean_exit("lines")


def nobody():
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return 65534


# The caller's python may live where another user cannot run it.
OTHER_PYTHON = next((p for p in ("/usr/bin/python3", "/usr/local/bin/python3")
                     if os.path.exists(p) and os.stat(p).st_mode & 0o001),
                    None)


def as_user(uid, code, *args):
    """Starts python code as uid; its stdout is a pipe."""
    def drop():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    return subprocess.Popen([OTHER_PYTHON, "-c", code] + list(args),
                            preexec_fn=drop, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd="/")


CLIENT = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(%d)
s.connect(sys.argv[1])
try:
    s.sendall(sys.argv[2].encode() + b"\\n")
    s.shutdown(socket.SHUT_WR)
except OSError:
    pass
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
sys.stdout.write(repr(data))
""" % CAP

LISTENER = """
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(1)
print("ready", flush=True)
s.settimeout(%d)
c, _ = s.accept()
c.settimeout(%d)
data = b""
while b"\\n" not in data:
    chunk = c.recv(4096)
    if not chunk:
        break
    data += chunk
c.close()
print(repr(data), flush=True)
""" % (CAP, CAP)


def test_peer_credentials():
    """Item 8: each end checks the other is root or the same user."""
    if os.geteuid() != 0 or not OTHER_PYTHON:
        skip("peer checks need root and a python3 anyone can run")
        return
    uid = nobody()
    d = tempfile.mkdtemp(prefix="peer-", dir=WORK)
    os.chmod(WORK, 0o755)
    os.chmod(d, 0o755)
    r = Run("peer", ctl_path=os.path.join(d, "ctl.sock"))
    if r.ready:
        os.chmod(r.path, 0o666)  # as a careless operator might
        p = as_user(uid, CLIENT, r.path,
                    "flow-add priority=30,udp,actions=output:2")
        out, err = p.communicate(timeout=CAP)
        check(b"ERROR: uid %d may not use this socket" % uid in out,
              "the server refuses uid %d: %r %r" % (uid, out, err))
        check(not any(ln.startswith("priority=30") for ln in
                      dump(r.path) or []),
              "another user's command was not executed")
        r.check_clean_exit("peer")
    else:
        r.finish("kill")
    os.chmod(WORK, 0o700)

    # A listener of another user at the path the client was given.
    squat = tempfile.mkdtemp(prefix="squat-", dir="/tmp")
    os.chown(squat, uid, -1)
    path = os.path.join(squat, "ctl.sock")
    p = as_user(uid, LISTENER, path)
    line = p.stdout.readline()
    if check(line == b"ready\n", "a listener as uid %d: %r" % (uid, line)):
        rc, out, err = ctl(path, "counters-show")
        got, _ = p.communicate(timeout=CAP)
        check(rc == 1 and b"served by uid %d" % uid in err,
              "ctl refuses a server of uid %d (rc %d): %r" % (uid, rc, err))
        check(got.strip() == b"b''",
              "the squatter received nothing: %r" % got)
    else:
        p.kill()
        p.communicate()
    shutil.rmtree(squat, ignore_errors=True)


def test_socket_path():
    """Items 3 and 9: --ctl replaces only a stale socket and refuses
    anything else before DPDK starts."""
    d = os.path.join(WORK, "paths")
    os.makedirs(d)
    data = b"priority=1,actions=output:2\n"
    rules = os.path.join(d, "rules.txt")
    with open(rules, "wb") as f:
        f.write(data)
    p = subprocess.run([EXE, "run", "--port", "net_null0,no-rx=1", "--port",
                        "net_null1,no-rx=1", "--flows", rules, "--ctl",
                        rules, "--duration", "1"], env=environment(),
                       capture_output=True, timeout=CAP)
    kept = open(rules, "rb").read() if os.path.exists(rules) else None
    check(p.returncode == 2 and b"exists and is not a socket" in p.stderr
          and b"EAL" not in p.stdout + p.stderr,
          "--ctl naming the flow file is refused before DPDK (rc %d): %r"
          % (p.returncode, p.stderr))
    check(kept == data, "the file at --ctl is intact")

    stale = os.path.join(d, "stale.sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(stale)
    s.close()
    r = Run("stale", ctl_path=stale)
    check(r.ready, "a stale socket is replaced")
    r.check_clean_exit("stale")

    live = os.path.join(d, "live.sock")
    s = socket.socket(socket.AF_UNIX)
    s.bind(live)
    s.listen(1)
    r = Run("live", ctl_path=live, wait=False)
    rc = r.finish("wait")
    check(rc == 2 and b"in use" in r.err and os.path.exists(live),
          "a socket someone listens on is refused before DPDK and kept "
          "(rc %s): %r" % (rc, r.err[-300:]))
    s.close()


def in_private_run():
    """The default path, in a mount namespace whose /run is ours."""
    env = environment()
    p = subprocess.run([EXE, "ctl", "counters-show"], env=env,
                       capture_output=True, timeout=CAP)
    check(p.returncode == 1 and b"/run/simdpath/simdpath.ctl" in p.stderr,
          "root's default socket is /run/simdpath/simdpath.ctl: %r"
          % p.stderr)
    r = Run("default", ctl_path=DEFAULT, env=env)
    if r.ready:
        st = os.stat("/run/simdpath")
        check(st.st_uid == 0 and st.st_mode & 0o777 == 0o700,
              "/run/simdpath is made root's, mode 0700: %o" % st.st_mode)
        p = subprocess.run([EXE, "ctl", "counters-show"], env=env,
                           capture_output=True, timeout=CAP)
        check(p.returncode == 0, "ctl finds the default socket: %r"
              % p.stderr)
        r.check_clean_exit("default")
    else:
        r.finish("kill")
    os.chmod("/run/simdpath", 0o777)
    r = Run("default-open", ctl_path=DEFAULT, env=env, wait=False)
    rc = r.finish("wait")
    check(rc == 2 and b"may be written by another user" in r.err,
          "a world-writable /run/simdpath is refused (rc %s): %r"
          % (rc, r.err[-300:]))


def test_default_path():
    """Item 8: with XDG_RUNTIME_DIR unset, root's socket is in a
    root-owned /run/simdpath, never in /tmp."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        skip("the default path needs root and unshare")
        return
    script = ("mount -t tmpfs -o mode=0755 simdpath-test /run && "
              "exec \"$@\"")
    p = subprocess.run(["unshare", "--mount", "--propagation", "private",
                        "sh", "-c", script, "sh", sys.executable,
                        os.path.abspath(__file__), EXE, "--private-run"],
                       capture_output=True, text=True, timeout=CAP * 5)
    if "private: " not in p.stdout and re.search(r"^(unshare|mount): ",
                                                  p.stderr, re.M):
        skip("no private mount namespace: " + p.stderr[-200:])
        return
    sys.stdout.write(p.stdout)
    m = re.search(r"^private: (\d+) passed, 0 failed$", p.stdout, re.M)
    check(p.returncode == 0 and m and int(m.group(1)) >= 6,
          "default path checks in a private /run (rc %d): %s"
          % (p.returncode, p.stderr[-500:]))


def main():
    # The default path's checks run again inside a private /run.
    private = sys.argv[2:] == ["--private-run"]
    tests = (in_private_run,) if private else (
        test_socket_path, test_lines, test_concurrency,
        test_sigpipe_and_slow_readers, test_peer_credentials,
        test_default_path)
    for t in tests:
        try:
            t()
        except Exception:  # a broken server must fail the test, not stop it
            check(False, "%s raised:\n%s" % (t.__name__,
                                              traceback.format_exc()))
    for r in RUNS:
        if r.alive():
            check(False, "%s: run still going at the end" % r.dir)
            r.proc.kill()
            r.proc.communicate()
    shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(summary("private" if private else "hostile ctl"))


if __name__ == "__main__":
    main()
