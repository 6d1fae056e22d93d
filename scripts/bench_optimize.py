#!/usr/bin/env python3
"""How long the learned `optimize` takes against the program's own run
time (issue 36): the README's table.

    scripts/bench_optimize.py [--runs syrk:MINI,syrk:LARGE,...] [--json OUT]
                              [--time-budget S]

Each run is a PolyBench/C-4-style program of tests/fixtures/real/polybench4
at a dataset size, built as a user builds it (its compile line with the
utilities' source and -D<SIZE>_DATASET). For each it times one whole native
run of the original (gcc -O3 -march=native, the process from start to
exit), then the whole `polytune optimize FILE -o OUT --json -q -- LINE`
(default strategy and budget; --time-budget when given), and prints a
markdown table: the native run, optimize's wall time and its phases
(characterization, the original's runs, builds, candidates' runs,
head to head), what was chosen and its measured speedup. Run it on a quiet
machine.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpuslib  # noqa: E402
from bench_characterize import cpu_name  # noqa: E402

FIXTURES = os.path.join(corpuslib.ROOT, "tests/fixtures/real/polybench4")
KERNELS = {
    "2mm": "linear-algebra/kernels/2mm/2mm.c",
    "atax": "linear-algebra/kernels/atax/atax.c",
    "jacobi-2d": "stencils/jacobi-2d/jacobi-2d.c",
    "syrk": "linear-algebra/blas/syrk/syrk.c",
}
DEFAULT = "syrk:MINI,syrk:SMALL,syrk:MEDIUM,2mm:LARGE,syrk:LARGE"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", default=DEFAULT)
    ap.add_argument("--time-budget", type=float)
    ap.add_argument("--json", dest="json_out")
    a = ap.parse_args()
    binary = os.environ.get("POLYTUNE", os.path.join(corpuslib.ROOT, "target/release/polytune"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for item in a.runs.split(","):
            name, size = item.split(":")
            src = KERNELS[name]
            line = ["-Iutilities", "utilities/polybench.c", f"-D{size.upper()}_DATASET", "-lm"]
            exe = os.path.join(tmp, f"{name}-{size}")
            subprocess.run(["gcc", "-O3", "-march=native", "-w", src, *line, "-o", exe],
                           cwd=FIXTURES, check=True)
            t0 = time.monotonic()
            subprocess.run([exe], cwd=FIXTURES, capture_output=True, check=True)
            native = time.monotonic() - t0
            out_c = os.path.join(tmp, f"{name}-{size}.c")
            cmd = [binary, "optimize", src, "-o", out_c, "--json", "-q"]
            if a.time_budget:
                cmd += ["--time-budget", str(a.time_budget)]
            t0 = time.monotonic()
            out = subprocess.run(cmd + ["--", *line], cwd=FIXTURES, capture_output=True, text=True)
            wall = time.monotonic() - t0
            if out.returncode != 0:
                print(f"{item}: optimize failed: {out.stderr}", file=sys.stderr)
                continue
            v = json.loads(out.stdout)
            rows.append({"run": item, "native": native, "optimize": wall, "report": {
                k: v[k] for k in ("phases", "counted", "choice", "head_to_head", "search")}})
            print(f"{item}: native {native:.2f} s, optimize {wall:.1f} s", file=sys.stderr, flush=True)
            if a.json_out:
                with open(a.json_out, "w") as f:
                    json.dump(rows, f, indent=1)
    print(f"Learned `optimize` against the program's run time ({time.strftime('%Y-%m-%d')}, "
          f"{cpu_name()}, {os.cpu_count()} cores; default strategy and budget"
          + (f", --time-budget {a.time_budget:g}" if a.time_budget else "") + ")\n")
    print("| program | native run s | optimize s | characterize | original | builds | runs | "
          "head to head | chosen | speedup |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r in rows:
        p = r["report"]["phases"]
        c = r["report"]["choice"]
        print(f"| {r['run']} | {r['native']:.2f} | {r['optimize']:.0f} | {p['characterize']:.1f} | "
              f"{p['original']:.1f} | {p['builds']:.1f} | {p['runs']:.1f} | {p['confirm']:.1f} | "
              f"{c['config'] or 'original'} | {c['speedup'] or 1.0:.2f}x |")


if __name__ == "__main__":
    main()
