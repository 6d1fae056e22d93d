#!/usr/bin/env python3
"""The head-to-head decision's two rates with the real runner on real
programs (issue 36): how often it calls a program faster than itself (A/A,
must be at most 1%), and how often it finds a variant about 1.5x faster
when a region takes about a millisecond (must be at least 95%).

    scripts/decision_rates.py [--trials 200] [--json OUT]

Both use `polytune measure FILE --head-to-head TRIALS --json` (every trial
a whole decision: the planned rounds, alternating runs, the test, the
further looks) on PolyBench/C-4-style programs of
tests/fixtures/real/polybench4 with their compile lines:

- A/A: each program's original against itself (one thread), at sizes
  whose region takes about 0.5 ms, 1.5 ms and (2mm at MEDIUM) more;
- 1.5x: 2mm sized so that its region takes about 1.5 ms (all extents
  90) against a variant measured about 1.5x faster there (one thread).

It prints each case's rate with the regions' median seconds and the
rounds the decisions took.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpuslib  # noqa: E402
from bench_characterize import cpu_name  # noqa: E402

FIXTURES = os.path.join(corpuslib.ROOT, "tests/fixtures/real/polybench4")
SYRK = "linear-algebra/blas/syrk/syrk.c"
TWO_MM = "linear-algebra/kernels/2mm/2mm.c"
# 2mm with all four extents 90: its region takes 1.2-1.8 ms.
MS_2MM = ["-DNI=90", "-DNJ=90", "-DNK=90", "-DNL=90"]
# A variant measured 1.65x faster there on one thread (`measure`, AMD
# EPYC guest, 2026-11-28; the script prints what the decisions measured).
FASTER = os.environ.get("FASTER_CONFIG", "tile=8x8x8,prevec=1")

# (label, file, defines, configuration, threads)
CASES = [
    ("A/A 2mm ~1.5 ms", TWO_MM, MS_2MM, None, 1),
    ("A/A syrk ~0.5 ms", SYRK, ["-DN=140", "-DM=120"], None, 1),
    ("A/A 2mm MEDIUM", TWO_MM, ["-DMEDIUM_DATASET"], None, 1),
    ("1.5x 2mm ~1.5 ms", TWO_MM, MS_2MM, FASTER, 1),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--cases", default="", help="only the cases whose label starts so (comma-separated)")
    a = ap.parse_args()
    only = [c for c in a.cases.split(",") if c]
    binary = os.environ.get("POLYTUNE", os.path.join(corpuslib.ROOT, "target/release/polytune"))
    rows = []
    for label, src, defines, config, threads in CASES:
        if only and not any(label.startswith(o) for o in only):
            continue
        cmd = [binary, "measure", src, "--head-to-head", str(a.trials), "--json", "-q",
               "--threads", str(threads)]
        if config:
            cmd += ["--config", config]
        cmd += ["--", "-Iutilities", "utilities/polybench.c", *defines, "-lm"]
        t0 = time.monotonic()
        out = subprocess.run(cmd, cwd=FIXTURES, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{label}: {out.stderr}", file=sys.stderr)
            continue
        v = json.loads(out.stdout)
        ds = v["head_to_head"]
        faster = v["faster_in"]
        region = statistics.median(x for d in ds for x in d["original"])
        other = statistics.median(x for d in ds for x in d["candidate"])
        rounds = statistics.mean(len(d["original"]) for d in ds)
        rows.append({"case": label, "trials": len(ds), "faster": faster, "original_s": region,
                     "candidate_s": other, "mean_rounds": rounds,
                     "seconds": time.monotonic() - t0, "config": config})
        print(f"{label}: faster in {faster} of {len(ds)}", file=sys.stderr, flush=True)
    print(f"Head-to-head decisions with the real runner ({time.strftime('%Y-%m-%d')}, {cpu_name()}, "
          f"{os.cpu_count()} cores)\n")
    print("| case | trials | called faster | rate | original region s | candidate region s | "
          "mean rounds | wall s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['case']} | {r['trials']} | {r['faster']} | {100 * r['faster'] / r['trials']:.1f}% | "
              f"{r['original_s']:.5f} | {r['candidate_s']:.5f} | {r['mean_rounds']:.1f} | "
              f"{r['seconds']:.0f} |")
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
