#!/usr/bin/env python3
"""How well two campaigns' measurements of the same variants agree: for
every kernel and compiler both stores measured (by configuration, since
code changes move the variants' hashes), the standard deviation of the
log ratio of their speedups (after its mean, the kernels' baseline
shift), and how the fastest variant of each store fares in the other
(% of that store's Opt).

    scripts/campaigns_agree.py [A] [B]

A defaults to models/dataset.sqlite, B to campaign/extended.sqlite.
Only kernels of which B measured at least 90% of A's variants count.
"""
import argparse
import collections
import math
import os
import sqlite3
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUERY = """
select k.name, c.name, min(vc.config), m.median, m.baseline
from measurements m
join variants v on v.id = m.variant_id
join variant_configs vc on vc.variant_id = v.id
join kernels k on k.id = v.kernel_id
join compilers c on c.id = m.compiler_id
where m.status = 'ok' and v.original = 0 and length(vc.config) = 12
  and m.size = ? and m.threads = ?
group by k.name, c.name, v.id
"""


def load(path, size, threads):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = collections.defaultdict(dict)
    for kernel, compiler, config, median, baseline in db.execute(QUERY, (size, threads)):
        if baseline and median:
            out[(kernel, compiler)][config] = baseline / median
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", nargs="?", default=os.path.join(ROOT, "models/dataset.sqlite"))
    ap.add_argument("b", nargs="?", default=os.path.join(ROOT, "campaign/extended.sqlite"))
    ap.add_argument("--size", default="medium")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    a, b = load(args.a, args.size, args.threads), load(args.b, args.size, args.threads)
    print("| kernel | compiler | variants | Opt A | Opt B | A's Opt in B | B's Opt in A | sd of log ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    shares = []
    for key in sorted(set(a) & set(b)):
        sa, sb = a[key], b[key]
        common = [c for c in sb if c in sa]
        if len(common) < 0.9 * len(sa) or len(common) < 2:
            continue
        oa = max(common, key=lambda c: sa[c])
        ob = max(common, key=lambda c: sb[c])
        r = [math.log(sb[c] / sa[c]) for c in common]
        mean = sum(r) / len(r)
        sd = math.sqrt(sum((x - mean) ** 2 for x in r) / len(r))
        share = sb[oa] / sb[ob]
        shares.append(share)
        print(f"| {key[0]} | {key[1]} | {len(common)} | {sa[oa]:.2f} | {sb[ob]:.2f} | "
              f"{100 * share:.0f}% | {100 * sa[ob] / sa[oa]:.0f}% | {sd:.3f} |")
    if not shares:
        sys.exit("no kernel measured by both stores")
    print(f"\nA's Opt in B, mean over {len(shares)}: {100 * sum(shares) / len(shares):.0f}%")


if __name__ == "__main__":
    main()
