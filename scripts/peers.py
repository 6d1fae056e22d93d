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
                     [--shots 6] [--strategy multi-model|diverse|...] [--compiler gcc|clang]
                     [--sample N]
                     [--db models/dataset.sqlite | --shipped]
                     [--json FILE] [--markdown] [KERNEL ...]
"""
import argparse
import json
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
    ap.add_argument("--strategy", default="multi-model")
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
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    cmd = [a.polytune, "compare", *kernels(a.names), "--size", a.size, "--rounds", str(a.reps),
           "--threads", str(a.threads), "--shots", str(a.shots), "--strategy", a.strategy,
           "--compiler", a.compiler, "--json"]
    if a.sample is not None:
        cmd += ["--sample", str(a.sample)]
    if not a.shipped:
        cmd += ["--db", a.db]
    # Progress goes to standard error as it comes; the report to stdout.
    r = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    if r.returncode:
        sys.exit(r.returncode)
    report = json.loads(r.stdout)
    if a.json:
        with open(a.json, "w") as f:
            f.write(r.stdout)
    names = [c["name"] for c in report["contenders"]]
    means = [m["speedup"] for m in report["geomean"]]
    show = lambda x: "n/a" if x is None else f"{x:.2f}"  # noqa: E731
    if a.markdown:
        print("| kernel | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(names))
        for k in report["kernels"]:
            cells = []
            for e in k["entries"]:
                v = e["verdict"]
                cells.append(show(e["speedup"]) if v == "ok" else
                             "**wrong**" if v == "wrong-output" else
                             "n/a" if v == "not-available" else "fail")
            print(f"| {k['kernel']} | " + " | ".join(cells) + " |")
        print("| **geomean** | " + " | ".join(show(m) for m in means) + " |")
    else:
        print(f"{'contender':16} {'geomean speedup':>16}")
        for n, m in zip(names, means):
            print(f"{n:16} {show(m):>16}")
    for k in report["kernels"]:
        for e in k["entries"]:
            if e["verdict"] not in ("ok", "not-available"):
                print(f"    {k['kernel']}: {e['contender']}: {e['verdict']}: {e['detail']}",
                      file=sys.stderr)


if __name__ == "__main__":
    main()
