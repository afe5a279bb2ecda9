"""The exception tree.

Every error evalkit raises on purpose derives from :class:`EvalkitError`, so a
caller (and the CLI) can tell "evalkit refused this input" apart from a bug::

    EvalkitError
    ├── InputError (also ValueError)      bad input the user can fix
    │   ├── MetricError                   unknown / malformed metric names, missing qrels
    │   │   └── UnknownMetricError (also KeyError)
    │   ├── RegistryError                 duplicate or conflicting registrations
    │   ├── GoldenError                   golden files and cases
    │   ├── CheckError                    checks files and scoped selection
    │   ├── ComparisonError               two runs that cannot be compared
    │   ├── ArtifactError                 run artefacts that cannot be read
    │   └── ConfigError                   evalkit.yaml and the environment
    └── RuntimeFailure (also RuntimeError) something outside failed
        ├── TargetError                   a target could not produce a response
        └── JudgeError                    the LLM judge could not produce a grade

Each class carries the CLI exit code it ends with (``exit_code``, an
:class:`evalkit.exit_codes.ExitCode`): 2 for an ``InputError``, 3 for a
``RuntimeFailure``.

Messages are one line, name the culprit (file, line, case, metric) and say how
to fix it where there is a fix.
"""

from __future__ import annotations

from typing import ClassVar

from evalkit.exit_codes import ExitCode


class EvalkitError(Exception):
    """Base of every error evalkit raises deliberately."""

    #: The process exit code this error ends the CLI or the Action with.
    exit_code: ClassVar[ExitCode] = ExitCode.RUNTIME


class InputError(EvalkitError, ValueError):
    """Input the user can correct: files, names, arguments."""

    exit_code: ClassVar[ExitCode] = ExitCode.INPUT


class MetricError(InputError):
    """A metric name or spec string that cannot be used."""


class UnknownMetricError(MetricError, KeyError):
    """A metric name that nothing registered."""

    def __str__(self) -> str:
        # KeyError quotes its argument; a message should read as a sentence.
        return str(self.args[0]) if self.args else ""


class RegistryError(InputError):
    """A registration that would make one name mean two things."""


class GoldenError(InputError):
    """A golden set or one of its cases is malformed."""


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


__all__ = [
    "ArtifactError",
    "CheckError",
    "ComparisonError",
    "ConfigError",
    "EvalkitError",
    "GoldenError",
    "InputError",
    "JudgeError",
    "MetricError",
    "RegistryError",
    "RuntimeFailure",
    "TargetError",
    "UnknownMetricError",
]
