#!/usr/bin/env python3
"""GFLOP/s of the corpus gemm: gcc -O3, Polly (clang -O3 -mllvm -polly
-mllvm -polly-parallel), polytune variants (paper space, register-blocked,
packed), and OpenBLAS cblas_dgemm on the same matrices.

Each program is built once per size with `CC -O3 -march=native -fopenmp`
(Polly: the first of clang-19, clang-18, clang-17, clang that builds with
Polly, same flags plus Polly's),
then all are run ROUNDS times, interleaved (one run of each program per
round), on THREADS threads; the kernel's own timer (the corpus header's
`polytune-time:` line) is read, and the median of the rounds reported as
GFLOP/s = 2 * NI * NJ * NK / seconds. OpenBLAS is measured when its
development files are installed (Debian: `apt-get install
libopenblas-dev`); otherwise its row says so.

Usage: scripts/bench_gemm.py [--sizes medium,large] [--rounds 5]
           [--threads 2] [--cc gcc] [--variant NAME=CONFIG ...]
Without --variant: the original, the best paper variant of the shipped
dataset (fuse=no,tile=32x32x32,omp=1,prevec=1,simd=1,uj=8) and
register-blocked variants of it. Needs target/release/polytune (cargo build
--release).
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEMM = os.path.join(ROOT, "polybench", "linear-algebra", "gemm.c")
INCLUDE = os.path.join(ROOT, "polybench", "include")
SIZES = {  # NI, NJ, NK as in gemm.c
    "mini": (20, 25, 30),
    "small": (60, 70, 80),
    "medium": (1000, 1100, 1200),
    "large": (2000, 2300, 2600),
}
DEFAULT_VARIANTS = [
    ("paper-best", "fuse=no,tile=32x32x32,omp=1,prevec=1,simd=1,uj=8"),
    ("rb4x16", "fuse=no,tile=32x32x32,omp=1,prevec=1,rb=4x16"),
    ("rb8x16-pack", "fuse=no,tile=32x32x32,omp=1,prevec=1,rb=8x16,pack=1"),
    ("rb8x16-pack-t", "fuse=no,tile=64x64x128,omp=1,prevec=1,rb=8x16,pack=1"),
]

# cblas_dgemm on gemm.c's matrices (same initialization, same alpha and
# beta), timed like the corpus kernels.
OPENBLAS_C = r"""
#include "polytune_bench.h"
#include <cblas.h>
#if defined(MINI_DATASET)
#define NI 20
#define NJ 25
#define NK 30
#elif defined(SMALL_DATASET)
#define NI 60
#define NJ 70
#define NK 80
#elif defined(LARGE_DATASET)
#define NI 2000
#define NJ 2300
#define NK 2600
#else
#define NI 1000
#define NJ 1100
#define NK 1200
#endif
int main(void)
{
  int ni = NI, nj = NJ, nk = NK, i, j;
  double alpha = 1.5, beta = 1.2;
  double(*C)[NJ] = bench_alloc((size_t)NI * NJ, sizeof(double));
  double(*A)[NK] = bench_alloc((size_t)NI * NK, sizeof(double));
  double(*B)[NJ] = bench_alloc((size_t)NK * NJ, sizeof(double));
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      C[i][j] = (double)((i * j + 1) % ni) / ni;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (double)(i * (j + 1) % nk) / nk;
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (double)(i * (j + 2) % nj) / nj;
  bench_timer_start();
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, nj, nk, alpha,
              &A[0][0], nk, &B[0][0], nj, beta, &C[0][0], nj);
  bench_timer_stop();
  bench_timer_print();
  free(C);
  free(A);
  free(B);
  return 0;
}
"""


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    return r


def build(cc, src, exe, size, extra=()):
    run([cc, "-O3", "-march=native", "-fopenmp", "-I", INCLUDE,
         f"-D{size.upper()}_DATASET", src, "-o", exe, "-lm", *extra])


POLLY_FLAGS = ["-mllvm", "-polly", "-mllvm", "-polly-parallel"]


def polly_clang():
    """The first clang that builds a program with Polly's flags, or None."""
    for cc in ["clang-19", "clang-18", "clang-17", "clang"]:
        try:
            r = subprocess.run([cc, "-O3", "-fopenmp", *POLLY_FLAGS, "-x", "c", "-",
                                "-o", os.devnull], input="int main(void){return 0;}\n",
                               capture_output=True, text=True)
        except OSError:
            continue
        if r.returncode == 0:
            return cc
    return None


# Kernel sets of OpenBLAS's run-time detection that use no AVX: what a
# virtual machine reporting a generic CPU model gets.
SSE_ONLY_CORES = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem",
                  "Katmai", "Coppermine", "Northwood", "Banias", "Atom",
                  "Opteron", "Opteron(SSE3)", "Barcelona", "Nano", "Unknown"}

OPENBLAS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")

CORENAME_C = r"""
#include <stdio.h>
char *openblas_get_corename(void);
int main(void) { printf("%s\n", openblas_get_corename()); return 0; }
"""


def native_env():
    """The environment without the OpenBLAS overrides (this workplace sets
    OPENBLAS_CORETYPE=Haswell and OPENBLAS_L2_SIZE, which force the AVX2
    kernel on an AVX-512 machine): OpenBLAS's own detection decides."""
    return {k: v for k, v in os.environ.items() if k not in OPENBLAS_ENV}


def flags_core():
    """The kernel set the CPU's instruction sets call for."""
    try:
        flags = set()
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        return ""
    if "avx512_bf16" in flags:
        return "Cooperlake"
    if "avx512f" in flags:
        return "SkylakeX"
    if "avx2" in flags:
        return "Haswell"
    return ""


def openblas_core(cc, tmp, requested):
    """The kernel set OpenBLAS runs with: `requested` if given; else its
    own run-time detection (the environment's overrides removed), except
    where that detection falls to an SSE-only set although the CPU has
    AVX (a virtual machine that reports a generic model gets `Prescott`,
    4-5x slower: measured on a Zen 3 guest, 0.80 s against 0.16 s for
    LARGE); then the set the CPU's flags call for. Returns (name, how)."""
    if requested:
        return requested, "as asked"
    src = os.path.join(tmp, "corename.c")
    exe = os.path.join(tmp, "corename")
    with open(src, "w") as f:
        f.write(CORENAME_C)
    r = subprocess.run([cc, src, "-o", exe, "-lopenblas"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "", "not built"
    detected = run([exe], env=native_env()).stdout.strip()
    fallback = flags_core()
    if detected in SSE_ONLY_CORES and fallback:
        return fallback, f"CPU flags (detection gave {detected})"
    return detected, "OpenBLAS's detection"


def time_of(exe, threads, core=""):
    env = dict(native_env(), OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads))
    if core:
        env["OPENBLAS_CORETYPE"] = core
    r = run([exe], env=env)
    m = re.search(r"polytune-time: ([0-9.eE+-]+)", r.stderr)
    if not m:
        sys.exit(f"{exe} printed no time line")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="medium,large")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cc", default="gcc")
    ap.add_argument("--variant", action="append", default=[],
                    metavar="NAME=CONFIG")
    ap.add_argument("--openblas-core", default="",
                    help="OpenBLAS kernel set (OPENBLAS_CORETYPE); default: its own detection")
    ap.add_argument("--polytune",
                    default=os.path.join(ROOT, "target", "release", "polytune"))
    a = ap.parse_args()
    variants = [tuple(v.split("=", 1)) for v in a.variant] or DEFAULT_VARIANTS
    if not os.path.exists(a.polytune):
        sys.exit(f"{a.polytune} is missing: run `cargo build --release`")
    with tempfile.TemporaryDirectory(prefix="bench-gemm-") as tmp:
        sources = [("original", GEMM)]
        for name, config in variants:
            out = os.path.join(tmp, f"{name}.c")
            r = run([a.polytune, "optimize", GEMM, "--config", config, "-o", out])
            for line in r.stderr.splitlines():
                print(f"# {name}: {line}", file=sys.stderr)
            sources.append((name, out))
        core, how = openblas_core(a.cc, tmp, a.openblas_core)
        blas_src = os.path.join(tmp, "openblas.c")
        with open(blas_src, "w") as f:
            f.write(OPENBLAS_C)
        for size in a.sizes.split(","):
            ni, nj, nk = SIZES[size]
            flops = 2.0 * ni * nj * nk
            exes = []
            for name, src in sources:
                exe = os.path.join(tmp, f"{name}-{size}")
                build(a.cc, src, exe, size)
                exes.append((name, exe))
            clang = polly_clang()
            if clang:
                exe = os.path.join(tmp, f"polly-par-{size}")
                build(clang, GEMM, exe, size, POLLY_FLAGS)
                exes.append(("polly-par", exe))
            else:
                print("# polly-par: no clang with Polly (install clang-19)",
                      file=sys.stderr)
            exe = os.path.join(tmp, f"openblas-{size}")
            r = subprocess.run([a.cc, "-O3", "-march=native", "-fopenmp", "-I", INCLUDE,
                                f"-D{size.upper()}_DATASET", blas_src, "-o", exe, "-lm",
                                "-lopenblas"], capture_output=True, text=True)
            if r.returncode == 0:
                exes.append(("openblas", exe))
            else:
                print("# openblas: not built (install libopenblas-dev)",
                      file=sys.stderr)
            times = {name: [] for name, _ in exes}
            for _ in range(a.rounds):
                for name, exe in exes:
                    times[name].append(time_of(exe, a.threads,
                                               core if name == "openblas" else ""))
            base = statistics.median(times["original"])
            print(f"gemm {size.upper()} ({ni}x{nj}x{nk}), {a.cc} -O3 -march=native, "
                  f"{a.threads} threads, median of {a.rounds} interleaved runs, "
                  f"OpenBLAS kernels {core or '?'} ({how}), "
                  f"load {os.getloadavg()[0]:.2f}")
            blas = statistics.median(times["openblas"]) if "openblas" in times else None
            print(f"  {'program':<14} {'seconds':>9} {'GFLOP/s':>8} {'speedup':>8}  spread"
                  f"  {'of OpenBLAS':>11}")
            for name, _ in exes:
                t = statistics.median(times[name])
                spread = (max(times[name]) - min(times[name])) / t
                share = f"{blas / t:11.0%}" if blas else ""
                print(f"  {name:<14} {t:9.4f} {flops / t / 1e9:8.1f} {base / t:7.2f}x  "
                      f"{spread:5.1%}  {share}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
