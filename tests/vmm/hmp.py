#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""hmp.py SOCKET COMMAND: one HMP command on a QEMU monitor socket; prints
QEMU's answer (the lines after the command's echo), exits 1 if the socket
is gone.

hmp.py SOCKET COMMAND --every SECONDS --until FILE: the command again and
again on one connection, SECONDS apart, until FILE exists or the socket is
gone; prints how many answers held --expect (any answer without it)."""
import argparse
import os
import socket
import sys
import time


def until_prompt(s):
    buf = b""
    while not buf.endswith(b"(qemu) "):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    return buf


def command(s, cmd):
    """The command's answer; None once the monitor has closed."""
    s.sendall(cmd.encode() + b"\n")
    buf = until_prompt(s)
    if not buf:
        return None
    out = buf.decode(errors="replace").replace("\r", "")
    # The first line is the echo, with line-editing escapes.
    lines = out.split("\n")[1:]
    return "\n".join(l for l in lines if l and l != "(qemu) ").strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("command")
    ap.add_argument("--every", type=float)
    ap.add_argument("--until")
    ap.add_argument("--expect", default="")
    a = ap.parse_args()
    if (a.every is None) != (a.until is None):
        ap.error("--every and --until go together")
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    try:
        s.connect(a.socket)
        until_prompt(s)
    except OSError as e:
        sys.exit(f"hmp.py: {a.socket}: {e}")
    if a.every is None:
        try:
            print(command(s, a.command) or "")
        except OSError as e:
            sys.exit(f"hmp.py: {a.socket}: {e}")
        return
    n = 0
    while not os.path.exists(a.until):
        try:
            answer = command(s, a.command)
        except OSError:
            break
        if answer is None:
            break
        n += a.expect in answer
        time.sleep(a.every)
    print(n)


main()
