"""Each HTTP attempt's total deadline: httpx bounds each wait, this bounds the whole."""

from __future__ import annotations

import contextlib
import functools
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final, TypeVar

import httpcore
import httpx

_T = TypeVar("_T")
_WRITE_CHUNK: Final = 64 * 1024  # each chunk of a body sent gets the time then left
_current = threading.local()  # .deadline: (monotonic deadline, its seconds) or None


class DeadlineExceeded(httpx.TimeoutException):
    """The attempt had no complete reply by its deadline: a transport failure, retried once."""

    @classmethod
    def of(cls, seconds: float) -> DeadlineExceeded:
        return cls(f"no complete reply within timeout_s={seconds:g} s")


@contextlib.contextmanager
def attempt_deadline(seconds: float) -> Iterator[None]:
    """The sockets this thread uses meanwhile give up ``seconds`` from now."""
    previous = getattr(_current, "deadline", None)
    _current.deadline = (time.monotonic() + seconds, seconds)
    try:
        yield
    finally:
        _current.deadline = previous


def check_deadline() -> None:
    """Raise :class:`DeadlineExceeded` when this thread's attempt is past its deadline."""
    current = getattr(_current, "deadline", None)
    if current is not None and time.monotonic() >= current[0]:
        raise DeadlineExceeded.of(current[1])


def _bounded(wait: Callable[[float | None], _T], timeout: float | None) -> _T:
    """``wait(t)`` with ``t`` no later than the deadline; a timeout there is the deadline's."""
    current = getattr(_current, "deadline", None)
    if current is None:
        return wait(timeout)
    deadline, seconds = current
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded.of(seconds)
    if timeout is not None and timeout < left:
        return wait(timeout)  # httpx's own per-wait timeout is the nearer one
    try:
        return wait(left)
    except httpcore.TimeoutException:
        raise DeadlineExceeded.of(seconds) from None


class DeadlineStream(httpcore.NetworkStream):
    """A connection whose every wait ends by the current attempt's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _bounded(lambda t: self._inner.read(max_bytes, t), timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        # In chunks: one send per call may block for its whole timeout.
        for start in range(0, len(buffer), _WRITE_CHUNK):
            _bounded(
                functools.partial(self._inner.write, buffer[start : start + _WRITE_CHUNK]), timeout
            )

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        return DeadlineStream(
            _bounded(lambda t: self._inner.start_tls(ssl_context, server_hostname, t), timeout)
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend, with :class:`DeadlineStream` connections.

    Only TCP: the pools it wraps are built here without ``uds=`` or ``retries=``, so
    httpcore never asks it for a unix socket or a sleep."""

    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        return DeadlineStream(
            _bounded(
                lambda t: self._inner.connect_tcp(host, port, t, local_address, socket_options),
                timeout,
            )
        )


def with_deadlines(client: httpx.Client) -> httpx.Client:
    """``client`` (one just built, never a user's) with every pool on :class:`DeadlineBackend`."""
    transports = [client._transport, *client._mounts.values()]
    for transport in transports:
        if transport is None:  # a mount meaning "no proxy here"
            continue
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if not isinstance(backend, httpcore.NetworkBackend):
            client.close()
            raise RuntimeError(
                f"HttpTarget cannot bound its requests with httpx {httpx.__version__} / "
                f"httpcore {httpcore.__version__} (no network backend on "
                f"{type(transport).__name__}); please report it, and install the httpx "
                "release evalkit was tested with"
            )
        if not isinstance(backend, DeadlineBackend):
            pool._network_backend = DeadlineBackend(backend)  # type: ignore[union-attr]
    return client
