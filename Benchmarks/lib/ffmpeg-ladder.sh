#!/bin/sh
# The ffmpeg CLI one-command ladder the benchmarks compare ingestd with, for a 1080x1920 30 fps
# source: decode once, split, four libx264 encodes (234p/360p/720p/1080p), loudnorm, AAC once,
# fMP4 HLS (rung N in OUT/N/).
#   crf    the capped-CRF settings of Presets/default.json (CRF 28/26/24/23, maxrate/bufsize as there)
#   crf3g  crf with ingestd's 3G layout: IDRs at 0.5 and 1.5 s besides the 2 s grid, the startup
#          (234p) rung's rate buffer a tenth full at the start (what Presets/default.json does)
#   fixed  Apple's HLS authoring-spec bitrates (145/365/3000/6000 kbit/s; peak ≤ 2× the average)
# Usage: ffmpeg-ladder.sh crf|crf3g|fixed SOURCE OUT
set -eu
[ $# -eq 3 ] || { echo "usage: $0 crf|crf3g|fixed SOURCE OUT" >&2; exit 2; }
mode=$1 src=$2 out=$3
gop=keyint=60:min-keyint=60:scenecut=0:open-gop=0
layout=""
case $mode in
  crf|crf3g) rate="-crf:v:0 28 -maxrate:v:0 160k -bufsize:v:0 160k -crf:v:1 26 -maxrate:v:1 500k -bufsize:v:1 750k
               -crf:v:2 24 -maxrate:v:2 3000k -bufsize:v:2 6000k -crf:v:3 23 -maxrate:v:3 6000k -bufsize:v:3 12000k"
             [ "$mode" = crf ] || layout="-force_key_frames:v 0,0.5,1.5,$(seq -s, 2 2 58) -x264-params:v:0 $gop:vbv-init=0.1" ;;
  fixed) rate="-b:v:0 145k -maxrate:v:0 290k -bufsize:v:0 290k -b:v:1 365k -maxrate:v:1 730k -bufsize:v:1 730k
               -b:v:2 3000k -maxrate:v:2 6000k -bufsize:v:2 6000k -b:v:3 6000k -maxrate:v:3 12000k -bufsize:v:3 12000k" ;;
  *) echo "usage: $0 crf|crf3g|fixed SOURCE OUT" >&2; exit 2 ;;
esac
rm -rf "$out" && mkdir -p "$out"
# shellcheck disable=SC2086
exec ffmpeg -hide_banner -loglevel error -y -i "$src" \
  -filter_complex "[0:v]fps=30,split=4[a][b][c][d];[a]scale=234:416[v0];[b]scale=360:640[v1];[c]scale=720:1280[v2];[d]scale=1080:1920[v3]" \
  -map "[v0]" -map "[v1]" -map "[v2]" -map "[v3]" -map 0:a \
  -c:v libx264 -preset veryfast -profile:v high -level 4.1 -pix_fmt yuv420p \
  -x264-params $gop $rate $layout \
  -af "aresample=48000,loudnorm=I=-14:TP=-1:LRA=11,aresample=48000" -c:a aac -b:a 128k -ar 48000 -ac 2 \
  -f hls -hls_time 6 -hls_playlist_type vod -hls_segment_type fmp4 \
  -var_stream_map "v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud v:3,agroup:aud a:0,agroup:aud" \
  -master_pl_name master.m3u8 -hls_segment_filename "$out/%v/seg_%03d.m4s" "$out/%v/index.m3u8"
