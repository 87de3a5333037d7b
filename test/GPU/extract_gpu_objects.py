#!/usr/bin/env python3
"""Writes the objects of the gpu.binary ops in an MLIR file to files.

usage: extract_gpu_objects.py INPUT.mlir OUTDIR SUFFIX
Each `gpu.binary @name [...bin = "..." or assembly = "..."...]` gives OUTDIR/name.SUFFIX (the first
object). MLIR prints the bytes as a string with \\XX hex escapes.
"""
import os
import re
import sys


def unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            nxt = s[i + 1]
            if nxt in '\\"':
                out.append(ord(nxt))
                i += 2
            elif nxt == "n":
                out.append(10)
                i += 2
            elif nxt == "t":
                out.append(9)
                i += 2
            else:
                out.append(int(s[i + 1:i + 3], 16))
                i += 3
        else:
            out.extend(c.encode("utf-8"))
            i += 1
    return bytes(out)


def main():
    src, outdir, suffix = sys.argv[1:4]
    text = open(src, encoding="utf-8").read()
    found = 0
    for m in re.finditer(r'gpu\.binary @(\w+)', text):
        # `bin = "..."` for cubin/fatbin, `assembly = "..."` for PTX.
        cands = [(text.find(k, m.end()), k) for k in ('bin = "', 'assembly = "')]
        cands = [(p, k) for p, k in cands if p >= 0]
        if not cands:
            continue
        b, key = min(cands)
        b += len(key)
        e = b
        while text[e] != '"':
            e += 2 if text[e] == "\\" else 1
        data = unescape(text[b:e])
        with open(os.path.join(outdir, "%s.%s" % (m.group(1), suffix)), "wb") as f:
            f.write(data)
        found += 1
    if not found:
        sys.exit("no gpu.binary object in " + src)


if __name__ == "__main__":
    main()
