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
# ffmpeg 5.1 cannot write a display matrix, so patch the video track's tkhd matrix in place:
# [0 1 0; -1 0 0; H 0 1] is how iPhones store "rotate 90° clockwise to display".
python3 - portrait_rotated.mp4 <<'PY'
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
at = 0
while (at := data.find(b"tkhd", at + 1)) > 0:
    version = data[at + 4]
    matrix = at + 8 + (32 if version == 1 else 20) + 16
    width, height = struct.unpack(">II", data[matrix + 36:matrix + 44])
    if width == 0:
        continue  # the audio track
    h = height >> 16
    struct.pack_into(">9i", data, matrix, 0, 1 << 16, 0, -(1 << 16), 0, 0, h << 16, 0, 1 << 30)
    struct.pack_into(">II", data, matrix + 36, height, width)
    break
open(path, "wb").write(data)
PY

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
