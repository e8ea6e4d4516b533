#!/usr/bin/env bash
# Issue #27's scenario as a new user meets it: `ingestd watch` with its defaults, then JUNK junk
# files and REAL short real clips renamed into incoming/ by a shell loop, RUNS times (a fresh
# spool each run). Prints, per run, the entries left in incoming/ once the daemon is idle (goal:
# 0), how long after the last rename incoming/ was empty (every entry taken into work/) and
# when every entry had ended (published, rejected or failed).
# Usage: Benchmarks/spool-burst.sh [JUNK=290] [REAL=10] [RUNS=10] (uses .build/release/ingestd,
# or $INGESTD).
set -euo pipefail
cd "$(dirname "$0")/.."
junk=${1:-290} real=${2:-10} runs=${3:-10}
bin=${INGESTD:-$PWD/.build/release/ingestd}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for run in $(seq 1 "$runs"); do
  base="$out/run$run"
  mkdir -p "$base/spool/incoming" "$base/src" "$base/cdn"
  "$bin" watch --spool "$base/spool" --cdn "$base/cdn" 2>"$base/log" >/dev/null &
  daemon=$!
  for i in $(seq 1 "$junk"); do head -c 100 /dev/urandom >"$base/src/junk$i.mp4"; done
  for i in $(seq 1 "$real"); do cp samples/noaudio_odd.webm "$base/src/real$i.webm"; done
  sleep 1
  for f in "$base"/src/*; do mv "$f" "$base/spool/incoming/"; done
  start=$(date +%s.%N)
  emptied=timeout
  while (( $(echo "$(date +%s.%N) - $start < 300" | bc) )); do
    if [ -z "$(ls "$base/spool/incoming")" ]; then emptied=$(echo "$(date +%s.%N) - $start" | bc); break; fi
    # Idle with entries left: the defect (nothing in work/ for 10 s).
    if [ -z "$(ls "$base/spool/work")" ]; then idle=$(( ${idle:-0} + 1 )); (( idle > 100 )) && break; else idle=0; fi
    sleep 0.1
  done
  # Then until every entry has ended (published, rejected or failed).
  ended=timeout
  while (( $(echo "$(date +%s.%N) - $start < 600" | bc) )); do
    filed=$(( $(ls "$base/spool/archive" | wc -l) + $(ls "$base/spool/rejected" | wc -l) + $(ls "$base/spool/failed" | wc -l) ))
    if [ "$filed" -ge $((junk + real)) ]; then ended=$(echo "$(date +%s.%N) - $start" | bc); break; fi
    sleep 0.2
  done
  printf 'run %d: left in incoming/ %d of %d, incoming/ empty after %s s, all %d filed after %s s\n' \
    "$run" "$(ls "$base/spool/incoming" | wc -l)" $((junk + real)) "$emptied" "$filed" "$ended"
  kill "$daemon"; wait "$daemon" || true
done
