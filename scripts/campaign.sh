#!/usr/bin/env bash
# The training campaign (issue 6): every distinct variant of every corpus
# kernel at MEDIUM size, with gcc and with clang, into one SQLite database.
# It takes many hours; rerun this script to resume — what is stored is
# skipped. Pass 1 measures an evenly spread sample of every kernel first, so
# that a partial campaign already covers all kernels; pass 2 measures the
# rest of the space, gcc first, and pass 3 clang's.
#
# The working database (default campaign/runs.sqlite, not committed) starts
# from the committed dataset models/dataset.sqlite when it does not exist,
# and a compact copy of it is written back there every CHECKPOINT seconds
# and at the end, so that a campaign spread over sessions on fresh machines
# of the same type loses at most one checkpoint interval.
#
#   scripts/campaign.sh [DB]
#
# While the file pause next to DB exists, the campaign waits before its next
# measurement, and pause.ack exists once it is waiting (touch pause before
# heavy work such as a test run, wait for pause.ack, remove pause after).
#
# Environment: POLYTUNE (binary, default target/release/polytune),
# SAMPLE (pass-1 variants per kernel, default 16), RUNS (timed runs,
# default 3..5), CHECKPOINT (seconds, default 600), DATASET (default
# models/dataset.sqlite; empty to neither seed nor write back), JOBS
# (variants built at once, default 1), CONFIRM (when set, K: each
# kernel's K fastest variants are timed again, interleaved with the
# original, right after its variants: `collect --confirm-top K`).
#
# EXTENDED=N instead runs one pass over the space beyond the paper's
# (issue 20): kernel by kernel, with gcc and with clang, the whole paper
# space and N configurations drawn beyond it (`--space extended --sample
# N`, SEED default 1). Its working database defaults to
# campaign/extended.sqlite and its checkpoint to
# models/campaign-extended.sqlite (not the shipped dataset, which it
# replaces only when complete: `polytune export --compact`).
set -euo pipefail
cd "$(dirname "$0")/.."
extended=${EXTENDED:-}
if [[ -n $extended ]]; then
    db=${1:-campaign/extended.sqlite}
else
    db=${1:-campaign/runs.sqlite}
fi
mkdir -p "$(dirname "$db")"
bin=${POLYTUNE:-target/release/polytune}
if [[ ! -x $bin ]]; then
    cargo build --release
fi
sample=${SAMPLE:-16}
runs=${RUNS:-3..5}
if [[ -n $extended ]]; then
    dataset=${DATASET-models/campaign-extended.sqlite}
else
    dataset=${DATASET-models/dataset.sqlite}
fi
jobs=${JOBS:-1}
every=${CHECKPOINT:-600}
log() { echo "== $(date -u +%FT%TZ) $*" >&2; }

checkpoint() {
    [[ -n $dataset && -e $db ]] || return 0
    if "$bin" export --db "$db" --compact "$dataset.tmp" 2>/dev/null; then
        mv "$dataset.tmp" "$dataset"
        log "checkpoint: $dataset"
    else
        rm -f "$dataset.tmp"
        log "checkpoint failed: $dataset left as it was"
    fi
}

if [[ -n $dataset && ! -e $db && -e $dataset ]]; then
    cp "$dataset" "$db"
    log "resuming from $dataset"
fi
if [[ -n $dataset ]]; then
    # The saver's sleep must die with it (it would hold our output open).
    (
        trap 'kill $! 2>/dev/null; exit 0' TERM
        while true; do
            sleep "$every" &
            wait $!
            checkpoint
        done
    ) &
    saver=$!
    trap 'kill $saver 2>/dev/null; checkpoint' EXIT
fi

confirm=()
if [[ -n ${CONFIRM:-} ]]; then
    confirm=(--confirm-top "$CONFIRM")
fi
collect() {
    "$bin" collect polybench --db "$db" --size medium --runs "$runs" \
        --jobs "$jobs" --pause-file "$(dirname "$db")/pause" "${confirm[@]}" "$@"
}
if [[ -n $extended ]]; then
    log "extended: the paper space and $extended draws beyond it per kernel, gcc and clang"
    collect --compiler gcc,clang --space extended --sample "$extended" --seed "${SEED:-1}"
    log "done"
    exit 0
fi
log "pass 1: $sample variants per kernel, gcc and clang"
collect --compiler gcc,clang --max-variants "$sample"
log "pass 2: the whole space with gcc"
collect --compiler gcc
log "pass 3: the whole space with clang"
collect --compiler clang
log "done"
