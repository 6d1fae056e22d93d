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
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "polybench")
INCLUDE = os.path.join(CORPUS, "include")
COMPILERS = {"gcc": "gcc", "clang": "clang-19"}
FLAGS = ["-O3", "-march=native", "-Wall", "-Wextra", "-Werror", "-std=c99"]


def kernels():
    out = []
    for dirpath, _, files in os.walk(CORPUS):
        if os.path.abspath(dirpath) == INCLUDE:
            continue
        for f in files:
            if f.endswith(".c"):
                out.append(os.path.join(dirpath, f))
    return sorted(out, key=lambda p: os.path.basename(p))


def parse_dump(text):
    arrays = {}
    name = None
    values = []
    for line in text.splitlines():
        if line.startswith("begin "):
            _, name, count = line.split()
            values = []
            expected = int(count)
        elif line.startswith("end "):
            if len(values) != expected:
                raise ValueError(f"{name}: {len(values)} values, header says {expected}")
            arrays[name] = values
            name = None
        elif name is not None:
            values.append(float(line))
    return arrays


def close(a, b, rtol=1e-6, atol=1e-9):
    return abs(a - b) <= atol + rtol * max(abs(a), abs(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="mini", choices=["mini", "small", "medium", "large"])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("names", nargs="*")
    args = ap.parse_args()
    failed = 0
    tmp = tempfile.mkdtemp(prefix="polytune-corpus-")
    for src in kernels():
        name = os.path.basename(src)[:-2]
        if args.names and name not in args.names:
            continue
        dumps = {}
        times = {}
        problems = []
        for cname, cc in COMPILERS.items():
            exe = os.path.join(tmp, f"{name}.{cname}")
            cmd = [cc, *FLAGS, f"-D{args.size.upper()}_DATASET", "-I", INCLUDE, src, "-o", exe, "-lm"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                problems.append(f"{cname} compile failed:\n{r.stderr}")
                continue
            r = subprocess.run([exe, "--dump"], capture_output=True, text=True)
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
                bad = [v for v in vals if not math.isfinite(v)]
                if bad:
                    problems.append(f"{cname}: {arr} has {len(bad)} non-finite values")
            ts = []
            for _ in range(args.reps):
                r = subprocess.run([exe], capture_output=True, text=True)
                line = [l for l in r.stderr.splitlines() if l.startswith("polytune-time:")]
                if not line:
                    problems.append(f"{cname}: no polytune-time line")
                    break
                ts.append(float(line[0].split()[1]))
            if ts:
                times[cname] = statistics.median(ts)
        if len(dumps) == 2:
            g, c = dumps["gcc"], dumps["clang"]
            if sorted(g) != sorted(c):
                problems.append("gcc and clang dump different arrays")
            else:
                for arr in g:
                    if len(g[arr]) != len(c[arr]):
                        problems.append(f"{arr}: lengths differ")
                        continue
                    diff = [k for k, (x, y) in enumerate(zip(g[arr], c[arr])) if not close(x, y)]
                    if diff:
                        k = diff[0]
                        problems.append(f"{arr}: {len(diff)} values differ, first at {k}: {g[arr][k]!r} vs {c[arr][k]!r}")
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
