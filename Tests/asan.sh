#!/usr/bin/env bash
# The transcode path under AddressSanitizer: `ingestd-fuzz transcode` (the transcode job alone,
# without the fleet's dependencies) from the one sanitized build `make fuzz-build` makes
# (libFuzzer's and AddressSanitizer's, in .build-fuzz), run over the samples, the broken real
# recordings in ../shared/media when present, and fuzzed mutants. Fails on any AddressSanitizer report or on an exit status other
# than 0 (published) or 65 (rejected as bad input).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${FUZZ_BIN:-.build-fuzz/debug/ingestd-fuzz}
[ -x "$bin" ] || { echo "no $bin: run make asan (it builds it)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 Tests/fuzz/fuzz.py --seed 3 --count ${ASAN_MUTANTS:-12} --emit "$work/mutants"
inputs=(samples/*.mp4 samples/*.webm samples/upload "$work"/mutants/*)
if [ -d ../shared/media ]; then inputs+=(../shared/media/edge_* ../shared/media/derived_edge_*); fi
ran=0; bad=0
for f in "${inputs[@]}"; do
  out="$work/out-$ran"
  set +e
  SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 "$bin" transcode "$f" "$out" >/dev/null 2>"$work/err"
  status=$?
  set -e
  ran=$((ran + 1))
  if grep -q "AddressSanitizer" "$work/err" || { [ $status -ne 0 ] && [ $status -ne 65 ]; }; then
    bad=$((bad + 1)); echo "FAIL ($status): $f"; head -30 "$work/err"
  fi
done
echo "asan: $((ran - bad)) passed, $bad failed"
[ $bad -eq 0 ]
