"""The exception tree."""

from __future__ import annotations

from typing import ClassVar

from evalkit.exit_codes import ExitCode


class EvalkitError(Exception):
    """Base of every error evalkit raises deliberately."""

    #: The process exit code this error ends the CLI or the Action with.
    exit_code: ClassVar[ExitCode] = ExitCode.RUNTIME


class EvalkitWarning(UserWarning):
    """A note about a run that the user should read but that does not stop it."""


class InputError(EvalkitError, ValueError):
    """Input the user can correct: files, names, arguments."""

    exit_code: ClassVar[ExitCode] = ExitCode.INPUT


class MetricError(InputError):
    """A metric name or spec string that cannot be used."""


class _SentenceKeyError(KeyError):
    """A ``KeyError`` whose message reads as a sentence (``KeyError`` quotes its argument)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class RegistryError(InputError, RuntimeError):
    """A registration that would make one name mean two things, or an unknown name."""


class UnknownMetricError(MetricError, RegistryError, _SentenceKeyError):
    """A metric name that nothing registered."""

    __str__ = _SentenceKeyError.__str__


class MissingMetricError(MetricError, _SentenceKeyError):
    """A metric that a run did not compute (for every row, or for some)."""

    __str__ = _SentenceKeyError.__str__


class GoldenError(InputError):
    """A golden set or one of its cases is malformed."""


class UnknownCaseError(GoldenError, _SentenceKeyError):
    """No golden case has the id asked for."""

    __str__ = _SentenceKeyError.__str__


class NoRelevantIdsError(GoldenError, MetricError):
    """A retrieval metric asked of a case that lists no relevant ids."""


class CheckError(InputError):
    """A checks file is malformed, or a check cannot be evaluated honestly."""


class ComparisonError(InputError):
    """Two runs cannot be compared as asked."""


class ArtifactError(InputError):
    """A run artefact cannot be read or trusted."""


class ConfigError(InputError):
    """The configuration (evalkit.yaml, environment) is invalid."""


class RuntimeFailure(EvalkitError, RuntimeError):
    """Something outside evalkit failed while running."""

    exit_code: ClassVar[ExitCode] = ExitCode.RUNTIME


class TargetError(RuntimeFailure):
    """A target failed to produce a response for a case."""


class JudgeError(RuntimeFailure):
    """The LLM judge failed to produce a valid grade."""


class JudgeConfigError(ConfigError, JudgeError):
    """An LLM judge built with unusable arguments: a config error (exit 2), and the
    ``JudgeError`` 0.2.0 raised for it."""


class TargetConfigError(InputError, TargetError):
    """A target built with unusable arguments (no name, a url that is not one, ...).

    An input error (exit 2); also a ``TargetError``, which is what 0.2.0 raised.
    """


class OutputKindError(MetricError, TargetError):
    """A metric asked a response for the kind of output it does not carry.

    Ranked ids of a text-only response, or text of an ids-only one: the metric
    and the target disagree, which is a configuration error (exit 2), never a zero.
    """


__all__ = [
    "ArtifactError",
    "CheckError",
    "ComparisonError",
    "ConfigError",
    "EvalkitError",
    "GoldenError",
    "InputError",
    "JudgeConfigError",
    "JudgeError",
    "MetricError",
    "MissingMetricError",
    "NoRelevantIdsError",
    "OutputKindError",
    "RegistryError",
    "RuntimeFailure",
    "TargetConfigError",
    "TargetError",
    "UnknownCaseError",
    "UnknownMetricError",
]
