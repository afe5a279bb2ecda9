"""The contract between the Action and the gate it runs: what it asks, what it is told."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from evalkit._spec.config import LoadedConfig
    from evalkit._store.protocol import BaselineFetch, BaselineStore


@dataclass(frozen=True)
class GateRequest:
    """What the action asks the gate to do."""

    config_name: str  # the reporter must put marker_for(config_name) in the markdown
    # evalkit.yaml with the action's inputs merged in (read once): its require_baseline and
    # require_reference are the mode's (a promotion's both off)
    config: LoadedConfig
    baseline_path: Path | None
    baseline_status: Literal["found", "missing", "expired", "none"]
    baseline_detail: str  # one sentence on where the baseline came from / why none
    output_dir: Path  # write report files (markdown, json, candidate artefact) here
    details_url: str | None = None  # this workflow run's page, for the report's link
    reference: BaselineFetch | None = None  # the pinned reference, when a drift check wants it
    # The Action's store (with GitHub access): the HTML report's drift trend reads its history.
    store: BaselineStore | None = None
    # Run a python target in child processes without the job's token (input isolate-target).
    isolate_target: bool = False
    # Run with evalkit.yaml's `stop_early:` as `evalkit gate` does (a pull request's gate);
    # off, every case runs (a promotion: a baseline needs a row for every case).
    stop_early: bool = False
    # A plain line in the job's log (the Action's console); None: the gate says nothing.
    log: Callable[[str], None] | None = None


@dataclass(frozen=True)
class FailingCheck:
    """A check that did not pass, for an ``::error`` annotation."""

    id: str
    message: str


@dataclass(frozen=True)
class GateOutcome:
    """What the gate reports back."""

    exit_code: int  # an evalkit.exit_codes.ExitCode: the gate report's exit_code
    verdict: str  # pass | warn | fail | error (the gate report's headline)
    blocking_failures: int
    markdown: str  # the PR comment body, including the hidden marker line
    failing_checks: Sequence[FailingCheck] = ()
    candidate_path: Path | None = None  # the candidate run artefact (promoted as-is)
    report_paths: Mapping[str, Path] = field(default_factory=dict)  # "markdown", "json", ...
    checks_path: Path | None = None  # annotations point here


GateRunner = Callable[[GateRequest], GateOutcome]
