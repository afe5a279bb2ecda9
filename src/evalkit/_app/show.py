"""``evalkit show``: a run artefact at a glance, or one of its cases in full."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evalkit._model.golden_cases import GoldenCase
from evalkit._model.results import Row, RunResult
from evalkit._spec.artifact import RunArtifact
from evalkit._util.suggest import did_you_mean
from evalkit._util.units import suffix
from evalkit.errors import EvalkitError, InputError
from evalkit.gate.inputs import label, shown
from evalkit.report.escape import one_line, visible

#: Ranked ids listed in full before "… and N more".
SHOWN_RANKS = 20
_INDENT = " " * 11


def render_show(art: RunArtifact) -> str:
    """Provenance, each recorded metric's value, and the failed cases."""
    lines = [
        f"run:       {one_line(art.name)}",
        f"cases:     {len(art.result)} ({len(art.failed)} failed)",
        f"created:   {art.created_at}  evalkit {art.evalkit_version}",
        f"git:       {art.git_commit or 'unknown'}{' (dirty)' if art.git_dirty else ''}",
        f"target:    {one_line(art.target_name or '-')}",
    ]
    if art.config_name:
        lines.append(f"config:    {one_line(art.config_name)}")
    if art.goldens is not None:
        lines.append(f"goldens:   {art.goldens.fingerprint[:16]}")
    if art.subset is not None:
        lines.append(f"subset:    {one_line(art.subset)} (only these cases: never a baseline)")
    lines.append("")
    lines.append(f"{'metric':<20} {'kind':<9} {'better':<7} value")
    ok_rows = [r for r in art.result.per_query if r.error is None]
    ok = RunResult(art.name, ok_rows)
    for name, info in art.metrics.items():
        better = {True: "higher", False: "lower", None: "?"}[info.higher_is_better]
        try:
            value = f"{ok.value(name):.4f}{suffix(name)}" if ok_rows else "-"
        except EvalkitError as exc:
            value = f"unavailable ({exc})"
        lines.append(f"{name:<20} {info.kind:<9} {better:<7} {value}")
    if art.failed:
        lines.append("")
        lines.append("failed cases:")
        lines.extend(f"  {one_line(r.case_id)}: {one_line(r.error)}" for r in art.failed[:50])
        if len(art.failed) > 50:
            lines.append(f"  … and {len(art.failed) - 50} more")
    return "\n".join(lines)


@dataclass(frozen=True)
class GoldenLookup:
    """The golden case to set a run's case against, or why there is none to show."""

    case: GoldenCase | None
    source: str  # the golden file, or "" when none was read
    why_not: str = ""  # set when ``case`` is None
    from_qrels: bool = False  # judgements only: no query, no fingerprint to check


def find_row(art: RunArtifact, case_id: str) -> Row:
    """The artefact's row for ``case_id``; an unknown id is one line with a suggestion."""
    rows: list[Row] = list(art.result.per_query)
    for row in rows:
        if row.query_id == case_id:
            return row
    ids = art.result.ids()
    hint = did_you_mean(case_id, ids) or f" (its cases: {shown(ids, 5)})"
    raise InputError(f"{label(art)}: no case {case_id!r} in this run{hint}")


def _indented(text: str) -> list[str]:
    """Multi-line text under a label, controls spelled out, each line indented."""
    return [f"{_INDENT}{line}" for line in visible(text).split("\n")]


def _ids_lines(ids: list[str], golden: GoldenCase | None) -> list[str]:
    grades = golden.effective_grades() if golden is not None else {}
    graded = golden is not None and bool(golden.grades)
    out = []
    for rank, doc in enumerate(ids[:SHOWN_RANKS], start=1):
        mark = ""
        if doc in grades:
            mark = f"  grade {grades[doc]}" if graded else "  relevant"
        out.append(f"{_INDENT}{rank:>3}. {one_line(doc)}{mark}")
    if len(ids) > SHOWN_RANKS:
        rest = ids[SHOWN_RANKS:]
        hits = sum(1 for doc in rest if doc in grades)
        more = f" ({hits} of them relevant)" if golden is not None else ""
        out.append(f"{_INDENT}… and {len(rest)} more{more}")
    return out


def _expected_lines(golden: GoldenLookup, retrieved: list[str] | None) -> list[str]:
    if golden.case is None:
        return [f"expected:  {golden.why_not}"]
    case = golden.case
    lines: list[str] = []
    if case.relevant:
        grades = case.effective_grades()
        relevant = sorted(case.relevant)
        listed = ", ".join(
            one_line(doc) + (f" (grade {grades[doc]})" if case.grades else "") for doc in relevant
        )
        lines.append(f"relevant:  {listed}")
        if retrieved is not None:
            got = set(retrieved)
            missed = [doc for doc in relevant if doc not in got]
            lines.append(
                f"{_INDENT}{len(relevant) - len(missed)} of {len(relevant)} retrieved"
                + (f"; not retrieved: {', '.join(one_line(d) for d in missed)}" if missed else "")
            )
    if case.expected_text is not None:
        lines.append("expected:")
        lines.extend(_indented(case.expected_text))
    lines.extend(_answer_key_lines(case))
    if not lines:
        lines.append("expected:  the golden case names no relevant ids and no expected answer")
    return lines


def _answer_key_lines(case: GoldenCase) -> list[str]:
    """The golden keys answer metrics read besides ``expected`` (metrics/answer_keys.py)."""
    from evalkit.metrics.answer_keys import (
        ANSWERS_KEY,
        HUMAN_GRADE_KEY,
        MUST_INCLUDE_KEY,
        MUST_NOT_INCLUDE_KEY,
    )

    lines = []
    for key, title in (
        (ANSWERS_KEY, "also accepted"),
        (MUST_INCLUDE_KEY, "must include"),
        (MUST_NOT_INCLUDE_KEY, "must not include"),
        (HUMAN_GRADE_KEY, "human grade"),
    ):
        if key in case.context:
            value = case.context[key]
            items = value if isinstance(value, list) else [value]
            lines.append(f"{title}: " + "; ".join(one_line(item, 500) for item in items))
    return lines


def render_case(art: RunArtifact, case_id: str, golden: GoldenLookup) -> str:
    """One case: its query, output against the expected answer or relevant ids, metrics, error."""
    row = find_row(art, case_id)
    error = row.error
    response = row.response
    lines = [
        f"run:       {one_line(art.name)}" + (f" ({one_line(art.source)})" if art.source else ""),
        f"case:      {one_line(case_id)}" + ("  FAILED (error below)" if error else ""),
    ]
    if golden.case is not None and golden.from_qrels:
        lines.append(f"qrels:     {one_line(golden.source)}")
    elif golden.case is not None:
        lines.append(f"query:     {one_line(golden.case.query, 500)}")
        lines.append(f"golden:    {one_line(golden.source)}")
        stored = None if art.goldens is None else art.goldens.cases.get(case_id)
        # The run hashed each case without its slice fields (tags, lang: labels, not the
        # case), as the gate compares them: so must this, or every tagged case "changed".
        slices = None if art.goldens is None else art.goldens.slices
        without = frozenset(slices.dimensions) if slices is not None else frozenset()
        if stored is not None and stored != golden.case.fingerprint(without):
            lines.append(
                f"{_INDENT}this case changed in the golden file since the run: shown as it is now"
            )
    retrieved: list[str] | None = None
    cut = " (cut when stored)" if case_id in art.truncated_ids else ""
    if response is None:
        lines.append("output:    none (the case failed before answering)")
    else:
        if response.has_ids:
            retrieved = list(response.ranked_ids)
            lines.append(f"output:    {len(retrieved)} ranked id(s){cut}")
            lines.extend(_ids_lines(retrieved, golden.case))
        if response.has_text:
            lines.append(f"output:{cut}" if not response.has_ids else f"text:{cut}")
            lines.extend(_indented(response.text))
    lines.extend(_expected_lines(golden, retrieved))
    lines.append("metrics:")
    values = row.metrics
    width = max((len(name) for name in art.metrics), default=0)
    for name, info in art.metrics.items():
        if info.kind == "aggregate":
            value = "whole-run aggregate (no per-case value)"
        elif name in values:
            value = f"{values[name]:.4f}"
        else:
            value = "not scored (the case failed)" if error else "not recorded"
        lines.append(f"{_INDENT}{name:<{width}}  {value}")
    if response is not None:
        if getattr(row, "latency_ms", True) is not None:  # a scored TREC query has none
            lines.append(f"latency:   {response.latency_ms:.1f} ms")
        for key, val in sorted(response.meta.items()):
            lines.append(
                f"meta:      {one_line(key)}: {one_line(json.dumps(val, default=str), 200)}"
            )
    if error:
        lines.append(f"error:     {one_line(error)}")
    return "\n".join(lines)


def lookup_qrels(case_id: str, qrels: Path) -> GoldenLookup:
    """A TREC query's judgements from a qrels file, as a case with graded relevance."""
    from evalkit._spec.trec_io import read_qrels

    judged = read_qrels(qrels).get(case_id)
    if not judged:
        return GoldenLookup(None, str(qrels), f"no judgement of query {case_id!r} in {qrels}")
    case = GoldenCase(case_id, case_id, grades={doc: g for doc, g in judged.items() if g > 0})
    return GoldenLookup(case, str(qrels), from_qrels=True)


def lookup_golden(
    case_id: str, *, goldens: Path | None, config: Path, config_given: bool
) -> GoldenLookup:
    """The golden case from ``--goldens``, else from the config's golden file."""
    from evalkit._spec.config import load_config
    from evalkit._spec.golden_loaders import load_goldens

    if goldens is None and not config_given and not config.exists():
        return GoldenLookup(
            None,
            "",
            "not stored in the run artefact: pass --goldens FILE (or --config) to see the "
            "relevant ids or the expected answer",
        )
    if goldens is not None:
        path = goldens
        golden_set = load_goldens(goldens)
    else:
        try:
            cfg = load_config(config)
            path = cfg.resolve(cfg.model.goldens)
            golden_set = load_goldens(path)
        except EvalkitError as exc:
            if config_given:
                raise
            return GoldenLookup(None, "", f"could not read the goldens of {config}: {exc}")
    if case_id not in golden_set:
        return GoldenLookup(None, str(path), f"no case {case_id!r} in {path}")
    return GoldenLookup(golden_set.get(case_id), str(path))


def show_run(
    artefact: Path,
    *,
    case: str | None = None,
    goldens: Path | None = None,
    qrels: Path | None = None,
    config: Path | None = None,
) -> list[str]:
    """What ``evalkit show RUN [--case ID]`` prints: the run's summary, or one case in full."""
    from evalkit._model.formats import ARTIFACT_SCHEMA_VERSION
    from evalkit._spec.artifact import read_artifact

    if case is None:
        for flag, given in (
            ("--goldens", goldens is not None),
            ("--qrels", qrels is not None),
            ("--config", config is not None),
        ):
            if given:
                raise InputError(
                    f"{flag} goes with --case ID (it is where the expected answers are read)"
                )
    art = read_artifact(artefact)
    if case is None:
        version = art.read_schema_version
        how = (
            "current"
            if version == ARTIFACT_SCHEMA_VERSION
            else f"read through migration to {ARTIFACT_SCHEMA_VERSION}"
        )
        return [f"{artefact}: artefact schema_version {version} ({how})", render_show(art)]
    find_row(art, case)  # an unknown id fails before any golden file is read
    if qrels is not None and goldens is not None:
        raise InputError("give --goldens or --qrels, not both: one says what was expected")
    if qrels is not None:
        golden = lookup_qrels(case, qrels)
    else:
        golden = lookup_golden(
            case,
            goldens=goldens,
            config=config if config is not None else Path("evalkit.yaml"),
            config_given=config is not None,
        )
    return [render_case(art, case, golden)]
