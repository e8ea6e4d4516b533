#!/usr/bin/env bash
# Issue #15: is ingestd's ladder as good as the CLI's at no more bytes? Per rung, bytes, SSIM and
# (when an ffmpeg with libvmaf can be had) VMAF of three ladders of the same source:
#   ingestd  `ingestd transcode` with Presets/default.json
#   crf      the ffmpeg CLI capped-CRF ladder with the same settings (Benchmarks/lib/ffmpeg-ladder.sh crf)
#   crf3g    the same CLI ladder with ingestd's 3G layout (IDRs also at 0.5 and 1.5 s, the startup
#            rung's buffer a tenth full): what separates the engine from the layout's price
#   fixed    the CLI at Apple's HLS authoring-spec bitrates (Benchmarks/lib/ffmpeg-ladder.sh fixed)
# on four kinds of content, 1080x1920 30 fps camera-like originals (x264 at 20 Mbit/s) made here:
#   talk   static talking head: still background, a slowly moving face, sensor noise
#   fast   fast motion: a detailed test pattern scrolling in both directions
#   dark   dark and noisy: the pattern at a fifth of its brightness under heavy grain
#   text   screen text: a page of text scrolling up, as in a screen recording
# Bytes: the rung's video packets. SSIM: each rung against the source scaled to the rung's size (the loss the encoder adds).
# VMAF (model v0.6.1, every 3rd frame): each rung scaled up to 1080x1920 against the source. The
# libvmaf build comes from PyPI's imageio-ffmpeg wheel (an ffmpeg 9 static build), unpacked under
# $OUT for the benchmark only; without network, VMAF is left out.
#
# Environment: BENCH_OUT=bench-out  BENCH_SECONDS=10  BENCH_KINDS="talk fast dark text"
#              BENCH_VMAF=1 (0: skip)  INGESTD_BIN=.build/release/ingestd
set -euo pipefail
shopt -s inherit_errexit  # a failure inside $(...) stops the script too
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-bench-out}/quality
source Benchmarks/lib/record.sh
BIN=${INGESTD_BIN:-.build/release/ingestd}
DURATION=${BENCH_SECONDS:-10}
KINDS=${BENCH_KINDS:-talk fast dark text}
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "error: $BIN not found (make release)" >&2; exit 1; }
# Camera-like originals pass 50 MB: the default preset with the size limit raised, and the top
# rung always encoded (an easy source may qualify for passthrough; Benchmarks/passthrough.sh
# measures that), so every rung compares two encoders.
"$BIN" preset | python3 -c 'import json,sys; p=json.load(sys.stdin); p["limits"]["maxBytes"]=1<<30; p["video"]["passthrough"]=False; print(json.dumps(p))' > "$OUT/preset.json"

vmaf_ffmpeg=""
if [ "${BENCH_VMAF:-1}" = 1 ]; then
  if [ ! -d "$OUT/vmaf/imageio_ffmpeg" ]; then
    mkdir -p "$OUT/vmaf"
    if pip download -q --no-deps --only-binary :all: imageio-ffmpeg==0.8.1 -d "$OUT/vmaf" >/dev/null 2>&1; then
      (cd "$OUT/vmaf" && python3 -m zipfile -e imageio_ffmpeg-*.whl .)
    fi
  fi
  candidate=$(ls "$OUT"/vmaf/imageio_ffmpeg/binaries/ffmpeg-* 2>/dev/null | head -1 || true)
  if [ -n "$candidate" ]; then
    chmod +x "$candidate"
    filters=$("$candidate" -hide_banner -filters 2>/dev/null || true)
    case $filters in *libvmaf*) vmaf_ffmpeg=$candidate ;; esac
  fi
  [ -n "$vmaf_ffmpeg" ] || echo "note: no ffmpeg with libvmaf (pip download imageio-ffmpeg failed): VMAF left out" >&2
fi

picture() {  # KIND → lavfi source graph of that kind of content
  case $1 in
    talk) echo "color=c=0x404a58:s=1080x1920:r=30:d=$DURATION,drawbox=x='440+30*sin(t*2)':y='600+15*sin(t*3)':w=220:h=280:color=0xc89878:t=fill,drawbox=x='500+30*sin(t*2)':y='800+15*sin(t*3)':w=100:h='10+20*abs(sin(t*7))':color=0x602020:t=fill,noise=alls=4:allf=t" ;;
    fast) echo "testsrc2=s=1080x1920:r=30:d=$DURATION,scroll=h=0.013:v=0.021,noise=alls=6:allf=t" ;;
    dark) echo "testsrc2=s=1080x1920:r=30:d=$DURATION,format=yuv420p,lutyuv=y='16+(val-16)*0.22':u='128+(val-128)*0.5':v='128+(val-128)*0.5',noise=alls=14:allf=t+u" ;;
    text) echo "color=c=white:s=1080x1920:r=30:d=$DURATION,drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:textfile=$OUT/text.txt:fontsize=36:fontcolor=black:line_spacing=14:x=30:y=40-120*t" ;;
  esac
}
python3 -c "
import random
random.seed(1)
words = 'the quick brown fox jumps over lazy dog pixel frame codec segment ladder rung upload worker stream buffer'.split()
print('\n'.join(f'{i:03d}  ' + ' '.join(random.choice(words) for _ in range(6)) for i in range(160)))" > "$OUT/text.txt"

video_bytes() {  # PLAYLIST → bytes of its video packets (ingestd's rungs carry the sound too)
  ffprobe -v error -select_streams v:0 -show_entries packet=size -of csv=p=0 "$1" | awk '{s += $1} END {print s}'
}
ssim() {  # DISTORTED SOURCE W H → SSIM All against the source scaled to W×H (fails when none)
  local value
  value=$(ffmpeg -hide_banner -nostats -i "$1" -i "$2" \
    -lavfi "[1:v]fps=30,scale=$3:$4:flags=bicubic[r];[0:v][r]ssim" -f null - 2>&1 | sed -n 's/.*SSIM.* All:\([0-9.]*\).*/\1/p' | tail -1 || true)
  [ -n "$value" ] || { echo "error: no SSIM for $1" >&2; return 1; }
  echo "$value"
}
vmaf() {  # DISTORTED SOURCE → VMAF at 1080x1920 (or "-")
  [ -n "$vmaf_ffmpeg" ] || { echo "-"; return; }
  "$vmaf_ffmpeg" -hide_banner -nostats -i "$1" -i "$2" -lavfi \
    "[0:v]scale=1080:1920:flags=bicubic,setpts=PTS-STARTPTS[d];[1:v]fps=30,setpts=PTS-STARTPTS[r];[d][r]libvmaf=n_subsample=3:n_threads=2" \
    -f null - 2>&1 | sed -n 's/.*VMAF score: \([0-9.]*\).*/\1/p' | tail -1 || true  # a failed VMAF is a "-", not an abort
}

results="$OUT/results.tsv"
printf "kind\tladder\trung\tbytes\tssim\tvmaf\n" > "$results"
for kind in $KINDS; do
  src="$OUT/$kind-${DURATION}s.mp4"
  if [ ! -f "$src" ]; then
    echo "generating $src"
    ffmpeg -hide_banner -loglevel error -y -f lavfi -i "$(picture "$kind")" -f lavfi -i "sine=f=440:d=$DURATION:sample_rate=48000" \
      -c:v libx264 -preset veryfast -b:v 20M -maxrate 24M -bufsize 24M -x264-params keyint=60:min-keyint=60:scenecut=0 -pix_fmt yuv420p \
      -color_primaries bt709 -color_trc bt709 -colorspace bt709 -c:a aac -b:a 128k -ac 2 -f mp4 "$src.tmp"
    mv "$src.tmp" "$src"  # only a complete source is kept for later runs
  fi
  echo "== $kind: $(stat -c %s "$src") bytes"
  rm -rf "$OUT/$kind-ingestd"
  "$BIN" transcode "$src" --out "$OUT/$kind-ingestd" --preset "$OUT/preset.json" --no-progress >/dev/null
  Benchmarks/lib/ffmpeg-ladder.sh crf "$src" "$OUT/$kind-crf"
  Benchmarks/lib/ffmpeg-ladder.sh crf3g "$src" "$OUT/$kind-crf3g"
  Benchmarks/lib/ffmpeg-ladder.sh fixed "$src" "$OUT/$kind-fixed"
  index=0
  for rung in 234p:234:416 360p:360:640 720p:720:1280 1080p:1080:1920; do
    IFS=: read -r name w h <<< "$rung"
    for ladder in ingestd crf crf3g fixed; do
      dir="$OUT/$kind-$ladder/$index"; [ $ladder = ingestd ] && dir="$OUT/$kind-ingestd/$name"
      bytes=$(video_bytes "$dir/index.m3u8")
      s=$(ssim "$dir/index.m3u8" "$src" "$w" "$h")
      v=$(vmaf "$dir/index.m3u8" "$src")
      printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$kind" "$ladder" "$name" "$bytes" "$s" "${v:--}" | tee -a "$results"
    done
    index=$((index + 1))
  done
done

echo
python3 - "$results" "$OUT/summary-rows.tsv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
summary = open(sys.argv[2], "w")  # CASE, MEASURE, VALUE, TARGET: recorded below
by = {(r["kind"], r["ladder"], r["rung"]): r for r in rows}
def num(v): return None if v in ("", "-") else float(v)
print("per rung, ingestd against: the CLI capped-CRF ladder (target: SSIM within 0.002 at <= 1.0x bytes),")
print("the same CLI ladder with ingestd's 3G layout (crf3g), the fixed-bitrate ladder; VMAF at 1080x1920")
fmt = lambda v, p: "-" if v is None else f"{v:.{p}f}"
print(f"{'kind':5} {'rung':5} | {'SSIM':>6} {'VMAF':>5} | {'crf: bytes':>10} {'dSSIM':>7} {'dVMAF':>6} {'ok':>3} | {'crf3g: bytes':>12} {'dSSIM':>7} {'ok':>3} | {'fixed: bytes':>12} {'dSSIM':>7} {'dVMAF':>6}")
ok_all = ok_engine = True
def cmp(r, o):
    b = float(r["bytes"]) / float(o["bytes"])
    si, so = num(r["ssim"]), num(o["ssim"])
    vi, vo = num(r["vmaf"]), num(o["vmaf"])
    ds = si - so if si is not None and so is not None else None
    dv = vi - vo if vi is not None and vo is not None else None
    return b, ds, dv, (b <= 1.0 and ds is not None and ds >= -0.002)
worst = (0.0, 1.0)  # the largest bytes ratio and the lowest dSSIM against crf3g
for (kind, ladder, rung), r in by.items():
    if ladder != "ingestd": continue
    c = cmp(r, by[(kind, "crf", rung)]); g = cmp(r, by[(kind, "crf3g", rung)]); f = cmp(r, by[(kind, "fixed", rung)])
    ok_all &= c[3]; ok_engine &= g[3]
    summary.write(f"{kind} {rung}\tbytes ratio vs CLI\t{c[0]}\t<= 1.0\n")
    summary.write(f"{kind} {rung}\tdSSIM vs CLI\t{c[1]}\t>= -0.002\n")
    worst = (max(g[0], worst[0]), min(g[1], worst[1]))
    print(f"{kind:5} {rung:5} | {fmt(num(r['ssim']),4):>6} {fmt(num(r['vmaf']),1):>5} | {c[0]:10.2f} {fmt(c[1],4):>7} {fmt(c[2],2):>6} {'yes' if c[3] else 'NO':>3} | "
          f"{g[0]:12.2f} {fmt(g[1],4):>7} {'yes' if g[3] else 'NO':>3} | {f[0]:12.2f} {fmt(f[1],4):>7} {fmt(f[2],2):>6}")
summary.write(f"all kinds, worst rung\tbytes ratio vs CLI, same layout\t{worst[0]}\t<= 1.0\n")
summary.write(f"all kinds, worst rung\tdSSIM vs CLI, same layout\t{worst[1]}\t>= -0.002\n")
print("against the CLI ladder: " + ("every rung within target" if ok_all else "some rung misses the target"))
print("against the CLI ladder with the same layout: " + ("every rung within target" if ok_engine else "some rung misses the target"))
PY
record_reset quality
while IFS=$'\t' read -r label measure value target; do
  record quality "$label" "$measure" "$value" "$target"  # refuses a value that is not a number
done < "$OUT/summary-rows.tsv"
