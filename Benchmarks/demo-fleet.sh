#!/usr/bin/env bash
# `make demo-fleet`: the fleet on one machine. A throwaway PostgreSQL, the spool daemon as the
# queue's producer (`watch --database --jobs 0`), three workers (each standing in for a host),
# every sample dropped into the spool; waits until every job has ended, stops everything
# gracefully (SIGTERM) and prints where everything is.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib/pg.sh
out=$(realpath -m "${1:-out/demo-fleet}")
bin=.build/release/ingestd
rm -rf "$out"
mkdir -p "$out/spool/incoming" "$out/cdn"
pg_up "$out/pg"
pids=()
cleanup() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait || true; pg_down; }
trap cleanup EXIT
"$bin" watch --spool "$out/spool" --cdn "$out/cdn" --database "$PG_URL" --jobs 0 2> "$out/producer.log" &
pids+=($!)
for n in 1 2 3; do
  "$bin" worker --database "$PG_URL" --cdn "$out/cdn" --uploads "$out/spool" --jobs 1 --http "127.0.0.1:$((9463 + n))" 2> "$out/worker-$n.log" &
  pids+=($!)
done
sleep 1
count=0
for f in samples/*.mp4 samples/*.webm; do
  name=$(basename "$f")
  cp "$f" "$out/spool/incoming/.$name.part" && mv "$out/spool/incoming/.$name.part" "$out/spool/incoming/$name"
  count=$((count + 1))
done
cp -r samples/upload "$out/spool/incoming/.upload.part" && mv "$out/spool/incoming/.upload.part" "$out/spool/incoming/upload"
count=$((count + 1))
echo "dropped $count uploads into $out/spool/incoming/; a producer and three workers share $PG_URL ..."
deadline=$((SECONDS + 600))
until [ "$(pg_sql "SELECT count(*) FROM ingestd_jobs WHERE state IN ('published', 'rejected', 'failed')")" -ge "$count" ]; do
  [ "$SECONDS" -ge "$deadline" ] && { echo "timed out"; exit 1; }
  sleep 0.5
done
echo
"$bin" status --database "$PG_URL"
echo
echo "who did what:  $(pg_sql "SELECT string_agg(worker || ': ' || n, ', ') FROM (SELECT worker, count(*) n FROM ingestd_jobs WHERE state = 'published' GROUP BY worker) w")"
echo "metrics of worker 1: $(curl -s 127.0.0.1:9464/metrics | grep -E '^ingestd_jobs_total' | tr '\n' ' ')"
cleanup
trap - EXIT
echo
echo "published ladders: $out/cdn/<id>/master.m3u8"
echo "originals:         $out/spool/queued/<id>/upload/   (the job rows say how each ended)"
echo "logs:              $out/producer.log, $out/worker-{1,2,3}.log; PostgreSQL: $out/pg/server.log"
