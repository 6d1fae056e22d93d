#!/usr/bin/env python3
"""The cost of polytune's run-time alias check (issue 40).

A small kernel called many times (tests/fixtures/alias/hot.c: y += a*x
over n elements, x and y pointer parameters) is transformed twice with
the same configuration: with `--detect` alone, which versions it on a
check that x and y do not overlap, and with `--assume-no-alias`, which
drops the check. Both are built with gcc -O3 -march=native and run in
alternation (whole runs, wall time); the figure is the ratio of the
medians per kernel size, the same total work at every size.

Usage: scripts/alias_overhead.py [--polytune target/release/polytune]
       [--rounds 11] [--work 400000000]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = "fuse=smart,tile=1x1x1,wave=0,omp=0,prevec=0,simd=1,uj=1"


def build(polytune, src, out, flags, exe):
    subprocess.run([polytune, "optimize", src, "--detect", *flags, "--config",
                    CONFIG, "-o", out], check=True, capture_output=True)
    subprocess.run(["gcc", "-O3", "-march=native", "-w", out, "-o", exe],
                   check=True)


def timed(exe, n, calls):
    start = time.perf_counter()
    out = subprocess.run([exe, str(n), str(calls)], check=True,
                         capture_output=True, text=True).stdout
    return time.perf_counter() - start, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--polytune", default=os.path.join(ROOT, "target/release/polytune"))
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--work", type=int, default=400_000_000,
                    help="elements updated per run, over all calls")
    a = ap.parse_args()
    src = os.path.join(ROOT, "tests/fixtures/alias/hot.c")
    with tempfile.TemporaryDirectory() as d:
        checked, vouched = os.path.join(d, "checked"), os.path.join(d, "vouched")
        build(a.polytune, src, os.path.join(d, "c.c"), [], checked)
        build(a.polytune, src, os.path.join(d, "v.c"), ["--assume-no-alias"], vouched)
        with open(os.path.join(d, "c.c")) as f:
            if "__UINTPTR_TYPE__" not in f.read():
                sys.exit("the checked variant has no alias check")
        print(f"# {CONFIG}, gcc -O3 -march=native, {a.rounds} alternating rounds")
        print("| n (elements per call) | calls | checked s | no check s | checked / no check | difference per call |")
        print("|---:|---:|---:|---:|---:|---:|")
        for n in (16, 64, 256, 1024, 4096):
            calls = a.work // n
            tc, tv = [], []
            for _ in range(a.rounds):
                t, oc = timed(checked, n, calls)
                tc.append(t)
                t, ov = timed(vouched, n, calls)
                tv.append(t)
                if oc != ov:
                    sys.exit(f"outputs differ at n={n}: {oc!r} {ov!r}")
            mc, mv = statistics.median(tc), statistics.median(tv)
            per_call = (mc - mv) / calls * 1e9
            print(f"| {n} | {calls} | {mc:.4f} | {mv:.4f} | {mc / mv:.4f} | {per_call:+.2f} ns |")


if __name__ == "__main__":
    main()
