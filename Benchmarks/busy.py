#!/usr/bin/env python3
"""make bench-busy (issue #49): a video shown while it grows, on a host that gets busy after it
went playable. Do its viewers run dry, and how long do the uploads behind it wait to show?

  busy.py BIN OUT_DIR [--fleet] [--no-decode-check]

1. `BIN watch --spool S --cdn C --jobs 3 --http 127.0.0.1:PORT` (with --fleet: a throwaway
   PostgreSQL, initdb + pg_ctl under OUT_DIR/pg, and `BIN worker --database URL --cdn C
   --uploads U --jobs 3 --http …`; uploads are queued with `BIN submit`). C is served over HTTP
   by nginx with deploy/nginx/ingestd-cdn.conf through Tests/IngestdTesting/nginx_cdn.py (run as
   `nginx_cdn.py C`: it prints the port and serves until SIGTERM) when both exist, else by a
   Python ThreadingHTTPServer that serves *.m3u8 with `Cache-Control: no-cache` and a strong
   ETag, segments as immutable (docs/OUTPUT.md, "Playable while it grows").
2. A 60 s "app" upload is dropped (renamed into incoming/; with --fleet, submitted). The moment
   C/<id>/master.m3u8 appears (polled every 20 ms), Tests/IngestdTesting/hls_viewer.py
   --all-variants starts on it (an RFC 8216 §6.3.4 client playing at 1x from first sight) and
   four 20 s camera originals (1080x1920 by rotation, every rung encoded: Benchmarks/playable.py's
   generate("camera")) are dropped at once. Each camera gets a viewer the moment its master
   appears.
3. Every 0.5 s, /metrics is scraped for `ingestd_shown_margin_seconds` (the smallest margin of a
   shown video; null while absent or NaN) and `ingestd_shown_ran_short_total`.
4. Once all 5 are published (C/<id>/manifest.json), the viewers finish (they fast-forward
   through what is left), the daemon is stopped (SIGTERM) and every viewer's fetched frames are
   decoded with ffmpeg (--no-decode-check skips this).

Prints: each upload's time to playable (from its own drop), the cameras' p50, each viewer's
stalls and stalled seconds (summed over its variants, and its worst variant's: one person
watches one variant, so issue #49's "no video runs dry more than 0.25 s in all" is judged on the
worst variant), the wall time until all 5 were published (from the app's drop), the CPU seconds
used (RUSAGE_CHILDREN, split as the children were reaped: the viewers (with --fleet, `submit`
and psql too), the CDN server (nginx_cdn.py's nginx runs as its child), the daemon with its job
processes), issue #49's targets, and the margin over time (per second since the app's drop: the
smallest margin scraped in that second, and the ran-short counter). Writes OUT_DIR/busy.json
(everything), OUT_DIR/viewers/<name>.json (each viewer's own report), OUT_DIR/daemon.log.
Exit status 1 when an upload was not published or the run timed out.
"""
import argparse
import functools
import http.client
import json
import math
import os
import re
import resource
import select
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "lib"))
from playable import generate  # noqa: E402
from throwaway_pg import ThrowawayPostgres, free_port  # noqa: E402

VIEWER = os.path.join(ROOT, "Tests", "IngestdTesting", "hls_viewer.py")
NGINX_CONF = os.path.join(ROOT, "deploy", "nginx", "ingestd-cdn.conf")
NGINX_CDN = os.path.join(ROOT, "Tests", "IngestdTesting", "nginx_cdn.py")
JOBS = 3
EXTRA = []  # more daemon options (--margin)
CAMERAS = 4
PUBLISH_TIMEOUT = 1500
VIEWER_TIMEOUT = PUBLISH_TIMEOUT + 120


def cpu(usage):
    return usage.ru_utime + usage.ru_stime


# --- The CDN's HTTP server -------------------------------------------------------------------

class CDNHandler(SimpleHTTPRequestHandler):
    """A CDN as docs/OUTPUT.md asks: *.m3u8 with no-cache and a strong ETag (mtime in ns and
    size: a playlist replaced within a second still gets a new one), If-None-Match answered;
    everything else immutable. Keep-alive (HTTP/1.1)."""
    protocol_version = "HTTP/1.1"
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".m3u8": "application/vnd.apple.mpegurl",
                      ".m4s": "video/iso.segment", ".mp4": "video/mp4"}

    def log_message(self, *args):
        pass

    def send_head(self):
        path = self.translate_path(self.path)
        try:
            f = open(path, "rb")
            st = os.fstat(f.fileno())
        except OSError:
            self.send_error(404)
            return None
        if os.path.isdir(path):
            f.close()
            self.send_error(404)
            return None
        etag = f'"{st.st_ino:x}-{st.st_mtime_ns:x}-{st.st_size:x}"'
        playlist = path.endswith(".m3u8")
        if etag in [t.strip() for t in (self.headers.get("If-None-Match") or "").split(",")]:
            f.close()
            self.send_response(304)
            self.send_header("ETag", etag)
            self.send_header("Cache-Control", "no-cache" if playlist else "public, max-age=31536000, immutable")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(path))
        self.send_header("Content-Length", str(st.st_size))
        self.send_header("ETag", etag)
        self.send_header("Cache-Control", "no-cache" if playlist else "public, max-age=31536000, immutable")
        self.end_headers()
        return f


def serve_cdn_forever(directory):
    """`busy.py --serve-cdn DIR`: the fallback CDN server, in a process of its own."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(CDNHandler, directory=directory))
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    server.serve_forever()


def read_port(process, seconds):
    """The first number the process prints on stdout within `seconds`, or None."""
    deadline = time.monotonic() + seconds
    buffer = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                return None
            buffer += chunk
            for line in buffer.split(b"\n")[:-1]:
                numbers = [int(n) for n in re.findall(rb"\d+", line) if 0 < int(n) < 65536]
                if numbers:
                    return numbers[-1]  # "8080", "port 8080" or "127.0.0.1:8080"
        elif process.poll() is not None:
            return None
    return None


def start_cdn(cdn, log):
    """Returns (process, port, description)."""
    if os.path.exists(NGINX_CONF) and os.path.exists(NGINX_CDN):
        process = subprocess.Popen([sys.executable, NGINX_CDN, cdn], stdout=subprocess.PIPE, stderr=log)
        port = read_port(process, 30)
        if port is not None:
            return process, port, "nginx (deploy/nginx/ingestd-cdn.conf, via Tests/IngestdTesting/nginx_cdn.py)"
        stop(process)
        print("nginx_cdn.py printed no port; serving the CDN with Python instead", file=sys.stderr)
    process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve-cdn", cdn], stdout=subprocess.PIPE, stderr=log)
    port = read_port(process, 30)
    if port is None:
        raise SystemExit("the CDN server did not start")
    return process, port, "python ThreadingHTTPServer (no-cache + ETag for .m3u8)"


def stop(process, grace=30):
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def http_get(port, path, timeout=2.0):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def wait_http(port, path, seconds, status=200):
    """Polls until `path` answers `status` (None: any answer)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if status is None or http_get(port, path)[0] == status:
                return True
        except (OSError, http.client.HTTPException):
            pass
        time.sleep(0.1)
    return False


# --- PostgreSQL (--fleet) --------------------------------------------------------------------

class Postgres(ThrowawayPostgres):
    """The fleet's queue (lib/throwaway_pg.py), with the jobs' states."""

    def states(self):
        """{job id: state}; {} when psql fails."""
        rows = self.sql("SELECT id, state FROM ingestd_jobs", check=False)
        return dict(line.split("|", 1) for line in rows.split("\n") if "|" in line)


# --- The metrics scraper ---------------------------------------------------------------------

def metric(text, name):
    """The smallest value of `name` over its series (any labels) in a Prometheus text page;
    None when absent or NaN. A counter's (`_total`) series are summed instead."""
    values = []
    pattern = re.compile(re.escape(name) + r"(?:\{[^}]*\})?\s+(\S+)")
    for line in text.splitlines():
        match = pattern.match(line)
        if match is None:
            continue
        try:
            value = float(match.group(1))
        except ValueError:
            continue
        if not math.isnan(value):
            values.append(value)
    if not values:
        return None
    return sum(values) if name.endswith("_total") else min(values)


class Scraper(threading.Thread):
    def __init__(self, port, origin):
        super().__init__(daemon=True)
        self.port, self.origin = port, origin  # t = 0: the app's drop (monotonic)
        self.samples = []  # {"t", "margin", "ranShort"}
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            began = time.monotonic()
            try:
                status, body = http_get(self.port, "/metrics", timeout=1.0)
                text = body.decode("utf-8", "replace") if status == 200 else ""
            except OSError:
                text = None
            self.samples.append({"t": round(began - self.origin, 3),
                                 "margin": metric(text, "ingestd_shown_margin_seconds") if text else None,
                                 "ranShort": metric(text, "ingestd_shown_ran_short_total") if text else None,
                                 **({} if text is not None else {"error": "no answer"})})
            self.halt.wait(max(0.0, began + 0.5 - time.monotonic()))


def by_second(samples):
    """[(t, smallest margin in [t, t+1), ran-short counter at its last sample)] from t = 0."""
    rows = {}
    for sample in samples:
        if sample["t"] < 0:
            continue
        second = int(sample["t"])
        row = rows.setdefault(second, {"t": second, "margin": None, "ranShort": None})
        if sample["margin"] is not None:
            row["margin"] = sample["margin"] if row["margin"] is None else min(row["margin"], sample["margin"])
        if sample["ranShort"] is not None:
            row["ranShort"] = sample["ranShort"]
    return [rows[t] for t in sorted(rows)]


# --- The run ---------------------------------------------------------------------------------

class Upload:
    def __init__(self, name, kind, seconds, source):
        self.name, self.kind, self.seconds, self.source = name, kind, seconds, source
        self.id = None
        self.dropped = self.playable = self.published = None  # monotonic
        self.ended = None  # "published", "rejected", "failed"
        self.viewer = None
        self.viewer_report = None
        self.viewer_exit = None
        self.decode = None


def video_dir(cdn, upload):
    if upload.id is not None:
        path = os.path.join(cdn, upload.id)
        return path if os.path.isdir(path) else None
    for entry in os.listdir(cdn):
        if entry.startswith(f"{upload.name}-"):
            upload.id = entry
            return os.path.join(cdn, entry)
    return None


class EventsTail:
    """The spool's events.ndjson, read as it grows: {id: [event, …]}."""

    def __init__(self, path):
        self.path, self.offset, self.partial = path, 0, ""
        self.by_id = {}
        self.ids = {}  # arrival name (app.mp4) -> job id, from `claimed`

    def poll(self):
        try:
            with open(self.path) as f:
                f.seek(self.offset)
                chunk = f.read()
                self.offset = f.tell()
        except OSError:
            return
        lines = (self.partial + chunk).split("\n")
        self.partial = lines.pop()
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("id"):
                self.by_id.setdefault(event["id"], []).append(event)
                if event.get("event") == "claimed" and event.get("name"):
                    self.ids[event["name"]] = event["id"]


def start_viewer(upload, port, out):
    url = f"http://127.0.0.1:{port}/{upload.id}/master.m3u8"
    with open(os.path.join(out, "viewers", f"{upload.name}.json"), "w") as report, \
            open(os.path.join(out, "viewers", f"{upload.name}.log"), "w") as log:
        upload.viewer = subprocess.Popen([sys.executable, VIEWER, url, "--all-variants", "--timeout", str(VIEWER_TIMEOUT),
                                          "--segments-dir", os.path.join(out, "viewers", upload.name)], stdout=report, stderr=log)


def drop(uploads, spool, fleet, binary):
    """Makes the uploads arrive at once: renamed into incoming/ (staged there under hidden
    names), or queued with one `submit`. Sets each one's `dropped` (and, for the fleet, `id`)."""
    if fleet is None:
        for upload in uploads:
            os.rename(os.path.join(spool, "incoming", f".{upload.name}.mp4.part"), os.path.join(spool, "incoming", f"{upload.name}.mp4"))
            upload.dropped = time.monotonic()
        return
    began = time.monotonic()
    for upload in uploads:
        upload.dropped = began
    result = subprocess.run([binary, "submit", "--json", "--database", fleet.url, "--uploads", spool,
                             *[os.path.join(spool, f"{u.name}.mp4") for u in uploads]], capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"submit failed ({result.returncode}): {result.stderr.strip()}")
    ids = [job["id"] for job in json.loads(result.stdout)]
    for upload, job in zip(uploads, ids):
        upload.id = job


def decode_check(upload, out):
    """Every variant's fetched init + segments decode without an error (ffmpeg -f null)."""
    folder = os.path.join(out, "viewers", upload.name)
    files = sorted(f for f in os.listdir(folder) if f.endswith(".mp4")) if os.path.isdir(folder) else []
    problems = []
    for name in files:
        result = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", os.path.join(folder, name), "-f", "null", "-"],
                                capture_output=True, text=True)
        if result.returncode != 0 or result.stderr.strip():
            problems.append(f"{name}: {(result.stderr.strip() or f'exit {result.returncode}').splitlines()[0]}")
    return {"files": len(files), "ok": bool(files) and not problems, "problems": problems}


def run(binary, out, fleet_mode, decode):
    media = os.path.join(out, "media")
    os.makedirs(media, exist_ok=True)
    print("generating the uploads (once; kept in OUT_DIR/media) ...", flush=True)
    app_file = generate(os.path.join(media, "app_60s.mp4"), "app", 60)
    camera_file = generate(os.path.join(media, "camera_20s.mp4"), "camera", 20)
    uploads = [Upload("app", "app", 60, app_file)] + [Upload(f"cam{n}", "camera", 20, camera_file) for n in range(1, CAMERAS + 1)]

    base = os.path.join(out, "run")
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(os.path.join(out, "viewers"), ignore_errors=True)
    os.makedirs(os.path.join(out, "viewers"))
    spool, cdn = os.path.join(base, "spool"), os.path.join(base, "cdn")
    os.makedirs(os.path.join(spool, "incoming"))
    os.makedirs(cdn)
    fleet = Postgres(os.path.join(out, "pg")) if fleet_mode else None
    metrics_port = free_port()
    daemon = cdn_server = scraper = None
    logs = open(os.path.join(out, "daemon.log"), "w")
    cdn_log = open(os.path.join(out, "cdn-server.log"), "w")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    usage = {}
    complete = False
    try:
        cdn_server, cdn_port, cdn_kind = start_cdn(cdn, cdn_log)
        if not wait_http(cdn_port, "/", 30, status=None):
            raise SystemExit(f"the CDN server on port {cdn_port} does not answer (see {out}/cdn-server.log)")
        if fleet is None:
            command = [binary, "watch", "--spool", spool, "--cdn", cdn, "--jobs", str(JOBS), "--http", f"127.0.0.1:{metrics_port}"] + EXTRA
        else:
            open(os.path.join(spool, ".ingestd-uploads"), "w").write("ingestd uploads root: workers check this file is here\n")
            command = [binary, "worker", "--database", fleet.url, "--cdn", cdn, "--uploads", spool, "--jobs", str(JOBS),
                       "--http", f"127.0.0.1:{metrics_port}"] + EXTRA
        daemon = subprocess.Popen(command, stdout=logs, stderr=logs)
        if not wait_http(metrics_port, "/readyz", 30):
            time.sleep(1)
        if daemon.poll() is not None:
            raise SystemExit(f"{' '.join(command)} exited with {daemon.returncode} (see {out}/daemon.log)")
        # Staged before the clock starts: the drop itself is a rename (or one `submit`).
        for upload in uploads:
            staged = os.path.join(spool, "incoming", f".{upload.name}.mp4.part") if fleet is None else os.path.join(spool, f"{upload.name}.mp4")
            shutil.copy(upload.source, staged)
        print(f"{' '.join(command)}\nCDN: {cdn_kind} on 127.0.0.1:{cdn_port}; metrics on 127.0.0.1:{metrics_port}", flush=True)

        app, cameras = uploads[0], uploads[1:]
        drop([app], spool, fleet, binary)
        scraper = Scraper(metrics_port, app.dropped)
        scraper.start()
        events = EventsTail(os.path.join(spool, "events.ndjson")) if fleet is None else None
        deadline = time.monotonic() + PUBLISH_TIMEOUT
        last_states = 0.0
        while True:
            now = time.monotonic()
            for upload in uploads:
                if upload.dropped is None or upload.ended is not None:
                    continue
                directory = video_dir(cdn, upload)
                if directory is None:
                    continue
                if upload.playable is None and os.path.exists(os.path.join(directory, "master.m3u8")):
                    upload.playable = now
                    start_viewer(upload, cdn_port, out)
                    print(f"  {upload.name}: playable after {now - upload.dropped:.2f} s", flush=True)
                    if upload is app:
                        drop(cameras, spool, fleet, binary)
                if os.path.exists(os.path.join(directory, "manifest.json")):
                    upload.published, upload.ended = now, "published"
                    upload.playable = upload.playable or now
                    print(f"  {upload.name}: published after {now - upload.dropped:.2f} s", flush=True)
            if events is not None:
                events.poll()
                for upload in uploads:
                    upload.id = upload.id or events.ids.get(f"{upload.name}.mp4")
                    if upload.ended is not None or upload.id is None:
                        continue
                    for event in events.by_id.get(upload.id, []):
                        if event.get("event") in ("rejected", "failed"):
                            upload.ended = event["event"]
                            print(f"  {upload.name}: {event['event']}: {event.get('code')} {event.get('message')}", flush=True)
            elif now - last_states > 2:
                last_states = now
                states = fleet.states()
                for upload in uploads:
                    if upload.ended is None and states.get(upload.id) in ("rejected", "failed"):
                        upload.ended = states[upload.id]
                        print(f"  {upload.name}: {upload.ended} (see ingestd_jobs)", flush=True)
            if all(u.ended is not None for u in uploads):
                break
            if now > deadline:
                print(f"timed out after {PUBLISH_TIMEOUT} s", flush=True)
                break
            if daemon.poll() is not None:
                print(f"the daemon exited ({daemon.returncode}); see {out}/daemon.log", flush=True)
                break
            time.sleep(0.02)
        complete = all(u.ended == "published" for u in uploads)
        time.sleep(0.5)
        scraper.halt.set()
        scraper.join()
        if events is not None:
            time.sleep(0.2)
            events.poll()
        for upload in uploads:
            if upload.viewer is None:
                continue
            try:
                upload.viewer.wait(60 if complete else 5)
            except subprocess.TimeoutExpired:
                stop(upload.viewer, 5)
            upload.viewer_exit = upload.viewer.returncode
        usage["viewers"] = resource.getrusage(resource.RUSAGE_CHILDREN)
        stop(cdn_server)
        cdn_server = None
        usage["cdn"] = resource.getrusage(resource.RUSAGE_CHILDREN)
        stop(daemon, 90)
        daemon = None
        usage["daemon"] = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        if scraper is not None:
            scraper.halt.set()
        for upload in uploads:
            stop(upload.viewer, 5)
        stop(cdn_server)
        stop(daemon, 90)
        if fleet is not None:
            fleet.stop()
        logs.close()
        cdn_log.close()

    for upload in uploads:
        path = os.path.join(out, "viewers", f"{upload.name}.json")
        try:
            with open(path) as f:
                upload.viewer_report = json.loads(f.read() or "null")
        except (OSError, ValueError):
            upload.viewer_report = None
        if decode and upload.viewer is not None:
            upload.decode = decode_check(upload, out)
    own = {}
    if events is not None:
        for upload in uploads:
            for event in events.by_id.get(upload.id or "", []):
                if event.get("event") == "playable":
                    own[upload.name] = {k: event.get(k) for k in ("listedSeconds", "playableAfterSeconds", "stages")}
    cpu_seconds = {"total": round(cpu(usage["daemon"]) - cpu(before), 2),
                   "viewers": round(cpu(usage["viewers"]) - cpu(before), 2),
                   "cdnServer": round(cpu(usage["cdn"]) - cpu(usage["viewers"]), 2),
                   "daemonAndJobs": round(cpu(usage["daemon"]) - cpu(usage["cdn"]), 2)} if "daemon" in usage else None
    return uploads, {"complete": complete, "samples": scraper.samples if scraper else [], "cpuSeconds": cpu_seconds,
                     "cdnServer": cdn_kind, "command": command, "daemonPlayable": own}


def summarize(uploads, extra, binary, fleet_mode):
    app, cameras = uploads[0], uploads[1:]

    def after(upload, moment):
        return round(moment - upload.dropped, 3) if moment is not None and upload.dropped is not None else None

    rows = []
    for upload in uploads:
        report = upload.viewer_report or {}
        variants = report.get("variants") or []
        rows.append({
            "name": upload.name, "kind": upload.kind, "seconds": upload.seconds, "id": upload.id, "ended": upload.ended,
            "droppedAfterApp": after(app, upload.dropped) if upload.dropped is not None else None,
            "playableAfter": after(upload, upload.playable), "publishedAfter": after(upload, upload.published),
            "daemonPlayable": extra["daemonPlayable"].get(upload.name),
            "viewer": None if upload.viewer is None else {
                "exit": upload.viewer_exit, "stalls": report.get("stalls"), "stalledSeconds": report.get("stalledSeconds"),
                "variants": [{k: v.get(k) for k in ("uri", "stalls", "stalledSeconds", "segments", "bytes", "durationSeconds",
                                                    "listedAtFirstLoad", "startedAfter", "endedAfter", "ended", "errors", "warnings")}
                             for v in variants],
                "worstVariantStalledSeconds": max((v.get("stalledSeconds") or 0 for v in variants), default=None),
                "decode": upload.decode}})
    camera_playable = [r["playableAfter"] for r in rows[1:] if r["playableAfter"] is not None]
    published = [u.published for u in uploads if u.published is not None]
    all_published_after = round(max(published) - app.dropped, 3) if len(published) == len(uploads) else None
    per_second = by_second(extra["samples"])
    result = {
        "mode": "fleet (worker --jobs 3 on PostgreSQL)" if fleet_mode else f"spool (watch --jobs {JOBS})",
        "binary": os.path.abspath(binary), "command": extra["command"], "cores": os.cpu_count(), "cdnServer": extra["cdnServer"],
        "complete": extra["complete"], "uploads": rows,
        "cameraPlayableP50": round(statistics.median(camera_playable), 3) if len(camera_playable) == len(cameras) else None,
        "allPublishedAfter": all_published_after, "cpuSeconds": extra["cpuSeconds"],
        "metrics": extra["samples"], "marginBySecond": per_second,
    }
    worst_video = max((r["viewer"]["worstVariantStalledSeconds"] or 0 for r in rows if r["viewer"]), default=None)
    result["targets"] = {
        "noVideoRunsDryOver0.25s": None if worst_video is None else worst_video <= 0.25,
        "appPlayableWithin3.5s": rows[0]["playableAfter"] is not None and rows[0]["playableAfter"] <= 3.5,
        "all5Published": all(r["ended"] == "published" for r in rows),
        "camerasPlayableP50Within35s": result["cameraPlayableP50"] is not None and result["cameraPlayableP50"] <= 35,
        "everyFetchedFrameDecodes": None if any(r["viewer"] and r["viewer"]["decode"] is None for r in rows)
        else all(r["viewer"]["decode"]["ok"] for r in rows if r["viewer"]),
    }
    return result


def show(result):
    def number(x, width=8, digits=2):
        return f"{x:{width}.{digits}f}" if isinstance(x, (int, float)) else f"{'-':>{width}}"

    print(f"\nbusy host (#49): {result['mode']}, {result['cores']} cores, CDN by {result['cdnServer']}")
    print(f"{'upload':<10} {'to playable s':>13} {'to published s':>14} {'viewer stalls':>13} {'stalled s':>9} "
          f"{'worst variant s':>15} {'variants':>8}  decodes")
    for row in result["uploads"]:
        viewer = row["viewer"] or {}
        decode = viewer.get("decode")
        decodes = "-" if not decode else ("ok" if decode["ok"] else "; ".join(decode["problems"][:2]) or "no files")
        name = f"{row['name']} {row['seconds']}s"
        print(f"{name:<10} {number(row['playableAfter'], 13)} {number(row['publishedAfter'], 14)} "
              f"{viewer.get('stalls') if viewer.get('stalls') is not None else '-':>13} {number(viewer.get('stalledSeconds'), 9)} "
              f"{number(viewer.get('worstVariantStalledSeconds'), 15)} {len(viewer.get('variants') or []):>8}  {decodes}")
        for variant in viewer.get("variants") or []:
            if variant.get("errors"):
                print(f"{'':<10}   {variant['uri']}: {'; '.join(variant['errors'][:3])}")
    print(f"cameras to playable, p50: {number(result['cameraPlayableP50'], 0)} s (from their drop)")
    print(f"all 5 published after:    {number(result['allPublishedAfter'], 0)} s (from the app's drop)")
    usage = result["cpuSeconds"]
    if usage:
        print(f"CPU seconds (RUSAGE_CHILDREN): {usage['total']:.1f} in all: daemon and its jobs {usage['daemonAndJobs']:.1f}, "
              f"viewers {usage['viewers']:.1f}, CDN server {usage['cdnServer']:.1f}")
    print("targets (#49): " + ", ".join(f"{k}: {'-' if v is None else ('ok' if v else 'MISSED')}" for k, v in result["targets"].items()))
    print("\nmargin over time (s since the app's drop; the smallest ingestd_shown_margin_seconds in each second, "
          "ingestd_shown_ran_short_total at its end):")
    print(f"{'t':>5} {'margin s':>9} {'ran short':>9}")
    for row in result["marginBySecond"]:
        ran_short = row["ranShort"]
        print(f"{row['t']:>5} {number(row['margin'], 9)} {('-' if ran_short is None else f'{ran_short:g}'):>9}")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--serve-cdn":
        serve_cdn_forever(sys.argv[2])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("out")
    parser.add_argument("--fleet", action="store_true", help="worker --jobs 3 on a throwaway PostgreSQL instead of watch")
    parser.add_argument("--no-decode-check", action="store_true", help="do not decode the viewers' frames afterwards")
    parser.add_argument("--margin", help="passed to the daemon as --margin (0: the margin guard off, as before #49)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stops what it started (the finally blocks) on SIGTERM too
    binary, out = os.path.abspath(args.binary), os.path.abspath(args.out)
    if not os.access(binary, os.X_OK):
        raise SystemExit(f"{binary}: not an executable (make release)")
    os.makedirs(out, exist_ok=True)
    global EXTRA
    EXTRA = ["--margin", args.margin] if args.margin is not None else []
    uploads, extra = run(binary, out, args.fleet, not args.no_decode_check)
    result = summarize(uploads, extra, binary, args.fleet)
    with open(os.path.join(out, "busy.json"), "w") as f:
        json.dump(result, f, indent=1)
    show(result)
    print(f"\n{os.path.join(out, 'busy.json')}; each viewer's report: {os.path.join(out, 'viewers')}/<name>.json")
    return 0 if result["complete"] else 1


if __name__ == "__main__":
    sys.exit(main())
