#!/bin/bash
# What polytune's instrumentation costs the learned `optimize`, end to end
# (issue 17). Since 9a05909 every build the learned selection measures is
# an instrumented build (a timer and a dump of what it writes around each
# SCoP region, the original run twice); before it, the corpus programs
# timed and dumped themselves (polytune_bench.h). This script times whole
# runs of `polytune optimize KERNEL -o /dev/null --shots 3 --strategy multi-model --size "${SIZE:-small}" -q`
# (shipped models) with the baseline binary (667681e, the commit before)
# and the current one, alternately (the order swapped every round), and
# prints per kernel the median wall time of each and the ratio new/base,
# then the geometric mean of the ratios.
#
# Take the timings on a quiet machine (no campaign, no other builds or
# benchmarks): the ratios are only as good as the machine's silence.
#
# Usage: scripts/bench_instrumentation.sh [--quick] [KERNEL ...]
#   KERNEL   corpus files (default: gemm, jacobi-2d-imper, atax)
#   --quick  a smoke test: the first kernel, one round
# Environment:
#   BASE, NEW  binaries to compare (default: built here in release mode,
#              the baseline in a temporary git worktree)
#   BASELINE   the baseline commit (default 667681e)
#   R          rounds (default 5)
#   SIZE       the dataset size of the runs (default small)
# Leaves nothing behind: the worktree and temporary files are removed on
# any exit. The baseline is built in a temporary copy of this checkout's
# target directory (so isl is not rebuilt: about 1 GB of disk for a while).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

R=${R:-5}
quick=0
if [[ ${1:-} == --quick ]]; then quick=1; R=1; shift; fi
kernels=("$@")
[[ ${#kernels[@]} -gt 0 ]] || kernels=(polybench/linear-algebra/gemm.c
    polybench/stencils/jacobi-2d-imper.c polybench/linear-algebra/atax.c)
((quick)) && kernels=("${kernels[0]}")

tmp=$(mktemp -d)
cleanup() {
    if [[ -d $tmp/base ]]; then git worktree remove --force "$tmp/base"; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

target=${CARGO_TARGET_DIR:-$root/target}
build() { # build DIR TARGET_DIR OUT: a release binary of the checkout DIR, copied to OUT
    (cd "$1" && CARGO_TARGET_DIR=$2 CONFIG_SITE=$root/.cargo/isl-config.site \
        nice cargo build --release --bin polytune)
    cp "$2/release/polytune" "$3"
}
if [[ -z ${BASE:-} ]]; then
    git worktree add --detach -q "$tmp/base" "${BASELINE:-667681e}"
    # The dependencies (isl) built here, copied; polytune itself rebuilt.
    mkdir -p "$tmp/target/release"
    cp -a "$target/release/build" "$target/release/deps" "$target/release/.fingerprint" \
        "$tmp/target/release/"
    (cd "$tmp/base" && CARGO_TARGET_DIR=$tmp/target cargo clean -q --release -p polytune)
    BASE=$tmp/polytune-base
    build "$tmp/base" "$tmp/target" "$BASE"
    git worktree remove --force "$tmp/base"
    rm -rf "$tmp/target"
fi
if [[ -z ${NEW:-} ]]; then
    NEW=$tmp/polytune-new
    build "$root" "$target" "$NEW"
fi
if cmp -s "$BASE" "$NEW"; then echo "BASE and NEW are the same binary" >&2; exit 1; fi
for bin in "$BASE" "$NEW"; do
    help=$("$bin" optimize --help)
    for flag in --output --shots --strategy --size --quiet; do
        grep -q -- "$flag" <<<"$help" || { echo "$bin: optimize has no $flag" >&2; exit 1; }
    done
done

run() { # run NAME BIN KERNEL: one whole run, its wall time appended to the log
    local t0=$EPOCHREALTIME
    "$2" optimize "$3" -o /dev/null --shots 3 --strategy multi-model --size "${SIZE:-small}" -q
    echo "$3 $1 $t0 $EPOCHREALTIME" >>"$tmp/times"
}
for ((r = 1; r <= R; r++)); do
    for k in "${kernels[@]}"; do
        echo "round $r/$R: $k" >&2
        if ((r % 2)); then run base "$BASE" "$k"; run new "$NEW" "$k"
        else run new "$NEW" "$k"; run base "$BASE" "$k"; fi
    done
done

python3 - "$tmp/times" <<'EOF'
import math, statistics, sys
times = {}
for line in open(sys.argv[1]):
    k, which, t0, t1 = line.split()
    times.setdefault(k, {}).setdefault(which, []).append(float(t1) - float(t0))
ratios = []
print(f"{'kernel':<40} {'base s':>8} {'new s':>8} {'new/base':>9}  (medians of {len(times[k]['new'])} runs; base and new ranges)")
for k, t in times.items():
    b, n = statistics.median(t["base"]), statistics.median(t["new"])
    ratios.append(n / b)
    spread = lambda xs: f"{min(xs):.2f}-{max(xs):.2f}"
    print(f"{k:<40} {b:8.2f} {n:8.2f} {n / b:9.3f}  {spread(t['base'])} {spread(t['new'])}")
print(f"{'geometric mean':<40} {'':8} {'':8} {math.exp(statistics.fmean(map(math.log, ratios))):9.3f}")
EOF
