"""Pieces for loopback servers that write raw bytes (replies the scripted server cannot make)."""

from __future__ import annotations

import socket

__all__ = ["read_head"]


def read_head(conn: socket.socket) -> bytes | None:
    """Read a request's headers and its body (by Content-Length); ``None`` when the client
    hung up first.

    The body is read too: a server that closes with unread bytes in its receive buffer
    makes the kernel send a reset instead of a close, and the client then sees a reset or
    the reply depending on scheduling."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip() or 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        body += chunk
    return data
