"""The run artefact: one versioned JSON document per run, and the only thing a baseline is.

Its layout, versions and refusals: docs/design/artifact.md.  The rows are described in
:mod:`evalkit._spec.artifact_rows` and written through orjson where it writes what json
would (:mod:`evalkit._spec.artifact_json`).
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

from evalkit._model.clusters import ClusterAssignment
from evalkit._model.formats import ARTIFACT_SCHEMA_VERSION, GATE_REPORT_KIND
from evalkit._model.metric_identity import Params
from evalkit._model.results import CaseResult, QueryResult, RunResult
from evalkit._model.slices import SliceAssignment
from evalkit._spec.artifact_claims import check_rows
from evalkit._spec.artifact_rows import (
    COLUMNS,
    RunPath,
    _opt,
    _req,
    cells_of_row_object,
    huge_float_in,
    read_table,
    table_rows,
)
from evalkit._util import bounded as _bounded
from evalkit._util.atomic import write_bytes_atomic
from evalkit.errors import ArtifactError, EvalkitError


@dataclass(frozen=True)
class JudgeInfo:
    model: str
    rubric_sha256: str
    scale: int


@dataclass(frozen=True)
class MetricInfo:
    """What a stored metric meant when the run was made."""

    name: str
    kind: Literal["case", "aggregate"]
    higher_is_better: bool | None
    fingerprint: str
    judge: JudgeInfo | None = None
    # Parameter values of this instance, defaults left out (evalkit._model.metric_identity);
    # already covered by the fingerprint, kept so messages can say what differs.
    params: Params = ()


@dataclass(frozen=True)
class GoldensInfo:
    fingerprint: str
    cases: Mapping[str, str]
    # Which slices each case was in (evalkit.yaml `slices:`), when any were declared.
    # Optional and additive: a reader that predates it ignores it, and a run without it
    # pairs by case id as before (evalkit._model.slices).
    slices: SliceAssignment | None = None
    # Which cluster each case was in (evalkit.yaml `clusters:`), when declared; optional
    # and additive like ``slices`` (evalkit._model.clusters).
    clusters: ClusterAssignment | None = None


@dataclass(frozen=True)
class RunArtifact:
    """A run plus everything needed to trust a comparison against it later.

    Frozen: built once (by :func:`build_artifact`, the reader or a merge) with
    every field it will ever have; use :func:`dataclasses.replace` for a variant.
    """

    result: RunResult[Any]
    path: RunPath
    metrics: dict[str, MetricInfo]
    evalkit_version: str
    created_at: str
    git_commit: str | None = None
    git_dirty: bool | None = None
    target_name: str | None = None
    target_description: str | None = None
    goldens: GoldensInfo | None = None
    seed: int | None = None
    resampling_stream: str | None = None
    config_name: str | None = None
    truncated_ids: frozenset[str] = field(default_factory=frozenset)
    # What the run was configured to do (target, metrics, judges), so shards of
    # different configs are never merged; and which shard ("i/N") this run is.
    config_fingerprint: str | None = None
    shard: str | None = None
    # The case filter (``-k``/``--case``, evalkit/_spec/case_filter.py) when the run covers only
    # some cases: such a run is never a baseline.  Optional in every schema version.
    subset: str | None = None
    # The schema_version of the file this was read from (older ones are migrated on
    # read); None for a run built in this process.  Never written: files are current.
    read_schema_version: int | None = None
    # The file it was read from (not stored in it): messages name the file, not the run.
    source: str | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.result.name

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.result.per_query if isinstance(r, CaseResult) and r.error]


def metric_info(name: str, params: Mapping[str, object] | None = None) -> MetricInfo:
    """Describe a registered metric as it is defined right now (with run-wide ``params``,
    e.g. ``relevance_level``, applied to the metrics that take them)."""
    from evalkit._model.registry import metric_instance

    defn = metric_instance(name, params, only_declared=True)
    judge = None
    judge_obj = defn.fn
    model = getattr(judge_obj, "model", None)
    rubric = getattr(judge_obj, "rubric", None)
    scale = getattr(judge_obj, "scale", None)
    if isinstance(model, str) and isinstance(rubric, str) and isinstance(scale, int):
        import hashlib

        judge = JudgeInfo(model, hashlib.sha256(rubric.encode()).hexdigest(), scale)
    return MetricInfo(name, defn.kind, defn.higher_is_better, defn.fingerprint, judge, defn.params)


def build_artifact(
    result: RunResult[Any],
    metrics: Sequence[str],
    *,
    target_name: str | None = None,
    target_description: str | None = None,
    goldens: GoldensInfo | None = None,
    seed: int | None = None,
    resampling_stream: str | None = None,
    config_name: str | None = None,
    git: tuple[str | None, bool | None] | None = None,
    config_fingerprint: str | None = None,
    shard: str | None = None,
    truncated_ids: frozenset[str] = frozenset(),
    params: Mapping[str, object] | None = None,
    subset: str | None = None,
) -> RunArtifact:
    """Wrap a run with provenance for the metrics it was evaluated on.

    ``params`` are run-wide metric parameters (``{"relevance_level": 2}``): each
    metric that declares one records it in its identity and fingerprint.  ``git`` is
    the work tree's ``(commit, dirty)`` (:func:`evalkit._app.provenance.git_state`, read by
    the caller); without it the artefact records both as unknown.
    """
    from evalkit._version import __version__

    path: RunPath = (
        "retrieval"
        if result.per_query and isinstance(result.per_query[0], QueryResult)
        else "target"
    )
    commit, dirty = git if git is not None else (None, None)
    return RunArtifact(
        result=result,
        path=path,
        metrics={name: metric_info(name, params) for name in metrics},
        evalkit_version=__version__,
        created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        git_commit=commit,
        git_dirty=dirty,
        target_name=target_name or result.name,
        target_description=target_description,
        goldens=goldens,
        seed=seed,
        resampling_stream=resampling_stream,
        config_name=config_name,
        truncated_ids=truncated_ids,
        config_fingerprint=config_fingerprint,
        shard=shard,
        subset=subset,
    )


# ----------------------------------------------------------------------------- naming


def with_infix(path: str | Path, infix: str) -> Path:
    """``runs/base.json`` + ``failed`` -> ``runs/base.failed.json`` (``.json.gz`` kept whole)."""
    target = Path(path)
    name = target.name
    ext = ".json.gz" if name.endswith(".json.gz") else target.suffix
    stem = name.removesuffix(ext) if ext else name
    return target.with_name(f"{stem}.{infix}{ext}")


# ----------------------------------------------------------------------------- writing


def artifact_to_dict(art: RunArtifact, *, where: str = "artefact") -> dict[str, Any]:
    """The document :func:`write_artifact` writes.  Its rows' cells share the run's own
    metric and meta dicts (nothing is copied at 10^5 cases): copy one before editing it."""
    return {
        **_header_dict(art),
        "rows": table_rows(art.result.per_query, art.truncated_ids, where)[0],
    }


def _header_dict(art: RunArtifact) -> dict[str, Any]:
    """Every key of :func:`artifact_to_dict` but the last, ``rows``."""
    return {
        "schema_version": ARTIFACT_SCHEMA_VERSION,
        "evalkit_version": art.evalkit_version,
        "created_at": art.created_at,
        "git": None
        if art.git_commit is None and art.git_dirty is None
        else {"commit": art.git_commit, "dirty": art.git_dirty},
        "path": art.path,
        "run_name": art.result.name,
        "config_name": art.config_name,
        "config_fingerprint": art.config_fingerprint,
        "shard": art.shard,
        **({"subset": art.subset} if art.subset is not None else {}),
        "target": {"name": art.target_name, "description": art.target_description},
        "metrics": {
            name: {
                "kind": info.kind,
                "higher_is_better": info.higher_is_better,
                "fingerprint": info.fingerprint,
                **({"params": dict(info.params)} if info.params else {}),
                "judge": None if info.judge is None else asdict(info.judge),
            }
            for name, info in art.metrics.items()
        },
        "goldens": None if art.goldens is None else _goldens_dict(art.goldens),
        "seed": art.seed,
        "resampling_stream": art.resampling_stream,
        "columns": list(COLUMNS),
    }


def _goldens_dict(info: GoldensInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"fingerprint": info.fingerprint, "cases": dict(info.cases)}
    for key, assignment in (("slices", info.slices), ("clusters", info.clusters)):
        if assignment is not None:
            out[key] = {**assignment.canonical(), "fingerprint": assignment.fingerprint()}
    return out


def _parse_slices(doc: Any, cases: Mapping[str, str], where: str) -> SliceAssignment | None:
    """``goldens.slices``: the dimensions and every case's values, checked against its
    own fingerprint (an edited assignment would slice the run differently from its run)."""
    at = f"{where}: goldens.slices"
    if _object_or_none(doc, at) is None:
        return None
    dims = _req(doc, "dimensions", list, at)
    members = _req(doc, "cases", dict, at)
    if not all(isinstance(d, str) and d for d in dims):
        raise ArtifactError(f"{at}.dimensions must be a list of field names")
    parsed: dict[str, dict[str, tuple[str, ...]]] = {}
    for case_id, values in members.items():
        ok = isinstance(values, dict) and all(
            d in dims and isinstance(v, list) and all(isinstance(x, str) for x in v)
            for d, v in values.items()
        )
        if not ok or case_id not in cases:
            raise ArtifactError(
                f"{at}.cases[{case_id!r}] must map declared dimensions to lists of text, for "
                "a case of goldens.cases; the artefact was edited: re-run it"
            )
        parsed[case_id] = {d: tuple(values.get(d, [])) for d in dims}
    return _fingerprinted(SliceAssignment(tuple(dims), parsed), doc, at, "slice")


def _parse_clusters(doc: Any, cases: Mapping[str, str], where: str) -> ClusterAssignment | None:
    """``goldens.clusters``: the field and every case's cluster (or null), checked against
    its own fingerprint (an edited assignment would infer otherwise than its run did)."""
    at = f"{where}: goldens.clusters"
    if _object_or_none(doc, at) is None:
        return None
    name = _req(doc, "field", str, at)
    members = _req(doc, "cases", dict, at)
    for case_id, label in members.items():
        if case_id not in cases or not (label is None or isinstance(label, str)):
            raise ArtifactError(
                f"{at}.cases[{case_id!r}] must be a cluster name or null, for a case of "
                "goldens.cases; the artefact was edited: re-run it"
            )
    return _fingerprinted(ClusterAssignment(name, dict(members)), doc, at, "cluster")


def _object_or_none(doc: Any, at: str) -> dict[str, Any] | None:
    if doc is not None and not isinstance(doc, dict):
        raise ArtifactError(f"{at} must be an object, got {type(doc).__name__}")
    return doc


_Assignment = TypeVar("_Assignment", SliceAssignment, ClusterAssignment)


def _fingerprinted(assignment: _Assignment, doc: dict[str, Any], at: str, what: str) -> _Assignment:
    """``assignment``, refused unless the fingerprint stored beside it is its own."""
    if doc.get("fingerprint") != assignment.fingerprint():
        raise ArtifactError(
            f"{at}: the {what} assignment does not match its fingerprint; the artefact was "
            "edited: re-run it"
        )
    return assignment


def encode_json_lines(doc: Mapping[str, Any], listed: str) -> str:
    """``doc`` as JSON text with one top-level key per line and one item of the list
    ``doc[listed]`` (an artefact's ``rows``, the history's ``promotions``) per line, so a
    file diffs and greps case by case; each line through json's C encoder, which
    ``indent=`` would not use.  Raises what ``json.dumps`` raises."""
    encode = _line_encoder()
    lines = []
    for key, value in doc.items():
        name = json.dumps(key, ensure_ascii=False)
        if key == listed and isinstance(value, list) and value:
            items = ",\n  ".join(map(encode, value))
            lines.append(f" {name}: [\n  {items}\n ]")
        else:
            lines.append(f" {name}: {encode(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


@cache
def _line_encoder(compact: bool = False) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)`` through one encoder
    reused for every line (building one a line costs as much as a short row);
    ``compact`` leaves out the spaces after ``,`` and ``:``, as orjson writes a row."""
    separators = (",", ":") if compact else (", ", ": ")
    return json.JSONEncoder(
        ensure_ascii=False, allow_nan=False, check_circular=False, separators=separators
    ).encode


def _document_bytes(art: RunArtifact, where: str) -> bytes:
    """The file's bytes: the header a key a line as :func:`encode_json_lines` writes it,
    then a row a line, without spaces (:mod:`evalkit._spec.artifact_json`, or json's
    compact encoder where orjson would not write what json does)."""
    from evalkit._spec import artifact_json  # orjson's import: no command needs it

    head = encode_json_lines({**_header_dict(art), "rows": []}, "rows").encode()
    table, own = table_rows(art.result.per_query, art.truncated_ids, where)
    if not table:
        return head
    out = io.BytesIO()
    out.write(head.removesuffix(b"[]\n}\n") + b"[\n  ")
    # A table of converted metrics or cut outputs goes json's way, as it always did.
    if not (own and artifact_json.write_rows(out, table)):
        separator = artifact_json.SEPARATOR.decode()
        out.write(separator.join(map(_line_encoder(compact=True), table)).encode())
    out.write(b"\n ]\n}\n")
    return out.getvalue()


def write_artifact(art: RunArtifact, path: str | Path) -> Path:
    """Write atomically: a crash leaves the old file or the new one, never half of one."""
    target = Path(path)
    return write_bytes_atomic(target, artifact_bytes(art, target))


def artifact_bytes(art: RunArtifact, path: str | Path) -> bytes:
    """The bytes :func:`write_artifact` writes to ``path`` (gzip when it ends in ``.gz``)."""
    target = Path(path)
    where = str(target)
    try:
        # Paused: each collector pass would walk the whole run while its table is built.
        with _bounded.paused_gc():
            try:
                data = _document_bytes(art, where)
            except (TypeError, ValueError):
                # Raise json's own words for it, as every earlier evalkit said them (the
                # position of a character that cannot be stored counts in this text);
                # should that text encode after all, the first error stands.
                encode_json_lines(artifact_to_dict(art, where=where), "rows").encode()
                raise
    except ValueError as exc:
        raise ArtifactError(f"{where}: cannot serialise run: {exc}") from None
    except TypeError as exc:
        raise ArtifactError(
            f"{where}: a row's meta holds a value JSON cannot store ({exc}); "
            "keep meta to strings, numbers, booleans, lists and objects"
        ) from None
    return gzip.compress(data, mtime=0) if target.suffix == ".gz" else data


# ----------------------------------------------------------------------------- reading


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a valid metric value")


def _read_raw(path: Path) -> bytes:
    """The file's bytes, decompressed."""
    try:
        raw = _bounded.read_bytes(path)
        if path.suffix == ".gz" or raw[:2] == _bounded.GZIP_MAGIC:
            try:
                raw = _bounded.gunzip(raw, path)
            except (EOFError, zlib.error) as exc:
                raise ArtifactError(f"{path}: corrupt or truncated gzip artefact ({exc})") from None
    except FileNotFoundError:
        raise ArtifactError(f"{path}: artefact file not found") from None
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot read artefact: {exc.strerror or exc}") from None
    return raw


def _load_json(path: Path, raw: bytes) -> tuple[Any, str]:
    """The document parsed from the file's ``raw`` bytes, and its text."""
    try:
        text = raw.decode("utf-8")
        # No depth walk of the whole document: the reader checks the parts it keeps.
        return _bounded.loads(text, parse_constant=_reject_constant, walk=False), text
    except UnicodeDecodeError:
        raise ArtifactError(f"{path}: artefact is not UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise ArtifactError(
            f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
            "the file is truncated or was edited by hand: regenerate it with `evalkit run`"
        ) from None
    except ValueError as exc:
        raise ArtifactError(f"{path}: {exc} (NaN/Infinity are never valid scores)") from None


def _parse_metrics(doc: Mapping[str, Any], where: str) -> dict[str, MetricInfo]:
    raw = _req(doc, "metrics", dict, where)
    out: dict[str, MetricInfo] = {}
    for name, info in raw.items():
        w = f"{where}: metrics[{name!r}]"
        if not isinstance(info, dict):
            raise ArtifactError(f"{w}: expected an object")
        kind = _req(info, "kind", str, w)
        if kind not in ("case", "aggregate"):
            raise ArtifactError(f"{w}: kind must be 'case' or 'aggregate', got {kind!r}")
        judge_doc = _opt(info, "judge", dict, w)
        judge = None
        if judge_doc is not None:
            judge = JudgeInfo(
                _req(judge_doc, "model", str, w + ".judge"),
                _req(judge_doc, "rubric_sha256", str, w + ".judge"),
                _req(judge_doc, "scale", int, w + ".judge"),
            )
        out[name] = MetricInfo(
            name,
            kind,
            _opt(info, "higher_is_better", bool, w),
            _req(info, "fingerprint", str, w),
            judge,
            _params(_opt(info, "params", dict, w), w),
        )
    return out


def _params(doc: dict[str, Any] | None, where: str) -> Params:
    """A stored metric's parameters, back in canonical form."""
    if doc is None:
        return ()
    if not _bounded.check_depth(doc, depth=4):  # document, metrics, the metric, params
        raise ArtifactError(f"{where}: params are nested deeper than {_bounded.MAX_DEPTH} levels")
    out = []
    for key in sorted(doc):
        value = doc[key]
        out.append((key, tuple(value) if isinstance(value, list) else value))
    return tuple(out)


# ----------------------------------------------------------------------------- migrations
#
# A promoted baseline must outlive the release that wrote it.  Every schema change
# adds one step here, from version N to N+1, and a fixture of version N that the
# tests read forever (tests/data/artifacts/v<N>*.json).  Only the current version
# is ever written.


def _v1_to_v2(doc: dict[str, Any], _where: str) -> dict[str, Any]:
    """Schema 2: a client metric's fingerprint hashes what its code does, not its text;
    the reader vouches for each schema-1 one (:func:`vouch_schema1_fingerprints`)."""
    return {**doc, "schema_version": 2}


def schema1_fingerprint(name: str, stored: str) -> str:
    """Today's fingerprint for a schema-1 one, when it can be vouched for; else ``stored``.

    Schema 1 hashed a client metric's source text.  When ``stored`` is exactly what
    schema 1 computes for the metric registered right now, the text is the same, so
    the code is, and today's fingerprint stands in.  Otherwise (another definition,
    or a metric whose plugin is not imported yet) ``stored`` is kept and the gate
    calls the metric incomparable rather than trusting what it cannot check.
    """
    from evalkit._model.registry import get_metric, source_text_fingerprint

    try:
        defn = get_metric(name)
    except EvalkitError:
        return stored
    return defn.fingerprint if stored == source_text_fingerprint(defn) else stored


def vouch_schema1_fingerprints(art: RunArtifact) -> RunArtifact:
    """Apply :func:`schema1_fingerprint` again to an artefact read from schema 1.

    The reader already did, with the metrics registered when it read the file; the
    gate calls this once the config's plugins are imported, so a baseline read
    before them is judged by the same rule.
    """
    if art.read_schema_version != 1:
        return art
    return replace(art, metrics=_vouched(art.metrics))


def _vouched(metrics: Mapping[str, MetricInfo]) -> dict[str, MetricInfo]:
    """``metrics`` through :func:`schema1_fingerprint` (built-ins' are the same in both)."""
    return {
        name: replace(info, fingerprint=schema1_fingerprint(name, info.fingerprint))
        for name, info in metrics.items()
    }


def _v2_to_v3(doc: dict[str, Any], where: str) -> dict[str, Any]:
    """Schema 3: each case is an array of the cells the ``columns`` header names once,
    not an object repeating the names (:mod:`evalkit._spec.artifact_rows`).

    A row object that cannot become cells is refused here, as schema 2's reader did.
    """
    rows = doc.get("rows")
    if not isinstance(rows, list):  # the reader names the missing or mistyped field
        return {**doc, "schema_version": 3}
    path: RunPath = "retrieval" if doc.get("path") == "retrieval" else "target"
    cells = [cells_of_row_object(row, i, path, where) for i, row in enumerate(rows)]
    return {**doc, "schema_version": 3, "columns": list(COLUMNS), "rows": cells}


_MIGRATIONS: dict[int, Callable[[dict[str, Any], str], dict[str, Any]]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
}


def migrate(doc: dict[str, Any], *, where: str = "artefact") -> tuple[dict[str, Any], int]:
    """Bring an artefact document of any earlier schema to the current one.

    Returns ``(document, version it was read as)``.  A version from a newer
    evalkit, or one that never existed, is refused.
    """
    version = doc.get("schema_version")
    if version is None:
        raise ArtifactError(f"{where}: not an evalkit run artefact (no schema_version)")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ArtifactError(
            f"{where}: artefact schema_version {version!r} is not a schema version "
            f"(1 to {ARTIFACT_SCHEMA_VERSION}); the file was edited or is not an evalkit artefact"
        )
    if version > ARTIFACT_SCHEMA_VERSION:
        raise ArtifactError(
            f"{where}: artefact schema_version {version} was written by a newer evalkit "
            f"(this one reads versions 1 to {ARTIFACT_SCHEMA_VERSION}); upgrade evalkit to read it"
        )
    original = version
    while version < ARTIFACT_SCHEMA_VERSION:
        doc = _MIGRATIONS[version](doc, where)
        version += 1
    return doc, original


def artifact_from_dict(
    doc: Any, *, where: str = "artefact", text: str | None = None, quick_only: bool = False
) -> RunArtifact:
    """The artefact ``doc`` describes (of any schema); ``text``, the file it was parsed
    from, lets a message about a row name its line.  ``quick_only`` raises
    :class:`~evalkit._spec.artifact_rows.NotQuick` rather than read the rows one by one."""
    if not isinstance(doc, dict):
        raise ArtifactError(f"{where}: not an evalkit run artefact (top level is not an object)")
    if doc.get("kind") == GATE_REPORT_KIND:  # the usual wrong file: say what it is
        raise ArtifactError(
            f"{where}: this is a gate report (written by evalkit gate --json), not a run "
            "artefact; pass the run artefact instead (evalkit run --out, or the gate's "
            "output: file)"
        )
    doc, read_version = migrate(doc, where=where)
    path = _req(doc, "path", str, where)
    if path not in ("target", "retrieval"):
        raise ArtifactError(f"{where}: path must be 'target' or 'retrieval', got {path!r}")
    table = _req(doc, "rows", list, where)
    columns = _req(doc, "columns", list, where)
    if columns != list(COLUMNS):
        raise ArtifactError(
            f"{where}: columns must be {json.dumps(list(COLUMNS))} in schema_version "
            f"{ARTIFACT_SCHEMA_VERSION}, got {json.dumps(columns)[:200]}; the file was edited: "
            "regenerate it with `evalkit run`"
        )
    located = text if read_version == ARTIFACT_SCHEMA_VERSION else None
    row_where = _row_locator(where, table, located)
    rows, truncated = read_table(table, path, row_where, quick_only=quick_only)
    git = _opt(doc, "git", dict, where) or {}
    target = _opt(doc, "target", dict, where) or {}
    goldens_doc = _opt(doc, "goldens", dict, where)
    goldens = None
    if goldens_doc is not None:
        cases = _req(goldens_doc, "cases", dict, where + ": goldens")
        bad = [k for k, v in cases.items() if not isinstance(v, str)]
        if bad:
            raise ArtifactError(
                f"{where}: goldens.cases[{bad[0]!r}] must be a fingerprint string, "
                f"got {cases[bad[0]]!r}"
            )
        goldens = GoldensInfo(
            _req(goldens_doc, "fingerprint", str, where + ": goldens"),
            cases,
            _parse_slices(goldens_doc.get("slices"), cases, where),
            _parse_clusters(goldens_doc.get("clusters"), cases, where),
        )
    metrics = _parse_metrics(doc, where)
    if read_version == 1:
        metrics = _vouched(metrics)
    check_rows(rows, metrics, None if goldens is None else goldens.cases, row_where)
    return RunArtifact(
        result=RunResult(_req(doc, "run_name", str, where), rows),
        path=path,
        metrics=metrics,
        evalkit_version=_req(doc, "evalkit_version", str, where),
        created_at=_req(doc, "created_at", str, where),
        git_commit=_opt(git, "commit", str, where),
        git_dirty=_opt(git, "dirty", bool, where),
        target_name=_opt(target, "name", str, where),
        target_description=_opt(target, "description", str, where),
        goldens=goldens,
        seed=_opt(doc, "seed", int, where),
        resampling_stream=_opt(doc, "resampling_stream", str, where),
        config_name=_opt(doc, "config_name", str, where),
        truncated_ids=frozenset(truncated),
        config_fingerprint=_opt(doc, "config_fingerprint", str, where),
        shard=_opt(doc, "shard", str, where),
        subset=_opt(doc, "subset", str, where),
        read_schema_version=read_version,
    )


def _row_locator(where: str, table: list[Any], text: str | None) -> Callable[[int], str]:
    """Where row ``i`` of ``table`` is, for a message: ``run.json:17`` when the file holds
    it on a line of its own after the line ``"rows": [`` (as evalkit writes it), else
    ``run.json: rows[15]``.  Looked up only when a row is wrong."""

    def locate(index: int) -> str:
        if text is not None:
            lines = text.split("\n")
            start = next((n for n, line in enumerate(lines) if line == ' "rows": ['), None)
            if start is not None and start + 1 + index < len(lines):
                candidate = lines[start + 1 + index].strip().removesuffix(",")
                try:
                    same = json.loads(candidate) == table[index]
                except ValueError:
                    same = False
                if same:
                    return f"{where}:{start + 2 + index}"
        return f"{where}: rows[{index}]"

    return locate


def _read_quickly(raw: bytes, where: str) -> RunArtifact | None:
    """The artefact of a current-schema file that orjson parses and that reads without a
    fault, or ``None``: then json reads it, and words any fault as it always did (a kept
    value orjson parsed otherwise, an integer past 64 bits, also goes to json)."""
    import orjson  # 10 ms no command needs

    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:  # json's way says why
        return None
    if type(doc) is not dict or type(doc.get("schema_version")) is not int:
        return None
    if doc["schema_version"] != ARTIFACT_SCHEMA_VERSION:
        return None  # migrated the json way: old files are small, and read as they were
    try:
        if huge_float_in(doc.get("metrics")):
            return None
        # The table's quick checks send a huge float in a row to the careful way.
        return artifact_from_dict(doc, where=where, quick_only=True)
    except Exception:  # json's way says what it is, as before
        return None


def read_artifact(path: str | Path) -> RunArtifact:
    """Read and validate an artefact; every defect is one :class:`ArtifactError` line."""
    p = Path(path)
    # The collector would walk the whole parsed document at every generation-2 pass
    # while the rows are built from it; nothing here makes a reference cycle.
    with _bounded.paused_gc(keep=True):
        raw = _read_raw(p)
        quick = _read_quickly(raw, str(p))
        if quick is not None:
            return replace(quick, source=str(p))
        doc, text = _load_json(p, raw)
        del raw
        try:
            art = artifact_from_dict(doc, where=str(p), text=text)
            del doc
        except EvalkitError:
            raise
        except (TypeError, ValueError) as exc:
            raise ArtifactError(f"{p}: malformed artefact ({exc})") from None
    return replace(art, source=str(p))
