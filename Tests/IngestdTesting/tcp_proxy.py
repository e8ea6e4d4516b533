#!/usr/bin/env python3
"""A TCP proxy the tests control: forwards 127.0.0.1:LISTEN to 127.0.0.1:TARGET.

SIGUSR1: go silent. Bytes from either side are read and thrown away, nothing is forwarded
and no connection is reset, as on a network path that drops packets (a firewall, a dead
NAT entry): a peer sees no error, only silence. SIGUSR2: forward again.
Prints "ready" once listening.
"""
import signal
import socket
import sys
import threading

listen_port, target_port = int(sys.argv[1]), int(sys.argv[2])
silent = threading.Event()


def pump(source, destination):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if not silent.is_set():
                destination.sendall(data)
    except OSError:
        pass
    for sock in (source, destination):
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2})  # a test runner may block them
signal.signal(signal.SIGUSR1, lambda *_: silent.set())
signal.signal(signal.SIGUSR2, lambda *_: silent.clear())
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", listen_port))
server.listen(64)
print("ready", flush=True)
while True:
    client, _ = server.accept()
    upstream = socket.create_connection(("127.0.0.1", target_port))
    threading.Thread(target=pump, args=(client, upstream), daemon=True).start()
    threading.Thread(target=pump, args=(upstream, client), daemon=True).start()
