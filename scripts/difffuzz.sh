#!/bin/bash
# The differential fuzzer's long run (issue 15): random legal SCoPs under
# random configurations, gcc and clang, two thread counts, compared with
# the untransformed programs. Chunked by program index, resumable: a
# finished chunk leaves OUT/chunk-FIRST.json and is skipped next time.
#
# Usage: scripts/difffuzz.sh [PROGRAMS [CONFIGS [SEED [OUT]]]] [-- extra fuzz flags]
#   defaults: 2500 programs x 4 configurations = 10,000 program×configuration
#   pairs, seed 1, OUT=difffuzz-run; CHUNK (default 100) programs per chunk,
#   JOBS (default 2) programs in parallel; POLYTUNE=path uses that binary.
# Prints the totals over all chunks; exit 1 if anything was found.
set -euo pipefail
cd "$(dirname "$0")/.."
PROGRAMS=${1:-2500}
CONFIGS=${2:-4}
SEED=${3:-1}
OUT=${4:-difffuzz-run}
shift $(( $# < 4 ? $# : 4 )) || true
[ "${1:-}" = "--" ] && shift
CHUNK=${CHUNK:-100}
JOBS=${JOBS:-2}
# POLYTUNE: a polytune binary to use instead of building one.
if [ -n "${POLYTUNE:-}" ]; then
  P=$POLYTUNE
else
  nice cargo build --release --quiet
  P=target/release/polytune
fi
mkdir -p "$OUT"
for ((first = 0; first < PROGRAMS; first += CHUNK)); do
  n=$(( PROGRAMS - first < CHUNK ? PROGRAMS - first : CHUNK ))
  done_file="$OUT/chunk-$first.json"
  if [ -s "$done_file" ]; then
    continue
  fi
  echo "difffuzz: programs $first..$((first + n - 1)) of $PROGRAMS" >&2
  # A chunk with findings exits 1: keep going, the totals tell.
  nice "$P" fuzz --seed "$SEED" --first "$first" --programs "$n" --configs "$CONFIGS" \
    --jobs "$JOBS" --output "$OUT" --json "$@" > "$done_file.tmp" || true
  mv "$done_file.tmp" "$done_file"
done
python3 - "$OUT" <<'EOF'
import glob, json, sys
out = sys.argv[1]
total, classes, reasons = {}, {}, {}
meta = None
for f in sorted(glob.glob(f"{out}/chunk-*.json")):
    s = json.load(open(f))
    meta = s
    for k, v in s["counts"].items():
        total[k] = total.get(k, 0) + v
    for why, n in s["unchanged_reasons"].items():
        reasons[why] = reasons.get(why, 0) + n
    for x in s["findings"]:
        label = f'{x["kind"]} [{", ".join(x["suspects"]) or "no known cause"}]'
        classes.setdefault(label, []).append(x["dir"])
if meta is None:
    sys.exit("difffuzz: no chunk finished")
for why, n in sorted(reasons.items(), key=lambda x: -x[1]):
    print(f"unchanged x{n}: {why}")
for label, dirs in sorted(classes.items()):
    print(f"{label}: {len(dirs)} finding(s), e.g. {dirs[0]}")
t = total
print(f'difffuzz: {t["pairs"]} program×configuration pairs ({t["programs"]} programs; '
      f'x{len(meta["compilers"])} compilers x{len(meta["threads"])} thread counts '
      f'x{meta["params"]} parameter sets = {t["runs"]} runs), {t["wrong"]} wrong, '
      f'{t["crashed"]} crashed, {t["compile_errors"]} compile errors, {t["engine_errors"]} engine errors, '
      f'{t["unchanged"]} unchanged, {t["rejected"]} rejected by the front end, '
      f'{t["oracle"]} oracle mismatches, {t["original_failed"]} originals failed, '
      f'{t["gave_up"]} programs given up')
found = sum(t[k] for k in ["wrong", "crashed", "compile_errors", "engine_errors", "rejected", "oracle", "original_failed"])
sys.exit(1 if found else 0)
EOF
