#!/bin/bash
# Learned `optimize` on the four programs in the styles of application
# suites (issue 39; tests/fixtures/apps, tests/applications.rs), one
# after another, each at its default size with its compile line and
# polytune's default budget and refinement, and prints a Markdown table:
# the program, its style, the SCoP regions tuned and left as written, the
# configuration chosen (or "kept"), the whole program's speedup and the
# regions' as the report gives them, the wall time of `optimize` and the
# original's native run time (gcc -O3 -march=native and its compile
# line, median of 3 runs). Below the table, what each report said when
# it kept the original or left a region.
#
# The runs neither learn from nor append to this machine's store
# (--no-learn): each table starts from the shipped models alone.
#
# Usage: scripts/applications.sh
# Environment:
#   BIN      the polytune binary (default: the release build, built)
#   THREADS  OpenMP threads of every run (default: polytune's, 2)
#   KEEP     a directory to keep each program's report (NAME.json), its
#            standard error (NAME.err) and the program written (NAME.out.c)
# Leaves nothing behind: its temporary directory is removed on any exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

THREADS=${THREADS:-2}
if [[ -z ${BIN:-} ]]; then
    cargo build --release -q
    BIN=${CARGO_TARGET_DIR:-$root/target}/release/polytune
fi
apps=$root/tests/fixtures/apps
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load0=$(cut -d' ' -f1-3 /proc/loadavg)

# The median wall time of three runs of `exe args...`, in seconds.
native_seconds() {
    local t
    for _ in 1 2 3; do
        t=$(date +%s.%N)
        OMP_NUM_THREADS=$THREADS "$@" >/dev/null
        echo "$(date +%s.%N) - $t" | bc -l
    done | sort -g | sed -n 2p
}

# run NAME STYLE FILE RUNARGS FINDING -- COMPILE_LINE...: one program.
# FINDING is --detect or "" (the pragmas); RUNARGS the program's
# arguments ("" for none).
run() {
    local name=$1 style=$2 file=$3 runargs=$4 finding=$5
    shift 6
    local line=("$@") opts=(--no-learn --json --threads "$THREADS")
    [[ -n $finding ]] && opts+=("$finding")
    [[ -n $runargs ]] && opts+=(--run-args "$runargs")
    # The regions polytune finds, as it finds them.
    "$BIN" -q scop --json ${finding:+"$finding"} "$file" -- "${line[@]}" >"$tmp/$name.scops.json"
    # The original as its user builds and runs it.
    local flags=(-O3 -march=native)
    gcc "${flags[@]}" -w -o "$tmp/$name.exe" "$file" "${line[@]}"
    # shellcheck disable=SC2086 # the program's arguments are words
    native=$(native_seconds "$tmp/$name.exe" $runargs)
    local t0 t1
    t0=$(date +%s.%N)
    "$BIN" optimize "$file" "${opts[@]}" -o "$tmp/$name.out.c" -- "${line[@]}" \
        >"$tmp/$name.json" 2>"$tmp/$name.err" ||
        { echo "$name: optimize failed:" >&2; cat "$tmp/$name.err" >&2; exit 1; }
    t1=$(date +%s.%N)
    python3 - "$name" "$style" "$tmp" "$(echo "$t1 - $t0" | bc -l)" "$native" <<'EOF' >>"$tmp/rows"
import json, re, sys
name, style, tmp, wall, native = sys.argv[1:]
v = json.load(open(f"{tmp}/{name}.json"))
scops = json.load(open(f"{tmp}/{name}.scops.json"))
found = len(scops.get("scops", scops.get("regions", [])))
left = [w for w in v["warnings"] if "left unchanged" in w]
choice = v["choice"]
kept = choice["reason"] != "measured"
tuned = 0 if kept else found - len(left)
config = "kept (the original)" if kept else f"`{choice['config']}`"
def x(s):
    return "–" if s is None else f"{s:.2f}x"
regions = "too short to time" if not kept and choice["regions_speedup"] is None else x(choice["regions_speedup"])
wall, native = float(wall), float(native)
print(f"| {name} | {style} | {tuned} / {found - tuned} | {config} | {x(choice['speedup'])} | {regions} | {wall:.0f} s | {native:.2f} s |")
notes = [re.sub(r"^/\S*/", "", w) for w in left]
h = v["head_to_head"]
if kept and h:
    skipped = sum(1 for p in v["passive"] if not p["holds"])
    also = (f"{skipped} candidate(s) faster in the search ran slower than the original with "
            "sleeping threads (OMP_WAIT_POLICY=passive) and were skipped; " if skipped else "")
    notes.append(f"kept: {also}the candidate taken to the head to head, `{h['config']}`, measured {x(h['regions_speedup'])} "
                 f"on the regions and {x(h['program_speedup'])} as a whole program "
                 f"({h['rounds']} alternating rounds, p = {h['p_value']:.2g}): not a clear win by the decision rule "
                 f"(at least {h['min_speedup']:.2f}x, p under {h['level']:.2g})")
elif kept:
    tried = v["candidates"] + v["refinement"]
    best = sorted(tried, key=lambda c: -(c["run"]["speedup"] or 0))[:2]
    notes.append(f"kept: none of the {len(tried)} candidates run was faster; the fastest: "
                 + ", ".join(f"`{c['config']}` ({c['run']['status']}, {c['run']['speedup'] or 0:.2f}x)"
                             for c in best))
with open(f"{tmp}/notes", "a") as f:
    for n in notes:
        f.write(f"- {name}: {n}\n")
EOF
    if [[ -n ${KEEP:-} ]]; then
        mkdir -p "$KEEP"
        cp "$tmp/$name.json" "$tmp/$name.err" "$tmp/$name.out.c" "$KEEP/"
    fi
}

run npb_adi "NPB: OpenMP outside the kernel, a timer report; --detect" \
    "$apps/npb_adi/adi.c" "" --detect -- -fopenmp -lm
run rodinia_lud "Rodinia: kernel.c, main in main.c; --detect" \
    "$apps/rodinia_lud/kernel.c" "" --detect -- \
    "$apps/rodinia_lud/main.c" "$apps/rodinia_lud/common.c" -lm
run roi_filter "image filter, ROI bounds r1/r2/c1/c2; #pragma scop" \
    "$apps/roi_filter/filter.c" "" "" -- -lm
run dead_helper "hot kernel beside a never-called SCoP; #pragma scop" \
    "$apps/dead_helper/stats.c" "" "" -- -lm

echo "| program | style | regions tuned / left | chosen | whole program | regions | optimize wall | native run |"
echo "|---|---|---|---|---|---|---|---|"
cat "$tmp/rows"
echo
echo "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $THREADS threads;" \
    "load average at the start $load0, at the end $(cut -d' ' -f1-3 /proc/loadavg)."
if [[ -s $tmp/notes ]]; then
    echo
    cat "$tmp/notes"
fi
