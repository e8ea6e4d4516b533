#!/usr/bin/env bash
# `make demo`: the main job on the shipped samples. Starts `ingestd watch` on a fresh spool,
# drops every sample into incoming/ (atomically, by rename) — the single files and the multi-clip
# upload directory samples/upload/ (three clips + a music track) — waits until each upload is filed,
# stops the daemon gracefully and prints where the output is.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/demo}
bin=${INGESTD_BIN:-.build/release/ingestd}
rm -rf "$out"
mkdir -p "$out/spool/incoming" "$out/cdn"
INGESTD_LOG_LEVEL=info "$bin" watch --spool "$out/spool" --cdn "$out/cdn" 2> "$out/daemon.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
count=0
for f in samples/*.mp4 samples/*.webm; do
  name=$(basename "$f")
  cp "$f" "$out/spool/incoming/.$name.part"
  mv "$out/spool/incoming/.$name.part" "$out/spool/incoming/$name"
  count=$((count + 1))
done
# The multi-clip upload: built under a hidden name, renamed in whole.
cp -r samples/upload "$out/spool/incoming/.upload.part"
mv "$out/spool/incoming/.upload.part" "$out/spool/incoming/upload"
count=$((count + 1))
echo "dropped $count samples into $out/spool/incoming/; waiting for the daemon (pid $pid)..."
entries() { (ls -A "$1" 2>/dev/null || true) | wc -l; }
deadline=$((SECONDS + 600))
while :; do
  done_count=$(( $(entries "$out/spool/archive") + $(entries "$out/spool/rejected") + $(entries "$out/spool/failed") ))
  [ "$done_count" -ge "$count" ] && break
  [ "$SECONDS" -ge "$deadline" ] && { echo "timed out"; exit 1; }
  sleep 0.5
done
kill -TERM $pid; wait $pid || true
trap - EXIT
echo
"$bin" status --spool "$out/spool"
echo
echo "published ladders:"
for d in "$out"/cdn/*/; do
  echo "  ${d}master.m3u8   ($(python3 -c "import json,sys; m=json.load(open('${d}manifest.json')); print(f\"{m['width']}x{m['height']}, {m['durationSeconds']:.1f} s, {len(m['sources'])} clip(s){' + music' if m.get('music') else ''}, rungs: {' '.join(r['name'] for r in m['renditions'])}\")"))"
done
echo "originals:   $out/spool/archive/  (rejected with reason.json: $out/spool/rejected/)"
echo "event log:   $out/spool/events.ndjson   metrics: $out/spool/metrics.prom   daemon log: $out/daemon.log"
