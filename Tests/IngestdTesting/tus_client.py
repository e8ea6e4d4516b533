#!/usr/bin/env python3
"""The tests' tus clients: tuspy (a stock client) and raw sockets for what no client does.

  tus_client.py upload URL FILE [--chunk N] [--pause-after K --go PATH [--resume-at BASE]] [--checksum]
      Uploads FILE with tuspy in chunks of N bytes. With --pause-after, after K chunks it prints
      "paused" and waits for PATH to exist (the test kills and restarts the server meanwhile), then
      resumes the way an app does after a restart: a new uploader on the stored upload URL, which
      asks the server (HEAD) where to go on; with --resume-at, on another server of the fleet (the
      upload URL's scheme, host and port replaced by BASE). Prints one JSON line: {url, resumed_from, sent}.
  tus_client.py trickle HOST PORT PATH COUNT SECONDS
      Opens COUNT connections that each start a PATCH and then send one byte a second (slowloris);
      after SECONDS prints {open, closed} (connections the server has closed).
"""
import json, os, socket, sys, time

def upload(url, path, chunk, pause_after, go, checksum, resume_at=None):
    from tusclient import client
    tus = client.TusClient(url)
    uploader = tus.uploader(path, chunk_size=chunk, metadata={"filename": os.path.basename(path)},
                            upload_checksum=checksum, retries=20, retry_delay=1)
    sent = 0
    size = os.path.getsize(path)
    chunks = 0
    while uploader.offset < size:
        before = uploader.offset
        uploader.upload_chunk()
        sent += uploader.offset - before
        chunks += 1
        if pause_after and chunks == pause_after:
            print("paused", flush=True)
            while not os.path.exists(go):
                time.sleep(0.1)
            break
    resumed_from = None
    if uploader.offset < size:
        url = uploader.url
        if resume_at:
            from urllib.parse import urlsplit, urlunsplit
            base, parts = urlsplit(resume_at), urlsplit(url)
            url = urlunsplit((base.scheme, base.netloc, parts.path, parts.query, parts.fragment))
        again = tus.uploader(path, url=url, chunk_size=chunk, upload_checksum=checksum, retries=20, retry_delay=1)
        resumed_from = again.offset
        while again.offset < size:
            before = again.offset
            again.upload_chunk()
            sent += again.offset - before
    print(json.dumps({"url": uploader.url, "resumed_from": resumed_from, "sent": sent}), flush=True)

def trickle(host, port, path, count, seconds):
    sockets = []
    for _ in range(count):
        s = socket.create_connection((host, port))
        s.sendall((f"PATCH {path} HTTP/1.1\r\nHost: {host}\r\nTus-Resumable: 1.0.0\r\n"
                   "Content-Type: application/offset+octet-stream\r\nUpload-Offset: 0\r\nContent-Length: 1000000\r\n\r\n").encode())
        s.setblocking(False)
        sockets.append(s)
    closed = set()
    end = time.time() + seconds
    while time.time() < end:
        for i, s in enumerate(sockets):
            if i in closed:
                continue
            try:
                s.send(b"x")
                data = s.recv(4096)
                if data == b"":
                    closed.add(i)
            except BlockingIOError:
                pass
            except OSError:
                closed.add(i)
        time.sleep(1)
    print(json.dumps({"open": count - len(closed), "closed": len(closed)}), flush=True)

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[0] == "upload":
        def option(name, default=None):
            return args[args.index(name) + 1] if name in args else default
        upload(args[1], args[2], int(option("--chunk", 1 << 20)), int(option("--pause-after", 0)), option("--go"),
               "--checksum" in args, option("--resume-at"))
    elif args[0] == "trickle":
        trickle(args[1], int(args[2]), args[3], int(args[4]), float(args[5]))
