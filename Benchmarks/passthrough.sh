#!/usr/bin/env bash
# Issue #15, side by side in one run: `ingestd transcode` vs. the ffmpeg CLI one-command ladder
# with the same four rungs (Benchmarks/lib/ffmpeg-ladder.sh crf: 234p/360p/720p/1080p, the same
# capped-CRF settings as Presets/default.json, loudnorm, AAC, fMP4 HLS), timed by farm-bench (A/B alternated, medians,
# ratios pair by pair), on two 20 s 1080x1920 30 fps sources:
#   app     — what the app uploads: H.264 High@4.0, 3 Mbit/s peak, IDR every second, AAC
#             (ingestd passes its packets through as the top rung and the MP4);
#   camera  — a camera original: 14 Mbit/s, film grain, 2 s GOP with B-frames (encoded; 35 MB).
# Then, per source: ingestd's topRung decision, the top rung's SSIM against the upload (ffmpeg's
# ssim filter) and bytes for both ladders.
#
# Environment: BENCH_RUNS=3  BENCH_OUT=bench-out  INGESTD_BIN=.build/release/ingestd
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-bench-out}/passthrough
RUNS=${BENCH_RUNS:-3}
BIN=${INGESTD_BIN:-.build/release/ingestd}
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "error: $BIN not found (make release)" >&2; exit 1; }
command -v farm-bench >/dev/null || { echo "error: farm-bench not found" >&2; exit 1; }
source Benchmarks/lib/record.sh
record_reset passthrough

make_source() {  # NAME X264-ARGS...
  local name=$1; shift
  [ -f "$OUT/$name.mp4" ] && return
  echo "generating $OUT/$name.mp4"
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=1080x1920:r=30:d=20" \
    -f lavfi -i "sine=f=440:d=20:sample_rate=48000" -vf "noise=alls=8:allf=t" -c:v libx264 "$@" \
    -pix_fmt yuv420p -color_primaries bt709 -color_trc bt709 -colorspace bt709 \
    -c:a aac -b:a 128k -ac 2 -movflags +faststart "$OUT/$name.mp4"
}
make_source app -preset veryfast -profile:v high -level 4.0 -x264-params keyint=30:min-keyint=30:scenecut=0 \
  -b:v 2500k -maxrate 3000k -bufsize 1500k
make_source camera -preset veryfast -profile:v high -x264-params keyint=60:min-keyint=60:scenecut=0 \
  -b:v 14M -maxrate 16M -bufsize 16M


ssim() {  # DISTORTED REFERENCE → SSIM All
  ffmpeg -hide_banner -nostats -i "$1" -i "$2" -lavfi "[0:v][1:v]ssim" -f null - 2>&1 | sed -n 's/.*SSIM.* All:\([0-9.]*\).*/\1/p' | tail -1
}

video_bytes() {  # PLAYLIST → bytes of its video packets
  ffprobe -v error -select_streams v -show_entries packet=size -of csv=p=0 "$1" | awk '{s += $1} END {print s}'
}

for name in app camera; do
  src="$OUT/$name.mp4"
  echo "== $name: $(ffprobe -v error -select_streams v:0 -show_entries stream=profile,level,bit_rate -of csv=p=0 "$src") ($(stat -c %s "$src") bytes)"
  farm-bench -n "$RUNS" --timeout 1800 --vs "Benchmarks/lib/ffmpeg-ladder.sh crf $src $OUT/$name-ffmpeg" \
    -- sh -c "rm -rf $OUT/$name-ingestd && exec $BIN transcode $src --out $OUT/$name-ingestd --no-progress" | tee "$OUT/$name-farm-bench.txt"
  python3 - "$OUT/$name-ingestd/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
t = m.get("topRung", {})
print(f"ingestd top rung: {t.get('mode')} ({t.get('reason')})")
PY
  ssim_i=$(ssim "$OUT/$name-ingestd/1080p/index.m3u8" "$src"); ssim_f=$(ssim "$OUT/$name-ffmpeg/3/index.m3u8" "$src")
  [ -n "$ssim_i" ] && [ -n "$ssim_f" ] || { echo "error: no SSIM for the $name top rungs" >&2; exit 1; }
  # Video packets only: ingestd's rung segments also carry the rung's sound, the CLI's do not.
  bytes_i=$(video_bytes "$OUT/$name-ingestd/1080p/index.m3u8"); bytes_f=$(video_bytes "$OUT/$name-ffmpeg/3/index.m3u8")
  echo "top rung SSIM vs the upload: ingestd $ssim_i, ffmpeg CLI $ssim_f"
  echo "top rung bytes: ingestd $bytes_i, ffmpeg CLI $bytes_f"
  if [ $name = app ]; then
    record_farm_bench passthrough "app upload" "$OUT/$name-farm-bench.txt" "<= 0.5" "<= 0.5" ""
    record passthrough "app upload" "top rung SSIM vs upload" "$ssim_i" ">= 0.99"
  else
    record_farm_bench passthrough "camera original" "$OUT/$name-farm-bench.txt" "" "<= 0.9" "<= 1.0"
    record passthrough "camera original" "dSSIM top rung vs CLI" "$(python3 -c "print($ssim_i - $ssim_f)")" ">= -0.002"
    record passthrough "camera original" "top rung bytes ratio" "$(python3 -c "print($bytes_i / $bytes_f)")" "<= 1.0"
  fi
  echo
done
