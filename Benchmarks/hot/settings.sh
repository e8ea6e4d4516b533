#!/usr/bin/env bash
# Issue #32: the encoder settings of the hot ladder (AV1 by libsvtav1, HEVC by libx265 beside the
# published H.264), chosen by measurement. Per source, rung and codec configuration: the highest
# CRF (fewest bytes) whose SSIM against the source is no worse than x264's minus 0.002, with its
# bytes, SSIM and CPU-seconds, from one-pass CLI encodes (the ffmpeg CLI drives the same libavcodec
# encoders as the engine, with the engine's options), against x264 veryfast at the default
# preset's capped CRF as reference. Second run: x265 capped like x264, a real phone source.
#
# Sources (10 s, 1080x1920, 30 fps, x264 CRF 12 "originals" made here, cached under $OUT/src):
#   phone   real phone footage: ../shared/media/phone_android12_4k60_portrait_rot90_vfr.mp4 (Android
#           12, H.264 3840x2160 60 fps VFR, rotation -90: a near-static pegboard wall, 0.3 s).
#           Auto-rotated to portrait (2160x3840), resampled to 30 fps (9 frames), scaled to
#           1080x1920 (lanczos), played forward then backward (18 frames) and that looped to 10 s.
#           Only 9 distinct pictures: see settings.md for what that favours.
#   camera  real footage: ../shared/media/video_cc0_flower_h264_aac_faststart.mp4 (5 s 960x540
#           29.97 fps, a CC0 camera clip) resampled to 30 fps, turned to portrait (transpose,
#           540x960), scaled 2x to 1080x1920 (lanczos), played forward then backward to 10 s
#   grainy  testsrc2=s=1080x1920:r=30:d=10 with noise=alls=8:allf=t (temporal grain on every
#           frame); only on the rungs in BENCH_RUNGS_GRAINY (default 720x1280 1080x1920)
# Each rung is encoded from the source scaled once to the rung size (scale=W:H:flags=bicubic,
# kept as raw y4m so the encoders' CPU is measured without decoding and scaling); SSIM (ffmpeg's
# ssim filter, "All") is measured against that same scaled picture. CPU: user+sys of the ffmpeg
# process (/usr/bin/time "%U %S"), divided by the 10 video seconds. Rung caps (maxrate/bufsize,
# kbit/s, Presets/default.json's H.264 rungs): 234x416 160/160, 360x640 500/750,
# 720x1280 3000/6000, 1080x1920 6000/12000.
#   x264   the reference: -preset veryfast, CRF 28/26/24/23 (234p/360p/720p/1080p) with the rung's
#          -maxrate/-bufsize, keyint=60:min-keyint=60:scenecut=0
#   av1    libsvtav1 -preset P -crf N -g 60 -svtav1-params scd=0 (as the engine), UNCAPPED: SVT-AV1
#          1.4 has no capped CRF. Config av1:P:psnr adds tune=1, av1:P:vq tune=0 (1.4's default
#          is tune=1, so av1:P:psnr encodes bit-identically to av1:P), av1:P:grainN film-grain=N.
#   hevc   libx265 -preset P [-tune T] -crf N -forced-idr 1 -profile:v main -x265-params
#          keyint=60:min-keyint=60:scenecut=0:open-gop=0:vbv-maxrate=M:vbv-bufsize=B with the
#          rung's caps (as the engine): CAPPED like x264
# Configurations are CODEC:PRESET[:TUNE]. For each, the script searches the highest CRF whose SSIM
# is no worse than x264's minus 0.002: from a guess (the CRF just found for the same codec on this
# source and rung, else a per-rung guess), steps of 4 until the target is bracketed, then halving
# to 1 CRF step; bytes and SSIM fall with CRF, so that CRF has the configuration's fewest bytes.
# Recommended CRF per configuration and rung: the lowest of the CRFs chosen on the real sources
# (BENCH_REAL, default phone and camera), so that each of them meets its target; every real source
# is then also encoded at that CRF. The tables: every encode; per configuration its chosen CRF with
# bytes, SSIM and CPU ratios to x264; per codec the configuration with the fewest bytes; the
# recommended CRFs with each real source's ratios at them. Every encode is kept in $OUT/results.tsv
# and not repeated by a later run with the same key (delete the file to measure again; the key
# has no column for the caps or GOP options, so rows from another version of the encode
# arguments must not be kept).
#
# Environment: BENCH_OUT=bench-out (results under $BENCH_OUT/hot)  BENCH_SOURCES="phone camera grainy"
#              BENCH_RUNGS="234x416 360x640 720x1280 1080x1920"  BENCH_RUNGS_GRAINY="720x1280 1080x1920"
#              BENCH_CONFIGS="av1:8 hevc:medium:ssim hevc:fast:ssim"  BENCH_REAL="phone camera"
#              BENCH_EXTRA="" (more searches after the main ones, not in the recommendation:
#                each SOURCE:RUNG:CODEC:PRESET[:TUNE], e.g. grainy:1080x1920:av1:8:grain8)
#              BENCH_MEDIA=../shared/media  BENCH_SSIM_SLACK=0.002  BENCH_KEEP_REFS=0
# Every CPU-heavy command runs under nice -n 19, one at a time.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
OUT=${BENCH_OUT:-bench-out}/hot
MEDIA=${BENCH_MEDIA:-../shared/media}
SOURCES=${BENCH_SOURCES:-phone camera grainy}
RUNGS=${BENCH_RUNGS:-234x416 360x640 720x1280 1080x1920}
RUNGS_GRAINY=${BENCH_RUNGS_GRAINY:-720x1280 1080x1920}
CONFIGS=${BENCH_CONFIGS:-av1:8 hevc:medium:ssim hevc:fast:ssim}
REAL=${BENCH_REAL:-phone camera}
EXTRA=${BENCH_EXTRA:-}
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
      phone)
        local clip="$MEDIA/phone_android12_4k60_portrait_rot90_vfr.mp4"
        [ -f "$clip" ] || { echo "error: $clip not found (BENCH_MEDIA)" >&2; exit 1; }
        # ffmpeg applies the rotation itself (2160x3840); loop, its size above the frame count, repeats the
        # whole forward-backward run (18 frames) once its input ends; trim cuts it at 300 frames
        "${NICE[@]}" ffmpeg -hide_banner -loglevel error -y -i "$clip" -filter_complex \
          "[0:v]fps=30,scale=1080:1920:flags=lanczos,format=yuv420p,split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0,loop=loop=-1:size=32767,trim=end_frame=$((DURATION * 30)),setpts=N/30/TB" \
          -an "${x264[@]}" -f mp4 "$src.tmp" ;;
      camera)
        local clip="$MEDIA/video_cc0_flower_h264_aac_faststart.mp4"
        [ -f "$clip" ] || { echo "error: $clip not found (BENCH_MEDIA)" >&2; exit 1; }
        "${NICE[@]}" ffmpeg -hide_banner -loglevel error -y -i "$clip" -filter_complex \
          "[0:v]fps=30,transpose=1,scale=1080:1920:flags=lanczos,format=yuv420p,split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1:a=0,trim=duration=$DURATION,setpts=N/30/TB" \
          -an "${x264[@]}" -f mp4 "$src.tmp" ;;
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

caps() {  # RUNG → "maxrate bufsize" in kbit/s, the H.264 rung's caps (Presets/default.json)
  case $1 in
    234x416)   echo "160 160" ;;
    360x640)   echo "500 750" ;;
    720x1280)  echo "3000 6000" ;;
    1080x1920) echo "6000 12000" ;;
    *) echo "error: unknown rung $1" >&2; return 1 ;;
  esac
}

x264_args() {  # RUNG → the default preset's capped CRF for that rung
  local crf max buf
  case $1 in 234x416) crf=28 ;; 360x640) crf=26 ;; 720x1280) crf=24 ;; 1080x1920) crf=23 ;; esac
  read -r max buf <<< "$(caps "$1")"
  echo "-crf $crf -maxrate ${max}k -bufsize ${buf}k"
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
    av1)  local svt=scd=0
          case $tune in
            -) ;; psnr) svt+=:tune=1 ;; vq) svt+=:tune=0 ;; grain[0-9]*) svt+=:film-grain=${tune#grain} ;;
            *) echo "error: unknown av1 tune $tune" >&2; exit 1 ;;
          esac
          args=(-c:v libsvtav1 -preset "$preset" -crf "$crf" -g 60 -svtav1-params "$svt") ;;
    hevc) local max buf
          read -r max buf <<< "$(caps "$rung")"
          args=(-c:v libx265 -preset "$preset" -crf "$crf" -forced-idr 1 -profile:v main -tag:v hvc1
                -x265-params "keyint=60:min-keyint=60:scenecut=0:open-gop=0:vbv-maxrate=$max:vbv-bufsize=$buf:log-level=error")
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

guess() {  # CODEC RUNG → the first CRF tried when this cell has no result for the codec yet
  case $1:$2 in   # (from the first run; the search goes either way from it)
    av1:1080x1920) echo 48 ;; av1:720x1280) echo 52 ;; av1:360x640) echo 56 ;; av1:*) echo 58 ;;
    hevc:1080x1920) echo 27 ;; hevc:720x1280) echo 28 ;; hevc:360x640) echo 30 ;; hevc:*) echo 32 ;;
  esac
}

passes() {  # SSIM TARGET → true when SSIM >= TARGET
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$1" "$2"
}

# search SOURCE RUNG CODEC PRESET TUNE TARGET [START]: prints the highest CRF (1 step) with
# SSIM >= TARGET (the lowest CRF tried when none passes)
search() {
  local source=$1 rung=$2 codec=$3 preset=$4 tune=$5 target=$6 lo hi crf min max r
  if [ "$codec" = av1 ]; then min=10; max=63; else min=8; max=51; fi
  crf=${7:-$(guess "$codec" "$rung")}; lo=""; hi=""  # lo: highest passing, hi: lowest failing
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
  echo "${lo:-$crf}"
}

target_of() {  # SOURCE RUNG → x264's SSIM minus the slack (encoding the x264 reference once)
  local ref_ssim
  read -r _ ref_ssim _ <<< "$(encode "$1" "$2" x264 veryfast - "$(x264_args "$2" | awk '{print $2}')")"
  python3 -c 'import sys; print(f"{float(sys.argv[1]) - float(sys.argv[2]):.6f}")' "$ref_ssim" "$SLACK"
}

declare -A recommended=()  # CONFIG@RUNG → the lowest CRF chosen on the real sources
for source in $SOURCES; do
  make_source "$source" >/dev/null
  echo "== $source" >&2
  rungs=$RUNGS; [ "$source" != grainy ] || rungs=$RUNGS_GRAINY
  for rung in $rungs; do
    target=$(target_of "$source" "$rung")
    declare -A found=()  # codec → the CRF just found on this source and rung: the next config's guess
    for config in $CONFIGS; do
      IFS=: read -r codec preset tune <<< "$config"
      crf=$(search "$source" "$rung" "$codec" "$preset" "${tune:--}" "$target" "${found[$codec]:-}")
      found[$codec]=$crf
      if [[ " $REAL " == *" $source "* ]] && [ "$crf" -lt "${recommended[$config@$rung]:-99}" ]; then
        recommended[$config@$rung]=$crf
      fi
    done
    unset found
    [ "${BENCH_KEEP_REFS:-0}" = 1 ] || [[ " $EXTRA " == *" $source:$rung:"* ]] || rm -f "$OUT/ref/$source-$rung.y4m"
  done
done
# Every real source at its rung's recommended CRF (where its own search stopped higher)
for source in $SOURCES; do
  [[ " $REAL " == *" $source "* ]] || continue
  for key in "${!recommended[@]}"; do
    IFS=: read -r codec preset tune <<< "${key%@*}"
    encode "$source" "${key#*@}" "$codec" "$preset" "${tune:--}" "${recommended[$key]}" >/dev/null
  done
  rm -f "$OUT"/ref/"$source"-*.y4m
done
for extra in $EXTRA; do  # SOURCE:RUNG:CODEC:PRESET:TUNE trials beyond the main configurations
  IFS=: read -r source rung codec preset tune <<< "$extra"
  make_source "$source" >/dev/null
  echo "== extra $extra" >&2
  search "$source" "$rung" "$codec" "$preset" "${tune:--}" "$(target_of "$source" "$rung")" >/dev/null
  [ "${BENCH_KEEP_REFS:-0}" = 1 ] || rm -f "$OUT/ref/$source-$rung.y4m"
done

extra_configs=$(for e in $EXTRA; do cut -d: -f3- <<< "$e"; done)
python3 - "$RESULTS" "$SLACK" "$SOURCES" "$RUNGS" "$RUNGS_GRAINY" "$CONFIGS" "$extra_configs" "$REAL" <<'PY'
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
slack = float(sys.argv[2]); sources = sys.argv[3].split(); rungs = sys.argv[4].split()
rungs_grainy = sys.argv[5].split(); real = [s for s in sys.argv[8].split() if s in sources]
def parse(arg):
    out = []
    for c in arg.split():
        p = c.split(":"); c = (p[0], p[1], p[2] if len(p) > 2 else "-")
        if c not in out:
            out.append(c)
    return out
main_configs = parse(sys.argv[6])  # the "Chosen" table picks among these; extras are trials
configs = main_configs + [c for c in parse(sys.argv[7]) if c not in main_configs]
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
cells = [(s, g, reference(s, g)) for s in sources for g in (rungs_grainy if s == "grainy" else rungs)]
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
        if b and (codec, preset, tune) in main_configs and ((s, g, codec) not in best or b["bytes"] < best[(s, g, codec)]["bytes"]):
            best[(s, g, codec)] = b
        for r in mine:
            print(f"| {s} | {g} | {codec} | {name(r)} | {r['bytes'] * 8 / secs / 1000:.0f} | {r['ssim']:.4f} | "
                  f"{r['ssim'] - ref['ssim']:+.4f}{'' if r['ssim'] >= ref['ssim'] - slack - 1e-9 else ' ✗'} | "
                  f"{r['bytes'] / ref['bytes']:.2f} | {r['cpu_s'] / secs:.2f} | {r['cpu_s'] / ref['cpu_s']:.1f} |")

print("\n### Best per configuration (highest CRF within the SSIM target)\n")
print("| source | rung | codec | setting | bytes vs x264 | SSIM | dSSIM | CPU-s/s | CPU vs x264 |")
print("|---|---|---|---|---:|---:|---:|---:|---:|")
for s, g, ref in cells:
    for codec, preset, tune in configs:
        mine = encodes(s, g, codec, preset, tune)
        if not mine:
            continue
        b = fewest_bytes_within(mine, ref)
        if not b:
            print(f"| {s} | {g} | {codec} | {preset}{'' if tune == '-' else ' tune ' + tune} | none within the target | | | | |")
            continue
        print(f"| {s} | {g} | {codec} | {name(b)} | {b['bytes'] / ref['bytes']:.2f} | {b['ssim']:.4f} | {b['ssim'] - ref['ssim']:+.4f} | "
              f"{b['cpu_s'] / secs:.2f} | {b['cpu_s'] / ref['cpu_s']:.1f} |")

print(f"\n### Chosen: fewest bytes at SSIM >= x264's - {slack} (main configurations only)\n")
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

print(f"\n### Recommended: per configuration and rung, the lowest CRF chosen on the real sources ({', '.join(real)})\n")
print("Each real source measured at that CRF; bytes, SSIM and CPU against its own x264 encode.\n")
print("| codec | rung | setting | " + " | ".join(f"{s} bytes × | {s} ΔSSIM | {s} CPU × | {s} CPU-s/s" for s in real) + " |")
print("|---|---|---|" + "---:|---:|---:|---:|" * len(real))
for codec, preset, tune in main_configs:
    for g in rungs:
        chosen = []
        for s in real:
            ref = reference(s, g)
            b = fewest_bytes_within(encodes(s, g, codec, preset, tune), ref) if ref else None
            if b:
                chosen.append(int(b["crf"]))
        if not chosen:
            continue
        crf = min(chosen); row = []
        for s in real:
            ref = reference(s, g)
            r = [r for r in encodes(s, g, codec, preset, tune) if int(r["crf"]) == crf]
            row += [f"{r[0]['bytes'] / ref['bytes']:.2f}", f"{r[0]['ssim'] - ref['ssim']:+.4f}",
                    f"{r[0]['cpu_s'] / ref['cpu_s']:.1f}", f"{r[0]['cpu_s'] / secs:.2f}"] if r and ref else ["not measured", "", "", ""]
        print(f"| {codec} | {g} | {preset}{'' if tune == '-' else ' tune ' + tune} CRF {crf} | " + " | ".join(row) + " |")
PY
