#!/usr/bin/env python3
"""Hostile and broken clients for bench/soak.sh, on loopback only.

Each kind misbehaves in one way the server must shrug off:
  silent     connects and says nothing, then leaves
  bigframe   a greeting, then announces a 1 MiB frame and sends a few bytes
  flood      a greeting, then 1 MiB frames the state does not admit
  junk       random bytes
  token      data hellos with random tokens
  hold       a greeting, then holds the connection until the server gives up

  hostile.py PORT SECONDS
"""
import os
import random
import socket
import struct
import sys
import threading
import time

PORT = int(sys.argv[1])
END = time.time() + float(sys.argv[2])
GREETING = b"WPRC" + struct.pack(">HH", 1, 0)


def conn():
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    s.settimeout(5)
    return s


def silent():
    conn().close()


def bigframe():
    s = conn()
    s.sendall(GREETING + struct.pack(">IB", 1 << 20, 1) + b'{"spec":')
    time.sleep(1)
    s.close()


def flood():
    s = conn()
    body = b'{"streams":[' + b"{}," * 300000 + b"{}]}"
    frame = struct.pack(">IB", len(body) + 1, 6) + body
    try:
        s.sendall(GREETING)
        for _ in range(4):
            s.sendall(frame)
    except OSError:
        pass
    s.close()


def junk():
    s = conn()
    try:
        s.sendall(os.urandom(4096))
    except OSError:
        pass
    s.close()


def token():
    s = conn()
    try:
        s.sendall(b"WPRD" + os.urandom(16) + struct.pack(">I", 1))
    except OSError:
        pass
    s.close()


def hold():
    s = conn()
    s.sendall(GREETING)
    try:
        s.recv(8)
        time.sleep(3)
    except OSError:
        pass
    s.close()


KINDS = [silent, bigframe, flood, junk, token, hold]


def worker(kind):
    while time.time() < END:
        try:
            kind()
        except OSError:
            pass
        time.sleep(random.uniform(0.05, 0.3))


threads = [threading.Thread(target=worker, args=(k,)) for k in KINDS for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
