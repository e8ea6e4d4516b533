#!/usr/bin/env bash
# make bench-upload (#31): `ingestd serve` (release build) taking many tus uploads at once on
# loopback. For each load, a fresh server: throughput, server CPU-seconds per GB received, peak
# RSS; 50 uploads at once of 1 MB and of 20 MB show whether RSS depends on upload size (it should
# depend only on how many are in progress), 200 at once of 5 MB the throughput. Then one
# upload cut mid-chunk and resumed: bytes sent twice. For scale, the transcode's CPU per GB of
# upload (the same release binary on a shipped sample).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$PWD/.build/release/ingestd
COUNT=${COUNT:-200}
WORK=$(mktemp -d /tmp/ingestd-bench-upload.XXXXXX)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
echo "upsec_$(openssl rand -base64 32)" > "$WORK/secret"; chmod 600 "$WORK/secret"
cpu() { awk '{print ($14 + $15) / 100}' "/proc/$1/stat"; }
hwm() { awk '/VmHWM/ {print $2 / 1024}' "/proc/$1/status"; }

start() {
  rm -rf "$WORK/spool"; mkdir -p "$WORK/spool"
  PORT=$(free_port)
  "$BIN" serve --http "127.0.0.1:$PORT" --spool "$WORK/spool" --upload-secret-file "$WORK/secret" --max-uploads 512 2> "$WORK/serve.log" &
  SERVER=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && return; sleep 0.1; done
  echo "serve did not start" >&2; cat "$WORK/serve.log" >&2; exit 1
}
stop() { kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=; }
links() { for i in $(seq "$1"); do "$BIN" upload-url --id "$2$i" --server "http://127.0.0.1:$PORT" --upload-secret-file "$WORK/secret" --json \
  | python3 -c 'import json,sys; print(json.load(sys.stdin)["upload_url"])'; done > "$WORK/links"; }

printf '%-24s %8s %10s %10s %12s %10s\n' load "GB" "wall s" "MB/s" "CPU-s/GB" "peak MiB"
for spec in "50 1000000" "50 20000000" "$COUNT 5000000"; do
  set -- $spec
  start
  links "$1" "u$2-"
  before=$(cpu "$SERVER")
  result=$(python3 Benchmarks/lib/tus_load.py load "$WORK/links" "$2" 1048576)
  after=$(cpu "$SERVER"); peak=$(hwm "$SERVER")
  stop
  python3 - "$1" "$2" "$before" "$after" "$peak" "$result" <<'PY'
import json, sys
count, size, before, after, peak, result = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), json.loads(sys.argv[6])
gb = result["bytes"] / 1e9
print(f'{f"{count} x {size / 1e6:g} MB":<24} {gb:8.2f} {result["wall"]:10.2f} {result["bytes"] / 1e6 / result["wall"]:10.1f} {(after - before) / gb:12.2f} {peak:10.1f}'
      + (f'  FAILED {result["failed"]}: {result["errors"]}' if result["failed"] else ""))
PY
done

start
links 1 cut-
python3 Benchmarks/lib/tus_load.py interrupt "$(cat "$WORK/links")" 20000000 4194304 2500000 > "$WORK/cut.json"
python3 - "$WORK/cut.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"cut 2.5 MB into a 4 MiB chunk (at byte {r['cut_at']}): resumed at {r['resumed_at']}, bytes sent twice {r['resent']}"
      f" (goal: at most one chunk, {r['chunk']})")
PY
stop

# For scale: what the transcode spends per GB of upload.
/usr/bin/time -f "%U %S" -o "$WORK/time" "$BIN" transcode samples/portrait_rotated.mp4 --out "$WORK/out" >/dev/null 2>&1
python3 - "$(cat "$WORK/time")" "$(stat -c %s samples/portrait_rotated.mp4)" <<'PY'
import sys
user, system = map(float, sys.argv[1].split()); size = int(sys.argv[2])
print(f"transcode (samples/portrait_rotated.mp4): {(user + system) / (size / 1e9):.0f} CPU-s per GB of upload")
PY
