#!/usr/bin/env python3
"""The FP8 numerics report, calibration and automatic fallback.

    fp8_report.py --decisions D.json --state S.state [--json OUT.json]
                  [--calibration-out C.json] [--fallback-threshold T
                   --policy-out P.json]

D.json is `fp8-compile --report` of an analysis build (`--analyze`); S.state
is that library's state after running it on sample inputs (`fp8-run ...
--save-state S.state`, any number of runs, e.g. over several test-data
folders). Per FP8 product the library accumulated the energy of each
operand and of its quantization error, of the FP32 product and of the FP8
product's error, and the largest activation amax. This script prints, per
product: operand SQNR in dB (10 log10 signal/error), the output's relative
L2 error against its FP32 twin, and the activation amax; `--json` writes
the same as JSON. `--calibration-out` writes {node: {"amax": v}} for
`fp8-compile --calibration` (static current scales / delayed-scaling
history seeds). `--fallback-threshold T --policy-out P` writes a policy that
keeps every product whose output error exceeds T in high precision, for
`fp8-compile --policy` (the report lists them).
"""
import argparse
import json
import math
import os
import struct
import sys

MAGIC = b"FP8RTSTATE1\n"


def read_state(path):
    """{name: bytes} of an fp8rt state file (runtime/cpu/model_shim.c)."""
    data = open(path, "rb").read()
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 20:
        raise SystemExit(f"error: {path} is not an fp8rt state file")
    h = 0xCBF29CE484222325
    for byte in data[:-8]:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    if h != struct.unpack("<Q", data[-8:])[0]:
        raise SystemExit(f"error: {path} is corrupt (checksum mismatch)")
    at = len(MAGIC) + 8
    (count,) = struct.unpack_from("<I", data, at)
    at += 4
    out = {}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, at)
        at += 4
        name = data[at:at + n].decode()
        at += n
        (size,) = struct.unpack_from("<Q", data, at)
        at += 8
        out[name] = data[at:at + size]
        at += size
    return out


def db(signal, error):
    if error <= 0:
        return math.inf
    if signal <= 0:
        return -math.inf
    return 10 * math.log10(signal / error)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decisions", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--json")
    ap.add_argument("--calibration-out")
    ap.add_argument("--fallback-threshold", type=float)
    ap.add_argument("--policy-out")
    args = ap.parse_args()
    if (args.fallback_threshold is None) != (args.policy_out is None):
        raise SystemExit("error: --fallback-threshold and --policy-out go together")

    decisions = json.load(open(args.decisions))
    state = read_state(args.state)
    rows, calibration, fallback = [], {}, []
    for p in decisions["products"]:
        if not p.get("fp8"):
            continue
        if "stats" not in p:
            raise SystemExit("error: the decisions come from a build without "
                             "--analyze (no statistics)")
        raw = state.get(p["stats"])
        if raw is None or len(raw) != 28:
            raise SystemExit(f"error: {args.state} has no statistics '{p['stats']}': "
                             "state and decisions come from different builds")
        ea, eqa, eb, eqb, ey, edy, amax = struct.unpack("<7f", raw)
        row = {
            "node": p["node"], "recipe": p["recipe"], "format": p["format"],
            "lhs": p["lhs"], "rhs": p["rhs"],
            "lhs_layout": p.get("lhs_layout"), "rhs_layout": p.get("rhs_layout"),
            "lhs_sqnr_db": db(ea, eqa), "rhs_sqnr_db": db(eb, eqb),
            "output_rel_l2": math.sqrt(edy / ey) if ey > 0 else 0.0,
            "lhs_amax": amax,
        }
        rows.append(row)
        calibration[p["node"]] = {"amax": amax}
        if args.fallback_threshold is not None and row["output_rel_l2"] > args.fallback_threshold:
            fallback.append(p["node"])
            row["fallback"] = True

    print(f"FP8 numerics ({decisions['recipe']}, {decisions['format']}), "
          f"{len(rows)} products in FP8")
    print(f"  {'node':<28}{'recipe':<9}{'lhs SQNR':>10}{'rhs SQNR':>10}"
          f"{'out rel L2':>12}{'lhs amax':>12}")
    for r in rows:
        mark = "  -> keep in high precision" if r.get("fallback") else ""
        print(f"  {r['node']:<28}{r['recipe']:<9}{r['lhs_sqnr_db']:>9.2f}d"
              f"{r['rhs_sqnr_db']:>9.2f}d{r['output_rel_l2']:>12.3e}{r['lhs_amax']:>12.4g}{mark}")
    skipped = [p for p in decisions["products"] if not p.get("fp8")]
    for p in skipped:
        print(f"  {p['node'] or p['op']:<28}kept in high precision: {p.get('reason', '')}")

    def write(path, value):
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(value, f, indent=2, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)

    if args.json:
        write(args.json, {"recipe": decisions["recipe"], "format": decisions["format"],
                          "products": rows,
                          "high_precision": [{"node": p["node"], "reason": p.get("reason", "")}
                                             for p in skipped]})
    if args.calibration_out:
        write(args.calibration_out, calibration)
    if args.policy_out:
        write(args.policy_out, {"rules": [{"match": "^" + n + "$", "skip": True}
                                          for n in fallback]})
        print(f"fallback: {len(fallback)} products above {args.fallback_threshold:g} "
              f"relative L2 -> {args.policy_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
