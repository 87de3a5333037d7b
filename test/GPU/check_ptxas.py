#!/usr/bin/env python3
"""Assembles PTX with `ptxas -v` and fails on register spills or advisories.

usage: check_ptxas.py --ptxas PTXAS [--arch sm_90a] [--kernels REGEX]
                      [--min-kernels N] FILE.ptx|DIR...

A DIR stands for its *.ptx files (sorted). Each FILE may hold several PTX modules one after another (what
extract_gpu_objects.py + concatenation or `fp8-compile --emit=ptx` write);
every module holding a kernel whose name matches REGEX (default: the FP8
GEMM kernels, `__fp8_gemm_`) is assembled on its own. For each matching
kernel it prints registers, spill stores/loads, stack frame and static
shared memory, and it fails (exit status 1) when a matching kernel
  * spills (non-zero `bytes spill stores` or `bytes spill loads`), or
  * draws a ptxas advisory `(C75xx)` (e.g. C7512 "wgmma.mma_async
    instructions are serialized due to insufficient register resources",
    C7510 wgmma serialized for other reasons, C7508 setmaxnreg ignored), or
  * draws any ptxas warning or error,
and when fewer than N kernels matched (default 1: a vacuous pass is a
failure). Advisories name their function; other lines belong to the kernel
named by the `Compiling entry function` line before them.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ENTRY = re.compile(r"^\s*\.(?:visible\s+|weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)",
                   re.M)
COMPILING = re.compile(r"Compiling entry function '([^']+)'")
PROPS = re.compile(r"Function properties for (\S+)")
SPILLS = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
SMEM = re.compile(r"(\d+) bytes smem")
ADVISORY = re.compile(r"\((C75\d\d)\)(.*)")
ADVISORY_FN = re.compile(r"function '([^']+)'")


def split_modules(text):
    """The PTX modules of `text`: each starts at a `.version` directive."""
    starts = [m.start() for m in re.finditer(r"^\.version\b", text, re.M)]
    return [text[s:e] for s, e in zip(starts, starts[1:] + [len(text)])]


class Kernel:
    def __init__(self, name):
        self.name = name
        self.registers = None
        self.stack = self.spill_stores = self.spill_loads = 0
        self.smem = 0
        self.problems = []


def assemble(ptxas, arch, module, kernels):
    """Runs ptxas -v on one module; fills `kernels` (name -> Kernel)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "module.ptx")
        with open(src, "w", encoding="utf-8") as f:
            f.write(module)
        proc = subprocess.run(
            [ptxas, "-arch=" + arch, "-v", src, "-o", os.path.join(tmp, "m.cubin")],
            capture_output=True, text=True)
    lines = (proc.stdout + proc.stderr).splitlines()
    current = None
    errors = []
    for line in lines:
        m = COMPILING.search(line) or PROPS.search(line)
        if m:
            current = kernels.setdefault(m.group(1), Kernel(m.group(1)))
            continue
        m = ADVISORY.search(line)
        if m:
            fn = ADVISORY_FN.search(m.group(2))
            k = kernels.setdefault(fn.group(1), Kernel(fn.group(1))) if fn else current
            if k is None:
                errors.append(line.strip())
            else:
                k.problems.append(f"{m.group(1)}{m.group(2)}")
            continue
        if re.search(r"\b(warning|error|fatal)\b", line, re.I):
            if current is None:
                errors.append(line.strip())
            else:
                current.problems.append(line.strip())
            continue
        if current is None:
            continue
        m = SPILLS.search(line)
        if m:
            current.stack, current.spill_stores, current.spill_loads = map(
                int, m.groups())
        m = USED.search(line)
        if m:
            current.registers = int(m.group(1))
            s = SMEM.search(line)
            current.smem = int(s.group(1)) if s else 0
    if proc.returncode != 0:
        errors.append(f"ptxas exited with status {proc.returncode}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxas", required=True)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--kernels", default=r"__fp8_gemm_")
    ap.add_argument("--min-kernels", type=int, default=1)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    wanted = re.compile(args.kernels)

    paths = []
    for p in args.files:
        if os.path.isdir(p):
            paths += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if f.endswith(".ptx"))
        else:
            paths.append(p)

    failures = 0
    checked = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for module in split_modules(text):
            names = [n for n in ENTRY.findall(module) if wanted.search(n)]
            if not names:
                continue
            kernels = {}
            for e in assemble(args.ptxas, args.arch, module, kernels):
                print(f"FAIL {os.path.basename(path)}: {e}")
                failures += 1
            for name in names:
                k = kernels.get(name)
                checked += 1
                if k is None or k.registers is None:
                    print(f"FAIL {os.path.basename(path)}: {name}: no ptxas "
                          "figures (not compiled?)")
                    failures += 1
                    continue
                bad = k.spill_stores or k.spill_loads or k.problems
                print(f"{'FAIL' if bad else 'ok  '} {os.path.basename(path)}: "
                      f"{name}: {k.registers} registers, {k.spill_stores} "
                      f"bytes spill stores, {k.spill_loads} bytes spill "
                      f"loads, {k.stack} bytes stack, {k.smem} bytes static "
                      "smem")
                for p in k.problems:
                    print(f"     {p}")
                failures += 1 if bad else 0
    if checked < args.min_kernels:
        print(f"FAIL: {checked} kernels matched /{args.kernels}/, expected at "
              f"least {args.min_kernels}")
        failures += 1
    print(f"ptxas: {checked} kernels, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
