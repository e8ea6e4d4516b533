#!/usr/bin/env bash
# `make bench-delete`: what `ingestd delete` costs beside removing the same files by hand.
# One video is published by `watch` into a directory CDN, then copied N times (its job folder
# and CDN folder, as the daemon leaves them). Each copy is deleted by `ingestd delete` (the
# tombstone, the fence, the purge list, the CDN's files, the original, the webhook's outbox
# record), alternating with `rm -rf` of another copy's two folders (the baseline: no record, no
# fence), and `ingestd --version` (the process start alone). Reports p50 and p90 and the ratio. BIN: the binary (default release).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-.build/release/ingestd}
out=${DELETE_BENCH_OUT:-bench-out/delete}
n=${DELETE_RUNS:-20}
rm -rf "$out" && mkdir -p "$out/spool/incoming" "$out/cdn" "$out/spool/outbox/pending" "$out/spool/outbox/delivered" "$out/spool/outbox/dead"
"$bin" watch --spool "$out/spool" --cdn "$out/cdn" --jobs 1 --settle 0.5 2> "$out/watch.log" &
watch=$!
trap 'kill $watch 2>/dev/null || true' EXIT
cp samples/noaudio_odd.webm "$out/spool/incoming/clip.webm"
for _ in $(seq 1 240); do [ -n "$(ls "$out/spool/archive" 2>/dev/null)" ] && break; sleep 0.5; done
sleep 1; kill $watch; wait $watch 2>/dev/null || true
id=$(ls "$out/spool/archive")
files=$(find "$out/cdn/$id" -type f | wc -l)
for i in $(seq 1 $((2 * n))); do
    cp -a "$out/spool/archive/$id" "$out/spool/archive/copy$i"
    cp -a "$out/cdn/$id" "$out/cdn/copy$i"
    sed -i "s/\"$id\"/\"copy$i\"/g" "$out/spool/archive/copy$i/job.json"
done
sync
now() { date +%s.%N; }
: > "$out/times.tsv"
for i in $(seq 1 "$n"); do
    a=$(now); "$bin" delete --spool "$out/spool" --cdn "$out/cdn" --reason-code other --reason bench "copy$((2 * i - 1))" > /dev/null; b=$(now)
    rm -rf "$out/spool/archive/copy$((2 * i))" "$out/cdn/copy$((2 * i))"; c=$(now)
    "$bin" --version > /dev/null; d=$(now)
    echo -e "$(echo "$b - $a" | bc)\t$(echo "$c - $b" | bc)\t$(echo "$d - $c" | bc)" >> "$out/times.tsv"
done
python3 - "$out/times.tsv" "$files" "$n" <<'PY'
import statistics, sys
rows = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
def pct(values, p): values = sorted(values); return values[min(len(values) - 1, int(p * len(values)))]
delete, rm, start = [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]
print(f"delete of a published video ({sys.argv[2]} CDN files + its job folder), {sys.argv[3]} runs, alternating with rm -rf:")
print(f"  ingestd delete  p50 {pct(delete, .5) * 1000:7.1f} ms  p90 {pct(delete, .9) * 1000:7.1f} ms")
print(f"  rm -rf          p50 {pct(rm, .5) * 1000:7.1f} ms  p90 {pct(rm, .9) * 1000:7.1f} ms")
print(f"  ingestd --version p50 {pct(start, .5) * 1000:5.1f} ms  (the process start alone)")
print(f"  ratio p50 x{pct(delete, .5) / pct(rm, .5):.1f} (a process start, the tombstone and purge list fsynced, the webhook recorded)")
PY
