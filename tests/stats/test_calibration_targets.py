"""The calibration command asserts issues #23/#43's targets: each miss is named, and a full
run that misses any exits 1 (a smoke run only prints them).  Skewed shapes are outside the
claims: their cells are measured and shown, never held."""

from __future__ import annotations

import pytest
from calibrate import (
    Ledger,
    Rates,
    _band_lines,
    _verdict,
    false_fail_limit,
    targets,
)


def rates(below: float, above: float, trials: int = 100_000) -> Rates:
    return Rates(trials, round(below * trials), round(above * trials))


def test_false_fail_limits_follow_the_issue() -> None:
    assert false_fail_limit(10) is None
    assert false_fail_limit(15) == 0.04
    assert false_fail_limit(30) == false_fail_limit(300) == 0.035


def test_a_false_fail_over_its_band_is_named_with_its_cell() -> None:
    ledger = Ledger()
    cells = {
        ("t", "continuous", 15): rates(0.039, 0.025),  # under 4%: holds
        ("t", "tie-heavy", 15): rates(0.025, 0.0405),  # over 4%
        ("t", "binary", 30): rates(0.036, 0.02),  # over 3.5%
        ("t", "heavy-t2", 10): rates(0.09, 0.09),  # no target below 15
        ("bootstrap", "ndcg-shared", 30): rates(0.07, 0.01),  # not the default: no target
        ("t", "right-skewed", 30): rates(0.07, 0.01),  # skewed: outside the claims
    }
    targets(cells, (10, 15, 30), ledger)
    named = " | ".join(ledger.misses)
    assert "tie-heavy at n = 15: 4.05%" in named
    assert "binary at n = 30: 3.60%" in named
    assert "continuous" not in named
    assert "heavy-t2" not in named
    assert "ndcg-shared" not in named
    assert "right-skewed" not in named


def test_coverage_is_held_where_the_false_fail_target_holds() -> None:
    ledger = Ledger()
    # 0.8% + 1.0% outside: coverage 98.2%, over 95 + 1.5
    targets({("t", "heavy-t3", 30): rates(0.008, 0.010)}, (30,), ledger)
    assert ledger.misses == ["coverage, heavy-t3 at n = 30: 98.2% (target 95 ± 1.5)"]


def test_real_data_cells_and_the_pool_are_held() -> None:
    ledger = Ledger()
    cells = {("t", "trec-ndcg@10", 15): rates(0.045, 0.03)}
    cells |= {("t", "trec-map@1000", 15): rates(0.03, 0.03)}
    targets(cells, (15,), ledger)
    named = " | ".join(ledger.misses)
    assert "real data, trec-ndcg@10 at n = 15: 4.50%" in named
    assert "real data pooled at n = 15: 3.75%" in named
    assert "trec-map@1000" not in named


def test_non_inferiority_cells_are_held_to_the_same_bands() -> None:
    ledger = Ledger()
    cells = {("tie-heavy", 15): 0.0403, ("continuous", 30): 0.02, ("left-skewed", 15): 0.09}
    lines = _band_lines(cells, "pass", ledger)
    assert ledger.misses == ["pass at −margin, tie-heavy at n = 15: 4.03% (target ≤ 4.0%)"]
    assert any("tie-heavy (4.0%)" in line for line in lines)
    assert not any("left-skewed" in line for line in lines)


@pytest.mark.parametrize(("asserted", "code"), [(True, 1), (False, 0)])
def test_a_full_run_with_a_miss_exits_1_and_a_smoke_run_prints(
    asserted: bool, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = Ledger()
    ledger.hold(False, "false fails, x at n = 15: 5.00% (target ≤ 4.0%)")
    assert _verdict(ledger, asserted=asserted) == code
    assert "target missed: false fails, x at n = 15" in capsys.readouterr().err
    assert _verdict(Ledger(), asserted=True) == 0
    assert "every target holds" in capsys.readouterr().err
    assert Ledger().section()[-1].startswith("- none")


def test_a_power_only_run_replaces_just_the_realised_power_misses() -> None:
    from calibrate import POWER_MISS, with_power_misses

    doc = (
        "# Calibration\n\n## Targets this run missed\n\n"
        "- coverage, tie-heavy at n = 15: 98.2% (target 95 ± 1.5)\n"
        f"- {POWER_MISS}, bounded-left at n = 15: 88.2% (claim 80 ± 5)\n"
        "\n## Reading it\n\ntext\n"
    )
    fixed = with_power_misses(doc, [])
    assert "88.2%" not in fixed
    assert "- coverage, tie-heavy at n = 15: 98.2%" in fixed
    assert fixed.endswith("\n## Reading it\n\ntext\n")
    missed = f"{POWER_MISS}, continuous at n = 15: 70.0% (claim 80 ± 5)"
    again = with_power_misses(fixed, [missed])
    assert f"- {missed}\n" in again
    assert with_power_misses(again, []) == fixed
    # nothing missed at all: the section says so, and a later miss replaces that line
    clean = with_power_misses(
        doc.replace("- coverage, tie-heavy at n = 15: 98.2% (target 95 ± 1.5)\n", ""), []
    )
    assert "- none: every target above holds in this run" in clean
    assert "- none:" not in with_power_misses(clean, [missed])


def test_coverage_is_excused_only_where_the_exact_test_is_as_conservative() -> None:
    ledger = Ledger()
    cells = {
        # tie-heavy-like: t and the exact sign-flip test both cover ~98%
        ("t", "tie-heavy", 15): rates(0.009, 0.009),
        ("permutation", "tie-heavy", 15): rates(0.007, 0.007, trials=2000),
        # t over-covers, but the sign-flip test does not: a real miss
        ("t", "heavy-t2", 15): rates(0.013, 0.02),
        ("permutation", "heavy-t2", 15): rates(0.008, 0.078, trials=2000),
        # under-coverage is never excused, whatever the exact test does
        ("t", "binary", 15): rates(0.035, 0.035),
        ("permutation", "binary", 15): rates(0.005, 0.005, trials=2000),
    }
    targets(cells, (15,), ledger)
    assert ledger.excused == [
        "coverage, tie-heavy at n = 15: 98.2% (target 95 ± 1.5); the sign-flip test: 98.6%"
    ]
    assert ledger.misses == [
        "coverage, heavy-t2 at n = 15: 96.7% (target 95 ± 1.5)",
        "coverage, binary at n = 15: 93.0% (target 95 ± 1.5)",
    ]
    section = "\n".join(ledger.section())
    assert "Held to no target" in section
    # a power-only run keeps the excused cells as they were, and out of the misses
    from calibrate import with_power_misses

    doc = "# C\n" + section + "\n\n## Reading it\n"
    again = with_power_misses(doc, [])
    assert again == doc
    assert again.count("- coverage, tie-heavy") == 1
