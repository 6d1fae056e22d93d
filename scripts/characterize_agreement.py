#!/usr/bin/env python3
"""Whether the bounded characterization agrees with the whole one, per
corpus kernel (issue 36).

    scripts/characterize_agreement.py [--size medium] [--bound N]
                                      [--kernels a,b] [--json OUT]

For every corpus kernel it runs `polytune characterize FILE --size SIZE
--json` twice: with the bound (the default, or --bound N instructions) and
with no effective bound (10^13 instructions: the regions' first
executions whole), then prints per kernel what the bounded run counted and
the largest and median relative difference |bounded - whole| / |whole|
over the features (the instruction total aside; a feature whose whole
value is below 1e-6 per instruction is compared absolutely), and the
feature that differs most. The whole runs take minutes per kernel at
MEDIUM (the simulator runs 50-300x slower than native).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpuslib  # noqa: E402

WHOLE = 10**13


def characterize(binary, src, size, bound):
    """The whole run's features (bound: an effective infinity)."""
    out = subprocess.run(
        [binary, "characterize", src, "--size", size, "--json", "-q",
         "--bound", str(bound), "--timeout", "36000"],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def differences(bounded, whole):
    out = {}
    for k, w in whole["features"].items():
        if k == "PAPI_TOT_INS":
            continue
        b = bounded["features"][k]
        out[k] = abs(b - w) / abs(w) if abs(w) >= 1e-6 else abs(b - w)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="medium")
    ap.add_argument("--bound", type=int, action="append",
                    help="instructions of a bound to compare (repeatable; default: polytune's)")
    ap.add_argument("--whole-from", help="reuse the whole runs of an earlier --json")
    ap.add_argument("--kernels", default="")
    ap.add_argument("--json", dest="json_out")
    a = ap.parse_args()
    binary = os.environ.get("POLYTUNE", os.path.join(corpuslib.ROOT, "target/release/polytune"))
    names = [k for k in a.kernels.split(",") if k]
    known = {}
    if a.whole_from:
        known = {r["kernel"]: r["whole"] for r in json.load(open(a.whole_from))}
    bounds = a.bound or [None]
    rows = []
    for src in corpuslib.kernels(names):
        name = os.path.basename(src)[:-2]
        whole = known.get(name) or characterize(binary, src, a.size, WHOLE)
        for bound in bounds:
            args = ["--bound", str(bound)] if bound else []
            out = subprocess.run(
                [binary, "characterize", src, "--size", a.size, "--json", "-q", *args],
                check=True, capture_output=True, text=True)
            bounded = json.loads(out.stdout)
            d = differences(bounded, whole)
            worst = max(d, key=d.get)
            rows.append({"kernel": name, "bound": bound, "bounded": bounded, "whole": whole,
                         "differences": d})
            print(f"{name} {bound}: {bounded['counted']['part']} "
                  f"{bounded['counted']['instructions'] / 1e6:.0f}M "
                  f"of {whole['counted']['instructions'] / 1e6:.0f}M, max {d[worst]:.3f} ({worst})",
                  file=sys.stderr, flush=True)
        if a.json_out:
            with open(a.json_out, "w") as f:
                json.dump(rows, f, indent=1)
    print(f"Bounded against whole characterization at {a.size.upper()}\n")
    print("| kernel | bound (M instr.) | counted | of (M instr.) | max rel. diff. | feature | median rel. diff. |")
    print("|---|---:|---|---:|---:|---|---:|")
    rows.sort(key=lambda r: (r["bound"] or 0, r["kernel"]))
    for r in rows:
        d = r["differences"]
        worst = max(d, key=d.get)
        c = r["bounded"]["counted"]
        print(f"| {r['kernel']} | {c.get('budget', 0) / 1e6:.0f} | {c['part']} {c['instructions'] / 1e6:.0f}M | "
              f"{r['whole']['counted']['instructions'] / 1e6:.0f} | {d[worst]:.3f} | {worst} | "
              f"{statistics.median(d.values()):.4f} |")


if __name__ == "__main__":
    main()
