#!/usr/bin/env bash
# Coverage-guided fuzzing (libFuzzer + AddressSanitizer) of the probe/plan path and the
# upload.json and preset parsers, each target for SECONDS (default 60). Seeds come from
# Tests/fuzz/libfuzzer/corpus/<target> and .../regressions/<target> (inputs that once crashed);
# new interesting inputs go to a scratch corpus, crashes to out/fuzz/<target>-crash-*.
# Prints executions per second and coverage per target; exits non-zero on any crash.
# A crash found here becomes a regression: copy it into regressions/<target>/ (replayed by the
# tests through the plain `ingestd-fuzz` build).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
binary=${FUZZ_BIN:-.build-fuzz/debug/ingestd-fuzz}
mkdir -p out/fuzz
status=0
printf '%-8s %10s %10s %8s %8s\n' target runs exec/s cov ft
for target in probe upload preset caption; do
  scratch=$(mktemp -d)
  seeds=(Tests/fuzz/libfuzzer/corpus/$target)
  [ -d Tests/fuzz/libfuzzer/regressions/$target ] && seeds+=(Tests/fuzz/libfuzzer/regressions/$target)
  set +e
  INGESTD_FUZZ_TARGET=$target ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no \
    "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="out/fuzz/$target-" "$scratch" "${seeds[@]}" >"out/fuzz/$target.log" 2>&1
  code=$?
  set -e
  rm -rf "$scratch"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "out/fuzz/$target.log")
  line=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)' "out/fuzz/$target.log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$line")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$line")
  printf '%-8s %10s %10s %8s %8s\n' "$target" "${runs:-0}" "$(( ${runs:-0} / seconds ))" "${cov:-?}" "${ft:-?}"
  if [ $code -ne 0 ]; then
    status=1
    echo "CRASH in $target (exit $code): see out/fuzz/$target.log and out/fuzz/$target-crash-*"
    grep -E "ERROR|SUMMARY|Fatal error|deadly" "out/fuzz/$target.log" | head -10 || true
  fi
done
exit $status
