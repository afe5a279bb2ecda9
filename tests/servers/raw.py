"""Pieces for loopback servers that write raw bytes (replies the scripted server cannot make)."""

from __future__ import annotations

import socket

__all__ = ["read_head"]


def read_head(conn: socket.socket) -> bytes | None:
    """Read a request up to the end of its headers; ``None`` when the client hung up first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    return data
