#!/usr/bin/env python3
"""The README's leave-one-out summary table, out of the evaluations that
scripts/results.sh writes as JSON (`polytune evaluate --save-json`:
models/evaluation-{gcc,clang}[-speedup-target].json): the mean % of Opt
of every model, 1-shot and 6-shot, per compiler and training target; with
--best, the best measured configuration of every kernel with each
compiler (the paper's Tables 3-4). Prints markdown.

    scripts/summary_table.py [--best] [MODELS_DIR]
"""
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASH = "–"


def load(path):
    with open(path) as f:
        return json.load(f)


def number(v, digits):
    """A value as the evaluation's Markdown prints it: `digits` decimals,
    a dash for a missing one (JSON null: NaN)."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return DASH
    return f"{v:.{digits}f}"


def summary(path):
    """model -> (1-shot %, N-shot %) from an evaluation's summary."""
    return {s["model"]: (number(s["one_shot_pct_opt"], 0), number(s["n_shot_pct_opt"], 0))
            for s in load(path)["summary"]}


def best(path):
    """kernel -> (variants, speedup, configuration) from an evaluation."""
    return {b["kernel"]: (str(b["variants"]), number(b["speedup"], 2), f"`{b['configuration']}`")
            for b in load(path)["best"]}


def best_table(d):
    cols = [(cc, best(os.path.join(d, f"evaluation-{cc}.json"))) for cc in ["gcc", "clang"]
            if os.path.exists(os.path.join(d, f"evaluation-{cc}.json"))]
    print("| kernel | " + " | ".join(f"{cc} variants | {cc} best | {cc} configuration"
                                     for cc, _ in cols) + " |")
    print("|---|" + "---:|---:|---|" * len(cols))
    for k in sorted(set().union(*[c.keys() for _, c in cols])):
        cells = []
        for _, c in cols:
            v, s, conf = c.get(k, (DASH, DASH, DASH))
            cells += [v, s + "×" if s != DASH else s, conf]
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
            p = os.path.join(d, f"evaluation-{cc}{suffix}.json")
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
            one, six = s.get(model, (DASH, DASH))
            cells += [one, DASH if model == "Random" else six]
        print(f"| {names.get(model, model)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
