#!/usr/bin/env python3
"""Builds every corpus kernel with gcc and clang, runs it, and checks it.

For each kernel and compiler: compile with warnings as errors, run with
--dump, check that every dumped value is finite, and compare the gcc and
clang dumps within a relative tolerance. Prints the kernel time reported by
each build (median of --reps runs), so MEDIUM sizes can be calibrated.

    scripts/check_corpus.py [--size mini|small|medium|large] [--reps N] [KERNEL ...]
"""
import argparse
import math
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import COMPILERS, compare, compile_c, kernels, parse_dump, run  # noqa: E402

FLAGS = ["-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-std=c99"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="mini", choices=["mini", "small", "medium", "large"])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    failed = 0
    tmp = tempfile.mkdtemp(prefix="polytune-corpus-")
    for src in kernels(args.names):
        name = os.path.basename(src)[:-2]
        dumps = {}
        times = {}
        problems = []
        for cname, cc in COMPILERS.items():
            exe = os.path.join(tmp, f"{name}.{cname}")
            r = compile_c(cc, src, exe, args.size, FLAGS)
            if r.returncode != 0:
                problems.append(f"{cname} compile failed:\n{r.stderr}")
                continue
            r = run(exe, ["--dump"], threads=1, timeout=600)
            if r.returncode != 0:
                problems.append(f"{cname} run failed ({r.returncode}): {r.stderr}")
                continue
            try:
                dumps[cname] = parse_dump(r.stdout)
            except ValueError as e:
                problems.append(f"{cname} bad dump: {e}")
                continue
            if not dumps[cname]:
                problems.append(f"{cname}: empty dump")
            for arr, vals in dumps[cname].items():
                bad = [v for v in vals if not math.isfinite(float(v))]
                if bad:
                    problems.append(f"{cname}: {arr} has {len(bad)} non-finite values")
            ts = []
            for _ in range(args.reps):
                r = run(exe, threads=1, timeout=600)
                line = [x for x in r.stderr.splitlines() if x.startswith("polytune-time:")]
                if not line:
                    problems.append(f"{cname}: no polytune-time line")
                    break
                ts.append(float(line[0].split()[1]))
            if ts:
                times[cname] = statistics.median(ts)
        if len(dumps) == 2:
            d = compare(dumps["gcc"], dumps["clang"])
            if d:
                problems.append(f"gcc and clang disagree: {d}")
        status = "ok" if not problems else "FAIL"
        tstr = " ".join(f"{k}={v:.4f}s" for k, v in times.items())
        nvals = sum(len(v) for v in dumps.get("gcc", {}).values())
        print(f"{status:4} {name:18} values={nvals:<9} {tstr}")
        for p in problems:
            print("     " + p.replace("\n", "\n     "))
        failed += bool(problems)
    print(f"{failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
