#!/usr/bin/env bash
# `make queue-bench`: the PostgreSQL job queue on its own, on a throwaway loopback server.
#  1. claim -> heartbeat -> fenced publish of no-op jobs by 16 concurrent claimers (jobs/s,
#     claim latency p50/p99), through the real queue code (`ingestd queue-bench`);
#  2. pickup: enqueue -> claim by an idle claimer waiting on LISTEN;
#  3. EXPLAIN of the claim query with 1 M queued rows (must be an index scan);
#  4. a real `ingestd worker`, idle for 30 s (CPU it burns), then `submit` -> its claim, 10 times.
# Note: fsync stays on (the server's default), as in production.
set -euo pipefail
cd "$(dirname "$0")/.."
. Benchmarks/lib/pg.sh
out=${QUEUE_BENCH_OUT:-bench-out/queue}
bin=.build/release/ingestd
mkdir -p "$out"
pg_up "$out/pg"
trap 'kill $worker 2>/dev/null || true; pg_down' EXIT
echo "== queue on PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}'), $(nproc) cores, fsync on"
"$bin" queue-bench --database "$PG_URL" --jobs "${QUEUE_JOBS:-5000}" --claimers 16 --pickups 20 --plan-rows 1000000

echo "== a real worker: idle CPU and submit -> claim"
pg_sql "TRUNCATE ingestd_jobs CASCADE" >/dev/null 2>&1
mkdir -p "$out/cdn" "$out/uploads"
cp samples/noaudio_odd.webm "$out/uploads/"
"$bin" worker --database "$PG_URL" --cdn "$out/cdn" --uploads "$out/uploads" --jobs 1 2> "$out/worker.log" &
worker=$!
sleep 2
ticks() { awk '{print $14 + $15}' "/proc/$worker/stat"; }
before=$(ticks); sleep 30; after=$(ticks)
hz=$(getconf CLK_TCK)
python3 -c "print(f'idle worker: {($after - $before) / $hz:.2f} CPU-seconds in 30 s ({($after - $before) / $hz / 30 * 100:.2f} % of a core)')"
for i in $(seq 1 10); do
  "$bin" submit --database "$PG_URL" --uploads "$out/uploads" "$out/uploads/noaudio_odd.webm" >/dev/null
  sleep 1.5
done
pg_sql "SELECT 'submit -> claim by an idle worker, ' || count(*) || ' jobs: p50 ' ||
               round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) || ' ms, max ' || round(max(ms)::numeric, 1) || ' ms'
          FROM (SELECT extract(epoch FROM c.at - q.at) * 1000 AS ms
                  FROM ingestd_job_events q JOIN ingestd_job_events c ON c.job_id = q.job_id AND c.event = 'claimed'
                 WHERE q.event = 'queued') AS t"
