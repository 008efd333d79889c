#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""hmp.py SOCKET COMMAND: one HMP command on a QEMU monitor socket; prints
QEMU's answer (the lines after the command's echo), exits 1 if the socket
is gone."""
import socket
import sys


def until_prompt(s):
    buf = b""
    while not buf.endswith(b"(qemu) "):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
    return buf


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hmp.py SOCKET COMMAND")
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(60)
    try:
        s.connect(sys.argv[1])
    except OSError as e:
        sys.exit(f"hmp.py: {sys.argv[1]}: {e}")
    until_prompt(s)
    s.sendall(sys.argv[2].encode() + b"\n")
    out = until_prompt(s).decode(errors="replace").replace("\r", "")
    # The first line is the echo, with line-editing escapes.
    lines = out.split("\n")[1:]
    print("\n".join(l for l in lines if l and l != "(qemu) ").strip())


main()
