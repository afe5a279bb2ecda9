"""The compare table's words and escaping, on rows and runs built in memory."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from evalkit.errors import InputError
from evalkit.gate.compare import (
    BETTER,
    HIGHER,
    INCOMPARABLE,
    LOWER,
    NO_CHANGE,
    WORSE,
    compare_runs,
)
from evalkit.report.compare_tables import render_compare_table, render_markdown, render_text
from helpers.compare_artefacts import artefact

# a real row (any values); each test sets the fields it is about
ROW = (
    compare_runs(
        [artefact("a", np.linspace(0.2, 0.9, 12))], artefact("b", np.linspace(0.1, 0.8, 12))
    )
    .comparisons[0]
    .rows[0]
)


@pytest.mark.parametrize(
    ("hib", "low", "high", "significant", "word"),
    [
        (True, 0.05, 0.15, True, BETTER),
        (True, -0.15, -0.05, True, WORSE),
        (False, 0.05, 0.15, True, WORSE),
        (False, -0.15, -0.05, True, BETTER),
        (None, 0.05, 0.15, True, HIGHER),
        (None, -0.15, -0.05, True, LOWER),
        (True, -0.05, 0.15, False, NO_CHANGE),
        (False, -0.05, 0.15, False, NO_CHANGE),
    ],
)
def test_direction_follows_the_interval_and_the_polarity(
    hib: bool | None, low: float, high: float, significant: bool, word: str
) -> None:
    row = replace(ROW, higher_is_better=hib, ci_low=low, ci_high=high, significant=significant)
    assert row.direction == word


def test_an_incomparable_row_never_reads_as_a_change() -> None:
    row = replace(
        ROW, incomparable=True, significant=False, note="incomparable: definition changed"
    )
    assert row.direction == INCOMPARABLE


def test_hostile_run_names_stay_inert_in_markdown_and_one_line_in_text() -> None:
    rng = np.random.default_rng(3)
    ref = artefact("ref", rng.uniform(0, 1, 20))
    runs = [
        artefact("a|b @team\n<x>", rng.uniform(0, 1, 20)),
        artefact("\x1b[31mred", rng.uniform(0, 1, 20)),
    ]
    table = compare_runs(runs, ref, n_resamples=200)
    md = render_markdown(table)
    rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert len({line.count(" | ") for line in rows}) == 1  # no name adds a cell
    assert "@team" not in md
    assert "<x>" not in md
    assert "\x1b" not in md
    text = render_text(table)
    assert "\x1b" not in text
    assert len([line for line in text.splitlines() if "ndcg@10" in line]) == 1


def test_an_unknown_format_is_refused_naming_the_allowed_ones() -> None:
    """The renderer refuses it itself, with the CLI's one-line message, not a KeyError."""
    table = compare_runs(
        [artefact("a", np.linspace(0.2, 0.9, 12))], artefact("b", np.linspace(0.1, 0.8, 12))
    )
    with pytest.raises(InputError, match=r"^--format 'bad' is not one of text, markdown, csv$"):
        render_compare_table(table, "bad")
    with pytest.raises(InputError, match=r"did you mean 'markdown'"):
        render_compare_table(table, "markdwn")
