"""The FP8 numerics report, calibration, automatic fallback and plots.

    fp8-report --decisions D.json --state S.state [S2.state ...]
               [--json OUT.json] [--plot OUT.png] [--label NAME]
               [--compare R.json ...] [--calibration-out C.json]
               [--fallback-threshold T --policy-out P.json]
    fp8-report --plot OUT.png --compare R1.json R2.json ...
    (also: python3 -m fp8rt.report, scripts/fp8_report.py)

D.json is `fp8-compile --report` of an analysis build (`--analyze`); S.state
is that library's state after running it on sample inputs (`fp8-run ...
--save-state S.state`, any number of runs, e.g. over several test-data
folders). Per FP8 product the library accumulated the energy of each
operand and of its quantization error, of the FP32 product and of the FP8
product's error, and the largest activation amax. This prints, per
product: operand SQNR in dB (10 log10 signal/error), the output's relative
L2 error against its FP32 twin, the activation amax and the torch module
the product came from (when the ONNX export recorded it); `--json` writes
the same as JSON (with a schema_version).

Several state files (one per run or data set: `--state a.state b.state`)
are pooled for the figures (as if one state had accumulated all runs), and
each one's figures are kept too: `--plot` draws their spread (min to max)
as error bars.

`--plot OUT.png` draws per product the operand SQNR (activation and weight)
and the output error; `--compare R.json` adds reports written earlier with
`--json` (another recipe, format or policy of the same model) to the same
figure, one colour each, matched by ONNX node. With only --compare inputs
(no --decisions) it just plots them. Needs matplotlib.

`--calibration-out` writes {node: {"amax": v}} for `fp8-compile
--calibration` (static current scales / delayed-scaling history seeds).
`--fallback-threshold T` marks every product whose output error exceeds T
(and draws T on the plot); `--policy-out P` writes a policy that keeps
them in high precision, for `fp8-compile --policy`.
"""
import argparse
import json
import math
import os
import struct
import sys

__all__ = ["SCHEMA_VERSION", "read_state", "analyze", "load_report", "plot",
           "main"]

MAGIC = b"FP8RTSTATE1\n"
# Of the JSON this writes (--json). Readers refuse newer versions.
SCHEMA_VERSION = 1
# Of fp8-compile --report that this reads (1: the first to carry it; files
# without one come from older compilers and read the same).
DECISIONS_SCHEMA_VERSION = 1


class ReportError(Exception):
    """A bad input file: the message names it and what is wrong."""


def state_fingerprint(path):
    """The model fingerprint an fp8rt state file records (the library that
    saved it)."""
    with open(path, "rb") as f:
        head = f.read(len(MAGIC) + 8)
    return head[len(MAGIC):] if head.startswith(MAGIC) else b""


def read_state(path):
    """{name: bytes} of an fp8rt state file (runtime/cpu/model_shim.c)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as err:
        raise ReportError(f"{path}: {err.strerror}") from None
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 20:
        raise ReportError(f"{path} is not an fp8rt state file")
    h = 0xCBF29CE484222325
    for byte in data[:-8]:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    if h != struct.unpack("<Q", data[-8:])[0]:
        raise ReportError(f"{path} is corrupt (checksum mismatch)")
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


def _figures(ea, eqa, eb, eqb, ey, edy):
    return {"lhs_sqnr_db": db(ea, eqa), "rhs_sqnr_db": db(eb, eqb),
            "output_rel_l2": math.sqrt(edy / ey) if ey > 0 else 0.0}


def load_json(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as err:
        raise ReportError(f"{what} {path}: {err.strerror}") from None
    except ValueError as err:
        raise ReportError(f"{what} {path} is not JSON: {err}") from None


def check_decisions(decisions, path):
    if not isinstance(decisions, dict) or \
            not isinstance(decisions.get("products"), list):
        raise ReportError(f"{path} is not an fp8-compile --report file (no "
                          "\"products\" list)")
    version = decisions.get("schema_version", DECISIONS_SCHEMA_VERSION)
    if not isinstance(version, int) or version > DECISIONS_SCHEMA_VERSION:
        raise ReportError(f"{path} has schema_version {version!r}; this "
                          f"fp8-report reads up to {DECISIONS_SCHEMA_VERSION} "
                          "(update fp8rt)")


def analyze(decisions, states, state_paths, threshold=None, label=None):
    """The report (a dict, schema SCHEMA_VERSION) of an analysis build's
    decisions and one or more of its state files."""
    rows, skipped = [], []
    for p in decisions["products"]:
        if not p.get("fp8"):
            skipped.append(p)
            continue
        if "stats" not in p:
            raise ReportError("the decisions come from a build without "
                              "--analyze (no statistics)")
        per_run = []
        for state, path in zip(states, state_paths):
            raw = state.get(p["stats"])
            if raw is None or len(raw) != 28:
                raise ReportError(f"{path} has no statistics '{p['stats']}': "
                                  "state and decisions come from different builds")
            per_run.append(struct.unpack("<7f", raw))
        # Pooled: energies add up over runs, the amax is the largest.
        pooled = [sum(r[k] for r in per_run) for k in range(6)]
        amax = max(r[6] for r in per_run)
        row = {"node": p["node"], "recipe": p["recipe"], "format": p["format"],
               "lhs": p["lhs"], "rhs": p["rhs"],
               "lhs_layout": p.get("lhs_layout"),
               "rhs_layout": p.get("rhs_layout"),
               **_figures(*pooled), "lhs_amax": amax}
        for key in ("module", "module_class"):
            if p.get(key):
                row[key] = p[key]
        if len(per_run) > 1:
            figs = [_figures(*r[:6]) for r in per_run]
            row["per_run"] = {k: [f[k] for f in figs] for k in figs[0]}
        if threshold is not None and row["output_rel_l2"] > threshold:
            row["fallback"] = True
        rows.append(row)
    high = []
    for p in skipped:
        entry = {"node": p["node"], "reason": p.get("reason", "")}
        if p.get("module"):
            entry["module"] = p["module"]
        high.append(entry)
    return {"schema_version": SCHEMA_VERSION,
            "label": label or f"{decisions['recipe']} {decisions['format']}",
            "recipe": decisions["recipe"], "format": decisions["format"],
            "runs": len(states), "products": rows, "high_precision": high}


def load_report(path):
    """A report written by --json, checked."""
    report = load_json(path, "report")
    if not isinstance(report, dict) or not isinstance(report.get("products"), list):
        raise ReportError(f"report {path} is not an fp8-report --json file "
                          "(no \"products\" list)")
    version = report.get("schema_version")
    if version is None:
        raise ReportError(f"report {path} has no schema_version: it predates "
                          "fp8-report --plot (write it again with --json)")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ReportError(f"report {path} has schema_version {version!r}; this "
                          f"fp8-report reads up to {SCHEMA_VERSION} (update fp8rt)")
    for i, row in enumerate(report["products"]):
        missing = [k for k in ("node", "lhs_sqnr_db", "rhs_sqnr_db", "output_rel_l2")
                   if k not in row]
        if missing:
            raise ReportError(f"report {path}: product {i} lacks {', '.join(missing)}")
    report.setdefault("label", f"{report.get('recipe', '?')} {report.get('format', '')}".strip())
    return report


def print_report(report):
    runs = report["runs"]
    print(f"FP8 numerics ({report['recipe']}, {report['format']}), "
          f"{len(report['products'])} products in FP8"
          + (f", {runs} runs pooled" if runs > 1 else ""))
    print(f"  {'node':<28}{'recipe':<9}{'lhs SQNR':>10}{'rhs SQNR':>10}"
          f"{'out rel L2':>12}{'lhs amax':>12}  module")
    for r in report["products"]:
        mark = "  -> keep in high precision" if r.get("fallback") else ""
        print(f"  {r['node']:<28}{r['recipe']:<9}{r['lhs_sqnr_db']:>9.2f}d"
              f"{r['rhs_sqnr_db']:>9.2f}d{r['output_rel_l2']:>12.3e}"
              f"{r['lhs_amax']:>12.4g}  {r.get('module', '-')}{mark}")
    for p in report["high_precision"]:
        print(f"  {p['node']:<28}kept in high precision: {p['reason']}")


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


# -- Plot ---------------------------------------------------------------------

def _short_labels(names):
    """Tick labels: module paths without the components every one shares
    (the wrapper modules: 'm.transformer.'), whole dotted components only;
    the last shared one stays when a layer number follows ('layers.0...')."""
    parts = [n.split(".") for n in names]
    common = 0
    if len(parts) > 1:
        while all(len(p) > common + 1 and p[common] == parts[0][common]
                  for p in parts):
            common += 1
    if common and any(p[common].isdigit() for p in parts):
        common -= 1
    return [".".join(p[common:]) for p in parts]


def _blocks(names):
    """(start, end) index ranges of consecutive products in one numbered
    block (the module path up to its first numeric component:
    'model.layers.3'), for the plot's alternating bands."""
    def block(name):
        parts = name.split(".")
        for i, p in enumerate(parts):
            if p.isdigit():
                return ".".join(parts[:i + 1])
        return None
    out, start = [], 0
    for i in range(1, len(names) + 1):
        if i == len(names) or block(names[i]) != block(names[start]):
            if block(names[start]) is not None:
                out.append((start, i))
            start = i
    return out


def _spread(row, key, pooled):
    """(below, above) of the per-run values around the pooled one."""
    runs = [v for v in row.get("per_run", {}).get(key, []) if math.isfinite(v)]
    if not runs or not math.isfinite(pooled):
        return 0.0, 0.0
    return max(0.0, pooled - min(runs)), max(0.0, max(runs) - pooled)


def plot(reports, path, threshold=None, title=None):
    """Writes a PNG: per FP8 product (x, in program order, labelled by torch
    module where known, else ONNX node), the operand SQNR of activation and
    weight (top) and the output's relative L2 error against FP32 (bottom,
    log scale, with its dB on the right), one colour per report, error bars
    from min to max over the runs of a report with several."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        raise ReportError("--plot needs matplotlib (Debian: apt install "
                          "python3-matplotlib; pip: fp8rt[plot])") from None
    nodes, label_of = [], {}
    for rep in reports:
        for row in rep["products"]:
            if row["node"] not in label_of:
                nodes.append(row["node"])
                label_of[row["node"]] = row.get("module") or row["node"]
    if not nodes:
        raise ReportError("nothing to plot: no product is in FP8 in "
                          + ", ".join(r["label"] for r in reports))
    # A module may own several products (e.g. attention's two): keep the
    # label unique with the ONNX node.
    labels = [label_of[n] for n in nodes]
    short = _short_labels(labels)
    counts = {}
    for s in short:
        counts[s] = counts.get(s, 0) + 1
    short = [s if counts[s] == 1 or s == n else f"{s} ({n})"
             for s, n in zip(short, nodes)]
    x = {n: i for i, n in enumerate(nodes)}
    n = len(nodes)
    width = min(40.0, max(9.0, 3.0 + 0.16 * n))
    longest = max(len(s) for s in short)
    fontsize = 8 if n <= 60 else 6.5 if n <= 120 else 5.5
    label_height = min(4.5, 0.3 + longest * fontsize / 100.0)
    fig, (top, bottom) = plt.subplots(
        2, 1, sharex=True, figsize=(width, 6.4 + label_height),
        gridspec_kw={"height_ratios": [1.2, 1]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    k = len(reports)
    for i, rep in enumerate(reports):
        color = colors[i % len(colors)]
        # Reports side by side within a product's slot.
        shift = (i - (k - 1) / 2) * min(0.25, 0.6 / k)
        rows = sorted(rep["products"], key=lambda r: x[r["node"]])
        xs = [x[r["node"]] + shift for r in rows]
        suffix = ""
        for key, marker, fill, what in (
                ("lhs_sqnr_db", "o", color, "lhs (activation)"),
                ("rhs_sqnr_db", "^", "white", "rhs (weight; K/V in attention)")):
            ys = [r[key] if math.isfinite(r[key]) else math.nan for r in rows]
            err = list(zip(*[_spread(r, key, r[key]) for r in rows])) or [[], []]
            top.errorbar(xs, ys, yerr=err, fmt=marker, color=color, mfc=fill,
                         ms=4 if n > 80 else 5, lw=0, elinewidth=1, capsize=2,
                         label=f"{rep['label']}: {what}{suffix}")
        ys = [r["output_rel_l2"] if r["output_rel_l2"] > 0 else math.nan for r in rows]
        err = list(zip(*[_spread(r, "output_rel_l2", r["output_rel_l2"])
                         for r in rows])) or [[], []]
        bottom.errorbar(xs, ys, yerr=err, fmt="s", color=color,
                        ms=3.5 if n > 80 else 4.5, lw=0, elinewidth=1,
                        capsize=2, label=f"{rep['label']}{suffix}")
    # Alternate bands for the numbered blocks (decoder layers).
    for j, (a, b) in enumerate(_blocks(labels)):
        if j % 2:
            for ax in (top, bottom):
                ax.axvspan(a - 0.5, b - 0.5, color="0.93", zorder=0, lw=0)
    top.set_ylabel("operand SQNR (dB)")
    top.grid(True, axis="y", alpha=0.3)
    top.legend(loc="lower left", bbox_to_anchor=(0, 1.01), ncol=min(4, k),
               fontsize=8, frameon=False)
    bottom.set_yscale("log")
    bottom.set_ylabel("output rel. L2 error vs FP32")
    bottom.grid(True, axis="y", which="both", alpha=0.3)
    if threshold is not None:
        bottom.axhline(threshold, color="0.4", ls="--", lw=1,
                       label=f"fallback threshold {threshold:g}")
    bottom.legend(loc="best", fontsize=8, framealpha=0.85,
                  ncol=min(4, k + (threshold is not None)))
    # The same error in dB (output SQNR = -20 log10(rel L2)).
    def to_db(e):
        with np.errstate(divide="ignore", invalid="ignore"):
            return -20 * np.log10(np.asarray(e, float))

    def from_db(d):
        return 10 ** (-np.asarray(d, float) / 20)

    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    bottom.yaxis.set_major_formatter(plain)
    bottom.yaxis.set_minor_formatter(plain)
    right = bottom.secondary_yaxis("right", functions=(to_db, from_db))
    right.set_ylabel("output SQNR (dB)")
    right.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(6))
    right.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    right.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.0f"))
    bottom.set_xticks(range(n))
    bottom.set_xticklabels(short, rotation=90, fontsize=fontsize)
    bottom.set_xlim(-0.7, n - 0.3)
    where = "torch module" if any(label_of[m] != m for m in nodes) else "ONNX node"
    bottom.set_xlabel(f"FP8 product ({where}, program order)")
    runs = [r.get("runs", 1) for r in reports]
    note = (f"; error bars: min to max over {max(runs)} runs" if max(runs) > 1
            else "")
    fig.suptitle((title or "FP8 numerics per product: "
                  + " vs ".join(r["label"] for r in reports)) + note, fontsize=11)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


# -- Command line -------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(prog="fp8-report", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decisions", help="fp8-compile --report of an --analyze build")
    ap.add_argument("--state", nargs="+", action="extend", default=[],
                    help="state files of that library after runs (one or more)")
    ap.add_argument("--json", help="write the report as JSON")
    ap.add_argument("--label", help="name of this report in plots (default: "
                    "recipe and format)")
    ap.add_argument("--plot", help="write a PNG of the per-product figures")
    ap.add_argument("--compare", nargs="+", action="extend", default=[],
                    help="reports written with --json to add to the plot")
    ap.add_argument("--title", help="the plot's title")
    ap.add_argument("--calibration-out")
    ap.add_argument("--fallback-threshold", type=float)
    ap.add_argument("--policy-out")
    args = ap.parse_args(argv)
    if args.policy_out and args.fallback_threshold is None:
        ap.error("--policy-out needs --fallback-threshold")
    if args.decisions is None:
        if args.state:
            ap.error("--state needs --decisions")
        if not (args.plot and args.compare):
            ap.error("--decisions and --state are required (or --plot with "
                     "--compare reports only)")
        for flag in ("json", "calibration_out", "policy_out", "label"):
            if getattr(args, flag):
                ap.error(f"--{flag.replace('_', '-')} needs --decisions and --state")
    elif not args.state:
        ap.error("--decisions needs --state")
    try:
        return run(args)
    except ReportError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1


def run(args):
    reports = []
    report = None
    if args.decisions:
        decisions = load_json(args.decisions, "decisions")
        check_decisions(decisions, args.decisions)
        states = [read_state(p) for p in args.state]
        # Pooling states of different builds would mix their figures.
        prints = {p: state_fingerprint(p) for p in args.state}
        for p in args.state[1:]:
            if prints[p] != prints[args.state[0]]:
                raise ReportError(f"{p} and {args.state[0]} were saved by "
                                  "different libraries (their model "
                                  "fingerprints differ): pool the states of "
                                  "one --analyze build")
        report = analyze(decisions, states, args.state, args.fallback_threshold,
                         args.label)
        print_report(report)
        reports.append(report)
    reports += [load_report(p) for p in args.compare]

    if report and args.json:
        write_json(args.json, report)
    if report and args.calibration_out:
        write_json(args.calibration_out,
                   {r["node"]: {"amax": r["lhs_amax"]} for r in report["products"]})
    if report and args.policy_out:
        fallback = [r["node"] for r in report["products"] if r.get("fallback")]
        write_json(args.policy_out, {"rules": [{"match": "^" + n + "$", "skip": True}
                                               for n in fallback]})
        print(f"fallback: {len(fallback)} products above {args.fallback_threshold:g} "
              f"relative L2 -> {args.policy_out}")
    if args.plot:
        plot(reports, args.plot, args.fallback_threshold, args.title)
        print(f"plot: {sum(len(r['products']) for r in reports)} products of "
              f"{len(reports)} report(s) -> {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
