#!/usr/bin/env python3
"""Verifies chosen configurations over the corpus, built for each branch
of the code that depends on the target: each kernel's original and its
variants are built (OpenMP on) and run with `--dump` on --threads threads,
and each variant's dump is compared with the original's (exact for
integers, relative 1e-6 for floating point, polytune's default
tolerance). Correctness only.

`--target aarch64`: a cross compiler, the programs run under qemu's
user-mode emulation (emulated times mean nothing).

    apt-get install gcc-aarch64-linux-gnu qemu-user     # once
    scripts/verify_cross.py [--size small] [--config T ...] [KERNEL ...]

`--target native`: this machine's gcc and clang, `-O3 -march=native`, and
again with `-mno-avx512f` and with `-mno-avx` (the micro-kernels' AVX2
and two-lane branches, where the machine has AVX-512):

    scripts/verify_cross.py --target native --threads 4 [--config T ...]

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
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpuslib import COMPILERS, ROOT, compare, compile_c, kernels, parse_dump  # noqa: E402

CONFIGS = [
    "fuse=no,tile=64x256x192,omp=1,prevec=1,simd=1,rb=8x24,pack=1",
    "fuse=no,tile=48x128x64,omp=1,rb=6x32,pack=1",
    "fuse=no,tile=32x32x32,omp=1,rb=4x12,pack=1",
    "fuse=max,tile=32x32x256,omp=1,tt=diamond",
    "fuse=max,omp=1,red=2",
    "fuse=smart,omp=1,simd=1,priv=2",
]
# target: (compilers, emulator, flags, the branches' extra flags)
TARGETS = {
    "aarch64": (["aarch64-linux-gnu-gcc"], ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
                ["-O2", "-std=c99", "-fopenmp"], [[]]),
    "native": (list(COMPILERS.values()), [], ["-O3", "-march=native", "-std=c99", "-fopenmp"],
               [[], ["-mno-avx512f"], ["-mno-avx"]]),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", default="aarch64", choices=sorted(TARGETS))
    ap.add_argument("--size", default="small", choices=["mini", "small", "medium"])
    ap.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS of every run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="kernels verified at once (default: the cores)")
    ap.add_argument("--config", action="append", help="a configuration (repeatable)")
    ap.add_argument("--polytune", default=os.path.join(ROOT, "target", "release", "polytune"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    compilers, emulator, flags, branches = TARGETS[a.target]
    for tool in [*compilers, *emulator[:1]]:
        if shutil.which(tool) is None:
            sys.exit(f"{tool} not found: apt-get install gcc-aarch64-linux-gnu qemu-user"
                     if a.target == "aarch64" else f"{tool} not found: scripts/setup.sh")
    configs = a.config or CONFIGS
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), POLYTUNE_NO_LEARN="1")

    def verify_kernel(src, tmp):
        """(verified, failed, lines) of one kernel's configurations."""
        name = os.path.basename(src)[:-2]
        ok = failed = 0
        lines = []

        def build_and_run(path, exe, cc, extra):
            b = compile_c(cc, path, exe, a.size, flags, extra)
            if b.returncode != 0:
                return None, "compile error: " + b.stderr.strip()[:300]
            r = subprocess.run([*emulator, exe, "--dump"], capture_output=True,
                               text=True, env=env, timeout=600)
            if r.returncode != 0:
                return None, f"exit {r.returncode}: {r.stderr.strip()[:300]}"
            return parse_dump(r.stdout), None

        # The reference: the original built by the first compiler for the
        # first branch.
        reference, why = build_and_run(src, os.path.join(tmp, name), compilers[0], [])
        if reference is None:
            return 0, 1, [f"FAIL {name}: the original: {why}"]
        for k, config in enumerate(configs):
            out = os.path.join(tmp, f"{name}.{k}.c")
            g = subprocess.run([a.polytune, "-q", "optimize", src, "--config", config,
                                "-o", out], capture_output=True, text=True, env=env)
            if g.returncode != 0:
                lines.append(f"FAIL {name} {config}: polytune: {g.stderr.strip()[:300]}")
                failed += 1
                continue
            for cc in compilers:
                for b, extra in enumerate(branches):
                    exe = os.path.join(tmp, f"{name}.{k}.{os.path.basename(cc)}.{b}")
                    dump, why = build_and_run(out, exe, cc, extra)
                    why = why or compare(reference, dump)
                    if why:
                        lines.append(f"FAIL {name} {config} ({cc} {' '.join(extra)}): {why}")
                        failed += 1
                    else:
                        ok += 1
        lines.append(f"ok   {name}" if not failed else f"--   {name}: {failed} failed")
        return ok, failed, lines

    ok = failed = 0
    with tempfile.TemporaryDirectory(prefix="polytune-cross-") as tmp:
        with ThreadPoolExecutor(max_workers=a.jobs) as pool:
            for o, f, lines in pool.map(lambda src: verify_kernel(src, tmp), kernels(a.names)):
                ok += o
                failed += f
                for line in lines:
                    print(line, flush=True)
    print(f"{a.target}, {a.size}, {a.threads} threads: {ok} builds verified, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
