#!/usr/bin/env python3
"""An HTTP proxy the tests control, in front of a real server: forwards each request as it came
(Host header and body untouched, so signatures still hold) and answers some with faults instead.

  http_fault_proxy.py LISTEN_PORT TARGET_PORT STATE_FILE

STATE_FILE holds JSON {"fail": N, "status": 503, "delay": S, "match": "PUT /media/cdn"}: the
next N requests get that status (S3's SlowDown body) without reaching the server (the proxy
counts down in the file); requests whose "METHOD PATH" starts with "match" wait S seconds
before they are forwarded (a slow link); with "hold": PATH instead, they wait until the file
PATH exists (at most 5 minutes), so a test decides when they go on. Every request is logged to STATE_FILE + ".log" as
"METHOD PATH STATUS", and "METHOD PATH started" when it arrives.

{"body": MODE, "match": "GET /media/in/", "declare": N} makes a lying server of the matching
GETs answered 200 (the server's bytes, framed otherwise; logged "... 200 MODE sent=BYTES"):
  chunked     no Content-Length: Transfer-Encoding chunked, 64 KiB chunks
  unframed    no Content-Length, no chunking: the body ends when the proxy closes the connection
  understate  Content-Length: N, then the whole body, then the connection closed
  endless     chunked, the body repeated without end until the client goes away
"""
import http.client
import http.server
import json
import os
import sys
import threading
import time

LISTEN, TARGET, STATE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lock = threading.Lock()


def read_state():
    try:
        with open(STATE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def take_fault():
    with lock:
        state = read_state()
        if state.get("fail", 0) <= 0:
            return None
        state["fail"] -= 1
        with open(STATE, "w") as f:
            json.dump(state, f)
        return state.get("status", 503)


def log(line):
    with lock, open(STATE + ".log", "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        log(f"{self.command} {self.path} started")
        state = read_state()
        if f"{self.command} {self.path}".startswith(state.get("match", "")):
            if state.get("delay"):
                time.sleep(state["delay"])
            if state.get("hold"):
                until = time.time() + 300
                while not os.path.exists(state["hold"]) and time.time() < until:
                    time.sleep(0.05)
        status = take_fault()
        if status:
            payload = b'<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>injected by the test</Message></Error>'
            # Logged before it is answered: a client that gives up at this answer may look at once.
            log(f"{self.command} {self.path} {status} injected")
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            return
        mode = state.get("body") if self.command == "GET" else None
        if mode and not f"{self.command} {self.path}".startswith(state.get("match", "")):
            mode = None
        upstream = http.client.HTTPConnection("127.0.0.1", TARGET, timeout=120)
        upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self.headers.items():
            upstream.putheader(name, value)
        upstream.endheaders(body)
        response = upstream.getresponse()
        data = response.read()
        if mode and response.status == 200:
            self.lie(mode, response, data, state.get("declare", 0))
            return
        # Logged before it is answered, as the injected ones are: the client may look at once.
        log(f"{self.command} {self.path} {response.status}")
        self.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        # A HEAD's length is the object's (its body is empty): passed on as the server said it.
        length = response.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data))
        self.send_header("Content-Length", length)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def lie(self, mode, response, data, declare):
        """Sends `data` framed as `mode` says (see the module's doc), logs the bytes sent."""
        self.send_response(200)
        for name, value in response.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        if mode in ("chunked", "endless"):
            self.send_header("Transfer-Encoding", "chunked")
        elif mode == "understate":
            self.send_header("Content-Length", str(declare))
        self.send_header("Connection", "close")
        self.close_connection = True
        self.end_headers()
        sent = 0
        chunk = 64 << 10
        try:
            while True:
                for start in range(0, len(data), chunk):
                    piece = data[start:start + chunk]
                    if mode in ("chunked", "endless"):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    else:
                        self.wfile.write(piece)
                    sent += len(piece)
                if mode != "endless" or not data:
                    break
            if mode == "chunked":
                self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading: what an endless body is for
        log(f"{self.command} {self.path} 200 {mode} sent={sent}")

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away (a worker killed mid-request)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", LISTEN), Handler).serve_forever()
