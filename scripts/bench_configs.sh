#!/bin/bash
# Times a corpus kernel's original against its variants under the given
# configurations, interleaved round by round (one run of each per round,
# the order rotated every round), and prints each program's median kernel
# time (the `polytune-time:` line the corpus harness prints) and its
# speedup over the original.
#
# Usage: scripts/bench_configs.sh KERNEL CONFIG [CONFIG ...]
#   e.g. scripts/bench_configs.sh polybench/solvers/ludcmp.c fuse=smart fuse=smart,red=1
# Environment:
#   BIN      the polytune binary (default: target/release/polytune, built)
#   CC       the compiler (default gcc)
#   SIZE     dataset size (default MEDIUM)
#   R        rounds (default 5)
#   THREADS  OMP_NUM_THREADS of every run (default 2)
# Take the timings on a quiet machine. Leaves nothing behind.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[[ $# -ge 2 ]] || { sed -n '2,16p' "$0"; exit 2; }
kernel=$1
shift
R=${R:-5}
SIZE=${SIZE:-MEDIUM}
CC=${CC:-gcc}
export OMP_NUM_THREADS=${THREADS:-2}
if [[ -z ${BIN:-} ]]; then
    cargo build --release -q
    BIN=$root/target/release/polytune
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

flags=(-O3 -march=native -fopenmp -I"$root/polybench/include" -I"$(dirname "$kernel")" "-D${SIZE}_DATASET")
names=(original)
$CC "${flags[@]}" "$kernel" -lm -o "$tmp/p0"
k=1
for c in "$@"; do
    "$BIN" -q optimize "$kernel" --config "$c" -o "$tmp/v$k.c"
    $CC "${flags[@]}" "$tmp/v$k.c" -lm -o "$tmp/p$k"
    names+=("$c")
    k=$((k + 1))
done
n=${#names[@]}
declare -a times
for ((r = 0; r < R; r++)); do
    for ((j = 0; j < n; j++)); do
        p=$(((j + r) % n))
        t=$("$tmp/p$p" 2>&1 >/dev/null | sed -n 's/^polytune-time: *//p')
        times[p]="${times[p]:-} $t"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "$kernel, $CC, $SIZE, $OMP_NUM_THREADS threads, $R interleaved rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
base=$(echo "${times[0]}" | median)
for ((j = 0; j < n; j++)); do
    m=$(echo "${times[j]}" | median)
    printf '%-50s %10.4f s %7.2fx\n' "${names[j]}" "$m" "$(awk "BEGIN {print $base / $m}")"
done
