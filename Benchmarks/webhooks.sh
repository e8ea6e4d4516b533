#!/usr/bin/env bash
# `make webhook-bench`: how soon the app's backend hears of a published upload.
# A real `ingestd watch --webhook` and the tests' independent receiver on loopback. Uploads are
# dropped one at a time; for each, the time the published directory appears in the CDN (polled
# every 5 ms) is compared with the time the receiver got the signed `upload.published` event.
# A second run refuses every first delivery, to show the retry (the schedule's 5 s step).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.build/release/ingestd}
out=${WEBHOOK_BENCH_OUT:-bench-out/webhooks}
count=${WEBHOOK_UPLOADS:-10}
rm -rf "$out"; mkdir -p "$out"
secret="whsec_$(head -c 32 /dev/urandom | base64)"
printf '%s\n' "$secret" > "$out/secret"; chmod 600 "$out/secret"

run() {  # run NAME UPLOADS [receiver flags...]
  local name=$1 uploads=$2; shift 2
  local dir="$out/$name"; mkdir -p "$dir/spool/incoming" "$dir/cdn"
  python3 Tests/IngestdTesting/webhook_receiver.py --secret "$secret" --port-file "$dir/port" --log "$dir/received.ndjson" "$@" &
  local receiver=$!
  while [ ! -f "$dir/port" ]; do sleep 0.05; done
  "$bin" watch --spool "$dir/spool" --cdn "$dir/cdn" --settle 0.5 --jobs 1 \
    --webhook "http://127.0.0.1:$(cat "$dir/port")/hooks" --webhook-secret-file "$out/secret" 2> "$dir/daemon.log" &
  local daemon=$!
  python3 - "$dir" "$uploads" <<'PY'
import json, os, shutil, sys, time
directory, count = sys.argv[1], int(sys.argv[2])
cdn, received = f"{directory}/cdn", f"{directory}/received.ndjson"
latencies, retries = [], 0
for index in range(count):
    part = f"{directory}/spool/incoming/.u{index}.part"
    shutil.copy("samples/noaudio_odd.webm", part)
    os.rename(part, f"{directory}/spool/incoming/u{index}.webm")
    seen = None
    while seen is None:
        for name in (os.listdir(cdn) if os.path.isdir(cdn) else []):
            if name.startswith(f"u{index}-") and os.path.exists(f"{cdn}/{name}/manifest.json"):
                seen, job = time.time(), name
        time.sleep(0.005)
    while True:
        lines = [json.loads(l) for l in open(received)] if os.path.exists(received) else []
        mine = [l for l in lines if l["body"]["data"]["id"] == job]
        if any(l["status"] == 204 for l in mine):
            break
        time.sleep(0.005)
    assert all(l["verified"] for l in mine)
    retries += len(mine) - 1
    latencies.append(next(l["received"] for l in mine if l["status"] == 204) - seen)
latencies.sort()
print(f"  {count} uploads: publish -> accepted delivery p50 {latencies[len(latencies)//2]*1000:.0f} ms, "
      f"max {latencies[-1]*1000:.0f} ms; refused attempts retried: {retries}")
PY
  kill "$daemon" "$receiver"; wait "$daemon" 2>/dev/null || true
}
echo "== receiver accepts at once"
run accept "$count"
echo "== receiver refuses every first delivery (retried after the schedule's 5 s)"
run refuse 3 --refuse-first
