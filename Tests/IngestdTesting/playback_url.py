#!/usr/bin/env python3
"""Signs a playback URL with docs/OUTPUT.md's recipe, as an app's backend would (hashlib only).

    playback_url.py BASE VIDEO_ID KEY_FILE SECONDS [PATH]      the URL of PATH (master.m3u8)
    playback_url.py --expires UNIX BASE VIDEO_ID KEY_FILE [PATH]  with that very expiry

KEY_FILE holds one line plsec_<base64> (ingestd's playback key). The URL expires SECONDS from now,
rounded up to a 10-minute window (every viewer in the window gets the same URL).
"""
import base64
import hashlib
import sys
import time


def playback_url(base, video_id, key_line, expires, path="master.m3u8"):
    key_id = "".join(c for c in key_line[len("plsec_"):] if c.isascii() and c.isalnum())[:4]
    digest = hashlib.md5(f"{expires}{video_id} {key_line}".encode()).digest()
    signature = base64.urlsafe_b64encode(digest).decode().rstrip("=")
    return f"{base.rstrip('/')}/{video_id}/p-{key_id}-{expires}-{signature}/{path}"


def main(args):
    expires = None
    if args[0] == "--expires":
        expires, args = int(args[1]), args[2:]
    base, video_id, key_file = args[:3]
    with open(key_file) as f:
        key_line = f.read().strip()
    if expires is None:
        expires = -(-(int(time.time()) + int(args[3])) // 600) * 600
        args = args[:3] + args[4:]
    print(playback_url(base, video_id, key_line, expires, *args[3:4]))


if __name__ == "__main__":
    main(sys.argv[1:])
