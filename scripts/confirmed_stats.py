#!/usr/bin/env python3
"""What `collect --confirm-top` found in a store: per compiler, how many
variants were confirmed, how much slower they are than the campaign said
(the campaign's median and baseline are kept in each confirmed
measurement's detail), how far each kernel's Opt moved and whether its
Opt variant is still the same, and how many of each kernel's six fastest
are still unconfirmed.

    scripts/confirmed_stats.py [CONFIRMED] [CAMPAIGN]
      (default models/dataset-confirmed.sqlite models/dataset.sqlite)

Prints Markdown (the README's table in "The dataset's confirmed top").
"""
import math
import re
import sqlite3
import statistics
import sys

CONFIRMED = sys.argv[1] if len(sys.argv) > 1 else "models/dataset-confirmed.sqlite"
CAMPAIGN = sys.argv[2] if len(sys.argv) > 2 else "models/dataset.sqlite"

VARIANTS = """SELECT k.name, c.name, v.id, m.baseline / m.median, m.median, m.baseline, m.detail
FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN kernels k ON k.id = v.kernel_id
JOIN compilers c ON c.id = m.compiler_id
WHERE v.original = 0 AND m.status = 'ok' AND m.median > 0"""
DETAIL = re.compile(r"median ([\d.]+) s against a baseline of ([\d.]+) s")


def load(path):
    out = {}
    for k, c, v, s, med, base, detail in sqlite3.connect(path).execute(VARIANTS):
        out.setdefault((k, c), {})[v] = (s, med, base, detail)
    return out


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs))


def main():
    new, old = load(CONFIRMED), load(CAMPAIGN)
    print("| compiler | confirmed | campaign ÷ confirmed speedup, median (quartiles) | slower than the campaign said | original's time now ÷ then | Opt now ÷ then, geomean (range) | same Opt variant | unconfirmed among the six fastest |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for cc in sorted({c for _, c in new}, reverse=True):
        ratios, originals, moved, same, open_top = [], [], [], 0, 0
        kernels = sorted(k for k, c in new if c == cc)
        for k in kernels:
            vs = new[(k, cc)]
            for v, (s, med, base, detail) in vs.items():
                if detail.startswith("confirmed"):
                    m = DETAIL.search(detail)
                    then_med, then_base = float(m.group(1)), float(m.group(2))
                    ratios.append((then_base / then_med) / s)
                    originals.append(base / then_base)
            top = sorted(vs.items(), key=lambda x: -x[1][0])
            open_top += sum(1 for _, x in top[:6] if not x[3].startswith("confirmed"))
            before = max(old[(k, cc)].items(), key=lambda x: x[1][0])
            moved.append(top[0][1][0] / before[1][0])
            same += top[0][0] == before[0]
        q = statistics.quantiles(ratios, n=4)
        slower = sum(r > 1 for r in ratios) / len(ratios)
        print(
            f"| {cc} | {len(ratios)} | {statistics.median(ratios):.3f} ({q[0]:.3f}–{q[2]:.3f}) "
            f"| {100 * slower:.0f}% | {statistics.median(originals):.3f} "
            f"| {geomean(moved):.3f} ({min(moved):.2f}–{max(moved):.2f}) "
            f"| {same} of {len(kernels)} | {open_top} of {6 * len(kernels)} |"
        )


if __name__ == "__main__":
    main()
