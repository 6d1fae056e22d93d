#!/usr/bin/env python3
"""Measures the timing noise of this machine: the spread of repeated runs
of a few original corpus kernels (gcc -O3 -march=native, one thread).

    scripts/noise.py [--size medium] [--reps 15] [KERNEL ...]

For each kernel: median, min, max, (max - min) / median and the
interquartile range relative to the median.
"""
import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import compile_c, kernels, run  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="medium", choices=["mini", "small", "medium", "large"])
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("names", nargs="*", default=["gemm", "jacobi-2d-imper", "atax", "lu"])
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="polytune-noise-")
    print(f"{'kernel':18} {'median s':>10} {'min s':>10} {'max s':>10} {'range %':>8} {'IQR %':>7}")
    for src in kernels(args.names):
        name = os.path.basename(src)[:-2]
        exe = os.path.join(tmp, name)
        r = compile_c("gcc", src, exe, args.size, ["-O3", "-march=native"])
        if r.returncode != 0:
            print(f"{name}: compile failed: {r.stderr}")
            continue
        run(exe, threads=1, timeout=600)  # warm-up
        ts = []
        for _ in range(args.reps):
            out = run(exe, threads=1, timeout=600)
            line = [x for x in out.stderr.splitlines() if x.startswith("polytune-time:")]
            ts.append(float(line[0].split()[1]))
        med = statistics.median(ts)
        q = statistics.quantiles(ts, n=4)
        print(
            f"{name:18} {med:10.4f} {min(ts):10.4f} {max(ts):10.4f} "
            f"{100 * (max(ts) - min(ts)) / med:8.1f} {100 * (q[2] - q[0]) / med:7.1f}"
        )


if __name__ == "__main__":
    main()
