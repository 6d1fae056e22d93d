#!/usr/bin/env python3
"""The README's leave-one-out summary table, out of the evaluations that
scripts/results.sh writes (models/evaluation-{gcc,clang}[-speedup-target].md):
the mean % of Opt of every model, 1-shot and 6-shot, per compiler and
training target; with --best, the best measured configuration of every
kernel with each compiler (the paper's Tables 3-4). Prints markdown.

    scripts/summary_table.py [--best] [MODELS_DIR]
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def table_rows(path, starts, skip):
    """The cells of the rows of the markdown table that begins `skip`
    lines after the first line starting with `starts` (header and rule
    skipped), in order."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(starts))
    rows = []
    for line in lines[start + skip:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


def summary(path):
    """model -> (1-shot %, N-shot %) from the first table of an evaluation."""
    return {c[0]: (c[2], c[4]) for c in table_rows(path, "| model |", 2)}


def best(path):
    """kernel -> (variants, speedup, configuration) from an evaluation."""
    return {c[0]: (c[1], c[2], c[3]) for c in table_rows(path, "### Best measured", 4)}


def best_table(d):
    cols = [(cc, best(os.path.join(d, f"evaluation-{cc}.md"))) for cc in ["gcc", "clang"]
            if os.path.exists(os.path.join(d, f"evaluation-{cc}.md"))]
    print("| kernel | " + " | ".join(f"{cc} variants | {cc} best | {cc} configuration"
                                     for cc, _ in cols) + " |")
    print("|---|" + "---:|---:|---|" * len(cols))
    for k in sorted(set().union(*[c.keys() for _, c in cols])):
        cells = []
        for _, c in cols:
            v, s, conf = c.get(k, ("–", "–", "–"))
            cells += [v, s + "×" if s != "–" else s, conf]
        print(f"| {k} | " + " | ".join(cells) + " |")


def main():
    args = [a for a in sys.argv[1:] if a != "--best"]
    d = args[0] if args else os.path.join(ROOT, "models")
    if "--best" in sys.argv[1:]:
        best_table(d)
        return
    cols = []
    for cc in ["gcc", "clang"]:
        for suffix, label in [("", cc), ("-speedup-target", f"{cc}, paper's target")]:
            p = os.path.join(d, f"evaluation-{cc}{suffix}.md")
            if os.path.exists(p):
                cols.append((label, summary(p)))
    if not cols:
        sys.exit(f"no evaluations in {d}: run scripts/results.sh first")
    names = {
        "multi-model": "multi-model (1-shot: the models' consensus; 6-shot: each model's top-1)",
        "multi-model ×6": "multi-model ×6 (what `optimize` runs)",
        "diverse": "diverse (`--strategy diverse`: the ensemble's top 6, spread out)",
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
