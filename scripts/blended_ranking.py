#!/usr/bin/env python3
"""How good a ranking `bo` needs (issue 38): the variant ranker's
leave-one-out log scores moved a share W of the way to the measured log
speedups, as `simulate --prior-blend W` moves them, and the ranking
figures of the blend, per compiler: median Spearman's rho over kernels,
and the mean share of Opt of the top 1 and of the best of the top 6.

The predictions are the CSV files that

    cargo test --release --test variant_rank -- --ignored --nocapture

writes as target/variant-predictions-{gcc,clang}.csv (every model's
column holds the ranker's predicted speedup; the first is read). From
the project's root:

    python3 scripts/blended_ranking.py

The `bo` figures beside them come from `simulate --ranking variant
--strategies bo --min-ei 0 --prior-blend W`. The table is in
docs/src/results/variant-model.md.
"""

import collections
import csv
import math


def ranks(x):
    """Average ranks of x (ties share the mean of their places)."""
    order = sorted(range(len(x)), key=lambda i: x[i])
    r = [0.0] * len(x)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and x[order[j + 1]] == x[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    num = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    den = math.sqrt(sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb))
    return num / den if den else 0.0


def median(v):
    v = sorted(v)
    n = len(v)
    return (v[n // 2] + v[(n - 1) // 2]) / 2


def main():
    print("| compiler | W | median rho | top 1 | best of 6 |")
    print("|---|---:|---:|---:|---:|")
    for compiler in ["gcc", "clang"]:
        rows = collections.defaultdict(list)
        with open(f"target/variant-predictions-{compiler}.csv") as f:
            for r in csv.DictReader(f):
                if r["speedup"]:
                    rows[r["kernel"]].append((float(r["speedup"]), max(float(r["LR"]), 1e-3)))
        for w in [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]:
            rhos, top1, best6 = [], [], []
            for v in rows.values():
                score = [(1 - w) * math.log(p) + w * math.log(y) for y, p in v]
                truth = [y for y, _ in v]
                opt = max(truth)
                rhos.append(spearman(score, truth))
                order = sorted(range(len(v)), key=lambda i: -score[i])
                top1.append(truth[order[0]] / opt)
                best6.append(max(truth[i] for i in order[:6]) / opt)
            print(
                f"| {compiler} | {w} | {median(rhos):.3f} | "
                f"{sum(top1) / len(top1):.2f} | {sum(best6) / len(best6):.2f} |"
            )


if __name__ == "__main__":
    main()
