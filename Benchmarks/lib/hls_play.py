#!/usr/bin/env python3
"""Plays HLS ladders in headless Chromium's native HLS player under DevTools network emulation.

Used by Benchmarks/3g.sh (issue #17). Python standard library only.

ROOT is served over HTTP on loopback (a ThreadingHTTPServer in a thread, with the HLS MIME types
and single byte ranges); ROOT/player.html is written here. Each clip is ROOT/<clip>/<side>/ with
master.m3u8, where side is `ingestd` or `ffmpeg`. Chromium is driven over the DevTools protocol on
`--remote-debugging-pipe` (fd 3 = commands to Chromium, fd 4 = replies and events, one JSON
message per NUL-terminated chunk), so no websocket library is needed.

Every run gets a fresh browser context (no shared cache or connections) and tab:
Network.enable, Network.setCacheDisabled, Network.emulateNetworkConditions, then Page.navigate to
player.html?src=<clip>/<side>/master.m3u8. The page (same origin as the stream) records media
events with performance.now() (seconds since navigation start):

  first frame      navigation start -> first `playing` event
  first -> end     first `playing` -> `ended`
  stalls           `waiting` events after the first `playing`; stalled seconds run to the next
                   `playing` (or to the end of the run)
  heights          videoHeight, sampled on `resize` and every 100 ms, in the order played
  KB before first  bytes on the wire (Network.loadingFinished encodedDataLength, plus the
                   dataReceived bytes of requests still in flight) up to the first frame,
                   page and playlists included

A run ends at `ended`, at a media error, or after clip length + --grace seconds (timed out).
Each setting is repeated --runs times (runs interleaved: clip by clip, side by side) and the
table shows medians. Raw runs (with every request) go to --json.
"""
import argparse
import fcntl
import http.server
import json
import os
import queue
import re
import shutil
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

PROFILES = {
    # name: (down kbit/s, latency ms, up kbit/s); throughput in DevTools is bytes/s (1 kbit = 1000 bit)
    "750k": (750, 300, 375),
    "400k": (400, 400, 200),
}
# Targets from issue #17 (checked for ingestd only).
TARGETS = {
    "750k": {"first": 2.0, "over_clip": 1.0},
    "400k": {"first": 3.0, "over_clip": None},
}

PLAYER_HTML = r"""<!doctype html>
<meta charset="utf-8"><title>3g</title><link rel="icon" href="data:,">
<body style="margin:0;background:#000">
<video id="v" muted autoplay playsinline></video>
<script>
const v = document.getElementById('v');
const R = window.__r = {
  canPlayHLS: v.canPlayType('application/vnd.apple.mpegurl'),
  canPlayMPEGURL: v.canPlayType('application/x-mpegURL'),
  timeOrigin: performance.timeOrigin, ev: [], heights: [], done: false, error: null,
  firstPlaying: null, firstFrame: null, ended: null};
const now = () => performance.now() / 1000;
function buf() { return v.buffered.length ? v.buffered.end(v.buffered.length - 1) : 0; }
function height() {
  const h = v.videoHeight;
  if (h && (!R.heights.length || R.heights[R.heights.length - 1][1] !== h)) R.heights.push([now(), h, v.currentTime]);
}
for (const t of ['loadstart', 'loadedmetadata', 'loadeddata', 'canplay', 'canplaythrough', 'playing',
                 'waiting', 'stalled', 'pause', 'seeking', 'resize', 'ended', 'error']) {
  v.addEventListener(t, () => {
    const t0 = now();
    R.ev.push([t, t0, v.currentTime, v.videoHeight, buf()]);
    height();
    if (t === 'playing' && R.firstPlaying === null) R.firstPlaying = t0;
    if (t === 'ended') { R.ended = t0; R.done = true; }
    if (t === 'error') { R.error = v.error ? (v.error.code + ' ' + v.error.message) : 'error'; R.done = true; }
  });
}
setInterval(height, 100);
if (v.requestVideoFrameCallback) v.requestVideoFrameCallback(() => { R.firstFrame = now(); });
const src = new URLSearchParams(location.search).get('src');
if (src) v.src = src;
</script>
"""


# ---------------------------------------------------------------------------------------------
# HTTP on loopback

MIME = {
    ".m3u8": "application/vnd.apple.mpegurl",
    ".m4s": "video/mp4",
    ".mp4": "video/mp4",
    ".ts": "video/mp2t",
    ".aac": "audio/aac",
    ".vtt": "text/vtt",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".jpg": "image/jpeg",
}


class Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a CDN
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME}

    def log_message(self, fmt, *args):  # quiet
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def send_head(self):
        """Like SimpleHTTPRequestHandler.send_head, plus one `Range: bytes=a-b`."""
        path = self.translate_path(self.path)
        if os.path.isdir(path) or not os.path.isfile(path):
            return super().send_head()
        try:
            f = open(path, "rb")
        except OSError:
            self.send_error(404)
            return None
        size = os.fstat(f.fileno()).st_size
        ctype = self.guess_type(path)
        m = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", "").strip())
        if m and (m.group(1) or m.group(2)):
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:
                start, end = max(0, size - int(m.group(2))), size - 1
            if start >= size or start > end:
                f.close()
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return None
            self.send_response(206)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            self.send_header("Content-Length", str(end - start + 1))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            f.seek(start)
            return _Limited(f, end - start + 1)
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(size))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        return f


class _Limited:
    def __init__(self, f, n):
        self.f, self.n = f, n

    def read(self, k=-1):
        if self.n <= 0:
            return b""
        k = self.n if k is None or k < 0 else min(k, self.n)
        b = self.f.read(k)
        self.n -= len(b)
        return b

    def close(self):
        self.f.close()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # The player cancels requests (probe reads, closed tabs): a reset connection is normal.
        if not isinstance(sys.exc_info()[1], (ConnectionError, BrokenPipeError)):
            super().handle_error(request, client_address)


def serve(root):
    handler = lambda *a, **k: Handler(*a, directory=root, **k)  # noqa: E731
    httpd = Server(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


# ---------------------------------------------------------------------------------------------
# DevTools protocol over a pipe

class CDP:
    def __init__(self, chromium, extra_args=()):
        self.profile = tempfile.mkdtemp(prefix="hls3g-chromium-")
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # Move Chromium's ends above 9 so the redirections below never touch fds 3/4 by accident.
        to_chrome_r, from_chrome_w = [self._high(fd) for fd in (to_chrome_r, from_chrome_w)]
        args = [chromium, "--headless", "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
                "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--mute-audio",
                "--autoplay-policy=no-user-gesture-required", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-extensions",
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows", "--disable-dev-shm-usage",
                "--window-size=1080,1920", *extra_args]
        if os.geteuid() == 0:
            args.append("--no-sandbox")
        args.append("about:blank")
        # The shell puts the two pipe ends on fds 3 and 4, where Chromium expects them.
        cmd = ["bash", "-c", f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-'] + args
        self.log = open(os.path.join(self.profile, "chromium.log"), "wb")
        self.proc = subprocess.Popen(cmd, pass_fds=(to_chrome_r, from_chrome_w), stdin=subprocess.DEVNULL,
                                     stdout=self.log, stderr=self.log, start_new_session=True)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._id = 0
        self._lock = threading.Lock()
        self._pending = {}
        self.events = queue.Queue()
        threading.Thread(target=self._reader, daemon=True).start()

    @staticmethod
    def _high(fd):
        hi = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(fd)
        return hi

    def _reader(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self._r, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                for q in list(self._pending.values()):
                    q.put({"error": {"message": "chromium closed the pipe"}})
                self.events.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    q = self._pending.pop(msg["id"], None)
                    if q:
                        q.put(msg)
                else:
                    msg["_t"] = time.monotonic()
                    self.events.put(msg)

    def send(self, method, params=None, session=None, timeout=30):
        with self._lock:
            self._id += 1
            mid = self._id
            q = queue.Queue()
            self._pending[mid] = q
            msg = {"id": mid, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            os.write(self._w, json.dumps(msg).encode() + b"\0")
        try:
            reply = q.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError(f"DevTools: no reply to {method} in {timeout} s")
        if "error" in reply:
            raise RuntimeError(f"DevTools {method}: {reply['error'].get('message')}")
        return reply.get("result", {})

    def drain(self):
        out = []
        while True:
            try:
                e = self.events.get_nowait()
            except queue.Empty:
                return out
            if e is not None:
                out.append(e)

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def find_chromium():
    for c in (os.environ.get("CHROMIUM"), "/usr/lib/chromium/chromium", shutil.which("chromium"),
              shutil.which("chromium-browser")):
        if c and os.path.exists(c):
            return c
    sys.exit("chromium not found (apt-get install chromium)")


# ---------------------------------------------------------------------------------------------
# One run

def open_page(cdp, url="about:blank"):
    """A new page at `url` in a browser context of its own (no shared cache or cookies):
    (its session id, the context's id, the target's id)."""
    ctx = cdp.send("Target.createBrowserContext", {"disposeOnDetach": True})["browserContextId"]
    target = cdp.send("Target.createTarget", {"url": url, "browserContextId": ctx})["targetId"]
    return cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"], ctx, target


def evaluate(cdp, session, expr):
    r = cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
    return r.get("result", {}).get("value")


def play(cdp, base, src, profile, timeout):
    down, latency, up = PROFILES[profile]
    session, ctx, _ = open_page(cdp)
    try:
        cdp.send("Network.enable", {}, session)
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True}, session)
        cdp.send("Network.emulateNetworkConditions", {
            "offline": False, "latency": latency,
            "downloadThroughput": down * 1000 / 8, "uploadThroughput": up * 1000 / 8}, session)
        cdp.send("Page.enable", {}, session)
        cdp.send("Runtime.enable", {}, session)
        cdp.drain()
        url = f"{base}/player.html?src={urllib.parse.quote(src)}"
        t_nav = time.monotonic()
        cdp.send("Page.navigate", {"url": url}, session)
        r = None
        timed_out = False
        while True:
            time.sleep(0.25)
            try:
                r = evaluate(cdp, session, "window.__r && JSON.stringify(window.__r)")
            except RuntimeError:
                r = None  # navigating: no context yet
            r = json.loads(r) if r else None
            if r and r["done"]:
                break
            if time.monotonic() - t_nav > timeout:
                timed_out = True
                break
        events = [e for e in cdp.drain() if e.get("sessionId") == session]
    finally:
        try:
            cdp.send("Target.closeTarget", {"targetId": target}, timeout=10)
            cdp.send("Target.disposeBrowserContext", {"browserContextId": ctx}, timeout=10)
        except RuntimeError:
            pass
    return summarize(r, events, timed_out, timeout)


def summarize(r, events, timed_out, timeout):
    out = {"timed_out": timed_out, "timeout_s": timeout}
    if not r:
        out["error"] = "player page did not load"
        return out
    out.update(canPlayHLS=r["canPlayHLS"], canPlayMPEGURL=r["canPlayMPEGURL"], error=r["error"],
               events=r["ev"], height_samples=r["heights"])
    ev = r["ev"]
    first = r["firstPlaying"]
    end_t = r["ended"] if r["ended"] is not None else (ev[-1][1] if ev else None)
    out["first_frame_s"] = first
    out["first_frame_painted_s"] = r["firstFrame"]
    out["first_to_end_s"] = (r["ended"] - first) if (first is not None and r["ended"] is not None) else None
    # stalls: a `waiting` after the first `playing`, lasting until the next `playing`
    stalls, stalled, waiting_since = 0, 0.0, None
    if first is not None:
        for name, t, *_ in ev:
            if t <= first and name != "waiting":
                continue
            if name == "waiting" and t >= first and waiting_since is None:
                stalls += 1
                waiting_since = t
            elif name == "playing" and waiting_since is not None:
                stalled += t - waiting_since
                waiting_since = None
        if waiting_since is not None:
            last = r["ended"] if r["ended"] is not None else timeout
            stalled += max(0.0, last - waiting_since)
    out["stalls"] = stalls
    out["stalled_s"] = stalled
    heights = []
    for _, h, _ in r["heights"]:
        if not heights or heights[-1] != h:
            heights.append(h)
    out["heights"] = heights

    # Network: map the page's clock (timeOrigin + performance.now) onto the DevTools timestamps.
    reqs = {}
    offset = None
    for e in events:
        m, p = e["method"], e.get("params", {})
        rid = p.get("requestId")
        if m == "Network.requestWillBeSent":
            if offset is None and p.get("type") == "Document" and "wallTime" in p:
                offset = p["timestamp"] - p["wallTime"]
            reqs[rid] = {"url": p["request"]["url"], "start": p["timestamp"], "type": p.get("type"),
                         "status": None, "end": None, "bytes": 0, "data": []}
        elif rid in reqs:
            q = reqs[rid]
            if m == "Network.responseReceived":
                q["status"] = p["response"].get("status")
                q["mime"] = p["response"].get("mimeType")
                q["response"] = p["timestamp"]
            elif m == "Network.dataReceived":
                q["data"].append((p["timestamp"], p.get("encodedDataLength") or p.get("dataLength", 0)))
            elif m == "Network.loadingFinished":
                q["end"], q["bytes"] = p["timestamp"], p.get("encodedDataLength", 0)
            elif m == "Network.loadingFailed":
                q["end"], q["failed"] = p["timestamp"], p.get("errorText") or "failed"
    for q in reqs.values():
        # A cancelled request (the player abandons a probe read) reports 0 encoded bytes: count what
        # arrived.
        if not q["bytes"]:
            q["bytes"] = sum(n for _, n in q["data"])
    base = None
    if offset is not None:
        base = r["timeOrigin"] / 1000 + offset  # navigation start on the DevTools clock
    requests = []
    for q in reqs.values():
        rel = lambda t: None if (t is None or base is None) else round(t - base, 4)  # noqa: E731
        requests.append({"url": urllib.parse.urlsplit(q["url"]).path, "type": q["type"], "status": q["status"],
                         "mime": q.get("mime"), "start_s": rel(q["start"]), "end_s": rel(q["end"]),
                         "bytes": q["bytes"], "failed": q.get("failed"),
                         "_data": [(rel(t), n) for t, n in q["data"]]})
    requests.sort(key=lambda q: (q["start_s"] is None, q["start_s"]))
    out["requests_total"] = len(requests)
    out["bytes_total"] = sum(q["bytes"] for q in requests)
    if first is not None and base is not None:
        done = [q for q in requests if q["end_s"] is not None and q["end_s"] <= first]
        inflight = [q for q in requests if q not in done and q["start_s"] is not None and q["start_s"] <= first]
        out["requests_before_first_frame"] = len(done)
        out["bytes_before_first_frame"] = sum(q["bytes"] for q in done) + sum(
            n for q in inflight for t, n in q["_data"] if t is not None and t <= first)
    else:
        out["requests_before_first_frame"] = None
        out["bytes_before_first_frame"] = None
    for q in requests:
        q["data_bytes"] = sum(n for _, n in q.pop("_data"))
    out["requests"] = requests
    return out


# ---------------------------------------------------------------------------------------------
# Report

def playlist_duration(ladder):
    """Seconds of the ladder: the sum of #EXTINF of the first media playlist in master.m3u8."""
    try:
        master = open(os.path.join(ladder, "master.m3u8")).read().splitlines()
        uri = next(l for l in master if l and not l.startswith("#"))
        text = open(os.path.join(ladder, uri)).read()
        return round(sum(float(x) for x in re.findall(r"#EXTINF:([\d.]+)", text)), 3)
    except (OSError, StopIteration, ValueError):
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec=".2f"):
    return "—" if x is None else format(x, spec)


def aggregate(runs):
    hs = ["→".join(str(h) for h in r.get("heights", [])) or "—" for r in runs]
    heights = max(set(hs), key=hs.count) if hs else "—"
    kb = med([r.get("bytes_before_first_frame") for r in runs])
    bad = sum(1 for r in runs if r.get("timed_out") or r.get("error") or r.get("first_to_end_s") is None)
    return {"first": med([r.get("first_frame_s") for r in runs]),
            "first_to_end": med([r.get("first_to_end_s") for r in runs]),
            "stalls": med([r.get("stalls") for r in runs]),
            "stalled": med([r.get("stalled_s") for r in runs]),
            "heights": heights, "kb": None if kb is None else kb / 1000, "failed_runs": bad, "n": len(runs)}


def check(profile, a, length):
    t = TARGETS.get(profile, {})
    notes, ok = [], True
    if a["failed_runs"]:
        return "FAIL", [f"{a['failed_runs']}/{a['n']} runs did not reach `ended`"]
    if t.get("first") is not None:
        if a["first"] is None or a["first"] > t["first"]:
            ok = False
            notes.append(f"first frame {fmt(a['first'])} > {t['first']:.1f}")
    if t.get("over_clip") is not None and length is not None:
        if a["first_to_end"] is None or a["first_to_end"] > length + t["over_clip"]:
            ok = False
            notes.append(f"first→end {fmt(a['first_to_end'])} > {length + t['over_clip']:.2f}")
    return ("pass" if ok else "FAIL"), notes


def table(results, profiles, clips, sides, runs_n):
    lines = []
    for profile in profiles:
        down, lat, up = PROFILES[profile]
        t = TARGETS.get(profile, {})
        tgt = f"first frame ≤ {t['first']:.1f} s" + (
            f", first frame → end ≤ clip + {t['over_clip']:.1f} s" if t.get("over_clip") is not None else "")
        lines.append(f"\n## {down} kbit/s down, {lat} ms latency, {up} kbit/s up — medians of {runs_n} runs; "
                     f"target for ingestd: {tgt}\n")
        head = ["clip", "clip s"]
        for s in sides:
            head += [f"{s} first s", f"{s} first→end s", f"{s} stalls", f"{s} stalled s", f"{s} heights",
                     f"{s} KB before first"]
        head += ["ingestd target"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for clip in clips:
            length = results["clips"][clip].get("length_s")
            row = [clip, fmt(length)]
            agg = {}
            for s in sides:
                runs = [r for r in results["runs"] if r["clip"] == clip and r["side"] == s and r["profile"] == profile]
                if not runs:
                    row += ["—"] * 6
                    continue
                a = agg[s] = aggregate(runs)
                fails = f" ({a['failed_runs']}/{a['n']} failed)" if a["failed_runs"] else ""
                row += [fmt(a["first"]), fmt(a["first_to_end"]) + fails, fmt(a["stalls"], "g"), fmt(a["stalled"]),
                        a["heights"], fmt(a["kb"], ".0f")]
            if "ingestd" in agg:
                verdict, notes = check(profile, agg["ingestd"], length)
                row.append(verdict + (": " + "; ".join(notes) if notes else ""))
                results.setdefault("summary", []).append({"profile": profile, "clip": clip, "length_s": length,
                                                          **{s: agg[s] for s in agg}, "ingestd_target": verdict,
                                                          "notes": notes})
            else:
                row.append("—")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, help="served directory: ROOT/<clip>/<side>/master.m3u8")
    ap.add_argument("--clips", nargs="+", required=True)
    ap.add_argument("--sides", nargs="+", default=["ingestd", "ffmpeg"])
    ap.add_argument("--profiles", nargs="+", default=["750k", "400k"], choices=sorted(PROFILES))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--grace", type=float, default=30.0, help="a run times out after clip length + GRACE s")
    ap.add_argument("--json", help="write raw results here")
    ap.add_argument("--table", help="also write the table here")
    ap.add_argument("--meta", help="JSON object merged into the results (command, binary, ...)")
    ap.add_argument("--check-only", action="store_true", help="only report whether Chromium plays HLS natively")
    a = ap.parse_args()

    root = os.path.abspath(a.root)
    with open(os.path.join(root, "player.html"), "w") as f:
        f.write(PLAYER_HTML)
    httpd = serve(root)
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    chromium = find_chromium()
    cdp = CDP(chromium)
    results = {"chromium": None, "profiles": {p: dict(zip(("down_kbps", "latency_ms", "up_kbps"), PROFILES[p]))
                                              for p in a.profiles},
               "targets": TARGETS, "runs_per_setting": a.runs, "clips": {}, "runs": []}
    if a.meta:
        results.update(json.loads(a.meta))
    try:
        v = cdp.send("Browser.getVersion")
        results["chromium"] = v.get("product")
        print(f"chromium: {v.get('product')} ({chromium}), server {base}", file=sys.stderr)
        # Native HLS? (no src: just canPlayType)
        sid, ctx, tid = open_page(cdp, f"{base}/player.html")
        cp = None
        for _ in range(40):
            time.sleep(0.1)
            try:
                cp = evaluate(cdp, sid, "window.__r && [__r.canPlayHLS, __r.canPlayMPEGURL]")
            except RuntimeError:
                cp = None
            if cp:
                break
        cdp.send("Target.closeTarget", {"targetId": tid})
        cdp.send("Target.disposeBrowserContext", {"browserContextId": ctx})
        results["canPlayType"] = {"application/vnd.apple.mpegurl": cp[0] if cp else None,
                                  "application/x-mpegURL": cp[1] if cp else None}
        native = bool(cp and (cp[0] or cp[1]))
        results["native_hls"] = native
        print(f"native HLS: canPlayType('application/vnd.apple.mpegurl') = {cp[0] if cp else None!r}, "
              f"'application/x-mpegURL' = {cp[1] if cp else None!r}", file=sys.stderr)
        if a.check_only:
            return 0 if native else 3
        if not native:
            print("this Chromium reports no native HLS support and no offline hls.js copy is used: "
                  "BLOCKED (trying playback anyway)", file=sys.stderr)

        for clip in a.clips:
            results["clips"][clip] = {"length_s": playlist_duration(os.path.join(root, clip, "ingestd"))
                                      or playlist_duration(os.path.join(root, clip, "ffmpeg")),
                                      **{f"{s}_length_s": playlist_duration(os.path.join(root, clip, s)) for s in a.sides}}
        for profile in a.profiles:
            for run in range(1, a.runs + 1):
                for clip in a.clips:
                    for side in a.sides:
                        if not os.path.isfile(os.path.join(root, clip, side, "master.m3u8")):
                            continue
                        length = results["clips"][clip]["length_s"] or 30
                        timeout = length + a.grace
                        r = play(cdp, base, f"{clip}/{side}/master.m3u8", profile, timeout)
                        r.update(clip=clip, side=side, profile=profile, run=run)
                        results["runs"].append(r)
                        print(f"{profile} run {run} {clip:<28} {side:<8} first {fmt(r.get('first_frame_s'))} s  "
                              f"first→end {fmt(r.get('first_to_end_s'))} s (clip {fmt(length)})  "
                              f"stalls {r.get('stalls')} ({fmt(r.get('stalled_s'))} s)  heights {r.get('heights')}  "
                              f"KB before first {fmt((r.get('bytes_before_first_frame') or 0) / 1000, '.0f')}"
                              + (f"  TIMED OUT after {timeout:.0f} s" if r.get("timed_out") else "")
                              + (f"  error: {r['error']}" if r.get("error") else ""), file=sys.stderr)
    finally:
        cdp.close()
        httpd.shutdown()
    txt = table(results, a.profiles, a.clips, a.sides, a.runs)
    sys.stderr.flush()
    print(txt, flush=True)
    if a.table:
        with open(a.table, "w") as f:
            f.write(txt.lstrip() + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
