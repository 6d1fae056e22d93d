#!/usr/bin/env python3
"""The README's leave-one-out summary table, out of the evaluations that
scripts/results.sh writes (models/evaluation-{gcc,clang}[-speedup-target].md):
the mean % of Opt of every model, 1-shot and 6-shot, per compiler and
training target. Prints markdown on stdout.

    scripts/summary_table.py [MODELS_DIR]
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def summary(path):
    """model -> (1-shot %, N-shot %) from the first table of an evaluation."""
    rows = {}
    with open(path) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("| model |"))
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = (cells[2], cells[4])
    return rows


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "models")
    cols = []
    for cc in ["gcc", "clang"]:
        for suffix, label in [("", cc), ("-speedup-target", f"{cc}, paper's target")]:
            p = os.path.join(d, f"evaluation-{cc}{suffix}.md")
            if os.path.exists(p):
                cols.append((label, summary(p)))
    if not cols:
        sys.exit(f"no evaluations in {d}: run scripts/results.sh first")
    names = {
        "multi-model": "multi-model (each model's top-1)",
        "multi-model ×6": "multi-model ×6 (what `optimize` runs)",
    }
    print("| | " + " | ".join(f"{l} 1-shot | {l} 6-shot" for l, _ in cols) + " |")
    print("|---|" + "---:|---:|" * len(cols))
    for model in cols[0][1]:
        cells = []
        for _, s in cols:
            one, six = s.get(model, ("–", "–"))
            cells += [one, "–" if model == "Random" else six]
        print(f"| {names.get(model, model)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
