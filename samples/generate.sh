#!/usr/bin/env bash
# Regenerates the synthetic samples in this directory with the ffmpeg CLI (a test/setup tool only;
# ingestd itself never runs ffmpeg). Each sample exercises one thing phones really produce.
set -euo pipefail
cd "$(dirname "$0")"
ff() { ffmpeg -hide_banner -loglevel error -y "$@"; }

# Upright 9:16 picture: red band at the top, blue band at the bottom (orientation is checkable),
# a moving test pattern in between, a 1 kHz beep every second. Stored sideways (coded 1920x1080)
# with a display matrix saying "rotate 90° clockwise", as phones do.
ff -f lavfi -i "testsrc2=s=1080x1920:r=30:d=6" -f lavfi -i "sine=f=1000:d=6:beep_factor=4:sample_rate=48000" \
   -filter_complex "[0:v]drawbox=x=0:y=0:w=iw:h=240:color=red:t=fill,drawbox=x=0:y=ih-240:w=iw:h=240:color=blue:t=fill,transpose=cclock[v]" \
   -map "[v]" -map 1:a -c:v libx264 -preset veryfast -crf 32 -pix_fmt yuv420p -c:a aac -b:a 64k -ac 2 \
   -movflags +faststart portrait_rotated.mp4
# ffmpeg 5.1 cannot write a display matrix, so set_rotation.py patches the tkhd matrix in place.
python3 set_rotation.py portrait_rotated.mp4

# 16:9 720p at 60 fps with mono 44.1 kHz audio (frame-rate and sample-rate conversion).
ff -f lavfi -i "testsrc2=s=1280x720:r=60:d=5" -f lavfi -i "sine=f=440:d=5:sample_rate=44100" \
   -c:v libx264 -preset veryfast -crf 32 -pix_fmt yuv420p -c:a aac -b:a 48k -ac 1 landscape_60fps.mp4

# HDR: 10-bit HEVC tagged HLG/BT.2020, like recent phones record.
ff -f lavfi -i "smptehdbars=s=1280x720:r=30:d=2" -f lavfi -i "sine=f=660:d=2:sample_rate=48000" \
   -vf "format=yuv420p10le" -c:v libx265 -preset ultrafast -crf 30 -tag:v hvc1 \
   -x265-params "log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc" \
   -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc -c:a aac -b:a 64k hdr_hlg.mp4

# Odd, square-ish size, VP9, no audio at all.
ff -f lavfi -i "testsrc2=s=642x362:r=25:d=3" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 300k noaudio_odd.webm

# Broken: an interrupted upload (moov at the end, file cut in half).
ff -f lavfi -i "testsrc2=s=320x240:r=30:d=2" -c:v libx264 -preset ultrafast broken_full.tmp.mp4
head -c "$(( $(stat -c %s broken_full.tmp.mp4) / 2 ))" broken_full.tmp.mp4 > broken_truncated.mp4
rm -f broken_full.tmp.mp4
ls -l

# A multi-clip upload (see upload.json): three clips with a white flash and a 1 kHz beep at
# exactly 1.0 s each (sync marks), in three shapes, frame rates, codecs and sound formats,
# plus a music track. clip1: portrait stored sideways (rotation matrix), 30 fps, 48 kHz stereo;
# clip2: landscape 60 fps, 44.1 kHz mono; clip3: square VP9 at 25 fps without audio.
mkdir -p upload
mark="drawbox=c=white:t=fill:enable='between(t,1,1.099)'"
beep() { echo "aevalsrc=if(between(t\\,1\\,1.1)\\,0.5*sin(2*PI*1000*t)\\,0):s=$1:d=$2"; }
ff -f lavfi -i "color=c=0x101010:s=360x640:r=30:d=3,drawbox=x=0:y=0:w=iw:h=80:color=red:t=fill,$mark,transpose=cclock" \
   -f lavfi -i "$(beep 48000 3)" -c:v libx264 -preset veryfast -crf 30 -pix_fmt yuv420p -c:a aac -b:a 64k -ac 2 upload/clip1.mp4
python3 set_rotation.py upload/clip1.mp4
ff -f lavfi -i "color=c=0x101030:s=640x360:r=60:d=3,$mark" -f lavfi -i "$(beep 44100 3)" \
   -c:v libx264 -preset veryfast -crf 30 -pix_fmt yuv420p -c:a aac -b:a 48k -ac 1 upload/clip2.mp4
ff -f lavfi -i "color=c=0x103010:s=480x480:r=25:d=2,$mark" -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -b:v 100k upload/clip3.webm
# Music: a chord that changes every second, 8 s, Vorbis.
ff -f lavfi -i "aevalsrc=0.2*sin(2*PI*(220+55*floor(t))*t)+0.1*sin(2*PI*(330+55*floor(t))*t):s=44100:d=8" \
   -ac 2 -c:a libvorbis -q:a 2 upload/music.ogg
ls -l upload
