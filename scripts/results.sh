#!/usr/bin/env bash
# Regenerates everything the README's learning results come from, out of
# the committed dataset: the shipped models of both compilers, their
# leave-one-out evaluations (Markdown, and JSON for scripts; with the
# feature-subset tables, and once more with the paper's training target)
# and the distribution plots; the replay of the search strategies over
# the same folds (`simulate`, every budget whole) with its curves.
# Deterministic: the same dataset gives the same files (the line of
# simulate's own running time aside). Run it after a
# campaign session has checkpointed models/dataset.sqlite
# (scripts/campaign.sh); pause a running campaign first (touch
# campaign/pause): the evaluation keeps both cores busy.
#
#   scripts/results.sh [DATASET]      (default: models/dataset.sqlite)
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:-models/dataset.sqlite}
bin=${POLYTUNE:-target/release/polytune}
[[ -x $bin ]] || cargo build --release
for cc in gcc clang; do
    echo "== $cc: train" >&2
    "$bin" train --db "$db" --compiler "$cc" -o "models/$cc"
    echo "== $cc: leave-one-out evaluation and plots" >&2
    "$bin" evaluate --db "$db" --compiler "$cc" --subset --plots "models/plots-$cc" \
        --save-json "models/evaluation-$cc.json" > "models/evaluation-$cc.md.tmp"
    mv "models/evaluation-$cc.md.tmp" "models/evaluation-$cc.md"
    echo "== $cc: the same with the paper's target (the speedup itself)" >&2
    "$bin" evaluate --db "$db" --compiler "$cc" --target speedup \
        --save-json "models/evaluation-$cc-speedup-target.json" \
        > "models/evaluation-$cc-speedup-target.md.tmp"
    mv "models/evaluation-$cc-speedup-target.md.tmp" "models/evaluation-$cc-speedup-target.md"
    echo "== $cc: the search strategies replayed over the same folds" >&2
    "$bin" simulate --db "$db" --compiler "$cc" --min-ei 0 \
        --plot "models/plots-$cc/search.svg" > "models/simulation-$cc.md.tmp"
    mv "models/simulation-$cc.md.tmp" "models/simulation-$cc.md"
done
echo "== the README's summary table (mean % of Opt over kernels)" >&2
python3 scripts/summary_table.py models
echo "== done" >&2
