"""The python target in a child process without the job's token (``isolate-target``, #25)."""

from __future__ import annotations

import json
import os
import pickle
import sys
from collections.abc import Sequence
from typing import IO

from evalkit._app.pipeline import build_target, import_plugins
from evalkit._model.results import TargetResponse
from evalkit._spec.config import LoadedConfig, load_config
from evalkit.errors import ConfigError, EvalkitError, TargetError
from evalkit.targets.isolated import IsolatedTarget, encode_answer, read_frame, write_frame


def isolated_target(config: LoadedConfig, env: dict[str, str] | None = None) -> IsolatedTarget:
    """The config's python target, answered by child processes without the job's token."""
    if config.model.target.python is None:
        raise ConfigError(f"{config.path}: isolate-target applies to a python target only")
    if config.model.plugins:
        raise ConfigError(
            f"{config.where('plugins')}: plugins are imported into the action's own process, "
            "which holds the token, so isolate-target cannot keep it from them; move the "
            "metrics into evalkit.yaml's metrics: declarations or drop isolate-target"
        )
    command = [sys.executable, "-m", "evalkit._app.isolated_target", str(config.path), config.name]
    return IsolatedTarget(command, os.environ if env is None else env)


def _protocol_streams() -> tuple[IO[bytes], IO[bytes]]:
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # the target's print() goes to the log, not into the answers
    return requests, answers


def _send(stream: IO[bytes], message: dict[str, object]) -> None:
    write_frame(stream, json.dumps(message, default=repr).encode("utf-8"))


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    requests, answers = _protocol_streams()
    try:
        config_path, name = args
        config = load_config(config_path).with_overrides(name=name)
        import_plugins(config)  # python_path only: the parent refused plugins
        target = build_target(config)
    except (EvalkitError, ValueError) as exc:
        _send(answers, {"error": str(exc)})
        return 2
    _send(answers, {"ready": target.name})
    while True:
        frame = read_frame(requests)
        if frame is None:
            return 0
        case = pickle.loads(frame)  # from the parent, which this child trusts
        try:
            response: object = target.invoke(case)  # a user's Target may return anything
        except TargetError as exc:
            _send(answers, {"error": str(exc)})
            continue
        except Exception as exc:
            _send(answers, {"error": f"target {target.name!r} raised {type(exc).__name__}: {exc}"})
            continue
        if not isinstance(response, TargetResponse):
            kind = type(response).__name__
            _send(answers, {"error": f"target {target.name!r} returned {kind}, not TargetResponse"})
            continue
        write_frame(answers, encode_answer(response))


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group; the parent reports it
        sys.exit(130)
