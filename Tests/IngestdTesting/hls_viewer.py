#!/usr/bin/env python3
"""A viewer of a growing HLS video that follows RFC 8216 §6.3.4 from first sight, written
independently of ingestd (Python standard library only). It tells whether a viewer who opened a
video the moment its master playlist appeared ran dry, and for how long.

  hls_viewer.py URL_OF_MASTER [--timeout S] [--all-variants] [--segments-dir DIR]

1. First sight: the master URL is polled every 50 ms until it answers 200.
2. One viewer thread per variant (every #EXT-X-STREAM-INF with --all-variants, else the first
   listed; a URL that is itself a media playlist is its own single variant). Each loads the media
   playlist, then fetches the init section (#EXT-X-MAP) and every listed segment in order, and
   reloads the playlist as §6.3.4 says: after a load that found it changed (the first load
   included), no sooner than one target duration after that load began; after one that found it
   unchanged (same bytes, or 304), half a target duration after it began; never after
   #EXT-X-ENDLIST.
3. Play at 1x: playback starts the moment the first segment has been fetched; the play head then
   advances in real time. When it reaches the end of what was fetched before the next segment is
   in (and the video is not known to be over: #EXT-X-ENDLIST seen and every segment fetched), the
   viewer has run dry: a stall, which lasts until that next segment is fetched. The play head is
   computed, not waited for: once the playlist has ENDLIST and every segment is fetched, the rest
   plays without stalls and the viewer stops (fast-forward).

HTTP as a player's stack does it: plain GETs (no Cache-Control in the request), one keep-alive
connection per viewer, redirects followed, and a private cache: a response's freshness (max-age,
Expires, or the heuristic 10 % of Date - Last-Modified browsers use when neither is given) is
honoured without asking the server, and a stale one is revalidated with If-None-Match (its ETag)
and If-Modified-Since (its Last-Modified). So a server that lets a growing playlist be cached, or
answers 304 to a playlist that changed within the second of its Last-Modified, shows up here as
stalls (and in `cacheHits`, `notModified`, `warnings`), as it would for a real viewer.

Prints one JSON object:
  {"url", "firstSight": epoch s, "variants": [{"index", "uri", "url", "attributes", "stalls",
   "stalledSeconds", "stallList": [{"at": media s, "after": s since first sight, "seconds"}],
   "segments", "bytes", "durationSeconds", "listedAtFirstLoad", "startedAfter", "endedAfter",
   "reloads", "notModified", "cacheHits", "ended", "errors": [...], "warnings": [...]}],
   "stalls", "stalledSeconds"}
`startedAfter`/`endedAfter` are seconds from first sight to the first frame and to the play
head's reaching the end. Exit status 0 when every variant ended, 1 otherwise (timeout, an HTTP
error mid-play, a master that never appeared). A playlist that breaks §6.2.1's rule for EVENT
playlists (a listed segment changed or gone) is reported in `errors`.

--segments-dir DIR writes each variant's init section and segments, concatenated in playing
order, to DIR/<variant index>.mp4 (decodable with ffprobe/ffmpeg).

Subtitles: every #EXT-X-MEDIA:TYPE=SUBTITLES rendition of a group a viewed variant names
(SUBTITLES=) is viewed the same way, from the same first sight, and reported in "subtitles"
(index "s<n>"); with --segments-dir each of its segments is written as DIR/s<n>-<seq>.vtt. A
variant naming a group the master does not define is an error.
"""
import argparse
import email.utils
import http.client
import json
import os
import re
import sys
import threading
import time
import urllib.parse

POLL_SECONDS = 0.05
REQUEST_TIMEOUT = 10.0
NETWORK_RETRIES = 3


class HTTPFailure(Exception):
    def __init__(self, url, status, reason=""):
        super().__init__(f"{url}: HTTP {status} {reason}".strip())
        self.status = status


class Client:
    """One viewer's HTTP stack: a keep-alive connection per origin and a private cache."""

    def __init__(self, deadline):
        self.deadline = deadline
        self.connections = {}
        self.cache = {}  # url -> {"body", "etag", "last_modified", "fresh_until", "headers"}
        self.not_modified = 0
        self.cache_hits = 0
        self.retries = 0

    def close(self):
        for connection in self.connections.values():
            connection.close()

    def _connection(self, scheme, netloc):
        key = (scheme, netloc)
        if key not in self.connections:
            timeout = max(0.5, min(REQUEST_TIMEOUT, self.deadline - time.monotonic()))
            kind = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
            self.connections[key] = kind(netloc, timeout=timeout)
        return self.connections[key]

    def _request(self, url, headers):
        """One request, following redirects, retrying network errors (not HTTP statuses) on a new
        connection. Returns (final url, status, headers, body)."""
        for _ in range(6):
            parts = urllib.parse.urlsplit(url)
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            for attempt in range(NETWORK_RETRIES + 1):
                connection = self._connection(parts.scheme, parts.netloc)
                try:
                    connection.request("GET", path, headers=headers)
                    response = connection.getresponse()
                    body = response.read()
                    if response.will_close:
                        connection.close()
                    break
                except (OSError, http.client.HTTPException):
                    connection.close()
                    del self.connections[(parts.scheme, parts.netloc)]
                    if attempt == NETWORK_RETRIES or time.monotonic() > self.deadline:
                        raise
                    self.retries += 1
                    time.sleep(0.1)
            if response.status in (301, 302, 303, 307, 308) and response.getheader("Location"):
                url = urllib.parse.urljoin(url, response.getheader("Location"))
                continue
            return url, response.status, response.headers, body
        raise HTTPFailure(url, response.status, "too many redirects")

    def get(self, url, byterange=None, cacheable=False):
        """GET as a player's HTTP stack would. Returns (final url, body, unchanged: True when the
        body is the cached one, from a fresh cache entry or a 304), and the response's
        Cache-Control (None for a cache hit). Only `cacheable` responses (playlists) are kept:
        a segment is fetched once."""
        if byterange is not None:
            length, offset = byterange
            _, status, _, body = self._request(url, {"Range": f"bytes={offset}-{offset + length - 1}"})
            if status not in (200, 206):
                raise HTTPFailure(url, status)
            return url, body[offset:offset + length] if status == 200 else body, False, None
        now = time.monotonic()
        entry = self.cache.get(url)
        if entry is not None and now < entry["fresh_until"]:
            self.cache_hits += 1
            return entry["url"], entry["body"], True, None
        headers = {}
        if entry is not None:
            if entry["etag"]:
                headers["If-None-Match"] = entry["etag"]
            if entry["last_modified"]:
                headers["If-Modified-Since"] = entry["last_modified"]
        final, status, response_headers, body = self._request(url, headers)
        if status == 304 and entry is not None:
            self.not_modified += 1
            entry["fresh_until"] = self._fresh_until(response_headers, time.monotonic(), entry["last_modified"])
            for name, key in (("ETag", "etag"), ("Last-Modified", "last_modified")):
                if response_headers.get(name):
                    entry[key] = response_headers.get(name)
            return entry["url"], entry["body"], True, response_headers.get("Cache-Control", "")
        if status != 200:
            raise HTTPFailure(final, status)
        cache_control = response_headers.get("Cache-Control", "")
        if not cacheable or "no-store" in cache_control.lower():
            self.cache.pop(url, None)
        else:
            last_modified = response_headers.get("Last-Modified")
            self.cache[url] = {"url": final, "body": body, "etag": response_headers.get("ETag"),
                               "last_modified": last_modified,
                               "fresh_until": self._fresh_until(response_headers, time.monotonic(), last_modified)}
        return final, body, False, cache_control

    @staticmethod
    def _fresh_until(headers, received, last_modified):
        """RFC 9111 §4.2: explicit freshness (max-age, else Expires - Date), else the heuristic
        10 % of Date - Last-Modified; no-cache means none. The Age header is subtracted."""
        directives = {}
        for item in (headers.get("Cache-Control") or "").lower().split(","):
            name, _, value = item.strip().partition("=")
            directives[name] = value.strip('"')
        if "no-cache" in directives or "no-store" in directives:
            return received

        def date(name):
            value = headers.get(name) if name != "Last-Modified" else last_modified
            try:
                return email.utils.parsedate_to_datetime(value).timestamp() if value else None
            except (TypeError, ValueError):
                return None
        served = date("Date") or time.time()
        lifetime = None
        if "max-age" in directives:
            try:
                lifetime = float(directives["max-age"])
            except ValueError:
                lifetime = 0.0
        elif headers.get("Expires") is not None:
            expires = date("Expires")
            lifetime = (expires - served) if expires is not None else 0.0
        elif date("Last-Modified") is not None:
            lifetime = 0.1 * max(0.0, served - date("Last-Modified"))
        if lifetime is None:
            return received
        try:
            age = float(headers.get("Age") or 0)
        except ValueError:
            age = 0.0
        return received + lifetime - age


def attributes(text):
    """An attribute list (RFC 8216 §4.2) as a dict, quotes removed."""
    result = {}
    for match in re.finditer(r'([A-Z0-9-]+)=("[^"]*"|[^,]*)', text):
        result[match.group(1)] = match.group(2).strip('"')
    return result


def byterange(value, previous_end):
    length, _, offset = value.partition("@")
    return int(length), int(offset) if offset else previous_end


class MediaPlaylist:
    def __init__(self, text):
        self.target = None
        self.sequence = 0
        self.kind = None
        self.ended = False
        self.segments = []  # (uri, seconds, byterange or None, map (uri, byterange) or None)
        self.problems = []
        lines = [line.strip() for line in text.splitlines()]
        if not lines or lines[0] != "#EXTM3U":
            self.problems.append("not an M3U8 playlist (no #EXTM3U first)")
        duration, segment_range, current_map, previous_end = None, None, None, 0
        for line in lines[1:]:
            if not line:
                continue
            if line.startswith("#EXT-X-TARGETDURATION:"):
                self.target = float(line.split(":", 1)[1])
            elif line.startswith("#EXT-X-MEDIA-SEQUENCE:"):
                self.sequence = int(line.split(":", 1)[1])
            elif line.startswith("#EXT-X-PLAYLIST-TYPE:"):
                self.kind = line.split(":", 1)[1]
            elif line == "#EXT-X-ENDLIST":
                self.ended = True
            elif line.startswith("#EXT-X-MAP:"):
                attrs = attributes(line.split(":", 1)[1])
                current_map = (attrs.get("URI"), byterange(attrs["BYTERANGE"], 0) if "BYTERANGE" in attrs else None)
            elif line.startswith("#EXTINF:"):
                duration = float(line.split(":", 1)[1].split(",", 1)[0])
            elif line.startswith("#EXT-X-BYTERANGE:"):
                segment_range = byterange(line.split(":", 1)[1], previous_end)
            elif not line.startswith("#"):
                if duration is None:
                    self.problems.append(f"segment {line} has no #EXTINF")
                    duration = 0.0
                self.segments.append((line, duration, segment_range, current_map))
                if segment_range:
                    previous_end = segment_range[1] + segment_range[0]
                duration, segment_range = None, None
        if self.target is None:
            self.problems.append("no #EXT-X-TARGETDURATION")


class Playback:
    """The play head at 1x, computed from when segments were fetched (monotonic seconds)."""

    def __init__(self, origin):
        self.origin = origin  # first sight
        self.buffered = 0.0  # media seconds fetched
        self.started = None
        self.anchor_wall = self.anchor_media = 0.0  # the play head was at anchor_media at anchor_wall
        self.stall_start = None
        self.stalls = []  # {"at", "after", "seconds"}
        self.complete = False  # ENDLIST seen and every segment fetched: no more stalls

    def settle(self, now):
        if self.started is None or self.stall_start is not None or self.complete:
            return
        runs_out = self.anchor_wall + (self.buffered - self.anchor_media)
        if runs_out < now:
            self.stall_start = runs_out

    def fetched(self, seconds, now):
        self.settle(now)
        if self.started is None:
            self.started = self.anchor_wall = now
            self.anchor_media = 0.0
        elif self.stall_start is not None:
            self.stalls.append({"at": round(self.buffered, 3), "after": round(self.stall_start - self.origin, 3),
                                "seconds": round(now - self.stall_start, 3)})
            self.anchor_wall, self.anchor_media, self.stall_start = now, self.buffered, None
        self.buffered += seconds

    def finish(self):
        """Every segment is in and the playlist ended: the rest plays through."""
        self.complete = True

    def stop(self, now):
        """Stopped before the end (timeout, error): a stall in progress counts up to now."""
        self.settle(now)
        if self.stall_start is not None:
            self.stalls.append({"at": round(self.buffered, 3), "after": round(self.stall_start - self.origin, 3),
                                "seconds": round(now - self.stall_start, 3), "unfinished": True})
            self.stall_start = None

    def end_time(self):
        return self.anchor_wall + (self.buffered - self.anchor_media) if self.started is not None else None


class Viewer(threading.Thread):
    def __init__(self, index, uri, url, attrs, origin, deadline, segments_dir):
        super().__init__(daemon=True)
        self.index, self.uri, self.url, self.attrs = index, uri, url, attrs
        self.deadline = deadline
        self.client = Client(deadline)
        self.playback = Playback(origin)
        self.origin = origin
        subtitles = str(index).startswith("s")
        self.out_path = os.path.join(segments_dir, f"{index}.mp4") if segments_dir and not subtitles else None
        self.text_dir = segments_dir if subtitles else None
        self.errors, self.warnings = [], []
        self.segments = self.bytes = self.reloads = 0
        self.duration = 0.0
        self.listed_at_first_load = None
        self.ended = False

    def warn(self, text):
        if text not in self.warnings:
            self.warnings.append(text)

    def load(self, previous):
        """Loads (or reloads) the media playlist. Returns (playlist to use, changed)."""
        final, body, cached, cache_control = self.client.get(self.url, cacheable=True)
        self.base = final
        text = body.decode("utf-8", "replace")
        if previous is not None and (cached or text == previous[1]):
            return previous, False
        playlist = MediaPlaylist(text)
        for problem in playlist.problems:
            if "TARGETDURATION" in problem:
                self.errors.append(problem)
            else:
                self.warn(problem)
        if not playlist.ended and cache_control is not None:
            directives = cache_control.lower().replace(" ", "").split(",")
            short = [d for d in directives if d.startswith("max-age=") and d[8:].isdigit() and int(d[8:]) <= 1]
            if not ({"no-cache", "no-store"} & set(directives)) and not short:
                self.warn(f"a growing playlist served with Cache-Control: {cache_control or '(none)'} "
                          "(docs/OUTPUT.md asks for no-cache or max-age=1)")
        if previous is not None:
            old = previous[0]
            if playlist.sequence != old.sequence or len(playlist.segments) < len(old.segments) \
                    or [s[:3] for s in playlist.segments[:len(old.segments)]] != [s[:3] for s in old.segments]:
                self.errors.append(f"reload {self.reloads}: the EVENT playlist changed what it listed "
                                   f"({len(old.segments)} -> {len(playlist.segments)} segments, sequence "
                                   f"{old.sequence} -> {playlist.sequence}); kept the earlier version")
                return previous, False
            if old.ended and not playlist.ended:
                self.errors.append(f"reload {self.reloads}: #EXT-X-ENDLIST went away")
                return previous, False
        return (playlist, text), True

    def fetch(self, uri, byte_range):
        _, body, _, _ = self.client.get(urllib.parse.urljoin(self.base, uri), byte_range)
        self.bytes += len(body)
        if self.out:
            self.out.write(body)
        elif self.text_dir:
            with open(os.path.join(self.text_dir, f"{self.index}-{self.segments:03d}.vtt"), "wb") as out:
                out.write(body)

    def run(self):
        self.out = open(self.out_path, "wb") if self.out_path else None
        try:
            self.play()
        except HTTPFailure as error:
            self.errors.append(str(error))
        except (OSError, http.client.HTTPException, ValueError) as error:
            self.errors.append(f"{type(error).__name__}: {error}")
        finally:
            if not self.ended:
                self.playback.stop(time.monotonic())
            if self.out:
                self.out.close()
            self.client.close()

    def play(self):
        started = time.monotonic()
        current, _ = self.load(None)
        self.listed_at_first_load = round(sum(s[1] for s in current[0].segments), 3)
        target = current[0].target or 1.0
        next_reload = started + target
        next_index, current_map = 0, None
        while True:
            now = time.monotonic()
            if now > self.deadline:
                self.errors.append(f"timed out: {next_index} of {len(current[0].segments)} listed segments fetched, "
                                   f"{'ENDLIST seen' if current[0].ended else 'no ENDLIST yet'}")
                return
            playlist = current[0]
            if not playlist.ended and now >= next_reload:
                began = now
                self.reloads += 1
                current, changed = self.load(current)
                next_reload = began + (target if changed else target / 2)
                continue
            if next_index < len(playlist.segments):
                uri, seconds, byte_range, segment_map = playlist.segments[next_index]
                if segment_map is not None and segment_map != current_map:
                    self.fetch(*segment_map)
                    current_map = segment_map
                self.fetch(uri, byte_range)
                self.segments += 1
                self.duration += seconds
                next_index += 1
                self.playback.fetched(seconds, time.monotonic())
                continue
            if playlist.ended:
                self.playback.finish()
                self.ended = True
                return
            time.sleep(max(0.0, min(next_reload, self.deadline + 0.01) - time.monotonic()))

    def report(self):
        playback = self.playback
        stalled = sum(s["seconds"] for s in playback.stalls)
        end = playback.end_time() if self.ended else None
        return {"index": self.index, "uri": self.uri, "url": self.url, "attributes": self.attrs,
                "stalls": len(playback.stalls), "stalledSeconds": round(stalled, 3), "stallList": playback.stalls,
                "segments": self.segments, "bytes": self.bytes, "durationSeconds": round(self.duration, 3),
                "listedAtFirstLoad": self.listed_at_first_load,
                "startedAfter": round(playback.started - self.origin, 3) if playback.started is not None else None,
                "endedAfter": round(end - self.origin, 3) if end is not None else None,
                "reloads": self.reloads, "notModified": self.client.not_modified, "cacheHits": self.client.cache_hits,
                "networkRetries": self.client.retries, "ended": self.ended, "errors": self.errors, "warnings": self.warnings}


def first_sight(url, deadline):
    """Polls the master every 50 ms until it answers 200; returns (monotonic, epoch, final url, text)."""
    client = Client(deadline)
    try:
        while time.monotonic() < deadline:
            try:
                final, status, _, body = client._request(url, {})
                if status == 200:
                    return time.monotonic(), time.time(), final, body.decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(POLL_SECONDS)
    finally:
        client.close()
    return None


def variants_of(master_url, text):
    """[(uri, absolute url, attributes)] of the master's #EXT-X-STREAM-INF entries, in order; a
    media playlist is its own single variant."""
    lines = [line.strip() for line in text.splitlines()]
    variants, pending = [], None
    for line in lines:
        if line.startswith("#EXT-X-STREAM-INF:"):
            pending = attributes(line.split(":", 1)[1])
        elif line and not line.startswith("#") and pending is not None:
            variants.append((line, urllib.parse.urljoin(master_url, line), pending))
            pending = None
    if not variants and any(line.startswith("#EXTINF:") for line in lines):
        variants.append((master_url, master_url, {}))
    return variants


def subtitles_of(master_url, text, groups):
    """[(uri, absolute url, attributes)] of the master's SUBTITLES renditions in `groups`."""
    found = []
    for line in (line.strip() for line in text.splitlines()):
        if line.startswith("#EXT-X-MEDIA:"):
            attrs = attributes(line.split(":", 1)[1])
            if attrs.get("TYPE") == "SUBTITLES" and attrs.get("GROUP-ID") in groups and "URI" in attrs:
                found.append((attrs["URI"], urllib.parse.urljoin(master_url, attrs["URI"]), attrs))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--timeout", type=float, default=600, help="seconds in all, first sight included (default 600)")
    parser.add_argument("--all-variants", action="store_true", help="view every variant (default: the first listed)")
    parser.add_argument("--segments-dir", help="write each variant's init + segments to DIR/<index>.mp4")
    args = parser.parse_args()
    deadline = time.monotonic() + args.timeout
    if args.segments_dir:
        os.makedirs(args.segments_dir, exist_ok=True)
    sight = first_sight(args.url, deadline)
    if sight is None:
        json.dump({"url": args.url, "firstSight": None, "variants": [], "stalls": 0, "stalledSeconds": 0,
                   "errors": [f"{args.url} never answered 200 within {args.timeout} s"]}, sys.stdout)
        print()
        return 1
    origin, epoch, final, text = sight
    variants = variants_of(final, text)
    if not args.all_variants:
        variants = variants[:1]
    viewers = [Viewer(index, uri, url, attrs, origin, deadline, args.segments_dir)
               for index, (uri, url, attrs) in enumerate(variants)]
    groups = {attrs["SUBTITLES"] for _, _, attrs in variants if "SUBTITLES" in attrs}
    renditions = subtitles_of(final, text, groups)
    missing = sorted(groups - {attrs["GROUP-ID"] for _, _, attrs in renditions})
    readers = [Viewer(f"s{index}", uri, url, attrs, origin, deadline, args.segments_dir)
               for index, (uri, url, attrs) in enumerate(renditions)]
    viewers += readers
    for viewer in viewers:
        viewer.start()
    for viewer in viewers:
        viewer.join(max(0.0, deadline - time.monotonic()) + REQUEST_TIMEOUT * (NETWORK_RETRIES + 2))
    reports = [viewer.report() for viewer in viewers if viewer not in readers]
    subtitles = [viewer.report() for viewer in readers]
    result = {"url": args.url, "firstSight": round(epoch, 3), "variants": reports, "subtitles": subtitles,
              "stalls": sum(r["stalls"] for r in reports),
              "stalledSeconds": round(sum(r["stalledSeconds"] for r in reports), 3)}
    errors = [f"a variant names the subtitles group {group}, which no #EXT-X-MEDIA defines" for group in missing]
    if not variants:
        errors.append("the master lists no #EXT-X-STREAM-INF variant")
    if errors:
        result["errors"] = errors
    json.dump(result, sys.stdout)
    print()
    return 0 if reports and all(r["ended"] for r in reports + subtitles) and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
