# SPDX-License-Identifier: BSD-3-Clause
"""For the tests that run simdpath: their checks' tally, and reading the
counters `simdpath run` and `simdpath ctl counters-show` print."""
import re

RESULTS = {"passed": 0, "failed": 0, "skipped": 0}


def check(cond, what):
    """Counts a check; a failed one is printed with 'what'."""
    if cond:
        RESULTS["passed"] += 1
    else:
        RESULTS["failed"] += 1
        print("FAIL: " + what)
    return cond


def counters(text):
    """Port counters from the report: {port: {rx, tx, copies, drops}}."""
    ports = {}
    for m in re.finditer(r"^port (\d+) \([^)]*\): rx (\d+) tx (\d+) "
                         r"copies (\d+) dropped(.*)$", text, re.M):
        drops = dict((k, int(v)) for k, v in
                     re.findall(r" (\w+) (\d+)", m.group(5)))
        ports[int(m.group(1))] = {"rx": int(m.group(2)),
                                  "tx": int(m.group(3)),
                                  "copies": int(m.group(4)),
                                  "drops": drops}
    return ports


def no_leak(text):
    return "mbufs in use after the ports closed: 0\n" in text


def conserved(ports):
    """Every packet received or copied was sent or dropped for a reason."""
    rx = sum(p["rx"] + p["copies"] for p in ports.values())
    out = sum(p["tx"] + sum(p["drops"].values()) for p in ports.values())
    return rx == out and rx > 0
