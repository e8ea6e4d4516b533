#!/usr/bin/env python3
"""Serves a directory CDN through real nginx with deploy/nginx/ingestd-cdn.conf, as an operator would.

    nginx_cdn.py CDN_DIR [--port-file FILE] [--access-log FILE] [--conf FILE] [--nginx PATH]
                 [--playback-secret LINE] [--playback-secret-previous LINE]
                 [--bucket-origin URL --bucket-prefix /BUCKET/PREFIX --conf deploy/nginx/ingestd-bucket.conf]

Writes a throwaway nginx.conf into a private temporary directory (its pid file, error log and
temporary paths there too; nothing of the system's nginx is read or touched but the binary), with
one server on a free 127.0.0.1 port whose root is CDN_DIR and which includes the rules file
(after `set $ingestd_playback_secret "LINE";` and its previous, when given, as DEPLOY.md says). The
http block carries Debian's defaults (sendfile, tcp_nopush, gzip) and an open_file_cache that
also caches misses, as a tuned host has: the rules must hold under it. Once nginx answers, prints
the port on stdout (and writes it to --port-file, whole, by rename). nginx runs in the foreground
in one process (master_process off: no privilege drop, so a root test run reads a root-owned
scratch directory); it dies with this script (PR_SET_PDEATHSIG). SIGTERM or SIGINT stops nginx,
removes the temporary directory and exits 0. nginx exiting by itself exits with its status.
A port taken between choosing and binding is retried on another port, three launches in all.

Access log (--access-log, one line per request, tab-separated):
    msec  method  uri  status  body_bytes  if_none_match  range
Python standard library only.
"""
import argparse
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CONF = os.path.normpath(os.path.join(HERE, "..", "..", "deploy", "nginx", "ingestd-cdn.conf"))
PR_SET_PDEATHSIG = 1

CONFIG = """\
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log info;
events {{ worker_connections 512; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    tcp_nopush on;
    gzip on;
    open_file_cache max=1000 inactive=30s;
    open_file_cache_valid 60s;
    open_file_cache_errors on;
    log_format ingestd_cdn '$msec\\t$request_method\\t$uri\\t$status\\t$body_bytes_sent\\t$http_if_none_match\\t$http_range';
    access_log {access_log} ingestd_cdn;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    server {{
        listen 127.0.0.1:{port};
        server_name localhost;
        root {root};
{secrets}        include {conf};
    }}
}}
"""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    os.setsid()  # a terminal's ^C goes to the test, not straight to nginx


def nginx_binary(given):
    for candidate in [given, shutil.which("nginx"), "/usr/sbin/nginx"]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("nginx_cdn.py: nginx is not installed (apt-get install nginx)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cdn")
    parser.add_argument("--port-file")
    parser.add_argument("--access-log")
    parser.add_argument("--conf", default=DEFAULT_CONF)
    parser.add_argument("--nginx")
    parser.add_argument("--playback-secret", help="the playback key file's line, set before the include")
    parser.add_argument("--playback-secret-previous", help="the previous key's line, during a rotation")
    parser.add_argument("--bucket-origin", help="a bucket CDN's origin (http://host:port): with --bucket-prefix and ingestd-bucket.conf")
    parser.add_argument("--bucket-prefix", help="the bucket CDN's path-style prefix, /<bucket>/<prefix>")
    args = parser.parse_args()
    secrets = "".join(f'        set ${name} "{value}";\n' for name, value in
                      [("ingestd_playback_secret", args.playback_secret), ("ingestd_playback_secret_previous", args.playback_secret_previous),
                       ("ingestd_bucket_origin", args.bucket_origin), ("ingestd_bucket_prefix", args.bucket_prefix)]
                      if value)
    nginx = nginx_binary(args.nginx)
    root = os.path.abspath(args.cdn)
    conf = os.path.abspath(args.conf)
    if not os.path.isdir(root):
        sys.exit(f"nginx_cdn.py: {root} is not a directory")
    if not os.path.isfile(conf):
        sys.exit(f"nginx_cdn.py: {conf} is missing")
    tmp = tempfile.mkdtemp(prefix="nginx-cdn-")
    access_log = os.path.abspath(args.access_log) if args.access_log else os.path.join(tmp, "access.log")
    process = None
    stopping = []

    def stop(*_):
        stopping.append(True)
        if process and process.poll() is None:
            process.terminate()  # nginx: fast shutdown

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})  # a test runner may block them
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        for launch in range(3):
            port = free_port()
            with open(os.path.join(tmp, "nginx.conf"), "w") as f:
                f.write(CONFIG.format(tmp=tmp, port=port, root=root, conf=conf, access_log=access_log, secrets=secrets))
            for name in ["body", "proxy", "fastcgi", "uwsgi", "scgi"]:
                os.makedirs(os.path.join(tmp, name), exist_ok=True)
            process = subprocess.Popen([nginx, "-p", tmp, "-c", os.path.join(tmp, "nginx.conf"), "-e", os.path.join(tmp, "error.log")],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, preexec_fn=die_with_parent)
            deadline = time.monotonic() + 20
            while process.poll() is None and not answers(port) and time.monotonic() < deadline and not stopping:
                time.sleep(0.02)
            if stopping:
                stop()  # the signal may have come before nginx was started
                break
            if process.poll() is None and answers(port):
                if args.port_file:
                    with open(args.port_file + ".tmp", "w") as f:
                        f.write(str(port))
                    os.rename(args.port_file + ".tmp", args.port_file)
                print(port, flush=True)
                break
            if process.poll() is None:
                process.kill()
            process.wait()
            with open(os.path.join(tmp, "error.log"), errors="replace") as f:
                log = f.read()
            print(f"nginx_cdn.py: launch {launch + 1} on port {port} failed:\n{log[-2000:]}", file=sys.stderr)
            if "Address already in use" not in log:
                return 1
            process = None
        else:
            return 1
        status = process.wait() if process else 0
        if stopping:
            return 0
        with open(os.path.join(tmp, "error.log"), errors="replace") as f:
            print(f"nginx_cdn.py: nginx exited ({status}):\n{f.read()[-2000:]}", file=sys.stderr)
        return status or 1
    finally:
        if process and process.poll() is None:
            process.kill()
            process.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
