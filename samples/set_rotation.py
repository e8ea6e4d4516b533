#!/usr/bin/env python3
"""Marks an MP4's video track "rotate 90° clockwise to display", as phones do.

ffmpeg 5.1 cannot write a display matrix, so this patches the video track's tkhd in place:
matrix [0 1 0; -1 0 0; H 0 1] and the display size swapped. Test/setup tool only.
"""
import struct
import sys

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
