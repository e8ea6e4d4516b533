#!/usr/bin/env python3
"""A webhook receiver for the tests, written independently of ingestd: it verifies Standard
Webhooks signatures with Python's own hmac, and logs every request as one JSON line.

  webhook_receiver.py --secret whsec_... --port-file F --log F [--refuse-first] [--hang]

--refuse-first answers 503 to the first delivery of each webhook-id, 2xx to later ones;
--hang never answers; --stall-body answers 200 with a body it never sends. A request whose
signature does not verify gets 401.
"""
import argparse, base64, hashlib, hmac, json, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--secret", required=True)
parser.add_argument("--port-file", required=True)
parser.add_argument("--log", required=True)
parser.add_argument("--refuse-first", action="store_true")
parser.add_argument("--hang", action="store_true")
parser.add_argument("--stall-body", action="store_true")
parser.add_argument("--slow", action="store_true", help="answer each request after 0.3 s")
args = parser.parse_args()
key = base64.b64decode(args.secret[len("whsec_"):])
seen = set()
lock = threading.Lock()


def verify(msg_id, timestamp, body, header):
    if not msg_id or not timestamp or not header:
        return False
    try:
        if abs(time.time() - int(timestamp)) > 300:  # the specification's replay tolerance
            return False
    except ValueError:
        return False
    expected = base64.b64encode(hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()).decode()
    for candidate in header.split(" "):
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *_):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        msg_id = self.headers.get("webhook-id")
        verified = verify(msg_id, self.headers.get("webhook-timestamp"), body, self.headers.get("webhook-signature"))
        with lock:
            first = msg_id not in seen
            seen.add(msg_id)
        status = 401 if not verified else (503 if args.refuse_first and first else 204)
        record = {"id": msg_id, "timestamp": self.headers.get("webhook-timestamp"), "verified": verified,
                  "contentType": self.headers.get("content-type"), "status": status, "received": time.time(),
                  "body": json.loads(body or b"null")}
        with lock, open(args.log, "a") as log:
            log.write(json.dumps(record) + "\n")
        if args.hang:
            time.sleep(3600)
        if args.slow:
            time.sleep(0.3)
        if args.stall_body:
            self.send_response(200)
            self.send_header("content-length", "100")
            self.end_headers()
            self.wfile.flush()
            time.sleep(3600)
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(args.port_file + ".tmp", args.port_file)
server.serve_forever()
