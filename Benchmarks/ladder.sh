#!/usr/bin/env bash
# Side-by-side benchmark: `ingestd transcode` vs. the equivalent single ffmpeg CLI command on a
# 60 s 1080x1920 30 fps upload (about 45 MB, under the 50 MB limit), run in one session. Reports wall-time and peak-RSS ratios.
#
# The ffmpeg command does the same media work: decode once, split, three libx264 encodes with the
# same preset and capped-CRF settings, loudnorm to -14 LUFS and AAC encoded once, the hls muxer
# writing fMP4 segments.
# ingestd additionally writes the progressive MP4, posters and the storyboard.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${BENCH_OUT:-bench-out}
RUNS=${BENCH_RUNS:-2}
BIN=.build/release/ingestd
mkdir -p "$OUT"
INPUT="$OUT/input_1080x1920_60s.mp4"
if [ ! -f "$INPUT" ]; then
  echo "generating $INPUT"
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i "testsrc2=s=1080x1920:r=30:d=60" \
    -f lavfi -i "sine=f=440:d=60:sample_rate=48000" \
    -vf "noise=alls=6:allf=t" -c:v libx264 -preset veryfast -crf 23 -maxrate 6M -bufsize 6M -pix_fmt yuv420p \
    -c:a aac -b:a 128k -ac 2 "$INPUT"
fi

FILTER="[0:v]fps=30,split=3[a][b][c];[a]scale=360:640[v0];[b]scale=720:1280[v1];[c]scale=1080:1920[v2]"
ffmpeg_ladder() {  # the same rate control as Presets/default.json
  local dir=$1
  rm -rf "$dir"; mkdir -p "$dir"
  ffmpeg -hide_banner -loglevel error -y -i "$INPUT" -filter_complex "$FILTER" \
    -map "[v0]" -map "[v1]" -map "[v2]" -map 0:a \
    -c:v libx264 -preset veryfast -profile:v high -level 4.1 -pix_fmt yuv420p \
    -x264-params keyint=60:min-keyint=60:scenecut=0:open-gop=0 \
    -crf:v:0 26 -maxrate:v:0 800k -bufsize:v:0 1600k \
    -crf:v:1 24 -maxrate:v:1 3000k -bufsize:v:1 6000k \
    -crf:v:2 23 -maxrate:v:2 6000k -bufsize:v:2 12000k \
    -af "aresample=48000,loudnorm=I=-14:TP=-1:LRA=11,aresample=48000" -c:a aac -b:a 128k -ar 48000 -ac 2 \
    -f hls -hls_time 6 -hls_playlist_type vod -hls_segment_type fmp4 \
    -var_stream_map "v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud a:0,agroup:aud" \
    -master_pl_name master.m3u8 -hls_segment_filename "$dir/%v/seg_%03d.m4s" "$dir/%v/index.m3u8"
}

source Benchmarks/lib.sh

ingestd_side() { rm -rf "$OUT/ingestd" && "$BIN" transcode "$INPUT" --out "$OUT/ingestd" --no-progress; }
ffmpeg_side() { ffmpeg_ladder "$OUT/ffmpeg"; }
export OUT BIN INPUT FILTER
export -f ffmpeg_ladder
side_by_side ladder 0.90 1.00
du -sb "$OUT/ingestd" "$OUT/ffmpeg" | awk '{printf "output bytes %-22s %d\n", $2, $1}'
