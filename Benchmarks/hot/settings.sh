#!/usr/bin/env bash
# Issue #32: the encoder settings of the hot ladder (AV1 by libsvtav1, HEVC by libx265 beside the
# published H.264), chosen by measurement. Per source, rung and codec: bytes, SSIM and
# CPU-seconds per video-second of one-pass CLI encodes (the ffmpeg CLI drives the same libavcodec
# encoders as the engine), against x264 veryfast at the default preset's capped CRF as reference.
#
# Sources (10 s, 1080x1920, 30 fps, x264 CRF 12 "originals" made here, cached under $OUT/src):
#   camera     real footage: ../shared/media/video_cc0_flower_h264_aac_faststart.mp4 (5 s 960x540
#              29.97 fps, a CC0 camera clip) resampled to 30 fps, turned to portrait (transpose,
#              540x960), scaled 2x to 1080x1920 (lanczos), played forward then backward to 10 s
#   synthetic  testsrc2=s=1080x1920:r=30:d=10
#   grainy     the same with noise=alls=8:allf=t (temporal grain on every frame)
# Each rung is encoded from the source scaled once to the rung size (scale=W:H:flags=bicubic,
# kept as raw y4m so the encoders' CPU is measured without decoding and scaling); SSIM (ffmpeg's
# ssim filter, "All") is measured against that same scaled picture. GOP: keyint 60, no scene cuts,
# closed GOPs, for every codec. CPU: user+sys of the ffmpeg process (/usr/bin/time "%U %S"),
# divided by the 10 video seconds.
#   x264   the reference: -preset veryfast, 234p CRF 28 maxrate/bufsize 160k/160k, 360p CRF 26
#          500k/750k, 720p CRF 24 3000k/6000k, 1080p CRF 23 6000k/12000k (Presets/default.json)
#   av1    libsvtav1 presets 8 and 10, CRF (uncapped; SVT-AV1 1.4 has no capped CRF)
#   hevc   libx265 presets fast and faster, with and without -tune ssim, and medium -tune ssim (a
#          trial on the synthetic source's top rung found it far better than fast), CRF (uncapped),
#          keyint=60:min-keyint=60:scenecut=0:open-gop=0
# For each codec configuration (preset, tune) the script searches the highest CRF whose SSIM is no
# worse than x264's minus 0.002 (steps of 4 from a per-rung guess until the target is bracketed,
# then halving to 1 CRF step): that CRF has the fewest bytes for the configuration, bytes and
# SSIM falling with CRF. Per codec and rung the table then shows the configuration with the
# fewest bytes, its bytes ratio and its CPU ratio to x264. Every encode is kept in
# $OUT/results.tsv and not repeated by a later run (delete the file to measure again).
#
# Environment: BENCH_OUT=bench-out  BENCH_SOURCES="camera synthetic grainy"
#              BENCH_RUNGS="234x416 360x640 720x1280 1080x1920"
#              BENCH_CONFIGS="av1:8 av1:10 hevc:medium:ssim hevc:fast:ssim hevc:faster:ssim hevc:fast hevc:faster"
#                (camera)
#              BENCH_CONFIGS_SYNTHETIC="av1:8 av1:10 hevc:medium:ssim hevc:fast:ssim hevc:faster:ssim" (synthetic, grainy:
#                x265 without -tune ssim is measured on the camera source only, to fit the time budget)
#              BENCH_MEDIA=../shared/media  BENCH_SSIM_SLACK=0.002  BENCH_KEEP_REFS=0
# Every CPU-heavy command runs under nice -n 19.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
OUT=${BENCH_OUT:-bench-out}/hot-settings
MEDIA=${BENCH_MEDIA:-../shared/media}
SOURCES=${BENCH_SOURCES:-camera synthetic grainy}
RUNGS=${BENCH_RUNGS:-234x416 360x640 720x1280 1080x1920}
CONFIGS=${BENCH_CONFIGS:-av1:8 av1:10 hevc:medium:ssim hevc:fast:ssim hevc:faster:ssim hevc:fast hevc:faster}
CONFIGS_SYNTHETIC=${BENCH_CONFIGS_SYNTHETIC:-av1:8 av1:10 hevc:medium:ssim hevc:fast:ssim hevc:faster:ssim}
SLACK=${BENCH_SSIM_SLACK:-0.002}
DURATION=10
NICE=(nice -n 19)
RESULTS=$OUT/results.tsv
mkdir -p "$OUT/src" "$OUT/ref" "$OUT/enc"
[ -f "$RESULTS" ] || printf "source\trung\tcodec\tpreset\ttune\tcrf\tbytes\tssim\tcpu_s\n" > "$RESULTS"
for tool in ffmpeg ffprobe python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "error: $tool is required" >&2; exit 1; }
done
encoders=$(ffmpeg -hide_banner -encoders 2>/dev/null)
for enc in libx264 libsvtav1 libx265; do
  grep -q " $enc " <<< "$encoders" || { echo "error: this ffmpeg has no $enc" >&2; exit 1; }
done

make_source() {  # NAME → path of the 10 s 1080x1920 30 fps original (made once)
  local name=$1 src="$OUT/src/$1.mp4" x264=(-c:v libx264 -preset medium -crf 12 -pix_fmt yuv420p -g 60)
  if [ ! -f "$src" ]; then
    case $name in
      camera)
        local clip="$MEDIA/video_cc0_flower_h264_aac_faststart.mp4"
        [ -f "$clip" ] || { echo "error: $clip not found (BENCH_MEDIA)" >&2; exit 1; }
        "${NICE[@]}" ffmpeg -hide_banner -loglevel error -y -i "$clip" -filter_complex \
          "[0:v]fps=30,transpose=1,scale=1080:1920:flags=lanczos,format=yuv420p,split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0,trim=duration=$DURATION,setpts=N/30/TB" \
          -an "${x264[@]}" -f mp4 "$src.tmp" ;;
      synthetic)
        "${NICE[@]}" ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=1080x1920:r=30:d=$DURATION" \
          "${x264[@]}" -f mp4 "$src.tmp" ;;
      grainy)
        "${NICE[@]}" ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=1080x1920:r=30:d=$DURATION,noise=alls=8:allf=t" \
          "${x264[@]}" -f mp4 "$src.tmp" ;;
      *) echo "error: unknown source $name" >&2; exit 1 ;;
    esac
    mv "$src.tmp" "$src"
  fi
  echo "$src"
}

make_ref() {  # SOURCE RUNG → the source scaled to the rung (raw y4m, made once per run)
  local ref="$OUT/ref/$1-$2.y4m"
  if [ ! -f "$ref" ]; then
    "${NICE[@]}" ffmpeg -hide_banner -loglevel error -y -i "$OUT/src/$1.mp4" \
      -vf "scale=${2%x*}:${2#*x}:flags=bicubic,format=yuv420p" -an -f yuv4mpegpipe "$ref.tmp"
    mv "$ref.tmp" "$ref"
  fi
  echo "$ref"
}

x264_args() {  # RUNG → the default preset's capped CRF for that rung
  case $1 in
    234x416)   echo "-crf 28 -maxrate 160k -bufsize 160k" ;;
    360x640)   echo "-crf 26 -maxrate 500k -bufsize 750k" ;;
    720x1280)  echo "-crf 24 -maxrate 3000k -bufsize 6000k" ;;
    1080x1920) echo "-crf 23 -maxrate 6000k -bufsize 12000k" ;;
    *) echo "error: unknown rung $1" >&2; return 1 ;;
  esac
}

lookup() {  # SOURCE RUNG CODEC PRESET TUNE CRF → "bytes ssim cpu_s" from an earlier encode, or nothing
  local key
  key=$(printf "%s\t" "$@")
  awk -F'\t' -v k="${key%$'\t'}" '$1"\t"$2"\t"$3"\t"$4"\t"$5"\t"$6 == k {print $7, $8, $9; exit}' "$RESULTS"
}

# encode SOURCE RUNG CODEC PRESET TUNE CRF → prints "bytes ssim cpu_s" (measured once, then cached)
encode() {
  local source=$1 rung=$2 codec=$3 preset=$4 tune=$5 crf=$6 cached ref file args tm bytes ssim cpu
  cached=$(lookup "$@")
  if [ -n "$cached" ]; then echo "$cached"; return; fi
  ref=$(make_ref "$source" "$rung")
  file="$OUT/enc/$source-$rung-$codec-$preset-$tune-$crf.mp4"
  case $codec in
    x264) args=(-c:v libx264 -preset "$preset" $(x264_args "$rung") -x264-params keyint=60:min-keyint=60:scenecut=0) ;;
    av1)  args=(-c:v libsvtav1 -preset "$preset" -crf "$crf" -g 60 -svtav1-params scd=0) ;;
    hevc) args=(-c:v libx265 -preset "$preset" -crf "$crf" -x265-params keyint=60:min-keyint=60:scenecut=0:open-gop=0:log-level=error -tag:v hvc1)
          [ "$tune" = - ] || args+=(-tune "$tune") ;;
  esac
  tm="$file.time"
  /usr/bin/time -f "%U %S" -o "$tm" "${NICE[@]}" ffmpeg -hide_banner -loglevel error -y -i "$ref" -an \
    "${args[@]}" -pix_fmt yuv420p -f mp4 "$file" 2> >(grep -v '^Svt\[info\]' >&2)
  cpu=$(awk 'END {printf "%.2f", $1 + $2}' "$tm")
  bytes=$(ffprobe -v error -select_streams v:0 -show_entries packet=size -of csv=p=0 "$file" | awk '{s += $1} END {print s}')
  ssim=$("${NICE[@]}" ffmpeg -hide_banner -nostats -i "$file" -i "$ref" -lavfi "[0:v][1:v]ssim" -f null - 2>&1 \
    | sed -n 's/.*SSIM.* All:\([0-9.]*\).*/\1/p' | tail -1 || true)
  [ -n "$ssim" ] && [ -n "$bytes" ] || { echo "error: no SSIM or bytes for $file" >&2; exit 1; }
  printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$source" "$rung" "$codec" "$preset" "$tune" "$crf" "$bytes" "$ssim" "$cpu" >> "$RESULTS"
  printf "  %-9s %-9s %-4s %-6s %-4s crf %-3s %9s bytes  SSIM %s  %6.2f CPU-s\n" "$source" "$rung" "$codec" "$preset" "$tune" "$crf" "$bytes" "$ssim" "$cpu" >&2
  rm -f "$file" "$tm"
  echo "$bytes $ssim $cpu"
}

guess() {  # CODEC RUNG → the first CRF tried (from trial runs; the search goes either way from it)
  case $1:$2 in
    av1:1080x1920|av1:720x1280) echo 40 ;;  av1:360x640) echo 42 ;;  av1:*) echo 44 ;;
    hevc:1080x1920|hevc:720x1280) echo 26 ;; hevc:360x640) echo 28 ;; hevc:*) echo 30 ;;
  esac
}

passes() {  # SSIM TARGET → true when SSIM >= TARGET
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$2"
}

# search SOURCE RUNG CODEC PRESET TUNE TARGET: the highest CRF (1 step) with SSIM >= TARGET
search() {
  local source=$1 rung=$2 codec=$3 preset=$4 tune=$5 target=$6 lo hi crf step min max r
  if [ "$codec" = av1 ]; then min=10; max=63; else min=8; max=51; fi
  crf=$(guess "$codec" "$rung"); lo=""; hi=""  # lo: highest passing, hi: lowest failing
  while :; do
    r=$(encode "$source" "$rung" "$codec" "$preset" "$tune" "$crf")
    if passes "$(cut -d' ' -f2 <<< "$r")" "$target"; then lo=$crf; else hi=$crf; fi
    if [ -z "$hi" ]; then
      [ "$crf" -ge "$max" ] && break; crf=$((crf + 4 > max ? max : crf + 4))
    elif [ -z "$lo" ]; then
      [ "$crf" -le "$min" ] && break; crf=$((crf - 4 < min ? min : crf - 4))
    elif [ $((hi - lo)) -le 1 ]; then
      break
    else
      crf=$(((lo + hi) / 2))
    fi
  done
}

for source in $SOURCES; do
  make_source "$source" >/dev/null
  echo "== $source" >&2
  for rung in $RUNGS; do
    reference=$(encode "$source" "$rung" x264 veryfast - "$(x264_args "$rung" | awk '{print $2}')")
    read -r _ ref_ssim _ <<< "$reference"
    target=$(python3 -c 'import sys; print(f"{float(sys.argv[1]) - float(sys.argv[2]):.6f}")' "$ref_ssim" "$SLACK")
    configs=$CONFIGS; [ "$source" = camera ] || configs=$CONFIGS_SYNTHETIC
    for config in $configs; do
      IFS=: read -r codec preset tune <<< "$config"
      search "$source" "$rung" "$codec" "$preset" "${tune:--}" "$target"
    done
    [ "${BENCH_KEEP_REFS:-0}" = 1 ] || rm -f "$OUT/ref/$source-$rung.y4m"
  done
done

python3 - "$RESULTS" "$SLACK" "$SOURCES" "$RUNGS" "$CONFIGS $CONFIGS_SYNTHETIC" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
slack = float(sys.argv[2]); sources = sys.argv[3].split(); rungs = sys.argv[4].split()
configs = []
for c in sys.argv[5].split():
    p = c.split(":"); c = (p[0], p[1], p[2] if len(p) > 2 else "-")
    if c not in configs:
        configs.append(c)
for r in rows:
    r["bytes"] = int(r["bytes"]); r["ssim"] = float(r["ssim"]); r["cpu_s"] = float(r["cpu_s"])
secs = 10.0
def encodes(s, g, codec, preset=None, tune=None):
    """This source's and rung's encodes by CODEC (and PRESET and TUNE when given), by CRF."""
    return sorted((r for r in rows if r["source"] == s and r["rung"] == g and r["codec"] == codec
                   and preset in (None, r["preset"]) and tune in (None, r["tune"])), key=lambda r: int(r["crf"]))
def reference(s, g):
    x264 = encodes(s, g, "x264")
    return x264[0] if x264 else None
def fewest_bytes_within(mine, ref):
    """The encode of MINE with the fewest bytes at SSIM >= x264's - slack; None when none is."""
    ok = [r for r in mine if r["ssim"] >= ref["ssim"] - slack - 1e-9]
    return min(ok, key=lambda r: r["bytes"]) if ok else None
def at_equal_ssim(s, g, codec, preset, tune, target):
    """bytes at exactly TARGET SSIM, interpolated (log bytes, linear in SSIM) between the two encodes
    of this configuration that bracket it; None when none do."""
    pts = sorted((r["ssim"], r["bytes"]) for r in encodes(s, g, codec, preset, tune))
    for (s0, b0), (s1, b1) in zip(pts, pts[1:]):
        if s0 <= target <= s1 and s1 > s0:
            return math.exp(math.log(b0) + (math.log(b1) - math.log(b0)) * (target - s0) / (s1 - s0))
    return None
def name(r):
    return f"{r['preset']}" + ("" if r["tune"] == "-" else f" tune {r['tune']}") + f" CRF {r['crf']}"
cells = [(s, g, reference(s, g)) for s in sources for g in rungs]
cells = [(s, g, ref) for s, g, ref in cells if ref]

print("### Every encode\n")
print("| source | rung | codec | setting | kbit/s | SSIM | dSSIM vs x264 | bytes vs x264 | CPU-s/s | CPU vs x264 |")
print("|---|---|---|---|---:|---:|---:|---:|---:|---:|")
best = {}
for s, g, ref in cells:
    print(f"| {s} | {g} | x264 | veryfast CRF {ref['crf']} capped | {ref['bytes'] * 8 / secs / 1000:.0f} | {ref['ssim']:.4f} | | 1.00 | {ref['cpu_s'] / secs:.2f} | 1.00 |")
    for codec, preset, tune in configs:
        mine = encodes(s, g, codec, preset, tune)
        b = fewest_bytes_within(mine, ref)
        if b and ((s, g, codec) not in best or b["bytes"] < best[(s, g, codec)]["bytes"]):
            best[(s, g, codec)] = b
        for r in mine:
            print(f"| {s} | {g} | {codec} | {name(r)} | {r['bytes'] * 8 / secs / 1000:.0f} | {r['ssim']:.4f} | "
                  f"{r['ssim'] - ref['ssim']:+.4f}{'' if r['ssim'] >= ref['ssim'] - slack - 1e-9 else ' ✗'} | "
                  f"{r['bytes'] / ref['bytes']:.2f} | {r['cpu_s'] / secs:.2f} | {r['cpu_s'] / ref['cpu_s']:.1f} |")

print("\n### Best per configuration (highest CRF within the SSIM target)\n")
print("| source | rung | codec | setting | bytes vs x264 | dSSIM | CPU vs x264 |")
print("|---|---|---|---|---:|---:|---:|")
for s, g, ref in cells:
    for codec, preset, tune in configs:
        mine = encodes(s, g, codec, preset, tune)
        if not mine:
            continue
        b = fewest_bytes_within(mine, ref)
        if not b:
            print(f"| {s} | {g} | {codec} | {preset}{'' if tune == '-' else ' tune ' + tune} | none within the target | | |")
            continue
        print(f"| {s} | {g} | {codec} | {name(b)} | {b['bytes'] / ref['bytes']:.2f} | {b['ssim'] - ref['ssim']:+.4f} | {b['cpu_s'] / ref['cpu_s']:.1f} |")

print(f"\n### Chosen: fewest bytes at SSIM >= x264's - {slack}\n")
print("bytes and CPU as ratios to x264's; \"= SSIM\": the same configuration's bytes at exactly x264's SSIM,")
print("interpolated between the two encodes around it (– when none bracket it).\n")
print("| source | rung | x264 kbit/s | x264 SSIM | x264 CPU-s/s | AV1 setting | AV1 bytes | = SSIM | AV1 CPU | HEVC setting | HEVC bytes | = SSIM | HEVC CPU |")
print("|---|---|---:|---:|---:|---|---:|---:|---:|---|---:|---:|---:|")
for s, g, ref in cells:
    row = []
    for codec in ("av1", "hevc"):
        b = best.get((s, g, codec))
        eq = at_equal_ssim(s, g, codec, b["preset"], b["tune"], ref["ssim"]) if b else None
        row += [name(b), f"{b['bytes'] / ref['bytes']:.2f}×", f"{eq / ref['bytes']:.2f}×" if eq else "–",
                f"{b['cpu_s'] / ref['cpu_s']:.1f}×"] if b else ["–", "", "", ""]
    print(f"| {s} | {g} | {ref['bytes'] * 8 / secs / 1000:.0f} | {ref['ssim']:.4f} | {ref['cpu_s'] / secs:.2f} | " + " | ".join(row) + " |")
PY
