#!/usr/bin/env bash
# Side-by-side benchmark of a TikTok-style upload: three 15 s clips (portrait 30 fps, landscape
# 60 fps with 44.1 kHz mono, portrait 24 fps) joined with a music track mixed under them, then the
# 360p/720p/1080p ladder. `ingestd transcode UPLOAD_DIR` against the equivalent single ffmpeg
# command (per-clip fps/fit/pad + concat + amix + loudnorm + split + three libx264 + hls), run in
# one session. Reports wall-time and peak-RSS ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/lib.sh
OUT=${BENCH_OUT:-bench-out}
RUNS=${BENCH_RUNS:-2}
BIN=.build/release/ingestd
UPLOAD="$OUT/merge-upload"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }
x264=(-c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p)
if [ ! -f "$UPLOAD/upload.json" ]; then
  echo "generating $UPLOAD"
  mkdir -p "$UPLOAD"
  ff -f lavfi -i "testsrc2=s=1080x1920:r=30:d=15" -f lavfi -i "sine=f=440:d=15:sample_rate=48000" \
     -vf "noise=alls=6:allf=t" "${x264[@]}" -c:a aac -ac 2 "$UPLOAD/a.mp4"
  ff -f lavfi -i "testsrc2=s=1920x1080:r=60:d=15" -f lavfi -i "sine=f=550:d=15:sample_rate=44100" \
     -vf "noise=alls=6:allf=t" "${x264[@]}" -c:a aac -ac 1 "$UPLOAD/b.mp4"
  ff -f lavfi -i "testsrc2=s=1080x1920:r=24:d=15" -f lavfi -i "sine=f=660:d=15:sample_rate=48000" \
     -vf "noise=alls=6:allf=t" "${x264[@]}" -c:a aac -ac 2 "$UPLOAD/c.mp4"
  ff -f lavfi -i "aevalsrc=0.2*sin(2*PI*(220+55*mod(floor(t)\,8))*t):s=44100:d=60" -ac 2 -c:a libvorbis "$UPLOAD/music.ogg"
  cat > "$UPLOAD/upload.json" <<'JSON'
{"id": "bench", "clips": [{"file": "a.mp4"}, {"file": "b.mp4"}, {"file": "c.mp4"}],
 "audio": {"file": "music.ogg", "offset": 5, "mode": "mix", "musicGain": -6, "fadeOut": 1}}
JSON
fi

# The same media work as one ffmpeg command.
NORMALISE="fps=30,scale=1080:1920:force_original_aspect_ratio=decrease,pad=1080:1920:(ow-iw)/2:(oh-ih)/2,setsar=1,format=yuv420p"
SOUND="aresample=48000:async=1:first_pts=0,aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo"
FILTER="[0:v]$NORMALISE[v0];[1:v]$NORMALISE[v1];[2:v]$NORMALISE[v2];[0:a]$SOUND[a0];[1:a]$SOUND[a1];[2:a]$SOUND[a2];"
FILTER+="[v0][a0][v1][a1][v2][a2]concat=n=3:v=1:a=1[v][c];"
FILTER+="[3:a]$SOUND,atrim=start=5,asetpts=PTS-STARTPTS,volume=-6dB,afade=t=out:st=44:d=1[m];"
FILTER+="[c][m]amix=inputs=2:duration=first:normalize=0,loudnorm=I=-14:TP=-1.5:LRA=11,aresample=48000[a];"
FILTER+="[v]split=3[s0][s1][s2];[s0]scale=360:640[o0];[s1]scale=720:1280[o1];[s2]scale=1080:1920[o2]"
ffmpeg_merge() {
  local dir=$1
  rm -rf "$dir"; mkdir -p "$dir"
  ffmpeg -hide_banner -loglevel error -y -i "$UPLOAD/a.mp4" -i "$UPLOAD/b.mp4" -i "$UPLOAD/c.mp4" -i "$UPLOAD/music.ogg" \
    -filter_complex "$FILTER" -map "[o0]" -map "[o1]" -map "[o2]" -map "[a]" \
    -c:v libx264 -preset veryfast -profile:v high -level 4.1 -pix_fmt yuv420p \
    -x264-params keyint=60:min-keyint=60:scenecut=0:open-gop=0 \
    -crf:v:0 26 -maxrate:v:0 800k -bufsize:v:0 1600k \
    -crf:v:1 24 -maxrate:v:1 3000k -bufsize:v:1 6000k \
    -crf:v:2 23 -maxrate:v:2 6000k -bufsize:v:2 12000k \
    -c:a aac -b:a 128k -ar 48000 -ac 2 \
    -f hls -hls_time 6 -hls_playlist_type vod -hls_segment_type fmp4 \
    -var_stream_map "v:0,agroup:aud v:1,agroup:aud v:2,agroup:aud a:0,agroup:aud" \
    -master_pl_name master.m3u8 -hls_segment_filename "$dir/%v/seg_%03d.m4s" "$dir/%v/index.m3u8"
}

ingestd_side() { rm -rf "$OUT/merge-ingestd" && "$BIN" transcode "$UPLOAD" --out "$OUT/merge-ingestd" --no-progress; }
ffmpeg_side() { ffmpeg_merge "$OUT/merge-ffmpeg"; }
export OUT BIN UPLOAD FILTER
export -f ffmpeg_merge
side_by_side merge "" ""
ffprobe -v error -show_entries format=duration -of csv=p=0 "$OUT/merge-ingestd/video.mp4" | awk '{printf "ingestd output duration %.3f s (clips: 45 s)\n", $1}'
