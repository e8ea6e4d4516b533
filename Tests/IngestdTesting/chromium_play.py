#!/usr/bin/env python3
"""Plays an HLS master playlist in headless Chromium's native HLS player, as the tests' browser.

  chromium_play.py PAGE_URL TIMEOUT [UNTIL_SECONDS]

PAGE_URL is Benchmarks/lib/hls_play.py's player page (`player.html?src=…`, printed by
`chromium_play.py page`), served from where the ladder is (here: the bucket itself). Chromium is
driven over the DevTools protocol on a pipe (hls_play.py's CDP class, the same flags as
`make bench-3g`), at full speed, cache off. Prints one JSON object once the video element fires
`ended` or `error`, or TIMEOUT seconds pass: ended, error, timed_out, currentTime, duration,
videoWidth, videoHeight, heights (played, in order), first_frame_s, and the requests that failed
(status >= 400 or a network error).

With UNTIL_SECONDS (a video played while it is still being made, which Chromium loads as live and
never ends): the run also ends once currentTime reaches UNTIL_SECONDS, and `frames` says how many
frames the element presented (getVideoPlaybackQuality).

  chromium_play.py page      prints the player page's HTML
"""
import json
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Benchmarks", "lib"))
import hls_play  # noqa: E402


def play(url, timeout, until=None):
    cdp = hls_play.CDP(hls_play.find_chromium())
    try:
        session, _, _ = hls_play.open_page(cdp)
        cdp.send("Network.enable", {}, session)
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True}, session)
        cdp.send("Page.enable", {}, session)
        cdp.send("Runtime.enable", {}, session)
        cdp.drain()
        started = time.monotonic()
        cdp.send("Page.navigate", {"url": url}, session)
        r, timed_out = None, False
        while True:
            time.sleep(0.25)
            try:
                r = hls_play.evaluate(cdp, session, "window.__r && JSON.stringify(window.__r)")
            except RuntimeError:
                r = None  # navigating: no context yet
            r = json.loads(r) if r else None
            if r and r["done"]:
                break
            if until is not None and r:
                position = hls_play.evaluate(cdp, session, "(() => { const v = document.getElementById('v'); return v ? v.currentTime : 0; })()")
                if (position or 0) >= until:
                    break
            if time.monotonic() - started > timeout:
                timed_out = True
                break
        video = hls_play.evaluate(cdp, session, """(() => { const v = document.getElementById('v');
            const q = v && v.getVideoPlaybackQuality ? v.getVideoPlaybackQuality() : null;
            return v ? JSON.stringify({currentTime: v.currentTime, duration: v.duration, videoWidth: v.videoWidth,
                                       videoHeight: v.videoHeight, ended: v.ended,
                                       frames: q ? q.totalVideoFrames - q.droppedVideoFrames : null}) : null; })()""")
        video = json.loads(video) if video else {}
        failed, statuses = [], {}
        for e in cdp.drain():
            if e.get("sessionId") != session:
                continue
            p = e.get("params", {})
            if e["method"] == "Network.responseReceived":
                statuses[p["requestId"]] = (p["response"]["url"], p["response"]["status"])
            elif e["method"] == "Network.loadingFailed" and not p.get("canceled"):
                failed.append(f"{p.get('errorText')} {statuses.get(p['requestId'], ('?',))[0]}")
        failed += [f"{status} {url}" for url, status in statuses.values() if status >= 400]
        return {"ended": bool(video.get("ended")) and bool(r and r["ended"] is not None),
                "error": r["error"] if r else "the player page did not load", "timed_out": timed_out,
                "currentTime": video.get("currentTime"), "duration": video.get("duration"),
                "videoWidth": video.get("videoWidth"), "videoHeight": video.get("videoHeight"),
                "heights": [h for _, h, _ in r["heights"]] if r else [], "first_frame_s": r["firstPlaying"] if r else None,
                "canPlayHLS": r["canPlayHLS"] if r else None, "requests": len(statuses), "failed_requests": failed,
                "frames": video.get("frames"), "events": [e[0] for e in r["ev"]] if r else []}
    finally:
        cdp.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["page"]:
        sys.stdout.write(hls_play.PLAYER_HTML)
    else:
        print(json.dumps(play(sys.argv[1], float(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else None)))
