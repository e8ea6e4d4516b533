#!/usr/bin/env python3
"""Load for `make bench-upload`: many tus uploads at once over keep-alive connections.

  tus_load.py load LINKS_FILE SIZE CHUNK       one thread per line of LINKS_FILE (an upload URL):
                                               create, then PATCH SIZE bytes in CHUNK-byte requests
  tus_load.py interrupt LINK SIZE CHUNK CUT    one upload whose connection is cut CUT bytes into its
                                               second chunk; resumed from HEAD's offset
Prints one JSON line.
"""
import http.client, json, os, sys, threading, time
from urllib.parse import urlsplit

def connection(url):
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=120), parts

def create(conn, parts, size):
    conn.request("POST", f"{parts.path}?{parts.query}", headers={"Tus-Resumable": "1.0.0", "Upload-Length": str(size)})
    r = conn.getresponse(); r.read()
    assert r.status == 201, r.status
    return r.getheader("Location")

def patch(conn, location, offset, body):
    conn.request("PATCH", location, body=body, headers={"Tus-Resumable": "1.0.0", "Upload-Offset": str(offset),
                                                         "Content-Type": "application/offset+octet-stream"})
    r = conn.getresponse(); r.read()
    assert r.status == 204, (r.status, offset)
    return int(r.getheader("Upload-Offset"))

def load(links_file, size, chunk):
    links = [line.strip() for line in open(links_file) if line.strip()]
    payload = os.urandom(chunk)
    errors = []
    def one(url):
        try:
            conn, parts = connection(url)
            location = create(conn, parts, size)
            offset = 0
            while offset < size:
                offset = patch(conn, location, offset, payload[: min(chunk, size - offset)])
            conn.close()
        except Exception as e:  # reported, not raised: the figures say how many failed
            errors.append(repr(e))
    threads = [threading.Thread(target=one, args=(url,)) for url in links]
    start = time.time()
    for t in threads: t.start()
    for t in threads: t.join()
    wall = time.time() - start
    print(json.dumps({"uploads": len(links), "bytes": len(links) * size, "wall": wall, "errors": errors[:3], "failed": len(errors)}))

def interrupt(url, size, chunk, cut):
    payload = os.urandom(size)
    conn, parts = connection(url)
    location = create(conn, parts, size)
    sent = 0
    offset = patch(conn, location, 0, payload[:chunk]); sent += chunk
    # The second chunk's connection drops CUT bytes in (a phone losing its signal).
    conn.putrequest("PATCH", location)
    for name, value in {"Tus-Resumable": "1.0.0", "Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream",
                        "Content-Length": str(chunk)}.items():
        conn.putheader(name, value)
    conn.endheaders()
    conn.send(payload[offset:offset + cut]); sent += cut
    conn.sock.close()
    time.sleep(1)
    conn, parts = connection(url)
    conn.request("HEAD", location, headers={"Tus-Resumable": "1.0.0"})
    r = conn.getresponse(); r.read()
    offset = int(r.getheader("Upload-Offset"))
    resumed_at = offset
    while offset < size:
        n = min(chunk, size - offset)
        offset = patch(conn, location, offset, payload[offset:offset + n]); sent += n
    print(json.dumps({"size": size, "chunk": chunk, "cut_at": chunk + cut, "resumed_at": resumed_at, "resent": sent - size}))

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "load":
        load(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        interrupt(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
