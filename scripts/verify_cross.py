#!/usr/bin/env python3
"""Verifies generated programs on another architecture under user-mode
emulation: each kernel's original and its variants are built with a cross
compiler (OpenMP on) and run under qemu on two threads with `--dump`, and
each variant's dump is compared with the original's (exact for integers,
relative 1e-6 for floating point, polytune's default tolerance).
Correctness only: emulated times mean nothing.

    apt-get install gcc-aarch64-linux-gnu qemu-user     # once
    scripts/verify_cross.py [--size small] [--config T ...] [KERNEL ...]

The default configurations are those whose code depends on the target:
the packed micro-kernels of AVX-512 (8x24, 6x32) and AVX2 (4x12), which
fall to their two-lane branch there, diamond tiles, array sections
reduced in parallel (red=2), and temporary arrays copied per iteration on
the threads' stacks (priv=2).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import ROOT, compare, compile_c, kernels, parse_dump  # noqa: E402

CONFIGS = [
    "fuse=no,tile=64x256x192,omp=1,prevec=1,simd=1,rb=8x24,pack=1",
    "fuse=no,tile=48x128x64,omp=1,rb=6x32,pack=1",
    "fuse=no,tile=32x32x32,omp=1,rb=4x12,pack=1",
    "fuse=max,tile=32x32x256,omp=1,tt=diamond",
    "fuse=max,omp=1,red=2",
    "fuse=smart,omp=1,simd=1,priv=2",
]
TARGETS = {
    "aarch64": ("aarch64-linux-gnu-gcc", ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="aarch64", choices=sorted(TARGETS))
    ap.add_argument("--size", default="small", choices=["mini", "small", "medium"])
    ap.add_argument("--config", action="append", help="a configuration (repeatable)")
    ap.add_argument("--polytune", default=os.path.join(ROOT, "target", "release", "polytune"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    cc, emulator = TARGETS[a.target]
    for tool in (cc, emulator[0]):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: apt-get install gcc-aarch64-linux-gnu qemu-user")
    configs = a.config or CONFIGS
    env = dict(os.environ, OMP_NUM_THREADS="2", POLYTUNE_NO_LEARN="1")
    flags = ["-O2", "-std=c99", "-fopenmp"]
    ok = failed = 0
    with tempfile.TemporaryDirectory(prefix="polytune-cross-") as tmp:
        for src in kernels(a.names):
            name = os.path.basename(src)[:-2]

            def build_and_run(path, exe):
                b = compile_c(cc, path, exe, a.size, flags)
                if b.returncode != 0:
                    return None, "compile error: " + b.stderr.strip()[:300]
                r = subprocess.run([*emulator, exe, "--dump"], capture_output=True,
                                   text=True, env=env, timeout=600)
                if r.returncode != 0:
                    return None, f"exit {r.returncode}: {r.stderr.strip()[:300]}"
                return parse_dump(r.stdout), None

            reference, why = build_and_run(src, os.path.join(tmp, name))
            if reference is None:
                print(f"FAIL {name}: the original: {why}")
                failed += 1
                continue
            for k, config in enumerate(configs):
                out = os.path.join(tmp, f"{name}.{k}.c")
                g = subprocess.run([a.polytune, "-q", "optimize", src, "--config", config,
                                    "-o", out], capture_output=True, text=True, env=env)
                if g.returncode != 0:
                    print(f"FAIL {name} {config}: polytune: {g.stderr.strip()[:300]}")
                    failed += 1
                    continue
                dump, why = build_and_run(out, os.path.join(tmp, f"{name}.{k}"))
                why = why or compare(reference, dump)
                if why:
                    print(f"FAIL {name} {config}: {why}", flush=True)
                    failed += 1
                else:
                    ok += 1
            print(f"ok   {name}", flush=True)
    print(f"{a.target}, {a.size}: {ok} variants verified, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
