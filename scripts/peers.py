#!/usr/bin/env python3
"""polytune side by side with the other polyhedral optimizers, over the
corpus: a thin wrapper over `polytune compare` (which builds, verifies
and times gcc -O3, Graphite, Polly and polytune's learned choice; see its
--help) that picks the kernels, runs one comparison and prints its JSON
report as the README's Markdown table (--markdown) or a summary.

By default polytune's models are trained per kernel on the dataset
without that kernel (`compare --db`), as if it were a new program: the
shipped models have seen every corpus kernel, which would flatter
polytune. `--shipped` uses them instead.

    scripts/peers.py [--size medium] [--reps 5] [--threads 2] [--polytune BIN]
                     [--shots 6] [--strategy bo|multi-model|diverse|...] [--compiler gcc|clang]
                     [--sample N]
                     [--db models/dataset.sqlite | --shipped]
                     [--each DIR] [--openblas]
                     [--json FILE] [--markdown] [KERNEL ...]

--each DIR runs one comparison per kernel and keeps each report in DIR
(KERNEL.json); a kernel whose report is there is not run again, so an
interrupted sweep resumes where it stopped. The reports are then merged
into one (the geometric means over all of DIR's kernels asked for).

--openblas: after gemm's comparison, scripts/bench_gemm.py times
polytune's chosen program beside OpenBLAS's cblas_dgemm with its native
kernel (and the original and Polly-parallel), interleaved, and its table
is printed and kept in the report (`openblas`).
"""
import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import ROOT, kernels  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="medium", choices=["mini", "small", "medium", "large"])
    ap.add_argument("--reps", type=int, default=5, help="alternating timing rounds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--polytune", default=os.path.join(ROOT, "target", "release", "polytune"))
    ap.add_argument("--shots", type=int, default=6)
    ap.add_argument("--strategy", default=None,
                    help="polytune's search strategy (default: compare's, as optimize's: bo; "
                         "the tables before 2026-11-29's fourth run used multi-model)")
    ap.add_argument("--compiler", default="gcc", choices=["gcc", "clang"])
    ap.add_argument("--sample", type=int, default=None,
                    help="polytune also ranks N draws beyond the paper's space "
                         "(needs a dataset of the extended space; default: compare's, "
                         "30 with such a dataset, else 0)")
    ap.add_argument("--db", default=os.path.join(ROOT, "models", "dataset.sqlite"),
                    help="dataset the leave-one-out models are trained on")
    ap.add_argument("--shipped", action="store_true",
                    help="use the shipped models (trained on every kernel)")
    ap.add_argument("--json", help="also write compare's report to this file")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--each", metavar="DIR",
                    help="one comparison per kernel, each report kept in DIR (resumable)")
    ap.add_argument("--openblas", action="store_true",
                    help="also time gemm's chosen program beside OpenBLAS (bench_gemm.py)")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    files = kernels(a.names)
    if a.each:
        os.makedirs(a.each, exist_ok=True)
        reports = []
        for path in files:
            name = os.path.basename(path)[:-2]
            out = os.path.join(a.each, f"{name}.json")
            if not os.path.exists(out):
                report = compare(a, [path])
                with open(out + ".part", "w") as f:
                    json.dump(report, f, indent=1)
                os.replace(out + ".part", out)
            with open(out) as f:
                reports.append(json.load(f))
        report = merge(reports)
    else:
        report = compare(a, files)
    if a.openblas and any(k["kernel"] == "gemm" for k in report["kernels"]):
        report["openblas"] = openblas(a, report)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    names = [c["name"] for c in report["contenders"]]
    means = [m["speedup"] for m in report["geomean"]]
    show = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
    if a.markdown:
        print("| kernel | gcc -O3 (s) | " + " | ".join(names) + " | polytune's choice |")
        print("|---|---:|" + "---:|" * len(names) + "---|")
        for k in report["kernels"]:
            cells = []
            for e in k["entries"]:
                v = e["verdict"]
                cells.append(show(e["speedup"]) if v == "ok" else
                             "**wrong**" if v == "wrong-output" else
                             "n/a" if v == "not-available" else "fail")
            config = (k.get("choice") or {}).get("config")
            choice = f"`{config}`" if config else "original kept"
            base = k.get("baseline_seconds")
            base = f"{base:.3g}" if base else ""
            print(f"| {k['kernel']} | {base} | " + " | ".join(cells) + f" | {choice} |")
        print("| **geomean** | | " + " | ".join(show(m) for m in means) + " | |")
    else:
        print(f"{'contender':16} {'geomean speedup':>16}")
        for n, m in zip(names, means):
            print(f"{n:16} {show(m):>16}")
    for k in report["kernels"]:
        for e in k["entries"]:
            if e["verdict"] not in ("ok", "not-available"):
                print(f"    {k['kernel']}: {e['contender']}: {e['verdict']}: {e['detail']}",
                      file=sys.stderr)
    if "openblas" in report:
        print()
        print(report["openblas"])


def compare(a, files):
    """One `polytune compare` over `files`: its JSON report."""
    cmd = [a.polytune, "compare", *files, "--size", a.size, "--rounds", str(a.reps),
           "--threads", str(a.threads), "--shots", str(a.shots),
           "--compiler", a.compiler, "--json"]
    if a.strategy is not None:
        cmd += ["--strategy", a.strategy]
    if a.sample is not None:
        cmd += ["--sample", str(a.sample)]
    if not a.shipped:
        cmd += ["--db", a.db]
    # Progress goes to standard error as it comes; the report to stdout.
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode:
        sys.exit(r.returncode)
    return json.loads(r.stdout)


def merge(reports):
    """One report of several comparisons' kernels, with the geometric
    means recomputed over all of them as compare computes them (a failed
    or wrong contender counts as 1.0)."""
    if not reports:
        sys.exit("no kernel to compare")
    out = {k: v for k, v in reports[0].items() if k not in ("kernels", "geomean")}
    names = [c["name"] for c in out["contenders"]]
    for r in reports[1:]:
        if [c["name"] for c in r["contenders"]] != names or r["size"] != out["size"]:
            sys.exit("the reports compare different contenders or sizes")
    out["kernels"] = [k for r in reports for k in r["kernels"]]
    geomean = []
    for i, n in enumerate(names):
        entries = [k["entries"][i] for k in out["kernels"]]
        if all(e["verdict"] == "not-available" for e in entries):
            geomean.append({"contender": n, "speedup": None})
            continue
        logs = [math.log(e["speedup"]) if e["verdict"] == "ok" and e["speedup"] else 0.0
                for e in entries]
        geomean.append({"contender": n, "speedup": math.exp(sum(logs) / len(logs))})
    out["geomean"] = geomean
    return out


def openblas(a, report):
    """bench_gemm.py's table: gemm's chosen program beside OpenBLAS."""
    gemm = next(k for k in report["kernels"] if k["kernel"] == "gemm")
    config = (gemm.get("choice") or {}).get("config")
    if not config:
        return "gemm: polytune kept the original; OpenBLAS not timed"
    cc = {"gcc": "gcc", "clang": "clang-19"}[a.compiler]
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "bench_gemm.py"), "--sizes", a.size,
           "--rounds", str(a.reps), "--threads", str(a.threads), "--cc", cc,
           "--polytune", a.polytune, "--variant", f"polytune={config}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        return f"gemm beside OpenBLAS failed: {r.stderr.strip()}"
    return r.stdout.strip()


if __name__ == "__main__":
    main()
