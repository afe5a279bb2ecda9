"""HTTP/1.1 client framing for the lean path: request bytes out, one reply in (sans I/O).

Why not h11 (which this replaced for #27): its per-event state machine and header
validation cost about 0.1-0.2 ms of CPU per request, half of what a whole case cost the
one-thread loop (``benchmarks/bench_runner.py``).  This module does the client's half
of what h11 did, with h11's rules and words where they meet a reply: the same status
line and header grammar (obs-fold joined, 16 KiB head limit), framing by
``Transfer-Encoding: chunked``, else ``Content-Length`` (duplicates must agree), else
the body runs to EOF; no body for 1xx, 204 and 304; 1xx replies skipped; keep-alive
only for HTTP/1.1 without ``Connection: close`` on either side.  A violation raises
``httpx.RemoteProtocolError`` (``LocalProtocolError`` for a request it refuses to send)
with h11's message, so errors read as they did.
"""

from __future__ import annotations

import re
from typing import Final

import httpx

from evalkit.targets.http_exchange import ResponseTooLarge

__all__ = ["MAX_HEAD_BYTES", "ReplyReader", "request_bytes"]

MAX_HEAD_BYTES: Final = 16 * 1024  # h11's max_incomplete_event_size
_TOKEN: Final = rb"[-!#$%&'*+.^_`|~0-9A-Za-z]+"
_VCHAR: Final = rb"[\x21-\x7e\x80-\xff]"
_FIELD_VALUE: Final = re.compile(rb"(?:%s+(?:[ \t]+%s+)*)?" % (_VCHAR, _VCHAR))
_FIELD_NAME: Final = re.compile(_TOKEN)
_HEADER_LINE: Final = re.compile(rb"(%s):[ \t]*(.*?)[ \t]*" % _TOKEN, re.DOTALL)
_STATUS_LINE: Final = re.compile(rb"HTTP/(\d\.\d) (\d{3})(?: ((?:[ \t]|%s)*))?" % _VCHAR, re.DOTALL)
_TARGET: Final = re.compile(rb"%s+" % _VCHAR)
_BLANK_LINE: Final = re.compile(rb"\n\r?\n")
_CHUNK_HEADER: Final = re.compile(rb"([0-9A-Fa-f]{1,20})(?:;[^\r\n]*)?[ \t]*\r\n")


def request_bytes(
    method: str, target: bytes, headers: list[tuple[str, str]], content: bytes | None
) -> bytes:
    """The request as h11 would frame it (header names and values checked by its rules)."""
    if not _TARGET.fullmatch(target):
        raise httpx.LocalProtocolError(f"Illegal target characters: {target!r}")
    lines = [method.encode("ascii") + b" " + target + b" HTTP/1.1"]
    for name, value in headers:
        raw_name = name.encode("ascii")
        raw_value = value.encode("ascii")
        if not _FIELD_NAME.fullmatch(raw_name):
            raise httpx.LocalProtocolError(f"Illegal header name {raw_name!r}")
        if not _FIELD_VALUE.fullmatch(raw_value):
            raise httpx.LocalProtocolError(f"Illegal header value {raw_value!r}")
        lines.append(raw_name + b": " + raw_value)
    head = b"\r\n".join(lines) + b"\r\n\r\n"
    return head + content if content else head


def asks_to_close(headers: list[tuple[str, str]]) -> bool:
    """Whether the request's own ``Connection`` header says ``close``."""
    return any(
        name.lower() == "connection" and "close" in _tokens(value.encode("latin-1"))
        for name, value in headers
    )


def _tokens(value: bytes) -> set[str]:
    return {part.strip().lower().decode("latin-1") for part in value.split(b",")}


class ReplyReader:
    """One reply: fed bytes as they arrive (``b""`` at EOF), complete at its end."""

    def __init__(self, cap: int, *, we_close: bool = False) -> None:
        self._cap = cap
        self._buf = bytearray()
        self._eof = False
        self._we_close = we_close
        self._head_done = False
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self._http_version = b""
        self._length: int | None = None  # Content-Length framing: bytes still due
        self._declared = 0
        self._chunked = False
        self._chunk_left = -1  # chunked: data bytes left of the current chunk (-1: a header is due)
        self._trailers = False
        self._until_eof = False
        self._chunks: list[bytes] = []
        self._total = 0
        self._complete = False
        self.received_at: float | None = None
        """When the kernel received the latest bytes fed (epoch seconds), if it said."""

    def feed(self, data: bytes, stamp: float | None) -> None:
        if stamp is not None:
            self.received_at = stamp
        if data:
            self._buf += data
        else:
            self._eof = True

    @property
    def reusable(self) -> bool:
        """Both sides may send another request on this connection."""
        return (
            self._complete
            and not self._until_eof
            and not self._we_close
            and not self._buf  # nothing unasked-for after the reply
            and self._http_version == b"1.1"
            and not any(n == b"connection" and "close" in _tokens(v) for n, v in self.headers)
        )

    def advance(self) -> bool:
        """Take what the bytes fed so far allow; True once the reply is complete."""
        if self._complete:
            return True
        while not self._head_done:
            if not self._read_head():
                return self._need_more()
        if self._body():
            self._complete = True
            return True
        return self._need_more()

    def _need_more(self) -> bool:
        if not self._eof:
            return False
        if not self._head_done:
            if self._buf:
                raise httpx.RemoteProtocolError("peer unexpectedly closed connection")
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response."
                if self.status == 0
                else "peer closed connection without sending complete message body"
            )
        if self._until_eof:
            self._complete = True
            return True
        if self._chunked:
            raise httpx.RemoteProtocolError(
                "peer closed connection without sending complete message body "
                "(incomplete chunked read)"
            )
        assert self._length is not None
        raise httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body "
            f"(received {self._declared - self._length} bytes, expected {self._declared})"
        )

    def _read_head(self) -> bool:
        """Parse one status line and its headers if all arrived; skip a 1xx reply."""
        buf = self._buf
        while buf[:2] == b"\r\n" or buf[:1] == b"\n":  # h11 ignores blank lines before a reply
            del buf[: 2 if buf[:1] == b"\r" else 1]
        found = _BLANK_LINE.search(buf)
        if found is None:
            if len(buf) > MAX_HEAD_BYTES:
                raise httpx.RemoteProtocolError("Receive buffer too long")
            return False
        head = bytes(buf[: found.start()])
        del buf[: found.end()]
        lines = [line[:-1] if line.endswith(b"\r") else line for line in head.split(b"\n")]
        status = _STATUS_LINE.fullmatch(lines[0])
        if status is None:
            raise httpx.RemoteProtocolError(f"illegal status line: {bytearray(lines[0])!r}")
        headers = self._header_lines(lines[1:])
        code = int(status.group(2))
        self.status = code
        if code < 200:  # 100 Continue and the like: the real reply follows
            return False if not buf else self._read_head()
        self._http_version = status.group(1)
        self.reason = status.group(3) or b""
        self.headers = headers
        self._frame(code)
        self._head_done = True
        return True

    @staticmethod
    def _header_lines(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
        joined: list[bytes] = []
        for line in lines:
            if line[:1] in (b" ", b"\t"):
                if not joined:
                    raise httpx.RemoteProtocolError("continuation line at start of headers")
                joined[-1] += b" " + line.lstrip(b" \t")
            else:
                joined.append(line)
        headers = []
        for line in joined:
            match = _HEADER_LINE.fullmatch(line)
            if match is None or not _FIELD_VALUE.fullmatch(match.group(2)):
                raise httpx.RemoteProtocolError(f"illegal header line: {bytearray(line)!r}")
            headers.append((match.group(1).lower(), match.group(2)))
        return headers

    def _frame(self, code: int) -> None:
        encodings = [v for n, v in self.headers if n == b"transfer-encoding"]
        lengths = [v for n, v in self.headers if n == b"content-length"]
        if code in (204, 304):
            self._length = self._declared = 0
        elif encodings:
            if len(encodings) > 1 or encodings[0].lower() != b"chunked":
                raise httpx.RemoteProtocolError("Only Transfer-Encoding: chunked is supported")
            self._chunked = True
        elif lengths:
            values = {part.strip() for value in lengths for part in value.split(b",")}
            if len(values) > 1:
                raise httpx.RemoteProtocolError("conflicting Content-Length headers")
            (value,) = values
            if not value.isdigit():
                raise httpx.RemoteProtocolError("bad Content-Length")
            self._length = self._declared = int(value)
            # As h11 does: one content-length header with the one value agreed on.
            self.headers = [(n, v) for n, v in self.headers if n != b"content-length"]
            self.headers.append((b"content-length", value))
            if self._declared > self._cap:
                raise ResponseTooLarge(
                    f"the reply declares {self._declared} bytes, over the {self._cap} byte limit"
                )
        else:
            self._until_eof = True

    def _take(self, data: bytes) -> None:
        if not data:
            return
        self._total += len(data)
        if self._total > self._cap:
            raise ResponseTooLarge(f"the reply body is over the {self._cap} byte limit")
        self._chunks.append(data)

    def _body(self) -> bool:
        """Move the body bytes fed so far out of the buffer; True once the body is complete."""
        buf = self._buf
        if self._length is not None:
            piece = bytes(buf[: self._length])
            del buf[: len(piece)]
            self._take(piece)
            self._length -= len(piece)
            return self._length == 0
        if self._until_eof:
            self._take(bytes(buf))
            buf.clear()
            return False  # complete at EOF only
        while True:
            if self._trailers:  # after the last chunk: trailer lines up to a blank one
                if buf[:2] == b"\r\n":
                    del buf[:2]
                    return True
                end = buf.find(b"\r\n")
                if end < 0:
                    if len(buf) > MAX_HEAD_BYTES:
                        raise httpx.RemoteProtocolError("Receive buffer too long")
                    return False
                del buf[: end + 2]
                continue
            if self._chunk_left < 0:
                header = _CHUNK_HEADER.match(buf)
                if header is None:
                    if b"\r\n" in buf or len(buf) > MAX_HEAD_BYTES:
                        raise httpx.RemoteProtocolError(
                            f"illegal chunk header: {bytes(buf[:80])!r}"
                        )
                    return False
                self._chunk_left = int(header.group(1), 16)  # before del: it reads buf
                del buf[: header.end()]
                if self._chunk_left == 0:
                    self._trailers = True
                    continue
            if self._chunk_left > 0:
                piece = bytes(buf[: self._chunk_left])
                del buf[: len(piece)]
                self._take(piece)
                self._chunk_left -= len(piece)
                if self._chunk_left:
                    return False
            if len(buf) < 2:
                return False
            if buf[:2] != b"\r\n":
                raise httpx.RemoteProtocolError("missing CRLF after chunk data")
            del buf[:2]
            self._chunk_left = -1

    def response(self) -> tuple[httpx.Response, bytes, float | None]:
        """The complete reply (its stream unread), its raw body, and its kernel receive time."""
        body = b"".join(self._chunks)
        response = httpx.Response(
            self.status,
            headers=self.headers,
            stream=httpx.ByteStream(body),
            extensions={
                "http_version": b"HTTP/" + self._http_version,
                "reason_phrase": self.reason,
            },
        )
        return response, body, self.received_at
