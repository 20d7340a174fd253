#!/usr/bin/env bash
# Coverage-guided fuzzing campaign (issue 33): build the libFuzzer targets
# of tests/fuzz (CC=clang -DREMAT_FUZZ=ON, in their own build folder;
# clang comes from scripts/bootstrap.sh when absent), then run each target
# for S seconds on a scratch copy of its corpus (tests/fuzz/corpus/NAME/)
# under ASan+UBSan+LSan.  Prints per target "target: NAME", "N execs" and
# the edges and features covered (libFuzzer's final cov:/ft:), and exits
# non-zero on any crash, leak, timeout or sanitizer report (the input is
# kept and its path printed: fix the bug, add the input to the corpus).
# Kept as a script: remat bench plans graphs, this builds and runs fuzzers.
#
# Usage: bench/fuzz.sh [--seconds S] [--jobs J] [--build DIR] [TARGET...]
#   --seconds S  per target (default 60)
#   --jobs J     targets run at once (default 1)
#   --build DIR  build folder (default build-fuzz)
#   TARGET       load nx schedule budget results cli plan (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

all_targets=(load nx schedule budget results cli plan)
seconds=60
jobs=1
build=build-fuzz
targets=()
usage() { sed -n '/^# Usage:/,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit "$1"; }
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    -h|--help) usage 0 ;;
    -*) echo "fuzz.sh: unknown option '$1'" >&2; usage 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  case " ${all_targets[*]} " in
    *" $t "*) ;;
    *) echo "fuzz.sh: unknown target '$t' (known: ${all_targets[*]})" >&2; exit 2 ;;
  esac
done
case $seconds in ''|*[!0-9]*) echo "fuzz.sh: --seconds needs a whole number" >&2; exit 2 ;; esac
case $jobs in ''|*[!0-9]*|0) echo "fuzz.sh: --jobs needs a positive number" >&2; exit 2 ;; esac

# clang and its libFuzzer runtime, through the project's bootstrap.
have_fuzzer() {
  command -v clang >/dev/null || return 1
  local rt
  rt=$(clang -print-resource-dir 2>/dev/null) || return 1
  compgen -G "$rt/lib/*/libclang_rt.fuzzer*.a" >/dev/null
}
if ! have_fuzzer; then
  echo "fuzz.sh: installing clang (scripts/bootstrap.sh)" >&2
  REMAT_BOOTSTRAP_FUZZ=1 scripts/bootstrap.sh --quiet --packages
fi

echo "fuzz.sh: building the targets in $build/" >&2
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREMAT_FUZZ=ON \
    -DREMAT_TESTS=OFF -DREMAT_BENCH=OFF >/dev/null
fi
build=$(cd "$build" && pwd)
bins=()
for t in "${targets[@]}"; do bins+=("fuzz_$t"); done
cmake --build "$build" -j "$(nproc)" --target "${bins[@]}" >/dev/null

work=$(mktemp -d "${TMPDIR:-/tmp}/remat-fuzz.XXXXXX")
echo "fuzz.sh: scratch corpora, logs and findings in $work" >&2
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}

# One campaign: NAME -> $work/NAME.{log,status}, findings in $work/NAME/findings/.
run_one() {
  local t=$1 dir=$work/$1 rc=0 start=$SECONDS
  mkdir -p "$dir/corpus" "$dir/findings"
  cp "$top/tests/fuzz/corpus/$t/"* "$dir/corpus/"
  # -timeout: one input taking 20 s is a finding (plan runs each fast
  # planner for 0.05 s); -close_fd_mask=3 keeps the targets' own output (the CLI's
  # usage messages) out of the log; sanitizer reports still come through.
  "$build/fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 \
    -timeout=20 -rss_limit_mb=2560 -close_fd_mask=3 -max_len=8192 \
    -artifact_prefix="$dir/findings/" "$dir/corpus" >"$work/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$t.status"
  echo $((SECONDS - start)) >"$work/$t.seconds"
}

pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  echo "fuzz.sh: $t for ${seconds}s" >&2
  run_one "$t" &
  pids+=($!)
done
wait "${pids[@]}" 2>/dev/null || true

failed=0
for t in "${targets[@]}"; do
  log=$work/$t.log
  rc=$(cat "$work/$t.status" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)
  cov=$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9A-Za-z]*\).*/\1/p' <<<"$last")
  findings=$(find "$work/$t/findings" -type f | wc -l)
  echo "target: $t"
  echo "  ${execs:-0} execs in $(cat "$work/$t.seconds" 2>/dev/null || echo '?')s, cov: ${cov:-?} edges, ft: ${ft:-?} features, corpus ${corp:-?}"
  if [ "$rc" != 0 ] || [ "$findings" -gt 0 ] ||
     grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|ALARM: working on the last Unit|SUMMARY: ' "$log"; then
    failed=1
    echo "  FINDING (exit $rc): $(grep -m1 -E 'ERROR:|runtime error:|ALARM:|SUMMARY:' "$log" || echo 'see the log')"
    echo "  log: $log"
    find "$work/$t/findings" -type f | sed 's/^/  input: /'
  else
    echo "  no finding"
  fi
done
if [ "$failed" = 0 ]; then
  echo "fuzz.sh: no finding in ${#targets[@]} target(s)" >&2
else
  echo "fuzz.sh: FINDINGS above (inputs kept in $work)" >&2
fi
exit "$failed"
