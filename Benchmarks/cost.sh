#!/usr/bin/env bash
# CPU-seconds and peak RSS of one `ingestd transcode` by source duration (10, 30, 60 s) and
# kind: the figures docs/SCALING.md sizes the fleet from.
#   camera: 1080x1920 30 fps, grainy test pattern at a camera-like ~20 Mbit/s
#   app:    the same picture as the app uploads it (H.264 High, 3 Mbit/s, 1 s GOP, AAC)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-bench-out}/cost
BIN=.build/release/ingestd
mkdir -p "$OUT"
# Camera originals at 20 Mbit/s pass 50 MB after ~20 s: measure them with the size limit raised.
"$BIN" preset | python3 -c 'import json,sys; p=json.load(sys.stdin); p["limits"]["maxBytes"]=1<<30; print(json.dumps(p))' > "$OUT/preset.json"
printf "%-8s %6s %12s %14s %10s\n" kind seconds cpu_seconds cpu_per_video_s peak_rss_mb
for kind in camera app; do
  for d in 10 30 60; do
    input="$OUT/${kind}_${d}s.mp4"
    if [ ! -f "$input" ]; then
      if [ $kind = camera ]; then rate=(-b:v 20M -maxrate 20M -bufsize 40M -g 30); else rate=(-b:v 3M -maxrate 3M -bufsize 6M -g 30 -profile:v high -level 4.0); fi
      ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=1080x1920:r=30:d=$d" -f lavfi -i "sine=f=440:d=$d:sample_rate=48000" \
        -vf "noise=alls=8:allf=t" -c:v libx264 -preset veryfast "${rate[@]}" -pix_fmt yuv420p -c:a aac -b:a 128k "$input"
    fi
    rm -rf "$OUT/out"
    /usr/bin/time -f "%U %S %M" -o "$OUT/time.txt" "$BIN" transcode "$input" --out "$OUT/out" --preset "$OUT/preset.json" --no-progress >/dev/null 2>&1
    read -r user sys rss < <(tail -1 "$OUT/time.txt")
    python3 -c "u,s,r,d=$user,$sys,$rss,$d; print(f'%-8s %6d %12.1f %14.2f %10.0f' % ('$kind', d, u+s, (u+s)/d, r/1024))"
  done
done
