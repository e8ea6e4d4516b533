#!/usr/bin/env python3
"""Shows a published caption track in headless Chromium and says which cues are on screen.

  chromium_captions.py page                       prints the page's HTML
  chromium_captions.py PAGE_URL TIMEOUT

PAGE_URL is the page (`captions.html?mp4=…&track=…&at=1.0,2.5,4.0[&hls=…]`) served beside the
video. The page plays the MP4 muted with the whole-track WebVTT as a <track> (mode `hidden`:
loaded and timed as when shown), seeks to each instant in `at` and reads the track's
`activeCues`. With `hls`, it then loads that master in Chromium's own HLS player and, when the
player exposes the subtitles rendition as a text track, reads its cues at the same instants.
Prints one JSON object: {"cueCount": cues in the track, "mp4": [{"time": the element's
currentTime, "cues": [cue text, …]} per instant], "hlsTracks": n, "hls": the same or null,
"error": null or text}. The server must answer Range requests (nginx does), or nothing seeks. Chromium is driven as chromium_play.py drives it (hls_play.py's CDP).
"""
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Benchmarks", "lib"))
import hls_play  # noqa: E402

PAGE = """<!doctype html><meta charset="utf-8"><title>captions</title>
<video id="v" muted preload="auto" crossorigin="anonymous"></video>
<script>
const q = new URLSearchParams(location.search), at = q.get('at').split(',').map(Number);
window.__r = {done: false};
const pause = ms => new Promise(ok => setTimeout(ok, ms));
function once(target, name, ms) {
  return new Promise((ok, no) => {
    const timer = setTimeout(() => no(new Error(name + ' never came')), ms);
    target.addEventListener(name, () => { clearTimeout(timer); ok(); }, {once: true});
  });
}
async function cues(v, track) {
  const seen = [];
  for (const t of at) {
    const seeked = once(v, 'seeked', 15000);
    v.currentTime = t;
    await seeked;
    // The seek runs "time marches on" before `seeked`; still, wait for the cues (up to 10 s), not a guess.
    for (let waited = 0; !(track.activeCues && track.activeCues.length) && waited < 10000; waited += 50) await pause(50);
    seen.push({time: v.currentTime, cues: Array.from(track.activeCues || []).map(c => c.text)});
  }
  return seen;
}
(async () => {
  const v = document.getElementById('v');
  const element = document.createElement('track');
  Object.assign(element, {kind: 'captions', srclang: 'en', label: 'captions', src: q.get('track')});
  v.appendChild(element);
  element.track.mode = 'hidden';
  const loaded = once(element, 'load', 15000), ready = once(v, 'loadeddata', 15000);
  v.src = q.get('mp4');
  await Promise.all([loaded, ready]);
  window.__r.cueCount = element.track.cues ? element.track.cues.length : -1;
  window.__r.mp4 = await cues(v, element.track);
  v.removeChild(element);
  window.__r.hlsTracks = 0;
  if (q.get('hls')) {
    v.src = q.get('hls');
    try {
      await once(v, 'loadeddata', 15000);
      await pause(1000);
      window.__r.hlsTracks = v.textTracks.length;
      if (v.textTracks.length) {
        v.textTracks[0].mode = 'hidden';
        window.__r.hls = await cues(v, v.textTracks[0]);
      }
    } catch (e) { window.__r.hlsError = String(e); }
  }
})().catch(e => { window.__r.error = String(e); }).finally(() => { window.__r.done = true; });
</script>
"""


def show(url, timeout):
    cdp = hls_play.CDP(hls_play.find_chromium())
    try:
        session, _, _ = hls_play.open_page(cdp)
        cdp.send("Page.enable", {}, session)
        cdp.send("Runtime.enable", {}, session)
        cdp.drain()
        started = time.monotonic()
        cdp.send("Page.navigate", {"url": url}, session)
        while time.monotonic() - started < timeout:
            time.sleep(0.25)
            try:
                r = hls_play.evaluate(cdp, session, "window.__r && JSON.stringify(window.__r)")
            except RuntimeError:
                r = None
            r = json.loads(r) if r else None
            if r and r["done"]:
                return {"cueCount": r.get("cueCount"), "mp4": r.get("mp4"), "hlsTracks": r.get("hlsTracks"), "hls": r.get("hls"),
                        "hlsError": r.get("hlsError"), "error": r.get("error")}
        return {"mp4": None, "hlsTracks": None, "hls": None, "error": f"timed out after {timeout} s"}
    finally:
        cdp.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["page"]:
        sys.stdout.write(PAGE)
    else:
        print(json.dumps(show(sys.argv[1], float(sys.argv[2]))))
