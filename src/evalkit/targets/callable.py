"""CallableTarget: a Python function as the system under test."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from evalkit._model.results import TargetResponse
from evalkit.errors import TargetConfigError, TargetError
from evalkit.targets._output import TargetOutput, describe_exception, to_response

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase


class CallableTarget:
    """Wrap ``fn(case) -> output`` as a :class:`~evalkit.targets.base.Target`.

    ``fn`` receives the whole :class:`~evalkit.goldens.GoldenCase` (``case.query``,
    ``case.id``, ``case.context``), so a function of the query text is wrapped as
    ``CallableTarget(lambda case: search(case.query), name="local")``.

    It may return a list of ids (best first), a ``str`` of text, or a
    :class:`TargetResponse`.  Latency is the wall time of the call
    (``time.perf_counter``); a returned ``TargetResponse`` that reports its own
    non-zero ``latency_ms`` keeps it.  ``name`` defaults to ``fn.__name__``; a
    lambda or a ``functools.partial`` has no useful name, so it must be given.

    Stateless apart from ``fn`` itself: safe to invoke from several threads if
    ``fn`` is.
    """

    def __init__(self, fn: Callable[[GoldenCase], TargetOutput], name: str | None = None) -> None:
        if not callable(fn):
            raise TargetConfigError(
                f"CallableTarget needs a callable taking a GoldenCase, got {type(fn).__name__}"
            )
        if name is None:
            name = getattr(fn, "__name__", None)
            if not isinstance(name, str) or name == "<lambda>":
                raise TargetConfigError(
                    f"CallableTarget({fn!r}): this callable has no usable __name__; "
                    'pass name="..." so reports and artefacts can tell targets apart'
                )
        if not isinstance(name, str) or not name.strip():
            raise TargetConfigError(
                "CallableTarget needs a non-empty name: name must be a non-empty string, "
                f"got {name!r}"
            )
        self.fn = fn
        self.name: str = name

    def invoke(self, case: GoldenCase) -> TargetResponse:
        """Call ``fn(case)`` and return its output as a response.

        Raises :class:`TargetError` (naming this target and the case, and chained
        to the original exception) when ``fn`` raises, or when it returns anything
        but a list of ids, a ``str`` or a ``TargetResponse``.
        """
        culprit = f"target {self.name!r}, case {case.id!r}"
        start = time.perf_counter()
        try:
            output = self.fn(case)
        except Exception as exc:
            raise TargetError(
                f"{culprit} raised {describe_exception(exc)} (in the callable)"
            ) from exc
        latency_ms = (time.perf_counter() - start) * 1000.0
        return to_response(
            output,
            culprit=f"{culprit}: the callable",
            latency_ms=latency_ms,
            keep_reported_latency=True,
        )

    def __repr__(self) -> str:
        return f"CallableTarget({self.fn!r}, name={self.name!r})"
