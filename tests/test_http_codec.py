"""``targets/http_codec.py`` frames requests and reads replies as h11 does (h11 is the reference).

The codec replaced h11 on the lean path for its CPU cost (#27).  h11 is still installed
(httpcore needs it), so each known answer here is h11's own on the same bytes: a request
framed byte for byte alike, a reply read to the same status, headers, body and
keep-alive decision whether it arrives whole or one byte at a time, and a broken reply
refused with h11's words.
"""

from __future__ import annotations

import h11
import httpx
import pytest

from evalkit.targets.http_codec import MAX_HEAD_BYTES, ReplyReader, request_bytes
from evalkit.targets.http_exchange import ResponseTooLarge

REQUESTS = [
    ("GET", b"/search?id=q1&x=%20", [("host", "127.0.0.1:8080"), ("accept", "*/*")], None),
    (
        "POST",
        b"/api",
        [("host", "h"), ("content-type", "application/json"), ("content-length", "9")],
        b'{"id": 1}',
    ),
    ("PUT", b"/", [("host", "h"), ("x-key", "a  b"), ("content-length", "0")], b""),
]


@pytest.mark.parametrize("request_", REQUESTS, ids=["get", "post", "put-empty"])
def test_a_request_is_framed_as_h11_frames_it(
    request_: tuple[str, bytes, list[tuple[str, str]], bytes | None],
) -> None:
    method, target, headers, content = request_
    h = h11.Connection(h11.CLIENT)
    expected = h.send(h11.Request(method=method, target=target, headers=headers)) or b""
    if content:
        expected += h.send(h11.Data(data=content)) or b""
    expected += h.send(h11.EndOfMessage()) or b""
    assert request_bytes(method, target, headers, content) == expected


@pytest.mark.parametrize(
    ("name", "value"), [("x-a", "evil\r\nx-b: 1"), ("x-a", " padded"), ("bad name", "v")]
)
def test_a_header_h11_would_refuse_is_refused(name: str, value: str) -> None:
    with pytest.raises(h11.LocalProtocolError):
        h11.Connection(h11.CLIENT).send(
            h11.Request(method="GET", target="/", headers=[("host", "h"), (name, value)])
        )
    with pytest.raises(httpx.LocalProtocolError, match="Illegal header"):
        request_bytes("GET", b"/", [("host", "h"), (name, value)], None)


REPLIES = {
    "content-length": b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\n\r\nhello",
    "chunked": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nhel\r\n2\r\nlo\r\n0\r\nTrailer: x\r\n\r\n"
    ),
    "100 first": (
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
    ),
    "close": b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok",
    "http/1.0": b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "no reason": b"HTTP/1.1 204\r\n\r\n",
    "304": b"HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
    "bare newlines": b"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
    "obs-fold": b"HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\nContent-Length: 0\r\n\r\n",
    "same length twice": b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok",
    "to eof": b"HTTP/1.1 200 OK\r\n\r\nall of it",
}


def h11_reads(data: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
    """(status, headers, body, reusable) as h11 reads ``data`` then EOF."""
    h = h11.Connection(h11.CLIENT)
    h.send(h11.Request(method="GET", target="/", headers=[("host", "h")]))
    h.send(h11.EndOfMessage())
    h.receive_data(data)
    status, headers, body = 0, [], b""
    while True:
        event = h.next_event()
        if event is h11.NEED_DATA:
            h.receive_data(b"")
            continue
        if isinstance(event, h11.Response):
            status, headers = event.status_code, list(event.headers)
        elif isinstance(event, h11.Data):
            body += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage):
            break
    return status, headers, body, h.our_state is h11.DONE and h.their_state is h11.DONE


def codec_reads(data: bytes, step: int) -> tuple[int, list[tuple[bytes, bytes]], bytes, bool]:
    reader = ReplyReader(1 << 20)
    done = False
    for at in range(0, len(data), step):
        reader.feed(data[at : at + step], None)
        done = reader.advance()
        if done:
            break
    if not done:
        reader.feed(b"", None)
        assert reader.advance()
    response, body, _ = reader.response()
    return response.status_code, reader.headers, body, reader.reusable


@pytest.mark.parametrize("name", list(REPLIES))
@pytest.mark.parametrize("step", [1, 7, 1 << 16], ids=["bytewise", "7s", "whole"])
def test_a_reply_reads_as_h11_reads_it(name: str, step: int) -> None:
    data = REPLIES[name]
    status, headers, body, reusable = codec_reads(data, step)
    h11_status, h11_headers, h11_body, h11_reusable = h11_reads(data)
    assert (status, sorted(headers), body) == (h11_status, sorted(h11_headers), h11_body)
    # A body that ran to EOF ends its connection (h11 reports DONE before it sees the close).
    assert reusable == (h11_reusable and name != "to eof")


def test_no_reply_at_all_says_the_server_disconnected() -> None:
    reader = ReplyReader(100)
    reader.feed(b"", None)
    with pytest.raises(httpx.RemoteProtocolError, match="Server disconnected without sending"):
        reader.advance()


BROKEN = {
    "half a head": (b"HTTP/1.1 200 OK\r\nContent-Le", "peer unexpectedly closed connection"),
    "short body": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        "peer closed connection without sending complete message body "
        "(received 3 bytes, expected 10)",
    ),
    "short chunks": (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab",
        "peer closed connection without sending complete message body (incomplete chunked read)",
    ),
    "not http": (b"SMTP ready\r\n\r\n", "illegal status line"),
    "two lengths": (
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "conflicting",
    ),
    "gzip framing": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "chunked is supported"),
    "fold first": (b"HTTP/1.1 200 OK\r\n x: y\r\n\r\n", "continuation line at start of headers"),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_a_broken_reply_is_refused_with_h11s_words(name: str) -> None:
    data, words = BROKEN[name]
    with pytest.raises(
        h11.RemoteProtocolError, match=words.replace("(", r"\(").replace(")", r"\)")
    ):
        h11_reads(data)
    reader = ReplyReader(1 << 20)
    reader.feed(data, None)
    reader.feed(b"", None)
    with pytest.raises(
        httpx.RemoteProtocolError, match=words.replace("(", r"\(").replace(")", r"\)")
    ):
        reader.advance()


def test_a_head_over_the_limit_is_refused_before_it_ends() -> None:
    reader = ReplyReader(1 << 20)
    reader.feed(b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * MAX_HEAD_BYTES, None)
    with pytest.raises(httpx.RemoteProtocolError, match="Receive buffer too long"):
        reader.advance()


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n",
        b"HTTP/1.1 200 OK\r\n\r\n" + b"x" * 11,
    ],
    ids=["declared", "chunked", "to-eof"],
)
def test_a_body_over_the_cap_is_refused(data: bytes) -> None:
    reader = ReplyReader(10)
    reader.feed(data, None)
    with pytest.raises(ResponseTooLarge):
        reader.advance()


def test_bytes_after_the_reply_keep_the_connection_from_reuse() -> None:
    reader = ReplyReader(100)
    reader.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\n", None)
    assert reader.advance()
    assert not reader.reusable


def test_a_request_that_asks_to_close_is_not_reused() -> None:
    reader = ReplyReader(100, we_close=True)
    reader.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", None)
    assert reader.advance()
    assert not reader.reusable
