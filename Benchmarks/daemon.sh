#!/usr/bin/env bash
# Daemon benchmark: pickup latency (atomic rename into incoming/ → the job's first "attempt"
# event: claimed by the intake, then by the worker, job process starting) and the
# daemon's CPU use while idle on an empty spool. Not a test: prints figures.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/ingestd}
ROUNDS=${ROUNDS:-10}
IDLE_SECONDS=${IDLE_SECONDS:-20}
dir=$(mktemp -d)
trap 'kill -9 $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/spool/incoming" "$dir/cdn"
source Benchmarks/lib/record.sh
record_reset daemon
"$BIN" watch --spool "$dir/spool" --cdn "$dir/cdn" 2>/dev/null &
pid=$!
sleep 1

# Idle CPU: utime+stime of the daemon over IDLE_SECONDS with an empty spool.
ticks() { awk '{print $14+$15}' /proc/$pid/stat; }
t0=$(ticks); sleep "$IDLE_SECONDS"; t1=$(ticks)
hz=$(getconf CLK_TCK)
python3 -c "print(f'idle CPU: {($t1-$t0)/$hz/$IDLE_SECONDS*100:.3f} % of one core over $IDLE_SECONDS s')"
record daemon "empty spool" "idle CPU, % of a core" "$(python3 -c "print(($t1-$t0)/$hz/$IDLE_SECONDS*100)")"

# Pickup latency: rename a sample in, time until its job's first attempt starts.
latencies=()
for i in $(seq 1 "$ROUNDS"); do
  cp samples/hdr_hlg.mp4 "$dir/spool/incoming/.r$i.part"
  start=$(date +%s.%N)
  mv "$dir/spool/incoming/.r$i.part" "$dir/spool/incoming/r$i.mp4"
  while ! grep -q "\"event\":\"attempt\",\"id\":\"r${i}-" "$dir/spool/events.ndjson" 2>/dev/null; do sleep 0.01; done
  end=$(date +%s.%N)
  latencies+=("$(python3 -c "print($end-$start)")")
  # wait for the job to finish so every round starts idle
  while [ -n "$(ls "$dir/spool/work")" ]; do sleep 0.05; done
done
median=$(python3 - "${latencies[@]}" <<'PY'
import statistics, sys
xs = sorted(float(x) for x in sys.argv[1:])
print(f"pickup latency over {len(xs)} renames: median {statistics.median(xs)*1000:.0f} ms, max {xs[-1]*1000:.0f} ms (target < 1000 ms)", file=sys.stderr)
print(statistics.median(xs) * 1000)
PY
)
record daemon "rename into incoming/" "pickup latency, median ms" "$median" "<= 1000"
