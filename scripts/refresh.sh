#!/usr/bin/env bash
# Issue 20's refresh, once the extended campaign is complete
# (`EXTENDED=30 scripts/campaign.sh` logged "done"): the shipped dataset
# becomes the extended campaign's — the paper's space of every corpus
# kernel and 30 configurations drawn beyond it, with gcc and clang — and
# everything measured on the dataset is made again from it: the shipped
# models, the leave-one-out evaluations and the simulated searches
# (scripts/results.sh), then the peers tables of both compilers
# (scripts/peers.py at MEDIUM, into models/peers-<compiler>.md and
# .json). The paper-space dataset it replaces stays as
# models/dataset-paper.sqlite, so that the figures measured on it remain
# reproducible. About two hours on two cores; keep the machine quiet.
#
#   scripts/refresh.sh [CAMPAIGN]   (default: models/campaign-extended.sqlite,
#                                    the campaign's checkpoint)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${POLYTUNE:-target/release/polytune}
[[ -x $bin ]] || cargo build --release
campaign=${1:-models/campaign-extended.sqlite}
log() { echo "== $(date -u +%FT%TZ) $*" >&2; }
if [[ ! -e models/dataset-paper.sqlite ]]; then
    log "keeping the paper-space dataset as models/dataset-paper.sqlite"
    cp models/dataset.sqlite models/dataset-paper.sqlite
fi
log "the shipped dataset from $campaign"
rm -f models/dataset.sqlite.tmp
"$bin" export --db "$campaign" --compact models/dataset.sqlite.tmp
mv models/dataset.sqlite.tmp models/dataset.sqlite
log "models, leave-one-out evaluations, simulations"
scripts/results.sh
for cc in gcc clang; do
    log "peers with $cc"
    python3 scripts/peers.py --compiler "$cc" --markdown --json "models/peers-$cc.json" \
        > "models/peers-$cc.md.tmp"
    mv "models/peers-$cc.md.tmp" "models/peers-$cc.md"
done
log "done"
