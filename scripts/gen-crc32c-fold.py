#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Derives and checks the CRC-32C folding constants of
src/common/crc32c_fold.h.

The key hash folds the first 48 bytes of a 64-byte key onto its last 16
with carry-less multiplies: each 64-bit word w at byte offset p becomes
clmul(w, k_p), and the CRC of the folded 16 bytes equals the CRC of the
key. k_p is found by solving that linear condition over GF(2), then the
whole scheme is checked against a bitwise CRC-32C on random keys.
Run: python3 scripts/gen-crc32c-fold.py
"""
import random

POLY = 0x82F63B78  # CRC-32C, reflected


def crc_raw(crc, data):
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (POLY if crc & 1 else 0)
    return crc


def clmul(a, b):
    r = 0
    for i in range(64):
        if (b >> i) & 1:
            r ^= a << i
    return r


def fold_constant(pos):
    """k with crc(w at pos of 64 zero bytes) == crc(clmul(w, k)) for all w."""
    rows = []
    for vb in range(64):
        msg = bytearray(64)
        msg[pos:pos + 8] = (1 << vb).to_bytes(8, "little")
        target = crc_raw(0, bytes(msg))
        cols = [crc_raw(0, clmul(1 << vb, 1 << kb).to_bytes(16, "little"))
                for kb in range(64)]
        for ob in range(32):
            row = sum(1 << kb for kb in range(64) if (cols[kb] >> ob) & 1)
            rows.append([row, (target >> ob) & 1])
    pivots, r = [], 0
    for c in range(64):
        p = next((i for i in range(r, len(rows)) if (rows[i][0] >> c) & 1),
                 None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        for i in range(len(rows)):
            if i != r and (rows[i][0] >> c) & 1:
                rows[i][0] ^= rows[r][0]
                rows[i][1] ^= rows[r][1]
        pivots.append(c)
        r += 1
    assert all(row[1] == 0 for row in rows[r:]), "no solution"
    return sum(1 << c for i, c in enumerate(pivots) if rows[i][1])


def main():
    ks = [fold_constant(p) for p in range(0, 48, 8)]
    rng = random.Random(1)
    for _ in range(500):
        key = bytes(rng.randrange(256) for _ in range(64))
        k = bytearray(key)
        for i in range(4):
            k[i] ^= 0xFF  # the initial value 0xffffffff
        folded = int.from_bytes(k[48:], "little")
        for j, p in enumerate(range(0, 48, 8)):
            folded ^= clmul(int.from_bytes(k[p:p + 8], "little"), ks[j])
        got = crc_raw(0, folded.to_bytes(16, "little")) ^ 0xFFFFFFFF
        assert got == crc_raw(0xFFFFFFFF, key) ^ 0xFFFFFFFF
    print(", ".join("0x%08x" % k for k in ks))


if __name__ == "__main__":
    main()
