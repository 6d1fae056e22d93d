#!/usr/bin/env bash
# The training campaign (issue 6): every distinct variant of every corpus
# kernel at MEDIUM size, with gcc and with clang, into one SQLite database.
# It takes many hours; rerun this script to resume — what is stored is
# skipped. Pass 1 measures an evenly spread sample of every kernel first, so
# that a partial campaign already covers all kernels; pass 2 measures the
# rest of the space, gcc first.
#
#   scripts/campaign.sh [DB]        (default: campaign/runs.sqlite)
#
# Environment: POLYTUNE (binary, default target/release/polytune),
# SAMPLE (pass-1 variants per kernel, default 16).
set -euo pipefail
cd "$(dirname "$0")/.."
db=${1:-campaign/runs.sqlite}
mkdir -p "$(dirname "$db")"
bin=${POLYTUNE:-target/release/polytune}
if [[ ! -x $bin ]]; then
    cargo build --release
fi
sample=${SAMPLE:-16}
log() { echo "== $(date -u +%FT%TZ) $*" >&2; }
log "pass 1: $sample variants per kernel, gcc and clang"
"$bin" collect polybench --db "$db" --size medium --compiler gcc,clang --max-variants "$sample"
log "pass 2: the whole space with gcc"
"$bin" collect polybench --db "$db" --size medium --compiler gcc
log "pass 3: the whole space with clang"
"$bin" collect polybench --db "$db" --size medium --compiler clang
log "done"
