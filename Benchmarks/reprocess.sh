#!/usr/bin/env bash
# Reprocess benchmark: videos per hour with --jobs 1 and --jobs 2, and how the batch time grows
# from 10 to 100 short videos (it should be linear). Uses copies of samples/hdr_hlg.mp4 (2 s).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/ingestd}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
make_archive() {  # make_archive N → $dir/archive-N
  mkdir -p "$dir/archive-$1"
  for i in $(seq 1 "$1"); do cp samples/hdr_hlg.mp4 "$dir/archive-$1/v$i.mp4"; done
}
run() {  # run N JOBS → seconds
  rm -rf "$dir/cdn"; mkdir -p "$dir/cdn"
  local start end
  start=$(date +%s.%N)
  "$BIN" reprocess "$dir/archive-$1" --cdn "$dir/cdn" --jobs "$2" --json > "$dir/report.json"
  end=$(date +%s.%N)
  python3 -c "print(f'{$end-$start:.2f}')"
}
source Benchmarks/lib/record.sh
record_reset reprocess
declare -A SECONDS_FOR  # "VIDEOS JOBS" → seconds
printf "%-7s %-5s %9s %13s %12s\n" videos jobs seconds videos/hour s/video
for n in 10 100; do
  make_archive "$n"
  for jobs in 1 2; do
    s=$(run "$n" "$jobs")
    python3 -c "print(f'{$n:<7} {$jobs:<5} {$s:>9} {$n/$s*3600:>13.0f} {$s/$n:>12.3f}')"
    SECONDS_FOR["$n $jobs"]=$s
  done
done
for jobs in 1 2; do  # linear: a video of a 100-video batch costs what one of a 10-video batch does
  record reprocess "--jobs $jobs" "videos per hour (100)" "$(python3 -c "print(100 / ${SECONDS_FOR[100 $jobs]} * 3600)")"
  record reprocess "--jobs $jobs" "s per video, 100 / 10 videos" \
    "$(python3 -c "print((${SECONDS_FOR[100 $jobs]} / 100) / (${SECONDS_FOR[10 $jobs]} / 10))")" "<= 1.1"
done
