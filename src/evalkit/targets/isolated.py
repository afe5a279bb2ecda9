"""A target answered by child processes that do not hold the job's token (issue #25)."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, Any

from evalkit._model.results import TargetResponse
from evalkit._util import bounded as _bounded
from evalkit.errors import TargetConfigError, TargetError

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase


# The job's credentials, by name. Every INPUT_* goes too: the action's inputs are the
# action's, and github-token is one of them. A secret the target itself needs (an API
# key) is put in the step's env: by the workflow's author, and stays.
TOKEN_NAMES = frozenset(
    {
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
    }
)
# One answer at most this big (a hostile child could otherwise send gigabytes).
MAX_FRAME_BYTES = 64 * 1024 * 1024
_LENGTH = struct.Struct(">I")

_PR_SET_DUMPABLE = 4
NOBODY = 65534


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the action's inputs and the job's tokens."""
    return {
        name: value
        for name, value in env.items()
        if not name.upper().startswith("INPUT_") and name.upper() not in TOKEN_NAMES
    }


def _libc() -> ctypes.CDLL:
    if not sys.platform.startswith("linux"):
        raise TargetConfigError(
            "isolate-target needs Linux (prctl); run the python target in process, or "
            "make it an http target"
        )
    return ctypes.CDLL(None, use_errno=True)


def make_undumpable() -> None:
    """Make this process non-dumpable: its /proc/PID/environ and memory need
    CAP_SYS_PTRACE to read, even for a process of the same user."""
    libc = _libc()
    if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise TargetConfigError(
            f"isolate-target: prctl(PR_SET_DUMPABLE) failed: {os.strerror(err)}"
        )


def child_user(workdir: str | os.PathLike[str]) -> tuple[int, int] | None:
    """Who a child runs as: None (this user) unless this process is root."""
    if os.geteuid() != 0:
        return None
    st = os.stat(workdir)
    if st.st_uid != 0:
        return st.st_uid, st.st_gid
    return NOBODY, NOBODY


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    stream.write(_LENGTH.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream: IO[bytes], limit: int = MAX_FRAME_BYTES) -> bytes | None:
    """One length-prefixed frame, or None at a clean end of stream."""
    head = stream.read(_LENGTH.size)
    if not head:
        return None
    if len(head) < _LENGTH.size:
        raise EOFError("stream ended inside a frame header")
    (size,) = _LENGTH.unpack(head)
    if size > limit:
        raise ValueError(f"a frame of {size} bytes is over the {limit}-byte limit")
    body = stream.read(size)
    if len(body) < size:
        raise EOFError("stream ended inside a frame")
    return body


class _Child:
    """One child process and its two pipes (the child's stdout is its stderr)."""

    def __init__(
        self, command: Sequence[str], env: Mapping[str, str], user: tuple[int, int] | None
    ) -> None:
        identity: dict[str, Any] = (
            {} if user is None else {"user": user[0], "group": user[1], "extra_groups": []}
        )
        self.process = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(env),
            close_fds=True,
            **identity,
        )
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.to_child: IO[bytes] = self.process.stdin
        self.from_child: IO[bytes] = self.process.stdout

    def receive(self) -> dict[str, Any]:
        try:
            frame = read_frame(self.from_child)
        except (EOFError, ValueError) as exc:
            raise TargetError(f"the target's process broke the protocol: {exc}") from None
        if frame is None:
            code = self.process.wait()
            raise TargetError(f"the target's process exited (code {code})")
        try:
            message = _bounded.loads(frame)
        except (ValueError, UnicodeDecodeError) as exc:
            raise TargetError(f"the target's process sent malformed JSON: {exc}") from None
        if not isinstance(message, dict):
            raise TargetError("the target's process sent a message that is not an object")
        return message

    def close(self) -> None:
        for stream in (self.to_child, self.from_child):
            with contextlib.suppress(OSError):
                stream.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _response(message: Mapping[str, Any], culprit: str) -> TargetResponse:
    """The child's answer as a response, every field checked (the child is not trusted)."""
    ids = message.get("ids")
    text = message.get("text")
    latency = message.get("latency_ms", 0.0)
    meta = message.get("meta") or {}
    if ids is not None and not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
        raise TargetError(f"{culprit}: the target's process sent ids that are not strings")
    if text is not None and not isinstance(text, str):
        raise TargetError(f"{culprit}: the target's process sent text that is not a string")
    if isinstance(latency, bool) or not isinstance(latency, int | float):
        raise TargetError(f"{culprit}: the target's process sent a non-numeric latency")
    if not isinstance(meta, dict):
        raise TargetError(f"{culprit}: the target's process sent meta that is not an object")
    if ids is None and text is None:
        raise TargetError(f"{culprit}: the target's process sent neither ids nor text")
    return TargetResponse(
        ranked_ids=ids, text=text, latency_ms=float(latency), raw=message.get("raw"), meta=meta
    )


class IsolatedTarget:
    """A :class:`~evalkit.targets.base.Target` whose ``invoke`` runs in a child process."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str]) -> None:
        self._command = list(command)
        self._env = child_environment(env)
        self._idle: list[_Child] = []
        self._all: list[_Child] = []
        self._lock = threading.Lock()
        self._user = child_user(os.getcwd())
        make_undumpable()
        child, self.name = self._start()
        self._idle.append(child)

    def _start(self) -> tuple[_Child, str]:
        child = _Child(self._command, self._env, self._user)
        with self._lock:
            self._all.append(child)
        try:
            hello = child.receive()
        except TargetError as exc:
            child.close()
            raise TargetConfigError(f"the python target did not start: {exc}") from None
        if "error" in hello:
            child.close()
            raise TargetConfigError(str(hello["error"]))
        name = hello.get("ready")
        if not isinstance(name, str) or not name:
            child.close()
            raise TargetConfigError("the python target's process did not say it was ready")
        return child, name

    def invoke(self, case: GoldenCase) -> TargetResponse:
        culprit = f"target {self.name!r}, case {case.id!r}"
        with self._lock:
            child = self._idle.pop() if self._idle else None
        if child is None:
            child = self._start()[0]
        try:
            write_frame(child.to_child, pickle.dumps(case, protocol=pickle.HIGHEST_PROTOCOL))
            message = child.receive()
        except (OSError, TargetError) as exc:
            child.close()
            detail = exc if isinstance(exc, TargetError) else "its pipe closed"
            raise TargetError(f"{culprit}: {detail}") from None
        with self._lock:
            self._idle.append(child)
        if "error" in message:
            raise TargetError(str(message["error"]))
        return _response(message, culprit)

    def close(self) -> None:
        with self._lock:
            children, self._all, self._idle = self._all, [], []
        for child in children:
            child.close()

    def __repr__(self) -> str:
        return f"IsolatedTarget(name={self.name!r})"


def encode_answer(response: TargetResponse) -> bytes:
    """What a child sends back for one answered case (JSON; raw and meta as far as JSON goes)."""
    return json.dumps(
        {
            "ids": response.ranked_ids if response.has_ids else None,
            "text": response.text if response.has_text else None,
            "latency_ms": response.latency_ms,
            "meta": dict(response.meta or {}),
            "raw": response.raw,
        },
        default=repr,
    ).encode("utf-8")
