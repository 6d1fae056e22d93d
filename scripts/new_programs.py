#!/usr/bin/env python3
"""Learned `optimize` on the programs of new kinds (more-kernels/), each
new to the shipped models, against what a campaign measured of the same
programs on this machine type (models/zen5-more-store.sqlite: 61 variants
per program and compiler, 30 of the paper's space and 30 beyond).

    scripts/new_programs.py [--bin BINARY] [--compilers gcc,clang]
                            [--keep DIR] [--store STORE]

Runs `optimize FILE --compiler CC --json --no-learn` (the shipped models
alone, polytune's default budget) on each program at its default size
(MEDIUM), one after another, and prints a Markdown table per compiler:
the configuration chosen, its speedup over the original (the SCoP
regions' and the whole program's, as the report gives them), the wall
time of `optimize`, and the campaign's fastest variant of the program
with that compiler (its speedup, and the chosen one's share of it).
The two are measured apart (another day's timings of the same
programs), so the share is a guide, not an exact ratio; a share above
100% means `optimize` found a variant faster than any the campaign's
sample held. With --keep DIR, each report (NAME.CC.json), its standard
error and the program written stay in DIR; otherwise nothing is left.
"""
import argparse
import json
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = sorted((ROOT / "more-kernels").glob("*.c"))

BEST = """SELECT k.name, MAX(m.baseline / m.median)
FROM measurements m JOIN variants v ON v.id = m.variant_id
JOIN kernels k ON k.id = v.kernel_id JOIN compilers c ON c.id = m.compiler_id
WHERE c.name LIKE ? AND m.status = 'ok' AND m.median > 0 AND m.baseline > 0
      AND v.original = 0
GROUP BY k.name"""


def campaign_best(store, cc):
    """The campaign's fastest speedup per program stem with compiler `cc`."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    return {Path(k).stem: s for k, s in con.execute(BEST, (cc + "%",))}


def optimize(binary, program, cc, out_dir):
    """One learned `optimize` run: its report and wall time."""
    name = program.stem
    report = out_dir / f"{name}.{cc}.json"
    err = out_dir / f"{name}.{cc}.err"
    start = time.monotonic()
    with open(report, "w") as o, open(err, "w") as e:
        rc = subprocess.call(
            [binary, "optimize", str(program), "--compiler", cc, "--json",
             "--no-learn", "-o", str(out_dir / f"{name}.{cc}.out.c")],
            stdout=o, stderr=e)
    wall = time.monotonic() - start
    if rc != 0:
        return None, wall, err.read_text().strip().splitlines()[-1:]
    return json.loads(report.read_text()), wall, []


def table(rows):
    out = ["| program | chosen | regions | whole program | optimize wall | campaign's best | share |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for name, choice, regions, whole, wall, best in rows:
        share = f"{100 * regions / best:.0f}%" if regions and best else "n/a"
        out.append(
            f"| {name} | {choice} | {regions:.2f}x | {whole:.2f}x | {wall:.0f} s | "
            f"{best:.2f}x | {share} |" if regions else
            f"| {name} | {choice} | n/a | n/a | {wall:.0f} s | {best:.2f}x | n/a |")
    shares = [r[2] / r[5] for r in rows if r[2] and r[5]]
    if shares:
        out.append("")
        out.append(f"Median share of the campaign's best: {100 * statistics.median(shares):.0f}% "
                   f"(geometric mean {100 * statistics.geometric_mean(shares):.0f}%).")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "target/release/polytune"))
    ap.add_argument("--compilers", default="gcc,clang")
    ap.add_argument("--keep", type=Path)
    ap.add_argument("--store", default=str(ROOT / "models/zen5-more-store.sqlite"))
    a = ap.parse_args()
    tmp = None
    if a.keep:
        a.keep.mkdir(parents=True, exist_ok=True)
        out_dir = a.keep
    else:
        tmp = tempfile.TemporaryDirectory()
        out_dir = Path(tmp.name)
    try:
        for cc in a.compilers.split(","):
            best = campaign_best(a.store, cc)
            rows = []
            for p in PROGRAMS:
                r, wall, err = optimize(a.bin, p, cc, out_dir)
                if r is None:
                    rows.append((p.stem, "failed: " + " ".join(err), None, None, wall,
                                 best.get(p.stem)))
                    continue
                c = r["choice"]
                rows.append((p.stem, c["config"] if c.get("config") else "kept (the original)",
                             c.get("regions_speedup") or 1.0, c.get("speedup") or 1.0, wall,
                             best.get(p.stem)))
                print(f"{cc} {p.stem}: {rows[-1][1]} {rows[-1][2]:.2f}x", file=sys.stderr)
            print(f"\n### {cc}\n\n{table(rows)}")
    finally:
        if tmp:
            tmp.cleanup()


if __name__ == "__main__":
    main()
