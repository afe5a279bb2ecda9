"""How one check decided, as plain lines: the details every report draws the same way."""

from __future__ import annotations

from collections.abc import Callable

from evalkit._util.units import unit_of
from evalkit.gate.model import CheckVerdict
from evalkit.report import summary as S
from evalkit.report.summary import MESSAGE_LEN, NAME_LEN
from evalkit.stats.procedures import BOOTSTRAP_NOT_DECIDING, BOOTSTRAP_SHOWN_UP_TO

Escape = Callable[[object, int], str]


def detail_lines(
    v: CheckVerdict,
    text: Escape,
    code: Callable[[str], str] = str,
) -> list[str]:
    """The lines of ``v``'s details, its statistical warnings whole (one line each: what
    the report shows in view is their advice, report/advice.py)."""
    kind = v.kind if v.mode is None else f"{v.kind} ({text(v.mode, NAME_LEN)})"
    # A missing baseline or reference is said once, above the table: not again here.
    lines = [] if v.status in ("no-baseline", "no-reference") else [text(v.message, MESSAGE_LEN)]
    lines += [
        f"{kind}, level {v.level}"
        + (f", {S.BETTER[v.higher_is_better]}" if v.higher_is_better is not None else ""),
        f"coverage {v.coverage}",
    ]
    u = unit_of(v.metric)
    if v.observed is not None:
        lines.append(f"observed {S.num(v.observed, u)}")
    if v.kind == "threshold" and v.threshold is not None:
        lines.append(f"threshold {S.OP_SYMBOL[str(v.op)]} {S.num(v.threshold, u)}")
    c = v.comparison
    if c is None:
        return lines
    lines += [
        f"paired means: {S.against(v)} {S.num(c.baseline_value, u)}"
        + (f", candidate {S.num(c.candidate_value, u)}" if c.candidate_value is not None else "")
        + f", Δ {S.signed(c.delta, u)}, "
        f"{S.confidence(c.confidence)} CI {S.interval(c.ci_low, c.ci_high, v.metric)}, "
        + S.p_text(c.deciding_p, c.p_label)
        + (f" (unadjusted {S.p_text(c.p_value)})" if c.p_adjusted is not None else ""),
        f"{text(c.decided_by, NAME_LEN)} over {c.n_paired:,} paired cases"
        # an analytic procedure draws no resamples: "0 resamples" would read as a fault
        + (f", {c.n_resamples:,} resamples" if c.n_resamples else "")
        + f"; wins / losses / ties {c.wins} / {c.losses} / {c.ties}",
    ]
    if c.bootstrap_ci is not None:
        low, high, level = c.bootstrap_ci
        lines.append(
            f"percentile bootstrap {S.confidence(level)} CI {S.interval(low, high, v.metric)}, "
            + BOOTSTRAP_NOT_DECIDING
        )
    elif c.procedure != "bootstrap" and c.deltas:
        lines.append(
            f"percentile bootstrap: not computed above {BOOTSTRAP_SHOWN_UP_TO:,} cases "
            f"({code('evalkit.paired_bootstrap')} gives it), " + BOOTSTRAP_NOT_DECIDING
        )
    if c.mde is not None:
        lines.append(f"detects a true change of ≥ {S.num(c.mde, u)} with 80% power")
    if c.margin is not None:
        lines.append(f"non-inferiority margin {S.num(c.margin, u)}")
    lines += [f"warning: {text(w, MESSAGE_LEN * 2)}" for w in c.warnings]
    return lines
