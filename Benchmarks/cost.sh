#!/usr/bin/env bash
# How the cost of one `ingestd transcode` grows (issue #15; the figures docs/SCALING.md sizes the
# fleet from): user+system CPU-seconds and peak RSS
#   by duration (10, 30, 60 s) of two 1080x1920 30 fps kinds:
#     camera  a grainy test pattern at a camera-like 20 Mbit/s at 1080p (top rung encoded)
#     app     the same picture as the app uploads it (H.264 High@4.0, 3 Mbit/s, 1 s GOP: passed through)
#   by resolution (portrait 720x1280, 1080x1920, 2160x3840) of the camera kind, 10 s.
# Peak RSS must not grow with duration: frame queues, lookahead and the loudness filter are
# bounded by design, not by the source's length.
#
# Environment: BENCH_OUT=bench-out  INGESTD_BIN=.build/release/ingestd
set -euo pipefail
shopt -s inherit_errexit  # a failure inside $(...) stops the script too
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-bench-out}/cost
BIN=${INGESTD_BIN:-.build/release/ingestd}
mkdir -p "$OUT"
source Benchmarks/lib/record.sh
record_reset cost
declare -A RSS_KB  # "KIND WxH SECONDS" → peak RSS, for the flatness check
[ -x "$BIN" ] || { echo "error: $BIN not found (make release)" >&2; exit 1; }
# Camera originals pass 50 MB after ~20 s: measure them with the size limit raised.
"$BIN" preset | python3 -c 'import json,sys; p=json.load(sys.stdin); p["limits"]["maxBytes"]=1<<30; print(json.dumps(p))' > "$OUT/preset.json"

source_file() {  # KIND WIDTH HEIGHT SECONDS → path (generated once)
  local kind=$1 w=$2 h=$3 d=$4 input="$OUT/$1_$2x$3_$4s.mp4" rate
  if [ ! -f "$input" ]; then
    if [ "$kind" = camera ]; then
      local mbps=$((20 * w * h / (1080 * 1920))); [ $mbps -le 48 ] || mbps=48  # a phone's 4K is ~48 Mbit/s
      rate=(-b:v ${mbps}M -maxrate $((mbps * 6 / 5))M -bufsize $((mbps * 2))M -g 60)
    else
      rate=(-b:v 2500k -maxrate 3000k -bufsize 1500k -profile:v high -level 4.0 -x264-params keyint=30:min-keyint=30:scenecut=0)
    fi
    ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=${w}x${h}:r=30:d=$d" -f lavfi -i "sine=f=440:d=$d:sample_rate=48000" \
      -vf "noise=alls=8:allf=t" -c:v libx264 -preset veryfast "${rate[@]}" -pix_fmt yuv420p \
      -color_primaries bt709 -color_trc bt709 -colorspace bt709 -c:a aac -b:a 128k -f mp4 "$input.tmp"
    mv "$input.tmp" "$input"  # only a complete source is kept for later runs
  fi
  echo "$input"
}

row() {  # KIND WIDTH HEIGHT SECONDS
  local input user sys rss mode
  input=$(source_file "$@")
  rm -rf "$OUT/out"
  /usr/bin/time -f "%U %S %M" -o "$OUT/time.txt" "$BIN" transcode "$input" --out "$OUT/out" --preset "$OUT/preset.json" --no-progress \
    >/dev/null 2>"$OUT/transcode.log" || { echo "error: transcode of $input failed (see $OUT/transcode.log)" >&2; exit 1; }
  read -r user sys rss < <(tail -1 "$OUT/time.txt")
  mode=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["topRung"]["mode"])' "$OUT/out/manifest.json")
  python3 -c "u,s,r,d=$user,$sys,$rss,$4; print('%-7s %10s %6d %12.1f %14.2f %11.0f  %s' % ('$1', '$2x$3', d, u+s, (u+s)/d, r/1024, '$mode'))"
  record cost "$1 $2x$3 $4 s" "CPU-s per video s" "$(python3 -c "print(($user + $sys) / $4)")"
  RSS_KB["$1 $2x$3 $4"]=$rss
}

printf "%-7s %10s %6s %12s %14s %11s  %s\n" kind source seconds cpu_seconds cpu_per_video_s peak_rss_MB top_rung
for kind in camera app; do
  for d in 10 30 60; do row $kind 1080 1920 $d; done
done
row camera 720 1280 10
row camera 2160 3840 10
for kind in camera app; do  # flat: 60 s of video may not take more memory than 10 s
  record cost "$kind 1080x1920" "peak RSS 60 s / 10 s" "$(python3 -c "print(${RSS_KB[$kind 1080x1920 60]} / ${RSS_KB[$kind 1080x1920 10]})")" "<= 1.1"
done
