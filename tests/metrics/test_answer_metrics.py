"""Answer metrics: SQuAD v1.1 exact match and F1 by hand, phrases, patterns, JSON, length."""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from answer_reference import best, em, f1
from evalkit._engine.execute import score_case
from evalkit._model import registry
from evalkit.errors import MetricError, RegistryError
from evalkit.goldens import GoldenCase
from evalkit.metrics import answer_text
from evalkit.metrics.answer_text import Normalisation, exact_match, normalize_answer, token_f1
from evalkit.metrics.answers import (
    AnswerLength,
    ContainsAll,
    ContainsAny,
    ExactMatch,
    ExcludesPhrases,
    JsonSchemaMatch,
    JsonValid,
    RegexMatch,
    TokenF1,
    build_answer_metric,
    register_answer_metric,
)
from evalkit.targets.base import TargetResponse


def case(expected: str | None = "Paris", **context: Any) -> GoldenCase:
    return GoldenCase(id="c1", query="q?", expected=expected, context=context)


def text(answer: str) -> TargetResponse:
    return TargetResponse(text=answer)


# ------------------------------------------------------------------ SQuAD v1.1, by hand

# (prediction, references, exact match, F1), each worked out on paper from the
# v1.1 definitions (normalise: lower, drop punctuation, drop a/an/the, squash spaces).
HAND_WORKED = [
    # punctuation and case vanish: "eiffel tower" == "eiffel tower"
    ("The Eiffel Tower!", ["eiffel tower"], 1.0, 1.0),
    # articles go: "apple day" vs "apple": P = 1/2, R = 1, F1 = 2/3
    ("an apple a day", ["apple"], 0.0, 2 / 3),
    # an empty answer shares nothing
    ("", ["Paris"], 0.0, 0.0),
    # both normalise to "": exact, but v1.1 F1 is 0 when no token is shared
    ("the", ["a"], 1.0, 0.0),
    # several references: the best one counts
    ("Denver Broncos", ["Broncos", "Denver Broncos", "The Broncos"], 1.0, 1.0),
    # "denver team" vs "denver broncos" (F1 1/2) and vs "broncos" (F1 0): max 1/2
    ("the Denver team", ["Denver Broncos", "Broncos"], 0.0, 0.5),
    # dots are punctuation: "usa" == "usa"
    ("U.S.A.", ["USA"], 1.0, 1.0),
    # counts clip: "cat cat sat" vs "cat sat on mat": 2 shared, P 2/3, R 1/2, F1 4/7
    ("the cat the cat sat", ["cat sat on mat"], 0.0, 4 / 7),
    # an article inside a word stays: "theatre" is not "atre"
    ("Theatre", ["atre"], 0.0, 0.0),
    # non-ASCII punctuation is not in string.punctuation: the dash stays
    ("café—bar", ["café bar"], 0.0, 0.0),
]


@pytest.mark.parametrize(("prediction", "refs", "want_em", "want_f1"), HAND_WORKED)
def test_exact_match_and_f1_by_hand(
    prediction: str, refs: list[str], want_em: float, want_f1: float
) -> None:
    golden = case(refs[0], answers=refs[1:])
    assert ExactMatch()(text(prediction), golden) == want_em
    assert TokenF1()(text(prediction), golden) == pytest.approx(want_f1, abs=1e-15)
    # ... and so does the plain transcription of the official script
    assert best(em, prediction, refs) == want_em
    assert best(f1, prediction, refs) == pytest.approx(want_f1, abs=1e-15)


def test_normalisation_steps_by_hand() -> None:
    assert normalize_answer("  The  QUICK, brown fox.  ") == "quick brown fox"
    assert normalize_answer("A an THE") == ""
    assert normalize_answer("anthem") == "anthem"
    assert exact_match("Hello", "hello", "none") == 0.0
    assert exact_match("Hello  world", "hello world", "lower") == 1.0
    assert token_f1("The cat", "cat", "none") == pytest.approx(2 / 3)


_WORDS = ["the", "a", "an", "cat", "Cat", "sat", "mat.", "on", "U.S.", "é", "—", "x,y", "  "]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_WORDS), max_size=8),
    # references are non-empty text (the golden keys refuse blank answers)
    st.lists(
        st.lists(st.sampled_from(_WORDS[:-1]), min_size=1, max_size=8), min_size=1, max_size=4
    ),
)
def test_equals_the_reference_formulas_on_generated_text(
    pred_words: list[str], ref_words: list[list[str]]
) -> None:
    prediction = " ".join(pred_words)
    refs = [" ".join(r) for r in ref_words]
    golden = case(refs[0], answers=refs[1:])
    assert ExactMatch()(text(prediction), golden) == best(em, prediction, refs)
    assert TokenF1()(text(prediction), golden) == best(f1, prediction, refs)


def test_equals_the_reference_on_random_printable_text() -> None:
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.punctuation + "     "
    for _ in range(2000):
        p = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        r = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
        assert exact_match(p, r) == em(p, r)
        assert token_f1(p, r) == f1(p, r)


@pytest.mark.parametrize("normalisation", ["squad", "lower", "none"])
def test_empty_answers_keep_the_v1_1_rule_under_every_normalisation(
    normalisation: Normalisation,
) -> None:
    # The module docstring says so; it used to promise SQuAD v2.0's rule for "none".
    assert token_f1("", "", normalisation) == 0.0
    assert exact_match("", "", normalisation) == 1.0
    assert 'normalisation="none"' not in (answer_text.__doc__ or "")


def test_token_f1_is_symmetric_and_bounded() -> None:
    rng = random.Random(3)
    for _ in range(500):
        a = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(0, 6)))
        b = " ".join(rng.choice(_WORDS) for _ in range(rng.randrange(0, 6)))
        assert token_f1(a, b) == token_f1(b, a)
        assert 0.0 <= token_f1(a, b) <= 1.0


# ------------------------------------------------------------------ references and edge cases


def test_no_reference_answer_is_an_error_naming_the_case() -> None:
    with pytest.raises(MetricError, match=r"case 'c1' has no reference answer"):
        ExactMatch()(text("x"), case(None))


def test_answers_key_alone_is_enough() -> None:
    assert ExactMatch()(text("Lyon"), case(None, answers=["Paris", "Lyon"])) == 1.0


def test_answers_key_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(MetricError, match=r"case 'c1': answers must be a list of strings"):
        TokenF1()(text("x"), case("Paris", answers=3))
    with pytest.raises(MetricError, match="non-empty strings"):
        TokenF1()(text("x"), case("Paris", answers=["ok", ""]))


@pytest.mark.parametrize(
    "metric",
    [
        ExactMatch(),
        TokenF1(),
        ContainsAll(["x"]),
        ContainsAny(["x"]),
        ExcludesPhrases(["x"]),
        JsonValid(),
        JsonSchemaMatch({"type": "object"}),
        AnswerLength(),
        RegexMatch("x"),
    ],
    ids=repr,
)
def test_a_ranking_where_text_is_expected_is_an_error_not_zero(metric: Any) -> None:
    ranking = TargetResponse(["d1", "d2"])
    with pytest.raises(MetricError, match=r"case 'c1': the target returned a ranking of ids"):
        metric(ranking, case())


def test_the_runner_names_case_and_metric_for_a_ranking() -> None:
    defn = registry.get_metric("exact_match")
    with pytest.raises(MetricError, match=r"case 'c1', metric 'exact_match'.*ranking"):
        score_case(case(), TargetResponse(["d1"]), [defn])


def test_empty_output_scores_as_an_answer() -> None:
    golden = case("Paris", must_include=["paris"], must_not_include=["sorry"])
    empty = text("")
    assert ExactMatch()(empty, golden) == 0.0
    assert TokenF1()(empty, golden) == 0.0
    assert ContainsAll()(empty, golden) == 0.0
    assert ContainsAny()(empty, golden) == 0.0
    assert ExcludesPhrases()(empty, golden) == 1.0
    assert JsonValid()(empty, golden) == 0.0
    assert JsonSchemaMatch({"type": "object"})(empty, golden) == 0.0  # "" is not JSON
    assert AnswerLength()(empty, golden) == 0.0
    assert RegexMatch("^$")(empty, golden) == 1.0


# ------------------------------------------------------------------ phrases


def test_contains_all_and_any_from_the_case_key() -> None:
    golden = case(must_include=["Eiffel Tower", "1889"])
    assert ContainsAll()(text("The eiffel  tower opened in 1889."), golden) == 1.0
    assert ContainsAll()(text("The Eiffel Tower."), golden) == 0.0
    assert ContainsAny()(text("The Eiffel Tower."), golden) == 1.0
    assert ContainsAny()(text("A tower."), golden) == 0.0


def test_phrase_parameter_and_case_key_combine() -> None:
    metric = ContainsAll(["source:"])
    golden = case(must_include=["paris"])
    assert metric(text("Paris. source: wiki"), golden) == 1.0
    assert metric(text("Paris."), golden) == 0.0
    assert metric(text("source: x"), case()) == 1.0


def test_missing_phrase_key_without_parameter_is_an_error() -> None:
    with pytest.raises(MetricError, match=r"case 'c1' has no 'must_include' list"):
        ContainsAll()(text("x"), case())
    with pytest.raises(MetricError, match=r"no 'must_not_include' list"):
        ExcludesPhrases()(text("x"), case())


def test_an_explicit_empty_list_requires_nothing() -> None:
    golden = case(must_include=[], must_not_include=[])
    assert ContainsAll()(text("x"), golden) == 1.0
    assert ContainsAny()(text("x"), golden) == 0.0
    assert ExcludesPhrases()(text("x"), golden) == 1.0


def test_forbidden_phrases() -> None:
    golden = case(must_not_include=["as an AI", "I cannot"])
    assert ExcludesPhrases()(text("Paris is the capital."), golden) == 1.0
    assert ExcludesPhrases()(text("As an  ai model, Paris."), golden) == 0.0
    assert ExcludesPhrases(normalisation="none")(text("As an AI model"), golden) == 1.0


def test_case_sensitive_when_asked() -> None:
    assert ContainsAll(["Paris"], normalisation="none")(text("paris"), case()) == 0.0


def test_phrase_parameter_validation() -> None:
    with pytest.raises(MetricError, match="phrases must be a list"):
        ContainsAll("paris")
    with pytest.raises(MetricError, match="normalisation must be one of"):
        ContainsAll(["x"], normalisation="upper")  # type: ignore[arg-type]


# ------------------------------------------------------------------ regular expressions


def test_regex_search_fullmatch_and_flags() -> None:
    assert RegexMatch(r"\[\d+\]")(text("Paris [3]."), case()) == 1.0
    assert RegexMatch(r"\[\d+\]")(text("Paris."), case()) == 0.0
    assert RegexMatch(r"paris", flags="i")(text("PARIS"), case()) == 1.0
    assert RegexMatch(r"paris")(text("PARIS"), case()) == 0.0
    assert RegexMatch(r"\d+", mode="fullmatch")(text("12a"), case()) == 0.0
    assert RegexMatch(r"\d+", mode="fullmatch")(text("12"), case()) == 1.0


def test_invalid_pattern_is_refused_at_construction_with_position() -> None:
    with pytest.raises(MetricError, match=r"invalid regular expression '\(ab'.*position 0"):
        RegexMatch("(ab")
    with pytest.raises(MetricError, match="flags must be letters"):
        RegexMatch("a", flags="q")


def test_invalid_pattern_from_a_config_entry_names_file_and_line() -> None:
    with pytest.raises(MetricError, match=r"^evalkit\.yaml:12: regex_match: invalid regular"):
        build_answer_metric("regex_match", {"pattern": "a[b"}, "evalkit.yaml:12")
    with pytest.raises(MetricError, match=r"^evalkit\.yaml:3: unknown answer metric kind"):
        build_answer_metric("regexp", {}, "evalkit.yaml:3")
    with pytest.raises(
        MetricError,
        match=r"^cfg:4: regex_match: unknown parameter 'patern' \(did you mean 'pattern'\?\); "
        r"regex_match takes flags, mode, pattern$",
    ):
        build_answer_metric("regex_match", {"patern": "x"}, "cfg:4")


def test_a_missing_parameter_is_named_not_pythons_wording() -> None:
    with pytest.raises(MetricError) as info:
        build_answer_metric("regex_match", {"flags": "i"}, "cfg:9")
    assert str(info.value) == (
        "cfg:9: regex_match: missing parameter 'pattern'; regex_match takes flags, mode, pattern"
    )
    assert "__init__" not in str(info.value)


# ------------------------------------------------------------------ JSON


def test_json_valid_is_strict() -> None:
    assert JsonValid()(text(' {"a": [1, 2]} \n'), case()) == 1.0
    assert JsonValid()(text("[1, 2"), case()) == 0.0
    assert JsonValid()(text('{"a": NaN}'), case()) == 0.0
    assert JsonValid()(text("```json\n{}\n```"), case()) == 0.0
    assert JsonValid()(text("[" * 100_000), case()) == 0.0


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "year": {"type": "integer"}},
    "required": ["city"],
    "additionalProperties": False,
}


def test_json_schema_conformance() -> None:
    metric = JsonSchemaMatch(SCHEMA)
    assert metric(text('{"city": "Paris", "year": 1889}'), case()) == 1.0
    assert metric(text('{"year": 1889}'), case()) == 0.0
    assert metric(text('{"city": "Paris", "x": 1}'), case()) == 0.0
    assert metric(text("not json"), case()) == 0.0


def test_schema_file_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "type": "object",\n  "properties": {,}\n}\n')
    with pytest.raises(MetricError, match=r"bad\.json:3:18: invalid JSON in the schema"):
        JsonSchemaMatch(schema_path=bad)
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"type": "objekt"}))
    with pytest.raises(MetricError, match=r"wrong\.json: not a valid JSON Schema at type"):
        JsonSchemaMatch(schema_path=wrong)
    with pytest.raises(MetricError, match="schema file not found"):
        JsonSchemaMatch(schema_path=tmp_path / "missing.json")
    with pytest.raises(MetricError, match="exactly one of"):
        JsonSchemaMatch()


def test_schema_identity_is_its_content_not_its_path(tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    one.write_text(json.dumps(SCHEMA))
    two.write_text(json.dumps(SCHEMA, indent=2))
    assert JsonSchemaMatch(schema_path=one).fingerprint == JsonSchemaMatch(SCHEMA).fingerprint
    assert JsonSchemaMatch(schema_path=two).fingerprint == JsonSchemaMatch(SCHEMA).fingerprint
    edited = {**SCHEMA, "required": ["city", "year"]}
    assert JsonSchemaMatch(edited).fingerprint != JsonSchemaMatch(SCHEMA).fingerprint


# ------------------------------------------------------------------ length


def test_answer_length_words_and_chars() -> None:
    assert AnswerLength()(text(" Paris is  big \n"), case()) == 3.0
    assert AnswerLength("chars")(text("Paris"), case()) == 5.0
    assert registry.polarity("answer_length") is False


# ------------------------------------------------------------------ registration and identity


def test_builtins_are_registered_with_polarity() -> None:
    for name in (
        "exact_match",
        "token_f1",
        "contains_all",
        "contains_any",
        "excludes_forbidden",
        "json_valid",
    ):
        assert registry.get_metric(name).kind == "case"
        assert registry.polarity(name) is True


def test_parameters_are_part_of_the_identity() -> None:
    with registry.isolated():
        a = register_answer_metric("cites", RegexMatch(r"\[\d+\]"))
    with registry.isolated():
        b = register_answer_metric("cites", RegexMatch(r"\[\d+\]", flags="i"))
    with registry.isolated():
        c = register_answer_metric("cites", RegexMatch(r"\[\d+\]"))
    assert a.fingerprint != b.fingerprint
    assert a.fingerprint == c.fingerprint
    assert TokenF1().fingerprint != TokenF1("lower").fingerprint
    assert ContainsAll(["x"]).fingerprint != ContainsAll(["y"]).fingerprint
    assert ContainsAll().fingerprint != ContainsAny().fingerprint


def test_definition_is_canonical() -> None:
    assert RegexMatch("x", flags="mi").definition == (
        "regex_match(flags='im', mode='search', pattern='x')"
    )
    assert TokenF1().definition == "token_f1(normalisation='squad')"


def test_register_refuses_non_metrics_and_duplicates() -> None:
    with pytest.raises(MetricError, match="expected an AnswerMetric"):
        register_answer_metric("x", lambda r, c: 1.0)  # type: ignore[arg-type]
    with pytest.raises(RegistryError, match="already registered"):
        register_answer_metric("exact_match", ExactMatch("lower"))


def test_parameters_off_the_default_are_recorded_on_the_definition() -> None:
    with registry.isolated():
        cites = register_answer_metric("cites", RegexMatch(r"\[\d+\]", flags="i"))
        shout = register_answer_metric("needs_x", ContainsAll(["x"]))
        plain = register_answer_metric("f1_again", TokenF1())
    assert dict(cites.params) == {"flags": "i", "mode": "search", "pattern": r"\[\d+\]"}
    assert shout.params == (("phrases", ("x",)),)
    assert plain.params == ()


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"$ref": "#/definitions/nope"}, "PointerToNowhere"),
        ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "PointerToNowhere"),
        ({"$ref": "https://example.invalid/order.json"}, "Unresolvable"),
    ],
)
def test_a_ref_that_does_not_resolve_is_refused_when_the_metric_is_made(
    schema: dict[str, Any], problem: str
) -> None:
    # Before: accepted at load, then every case raised a jsonschema-internal error mid-run,
    # after the target had been called (and paid for).
    with pytest.raises(
        MetricError, match=rf"^json_schema: schema: a \$ref does not resolve \({problem}"
    ):
        JsonSchemaMatch(schema)


def test_refs_that_resolve_are_kept() -> None:
    local = {"$defs": {"y": {"type": "integer"}}, "properties": {"year": {"$ref": "#/$defs/y"}}}
    metric = JsonSchemaMatch(local)
    assert metric(text('{"year": 1889}'), case()) == 1.0
    assert metric(text('{"year": "1889"}'), case()) == 0.0
    draft7 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"y": {"type": "integer"}},
        "properties": {"year": {"$ref": "#/definitions/y"}},
    }
    assert JsonSchemaMatch(draft7)(text('{"year": "x"}'), case()) == 0.0
