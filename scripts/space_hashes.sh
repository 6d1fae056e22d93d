#!/bin/bash
# The whole optimization space of every corpus kernel, as hashes of the
# generated code: one line per kernel and distinct program (kernel, hash,
# configurations). Two builds that print the same lines generate
# byte-identical code for every configuration of every kernel; the check
# behind every refactoring of the engine (issue 16).
#
# Usage: scripts/space_hashes.sh [POLYTUNE] > hashes.txt
#   POLYTUNE: the binary to use (default: target/release/polytune)
set -euo pipefail
cd "$(dirname "$0")/.."
P=${1:-target/release/polytune}
for f in polybench/*/*.c; do
  "$P" space "$f" --json | python3 -c '
import json, sys
name = sys.argv[1]
doc = json.load(sys.stdin)
for s in doc["skipped"]:
    print(name, "skipped", s)
for v in doc["variants"]:
    print(name, v["hash"], " ".join(sorted(v["configs"])))
' "$(basename "$f" .c)"
done
