#!/usr/bin/env python3
"""polytune side by side with the other polyhedral optimizers available
here, on the same kernels, machine and run (issue 6):

  gcc -O3        the original with gcc -O3 -march=native (the baseline)
  graphite       gcc -O3 -march=native -floop-nest-optimize
  graphite-par   ... plus -floop-parallelize-all -ftree-parallelize-loops=2
  polly          clang-19 -O3 -march=native -mllvm -polly
  polly-par      ... plus -mllvm -polly-parallel -fopenmp
  polytune       `polytune optimize` (multi-model, or --strategy), then built with
                 gcc -O3 -march=native -fopenmp (`--compiler clang`: models,
                 measurements and build with clang-19 instead; the column is
                 then `polytune-clang`, next to `clang -O3`, the original built
                 with clang-19, which is what it must not be slower than).
                 By default each kernel is
                 optimized by models trained on the dataset without that
                 kernel (`train --exclude`), as if it were a new program:
                 the shipped models have seen every corpus kernel, which
                 would flatter polytune. `--shipped` uses them instead.

Every build's output (`--dump`) is compared with the baseline's; a wrong
answer is reported and counts as no speedup. Timing interleaves the
contenders round-robin (REPS rounds, one run of each per round), so load
on this shared machine hits them alike; speedups are baseline median over
contender median, with the geometric mean over kernels.

    scripts/peers.py [--size medium] [--reps 5] [--threads 2] [--polytune BIN]
                     [--shots 6] [--strategy multi-model|diverse|...] [--compiler gcc|clang]
                     [--db models/dataset.sqlite | --shipped]
                     [--markdown] [KERNEL ...]
"""
import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import ROOT, compare, compile_c, kernels, parse_dump, run  # noqa: E402

BASE = ["-O3", "-march=native", "-std=gnu99"]
PEERS = [
    ("gcc -O3", "gcc", BASE),
    ("graphite", "gcc", BASE + ["-floop-nest-optimize"]),
    ("graphite-par", "gcc", BASE + ["-floop-nest-optimize", "-floop-parallelize-all",
                                    "-ftree-parallelize-loops=2"]),
    ("polly", "clang-19", BASE + ["-mllvm", "-polly"]),
    ("polly-par", "clang-19", BASE + ["-mllvm", "-polly", "-mllvm", "-polly-parallel",
                                      "-fopenmp"]),
]


def kernel_seconds(stderr):
    for line in stderr.splitlines():
        if line.startswith("polytune-time:"):
            return float(line.split(":")[1])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="medium", choices=["mini", "small", "medium", "large"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--polytune", default=os.path.join(ROOT, "target", "release", "polytune"))
    ap.add_argument("--shots", type=int, default=6)
    ap.add_argument("--strategy", default="multi-model",
                    help="optimize's --strategy (multi-model, diverse, model:NAME, random)")
    ap.add_argument("--compiler", default="gcc", choices=["gcc", "clang"],
                    help="the compiler polytune's models, runs and build use")
    ap.add_argument("--db", default=os.path.join(ROOT, "models", "dataset.sqlite"),
                    help="dataset the leave-one-out models are trained on")
    ap.add_argument("--shipped", action="store_true",
                    help="use the shipped models (trained on every kernel)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="polytune-peers-")
    mine = "polytune" if a.compiler == "gcc" else "polytune-" + a.compiler
    my_cc = "gcc" if a.compiler == "gcc" else "clang-19"
    peers = PEERS + ([("clang -O3", "clang-19", BASE)] if a.compiler == "clang" else [])
    names = [n for n, _, _ in peers] + [mine]
    rows = []
    for src in kernels(a.names):
        name = os.path.basename(src)[:-2]
        exes = {}
        problems = {}
        for label, cc, flags in peers:
            exe = os.path.join(tmp, f"{name}-{label.replace(' ', '')}")
            r = compile_c(cc, src, exe, a.size, flags)
            if r.returncode:
                problems[label] = "compile error: " + r.stderr.strip().splitlines()[-1][:80]
            else:
                exes[label] = exe
        opt = os.path.join(tmp, f"{name}-polytune.c")
        model_args = []
        r = None
        if not a.shipped:
            mdir = os.path.join(tmp, f"models-without-{name}")
            r = subprocess.run([a.polytune, "train", "--db", a.db, "--compiler", a.compiler,
                                "--size", a.size, "--measured-threads", str(a.threads),
                                "--exclude", name, "-o", mdir],
                               capture_output=True, text=True)
            model_args = ["--model", mdir]
        if r is None or r.returncode == 0:
            r = subprocess.run([a.polytune, "optimize", src, "--size", a.size, "--threads",
                                str(a.threads), "--shots", str(a.shots), "--strategy", a.strategy,
                                "--compiler", a.compiler, "-o", opt]
                               + model_args, capture_output=True, text=True)
        chosen = ""
        if r.returncode:
            problems[mine] = "optimize failed: " + r.stderr.strip().splitlines()[-1][:80]
        else:
            with open(opt) as f:
                chosen = f.readline().strip()
            exe = opt[:-2]
            c = compile_c(my_cc, opt, exe, a.size, BASE + ["-fopenmp"],
                          extra=["-I", os.path.dirname(src)])
            if c.returncode:
                problems[mine] = "compile error"
            else:
                exes[mine] = exe
        # Verify every build against the baseline's output.
        ref = None
        for label in names:
            if label not in exes:
                continue
            out = run(exes[label], ["--dump"], threads=a.threads, timeout=600)
            dump = parse_dump(out.stdout) if out.returncode == 0 else None
            if label == "gcc -O3":
                ref = dump
            if dump is None:
                problems[label] = f"crashed (exit {out.returncode})"
            elif ref is not None and compare(ref, dump):
                problems[label] = "WRONG OUTPUT: " + compare(ref, dump)
            if label in problems:
                del exes[label]
        times = {label: [] for label in exes}
        for _ in range(a.reps):
            for label in list(times):
                out = run(exes[label], threads=a.threads, timeout=600)
                s = kernel_seconds(out.stderr)
                if out.returncode or s is None:
                    problems[label] = "failed while timing"
                    del times[label]
                else:
                    times[label].append(s)
        med = {k: statistics.median(v) for k, v in times.items()}
        base = med.get("gcc -O3")
        speed = {k: (base / v if base and v > 0 else float("nan")) for k, v in med.items()}
        rows.append((name, base, speed, problems, chosen))
        line = f"{name:18} base {base if base else float('nan'):8.4f} s  " + "  ".join(
            f"{k} {speed.get(k, float('nan')):5.2f}" for k in names)
        print(line, file=sys.stderr)
        for k, p in problems.items():
            print(f"    {k}: {p}", file=sys.stderr)
    # Summary: geometric means (a failed or wrong contender counts as 1.0,
    # the baseline it would fall back to).
    def geo(k):
        v = [r[2].get(k, 1.0) for r in rows if r[1]]
        v = [x if x == x and x > 0 else 1.0 for x in v]
        return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")

    if a.markdown:
        print("| kernel | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(names))
        for name, base, speed, problems, _ in rows:
            cells = []
            for k in names:
                if k in problems:
                    cells.append("fail" if "WRONG" not in problems[k] else "**wrong**")
                else:
                    cells.append(f"{speed.get(k, float('nan')):.2f}")
            print(f"| {name} | " + " | ".join(cells) + " |")
        print("| **geomean** | " + " | ".join(f"{geo(k):.2f}" for k in names) + " |")
    else:
        print(f"{'contender':14} {'geomean speedup':>16}")
        for k in names:
            print(f"{k:14} {geo(k):16.2f}")


if __name__ == "__main__":
    main()
