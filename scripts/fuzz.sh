#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo-fuzz, libFuzzer) of polytune's front end,
# engine and SCoP detection.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET ...]
#
# Targets: frontend (parse + regenerate round trip), engine (model,
# schedule and code generation under a configuration picked by the input),
# detect (libclang detection + front end). Default: 600 s each, all three.
# Needs a nightly toolchain (`rustup toolchain install nightly`) and
# `cargo install cargo-fuzz`. The growing corpus lives in fuzz/corpus/
# (ignored by git); fuzz/seeds/ holds the small committed corpus: the
# corpus kernels' SCoPs and what `--minimize` kept. Crashes go to
# fuzz/artifacts/TARGET/ and the script exits non-zero if there are any.
#
#   scripts/fuzz.sh --minimize TARGET   merge corpus/TARGET into seeds/TARGET,
#                                        keeping a small set that covers the same features
set -euo pipefail
cd "$(dirname "$0")/../fuzz"

if [ "${1:-}" = "--minimize" ]; then
  t=$2
  mkdir -p "seeds/$t.min"
  cargo +nightly fuzz run -s none "$t" "seeds/$t.min" "seeds/$t" "corpus/$t" -- -set_cover_merge=1
  rm -rf "seeds/$t" && mv "seeds/$t.min" "seeds/$t"
  echo "fuzz: seeds/$t now holds $(ls "seeds/$t" | wc -l) inputs ($(du -sh "seeds/$t" | cut -f1))"
  exit 0
fi

secs=${1:-600}
shift || true
targets=("$@")
[ "${#targets[@]}" -eq 0 ] && targets=(frontend engine detect)

status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  echo "fuzz: $t for ${secs}s"
  # No sanitizer: the Rust side is memory-safe and isl is not instrumented;
  # -s none runs several times faster. Inputs up to 4 KiB, 10 s per input,
  # 4 GiB of memory: a slower or bigger run is reported as a finding.
  rc=0
  cargo +nightly fuzz run -s none "$t" "corpus/$t" "seeds/$t" -- \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 -max_len=4096 \
      -print_final_stats=1 > "fuzz-$t.log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|stat::new_units_added|SUMMARY)' "fuzz-$t.log" || true
  echo "fuzz: $t: corpus $(ls "corpus/$t" | wc -l) inputs, exit $rc"
  [ "$rc" -eq 0 ] || status=1
done
ls artifacts/*/ 2>/dev/null | grep -q . && { echo "fuzz: findings in fuzz/artifacts/"; status=1; }
exit $status
