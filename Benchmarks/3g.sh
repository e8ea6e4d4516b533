#!/usr/bin/env bash
# Plays on 3G (issue #17): every clip's `ingestd transcode` ladder and the ffmpeg CLI ladder
# (Benchmarks/ladder.sh's command) served over HTTP on loopback and played in headless Chromium's
# native HLS player with DevTools network emulation (cache off): 750 kbit/s down / 300 ms latency
# and 400 kbit/s / 400 ms. Measures time from navigation to the first `playing` event, first frame
# to `ended`, stalls (count and seconds), the rendition heights played and the bytes fetched
# before the first frame; prints a table per profile, ingestd and the CLI side by side (medians of
# BENCH_RUNS runs), with the issue's targets marked pass/FAIL for ingestd. Raw runs, with every
# request, go to bench-out/3g/results.json (and a timestamped copy).
#
# Clips: content generated here with the ffmpeg CLI (hard for an encoder: film grain, water-like
# ripples, fast scrolling text and motion; 3.6-20 s; portrait 1080x1920 and landscape 1280x720),
# the project's samples (samples/*.mp4, samples/upload) and, when present, a few phone clips from
# ../shared/media. Inputs ingestd refuses (samples/broken_truncated.mp4) are listed and skipped.
#
# Environment:
#   BENCH_RUNS=3                runs per setting (medians reported)
#   BENCH_PROFILES="750k 400k"  network profiles (see Benchmarks/lib/hls_play.py)
#   BENCH_CLIPS="a b"           only these clips (names as printed; default: all)
#   INGESTD_BIN=.build/release/ingestd   INGESTD_PRESET=   (passed as --preset when set)
#   SHARED_MEDIA=../shared/media (empty: skip)   REUSE_LADDERS=1: keep ladders already built
#   BENCH_OUT=bench-out  CHROMIUM=/usr/lib/chromium/chromium
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-bench-out}/3g
RUNS=${BENCH_RUNS:-3}
BIN=${INGESTD_BIN:-.build/release/ingestd}
PROFILES=${BENCH_PROFILES:-750k 400k}
ONLY=${BENCH_CLIPS:-}
SHARED=${SHARED_MEDIA-../shared/media}
PRESET=${INGESTD_PRESET:-}
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
MEDIA="$OUT/media" WWW="$OUT/www" LOGS="$OUT/logs"
mkdir -p "$MEDIA" "$WWW" "$LOGS"
[ -x "$BIN" ] || { echo "error: $BIN not found (make release)" >&2; exit 1; }

if ! command -v chromium >/dev/null && [ ! -x /usr/lib/chromium/chromium ]; then
  echo "installing Debian package: chromium"
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
command -v ffmpeg >/dev/null || { echo "error: ffmpeg is required (make deps)" >&2; exit 1; }

ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
# Sources are encoded near-transparently (CRF 18, capped at 15 Mbit/s: the 20 s clip stays under
# the 50 MB upload limit) so the grain and motion reach the ladder encoders.
SRC_ENC=(-c:v libx264 -preset veryfast -crf 18 -maxrate 15M -bufsize 15M -pix_fmt yuv420p -c:a aac -b:a 128k -ac 2 -ar 48000)
FONT=/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf
audio_src() { echo "aevalsrc=0.25*sin(2*PI*(220+110*mod(floor(2*t)\,5))*t)+0.08*(random(0)-0.5):s=48000:d=$1"; }

generate() {  # NAME: writes $MEDIA/NAME.mp4 once
  local name=$1 f="$MEDIA/$1.mp4"
  [ -f "$f" ] && return 0
  echo "generating $f"
  case $name in
    grain_portrait_20s)  # 1080x1920, heavy temporal film grain over a moving test pattern
      ff -f lavfi -i "testsrc2=s=1080x1920:r=30:d=20" -f lavfi -i "$(audio_src 20)" \
         -vf "noise=alls=40:allf=t" "${SRC_ENC[@]}" -shortest "$f.tmp.mp4" ;;
    water_landscape_4s)  # 1280x720, 3.6 s: interfering ripples moving everywhere (geq at 640x360) + grain
      ff -f lavfi -i "nullsrc=s=640x360:r=30:d=3.6" -f lavfi -i "$(audio_src 3.6)" \
         -vf "format=yuv444p,geq=lum='128+45*sin(hypot(X-W/3\,Y-H/2)/3.5-T*9)+35*sin(X/9.5+Y/14.5+T*5)*cos(Y/6.5-T*7)+20*sin(hypot(X-W\,Y)/2.5+T*11)':cb='150+25*sin(X/20+T*3)*cos(Y/11-T*5)':cr='100+20*cos(Y/18-T*4)+10*sin(X/5.5+T*9)',scale=1280:720:flags=bicubic,noise=alls=16:allf=t,format=yuv420p" \
         "${SRC_ENC[@]}" -shortest "$f.tmp.mp4" ;;
    scroll_portrait_8s)  # 1080x1920: a cellular automaton and a test pattern scrolling fast, large text racing up, grain
      local text="$MEDIA/scroll.txt"
      python3 -c 'import random; random.seed(17); w="feed upload ladder segment latency rebuffer stall first frame phone cellular water grain motion".split(); print("\n".join(" ".join(random.choice(w) for _ in range(4)) for _ in range(60)))' > "$text"
      local draw=""
      [ -f "$FONT" ] && draw=",drawtext=fontfile=$FONT:textfile=$text:fontsize=72:fontcolor=white:borderw=4:line_spacing=12:x=40:y=h-mod(t*1400\,h+th)"
      ff -f lavfi -i "testsrc2=s=1080x1920:r=30:d=8" -f lavfi -i "cellauto=s=1080x1920:rate=30:rule=110:random_fill_ratio=0.5" \
         -f lavfi -i "$(audio_src 8)" \
         -filter_complex "[0:v]scroll=v=0.045:h=0.02[a];[1:v]format=yuv420p,scroll=h=0.03[b];[a][b]blend=all_mode=difference:shortest=1${draw},noise=alls=12:allf=t[v]" \
         -map "[v]" -map 2:a "${SRC_ENC[@]}" -t 8 "$f.tmp.mp4" ;;
    fast_landscape_6s)  # 1280x720: fast Mandelbrot zoom panning quickly, grain
      ff -f lavfi -i "mandelbrot=s=640x360:r=30:maxiter=256:end_pts=6:end_scale=0.002:start_x=-0.743643887037151:start_y=0.131825904205330" \
         -f lavfi -i "$(audio_src 6)" \
         -vf "scale=1280:720:flags=bicubic,scroll=h=0.06,hue=h=t*90,noise=alls=20:allf=t,format=yuv420p" \
         "${SRC_ENC[@]}" -t 6 "$f.tmp.mp4" ;;
    *) echo "unknown generated clip $name" >&2; return 1 ;;
  esac
  mv "$f.tmp.mp4" "$f"
}

# probe FILE -> "WIDTH HEIGHT HAS_AUDIO" as displayed (rotation applied)
probe() {
  ffprobe -v error -show_streams -of json "$1" | python3 -c '
import json, sys
s = json.load(sys.stdin)["streams"]
v = next(x for x in s if x["codec_type"] == "video")
w, h = v["width"], v["height"]
rot = int(float(v.get("tags", {}).get("rotate", 0) or 0))
for d in v.get("side_data_list", []):
    rot = int(float(d.get("rotation", rot) or 0))
if rot % 180:
    w, h = h, w
print(w, h, int(any(x["codec_type"] == "audio" for x in s)))'
}

# The ffmpeg CLI ladder: Benchmarks/ladder.sh's command (same preset, capped-CRF rate control per
# rung, keyint 60 without scene cuts, loudnorm + AAC 128k once, hls muxer: fMP4, hls_time 6, VOD,
# separate audio group), with the rungs (short side 360/720/1080) oriented like the source and
# none above it, as ingestd does.
cli_ladder() {  # INPUT DIR
  local input=$1 dir=$2 w h audio
  read -r w h audio < <(probe "$input")
  local short=$(( w < h ? w : h ))
  local all=("360 26 800k 1600k" "720 24 3000k 6000k" "1080 23 6000k 12000k") rungs=() r
  for r in "${all[@]}"; do [ "${r%% *}" -le "$short" ] && rungs+=("$r"); done
  [ ${#rungs[@]} -gt 0 ] || rungs=("$(( short / 2 * 2 )) 26 800k 1600k")
  local n=${#rungs[@]} i s crf maxrate bufsize maps=() rc=() vsm=""
  local filter="[0:v]fps=30,split=$n"
  for i in $(seq 0 $((n - 1))); do filter+="[s$i]"; done
  filter+=";"
  for i in $(seq 0 $((n - 1))); do
    read -r s crf maxrate bufsize <<<"${rungs[$i]}"
    if [ "$w" -lt "$h" ]; then filter+="[s$i]scale=$s:-2[v$i];"; else filter+="[s$i]scale=-2:$s[v$i];"; fi
    maps+=(-map "[v$i]")
    rc+=("-crf:v:$i" "$crf" "-maxrate:v:$i" "$maxrate" "-bufsize:v:$i" "$bufsize")
    vsm+="v:$i,agroup:aud "
  done
  local ain=() amap=(-map 0:a:0)
  if [ "$audio" = 0 ]; then ain=(-f lavfi -i "anullsrc=r=48000:cl=stereo"); amap=(-map 1:a -shortest); fi
  rm -rf "$dir"; mkdir -p "$dir"
  ff -i "$input" "${ain[@]}" -filter_complex "${filter%;}" "${maps[@]}" "${amap[@]}" \
    -c:v libx264 -preset veryfast -profile:v high -level 4.1 -pix_fmt yuv420p \
    -x264-params keyint=60:min-keyint=60:scenecut=0:open-gop=0 "${rc[@]}" \
    -af "aresample=48000,loudnorm=I=-14:TP=-1:LRA=11,aresample=48000" -c:a aac -b:a 128k -ar 48000 -ac 2 \
    -f hls -hls_time 6 -hls_playlist_type vod -hls_segment_type fmp4 \
    -var_stream_map "${vsm}a:0,agroup:aud" \
    -master_pl_name master.m3u8 -hls_segment_filename "$dir/%v/seg_%03d.m4s" "$dir/%v/index.m3u8"
}

# The clip list: NAME INPUT
CLIP_LIST=()
for g in water_landscape_4s fast_landscape_6s scroll_portrait_8s grain_portrait_20s; do
  CLIP_LIST+=("$g $MEDIA/$g.mp4")
done
for f in samples/*.mp4; do CLIP_LIST+=("sample_$(basename "${f%.*}") $f"); done
[ -f samples/upload/upload.json ] && CLIP_LIST+=("sample_upload samples/upload")
if [ -n "$SHARED" ] && [ -d "$SHARED" ]; then
  # (the 4K60 and HLG phone clips there are 0.3 s long: too short to say anything about start-up)
  for f in phone_iphone6_h264_portrait_rot90_gps.mov video_cc0_flower_h264_aac_faststart.mp4; do
    [ -f "$SHARED/$f" ] && CLIP_LIST+=("shared_${f%.*} $SHARED/$f")
  done
fi

PLAYED=()
for entry in "${CLIP_LIST[@]}"; do
  name=${entry%% *} input=${entry#* }
  if [ -n "$ONLY" ] && ! grep -qw -- "$name" <<<"$ONLY"; then continue; fi
  case $name in water_*|fast_*|scroll_*|grain_*) generate "$name" ;; esac
  dir="$WWW/$name"
  if [ "${REUSE_LADDERS:-0}" = 1 ] && [ -f "$dir/ingestd/master.m3u8" ] && [ -f "$dir/ffmpeg/master.m3u8" ]; then
    PLAYED+=("$name"); continue
  fi
  rm -rf "$dir"; mkdir -p "$dir"
  echo "ladders for $name ($input)"
  if ! "$BIN" transcode "$input" --out "$dir/ingestd" --no-progress ${PRESET:+--preset "$PRESET"} \
       > "$LOGS/$name-ingestd.txt" 2>&1; then
    echo "  ingestd refused it, skipped: $(tail -1 "$LOGS/$name-ingestd.txt")"
    rm -rf "$dir"; continue
  fi
  cli_input=$input
  # An upload directory (clips + sound track): the CLI ladder is made from ingestd's joined MP4.
  [ -d "$input" ] && cli_input="$dir/ingestd/video.mp4"
  if ! cli_ladder "$cli_input" "$dir/ffmpeg" > "$LOGS/$name-ffmpeg.txt" 2>&1; then
    echo "  the ffmpeg CLI ladder failed: $(tail -1 "$LOGS/$name-ffmpeg.txt")"
  fi
  PLAYED+=("$name")
done
[ ${#PLAYED[@]} -gt 0 ] || { echo "no clips to play" >&2; exit 1; }

stamp=$(date -u +%Y%m%dT%H%M%SZ)
meta=$(python3 -c 'import json, os, sys; b = sys.argv[1]
print(json.dumps({"started": sys.argv[2], "ingestd_bin": b, "ingestd_bin_mtime": os.path.getmtime(b),
  "ingestd_preset": sys.argv[3] or "default", "git_head": sys.argv[4], "git_dirty": sys.argv[5] != "",
  "command": sys.argv[6]}))' "$BIN" "$stamp" "$PRESET" "$(git rev-parse --short HEAD 2>/dev/null || true)" \
  "$(git status --porcelain -- Sources Presets 2>/dev/null | head -1)" \
  "BENCH_RUNS=$RUNS BENCH_PROFILES='$PROFILES' ${ONLY:+BENCH_CLIPS='$ONLY' }INGESTD_BIN=$BIN Benchmarks/3g.sh")
# shellcheck disable=SC2086
python3 Benchmarks/lib/hls_play.py --root "$WWW" --clips "${PLAYED[@]}" --profiles $PROFILES --runs "$RUNS" \
  --json "$OUT/results-$stamp.json" --table "$OUT/table-$stamp.md" --meta "$meta"
cp "$OUT/results-$stamp.json" "$OUT/results.json"
cp "$OUT/table-$stamp.md" "$OUT/table.md"
echo
echo "raw results: $OUT/results.json (and results-$stamp.json); table: $OUT/table.md"
