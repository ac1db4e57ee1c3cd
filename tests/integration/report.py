# SPDX-License-Identifier: BSD-3-Clause
"""For the tests that run simdpath: their checks' tally, and reading the
counters `simdpath run` and `simdpath ctl counters-show` print."""
import re
import time

RESULTS = {"passed": 0, "failed": 0, "skipped": 0}


def check(cond, what):
    """Counts a check; a failed one is printed with 'what'."""
    if cond:
        RESULTS["passed"] += 1
    else:
        RESULTS["failed"] += 1
        print("FAIL: " + what)
    return cond


def summary(name):
    """Prints the tally as 'NAME: P passed, F failed[, S skipped]' and
    returns the exit status: 1 if a check failed, else 77 (meson's skip,
    so that a part that could not run is not a pass) if a part was
    skipped, else 0."""
    skipped = ", %d skipped" % RESULTS["skipped"] \
        if RESULTS["skipped"] else ""
    print("%s: %d passed, %d failed%s" % (name, RESULTS["passed"],
                                          RESULTS["failed"], skipped))
    return 1 if RESULTS["failed"] else 77 if RESULTS["skipped"] else 0


def wait_until(cond, deadline):
    """Polls cond until it holds or time.time() passes deadline (a safety
    net, never the condition); cond's last value."""
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def counters(text):
    """Port counters from the report: {port: {rx, tx, copies, packet_in,
    packet_out, drops, nic}}, nic the device's own: {rx_missed,
    rx_errors, rx_nombuf, tx_errors}. Port 0 is the controller's
    (PACKET_OUTs whose in_port is not a port)."""
    ports = {}
    for m in re.finditer(r"^port (\d+) \([^)]*\): rx (\d+) tx (\d+) "
                         r"copies (\d+) packet_in (\d+) packet_out (\d+) "
                         r"dropped(.*)$", text, re.M):
        drops = dict((k, int(v)) for k, v in
                     re.findall(r" (\w+) (\d+)", m.group(7)))
        ports[int(m.group(1))] = {"rx": int(m.group(2)),
                                  "tx": int(m.group(3)),
                                  "copies": int(m.group(4)),
                                  "packet_in": int(m.group(5)),
                                  "packet_out": int(m.group(6)),
                                  "drops": drops, "nic": {}}
    for m in re.finditer(r"^port (\d+) \([^)]*\) nic:((?: \w+ \d+)*)$",
                         text, re.M):
        if int(m.group(1)) in ports:
            ports[int(m.group(1))]["nic"] = dict(
                (k, int(v)) for k, v in re.findall(r" (\w+) (\d+)",
                                                  m.group(2)))
    return ports


def no_leak(text):
    return "mbufs in use after the ports closed: 0\n" in text


def offered(port):
    """The frames that came to a port's device: those simdpath received
    and those the device lost before it could (its own counters)."""
    nic = port["nic"]
    return (port["rx"] + nic.get("rx_missed", 0) + nic.get("rx_errors", 0)
            + nic.get("rx_nombuf", 0))


def sent(port):
    """The frames a port's device sent: simdpath's tx less those the
    device took and failed to send."""
    return port["tx"] - port["nic"].get("tx_errors", 0)


def conserved(ports):
    """Every packet received, copied or sent by the controller
    (PACKET_OUT) was sent, sent to the controller (PACKET_IN) or dropped
    for a reason. What the devices lost before receiving or after taking
    a frame is outside this sum: offered() and sent() account for it."""
    rx = sum(p["rx"] + p["copies"] + p["packet_out"]
             for p in ports.values())
    out = sum(p["tx"] + p["packet_in"] + sum(p["drops"].values())
              for p in ports.values())
    return rx == out and rx > 0
