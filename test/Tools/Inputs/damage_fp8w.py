"""Writes damaged copies of a weights file (fp8rt/fp8w.h) for the reader's
tests: damage_fp8w.py GOOD.fp8w OUTDIR."""
import os
import struct
import sys

good = open(sys.argv[1], "rb").read()
out = sys.argv[2]
os.makedirs(out, exist_ok=True)
data_offset = struct.unpack_from("<Q", good, 24)[0]


def flip(data, at):
    b = bytearray(data)
    b[at] ^= 0x40
    return bytes(b)


def version(data, v):
    b = bytearray(data)
    struct.pack_into("<I", b, 8, v)
    # Recompute the header hash with the reader's own algorithm (XXH64),
    # so that the version check itself is reached.
    struct.pack_into("<Q", b, 56, xxh64(bytes(b[:56])))
    return bytes(b)


def xxh64(data, seed=0):
    """XXH64 as published (the reader's hash), for the header above."""
    m = (1 << 64) - 1
    p1, p2, p3, p4, p5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F,
                          0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                          0x27D4EB2F165667C5)
    rotl = lambda x, r: ((x << r) | (x >> (64 - r))) & m
    rnd = lambda acc, v: (rotl((acc + v * p2) & m, 31) * p1) & m
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + p1 + p2) & m, (seed + p2) & m, seed, (seed - p1) & m]
        while i + 32 <= n:
            for k in range(4):
                v[k] = rnd(v[k], struct.unpack_from("<Q", data, i + 8 * k)[0])
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & m
        for k in range(4):
            h = ((h ^ rnd(0, v[k])) * p1 + p4) & m
    else:
        h = (seed + p5) & m
    h = (h + n) & m
    while i + 8 <= n:
        h = (rotl(h ^ rnd(0, struct.unpack_from("<Q", data, i)[0]), 27) * p1 + p4) & m
        i += 8
    if i + 4 <= n:
        h = (rotl(h ^ (struct.unpack_from("<I", data, i)[0] * p1 & m), 23) * p2 + p3) & m
        i += 4
    while i < n:
        h = (rotl(h ^ (data[i] * p5 & m), 11) * p1) & m
        i += 1
    h ^= h >> 33
    h = (h * p2) & m
    h ^= h >> 29
    h = (h * p3) & m
    h ^= h >> 32
    return h


assert xxh64(good[:56]) == struct.unpack_from("<Q", good, 56)[0], \
    "this script's XXH64 disagrees with the writer's"
cases = {
    "truncated": good[:-1],
    "longer": good + b"\0",
    "header": flip(good, 20),
    "table": flip(good, 64 + 4),
    "data": flip(good, data_offset + 3),
    "short": good[:10],
    "version": version(good, 2),
}
for name, data in cases.items():
    with open(os.path.join(out, name + ".fp8w"), "wb") as f:
        f.write(data)
