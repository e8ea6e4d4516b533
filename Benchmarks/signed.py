#!/usr/bin/env python3
"""make bench-signed (issue #67): what signed playback costs nginx per request.

  signed.py OUT_DIR [REQUESTS]

One throwaway nginx (Tests/IngestdTesting/nginx_cdn.py) with deploy/nginx/ingestd-cdn.conf and
a playback key; a CDN directory with two videos whose segment is the same 1 MB file (one inode, two names): one
public, one signed (its .playback-signed marker). Over one keep-alive connection, REQUESTS pairs (default
4000) of GETs, the order alternating pair by pair (so both meet the same host load): the public
segment by its plain path, the signed one by its signed path (the docs' Python recipe).
Prints per-request p50 and p95 for each and the ratio of their medians, and writes
OUT_DIR/signed.json. No ingestd process is in the request path: nginx alone checks the token.
"""
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "IngestdTesting"))
from playback_url import playback_url  # noqa: E402

OUT = os.path.abspath(sys.argv[1])
REQUESTS = int(sys.argv[2]) if len(sys.argv) > 2 else 4000


def main():
    os.makedirs(OUT, exist_ok=True)
    work = tempfile.mkdtemp(prefix="bench-signed-")
    cdn = os.path.join(work, "cdn")
    segment = os.urandom(1 << 20)
    for video in ("open", "locked"):
        os.makedirs(os.path.join(cdn, video, "t1", "360p"))
    with open(os.path.join(cdn, "open", "t1", "360p", "seg_000.m4s"), "wb") as f:
        f.write(segment)
    # One inode under both names: the same bytes in the same page cache, only the rules differ.
    os.link(os.path.join(cdn, "open", "t1", "360p", "seg_000.m4s"), os.path.join(cdn, "locked", "t1", "360p", "seg_000.m4s"))
    open(os.path.join(cdn, "locked", ".playback-signed"), "w").close()
    key = "plsec_" + __import__("base64").b64encode(os.urandom(32)).decode()
    port_file = os.path.join(work, "port")
    server = subprocess.Popen([sys.executable, os.path.join(HERE, "..", "Tests", "IngestdTesting", "nginx_cdn.py"), cdn,
                               "--port-file", port_file, "--playback-secret", key], stdout=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        port = int(open(port_file).read())
        expires = int(time.time()) + 3600
        paths = {"public": "/open/t1/360p/seg_000.m4s",
                 "signed": playback_url("", "locked", key, expires, "t1/360p/seg_000.m4s")}
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        times = {name: [] for name in paths}

        def get(name):
            started = time.perf_counter()
            connection.request("GET", paths[name])
            response = connection.getresponse()
            body = response.read()
            if response.status != 200 or len(body) != len(segment):
                raise SystemExit(f"{name}: {response.status}, {len(body)} bytes")
            return (time.perf_counter() - started) * 1000

        for name in paths:  # warm
            for _ in range(20):
                get(name)
        unsigned = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        unsigned.request("GET", "/locked/t1/360p/seg_000.m4s")
        refused = unsigned.getresponse().status
        for pair in range(REQUESTS):
            for name in (("public", "signed") if pair % 2 == 0 else ("signed", "public")):
                times[name].append(get(name))
        result = {"requests": REQUESTS, "unsigned_request_to_signed_video": refused}
        print(f"{'segment (1 MB), one keep-alive connection':44} {'p50 ms':>8} {'p95 ms':>8}")
        for name, values in times.items():
            values.sort()
            result[name] = {"p50": statistics.median(values), "p95": values[int(len(values) * 0.95) - 1]}
            print(f"{name:44} {result[name]['p50']:8.3f} {result[name]['p95']:8.3f}")
        result["ratio_p50"] = result["signed"]["p50"] / result["public"]["p50"]
        result["ratio_p95"] = result["signed"]["p95"] / result["public"]["p95"]
        print(f"signed / public: p50 x{result['ratio_p50']:.3f}, p95 x{result['ratio_p95']:.3f} (target: within x1.10)")
        print(f"the signed video's unsigned path: {refused}")
        with open(os.path.join(OUT, "signed.json"), "w") as f:
            json.dump(result, f, indent=2)
    finally:
        server.terminate()
        server.wait()
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
