"""Loopback stand-ins for outside services, driven by the real client libraries in tests."""

from __future__ import annotations

from .anthropic_server import (
    FakeAnthropic,
    RecordedRequest,
    Reply,
    api_error,
    error,
    grade,
    malformed,
    message,
    overloaded,
    text_only,
    tool_call,
    unused_port,
)

__all__ = [
    "FakeAnthropic",
    "RecordedRequest",
    "Reply",
    "api_error",
    "error",
    "grade",
    "malformed",
    "message",
    "overloaded",
    "text_only",
    "tool_call",
    "unused_port",
]
