#!/bin/bash
# What `collect --jobs N` and `--timing-cores` save on a campaign (issue
# 21), timed as whole runs. A campaign of two kernels (gcc, SIZE, MAXV
# variants each) is run from the same starting store (the kernels'
# features already in it, no measurement: the cachegrind
# characterization is the same work in every mode and is left out) in
# each mode, the modes alternated round by round (the order rotated every
# round), and the script prints each mode's median wall time over R
# rounds and its ratio to the first mode's.
#
# Modes (2 OpenMP threads per run unless said):
#   jobs1         --jobs 1 (the campaign as it always was)
#   jobs2         --jobs 2 (builds in pairs between timed runs)
#   t1-jobs1      --threads 1 --jobs 1
#   t1-beside     --threads 1 --jobs 1 --timing-cores LAST (the runs on
#                 the last core, the builds beside them on the others;
#                 only with two cores or more)
# The t1 modes are compared with each other: their runs use one thread.
#
# Take the timings on a quiet machine: the ratios are only as good as the
# machine's silence.
#
# Usage: scripts/bench_jobs.sh [--quick]
#   --quick  a smoke test: MINI, 4 variants, one round
# Environment:
#   BIN   the polytune binary (default: target/release/polytune, built)
#   R     rounds (default 5)
#   SIZE  dataset size (default small)
#   MAXV  variants per kernel (default 24)
# Leaves nothing behind: its temporary directory is removed on any exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

R=${R:-5}
SIZE=${SIZE:-small}
MAXV=${MAXV:-24}
if [[ ${1:-} == --quick ]]; then R=1; SIZE=mini; MAXV=4; fi
if [[ -z ${BIN:-} ]]; then
    cargo build --release -q
    BIN=$root/target/release/polytune
fi
kernels=(polybench/linear-algebra/gemm.c polybench/stencils/jacobi-2d-imper.c)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

common=(-q collect --size "$SIZE" --compiler gcc)
# The starting store: a campaign's variants and features, its
# measurements deleted.
"$BIN" "${common[@]}" --max-variants 1 --db "$tmp/seed.sqlite" "${kernels[@]}" >/dev/null
python3 - "$tmp/seed.sqlite" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("DELETE FROM samples")
c.execute("DELETE FROM measurements")
c.commit()
EOF

last=$(grep Cpus_allowed_list /proc/self/status | awk '{print $2}' | tr ',' '\n' | tail -1 | sed 's/.*-//')
ncores=$(nproc)
modes=("jobs1|--jobs 1" "jobs2|--jobs 2" "t1-jobs1|--threads 1 --jobs 1")
if ((ncores > 1)); then
    modes+=("t1-beside|--threads 1 --jobs 1 --timing-cores $last")
fi

declare -A times
for ((r = 0; r < R; r++)); do
    n=${#modes[@]}
    for ((k = 0; k < n; k++)); do
        m=${modes[$(((k + r) % n))]}
        name=${m%%|*}
        # shellcheck disable=SC2206
        args=(${m#*|})
        cp "$tmp/seed.sqlite" "$tmp/run.sqlite"
        start=$(date +%s.%N)
        "$BIN" "${common[@]}" --max-variants "$MAXV" "${args[@]}" --db "$tmp/run.sqlite" "${kernels[@]}" >/dev/null
        end=$(date +%s.%N)
        times[$name]="${times[$name]:-} $(awk "BEGIN {print $end - $start}")"
        rm -f "$tmp/run.sqlite"
    done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
echo "campaign: ${kernels[*]##*/}, gcc, $SIZE, $MAXV variants each, $R rounds, $ncores cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %10s %8s\n' mode "median s" ratio
base1=$(echo "${times[jobs1]}" | median)
baset=$(echo "${times[t1-jobs1]}" | median)
for m in "${modes[@]}"; do
    name=${m%%|*}
    med=$(echo "${times[$name]}" | median)
    base=$base1
    [[ $name == t1-* ]] && base=$baset
    printf '%-10s %10.2f %8.3f   (%s)\n' "$name" "$med" "$(awk "BEGIN {print $med / $base}")" "${times[$name]# }"
done
