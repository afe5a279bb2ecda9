"""Job integration: $GITHUB_OUTPUT heredocs, the step summary cap, workflow commands."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from actions_job import parse_github_output

from evalkit.errors import ConfigError
from evalkit.github.outputs import (
    SUMMARY_LIMIT_BYTES,
    Annotation,
    Console,
    append_summary,
    command,
    escape_data,
    escape_property,
    write_outputs,
)


def test_github_output_heredoc_survives_values_that_look_like_delimiters(tmp_path: Path) -> None:
    out = tmp_path / "output"
    hostile = "line1\nEOF\nverdict<<EOF\npass\nEOF\nghadelimiter_0"
    write_outputs(out, {"verdict": "fail", "report-markdown": hostile})
    parsed = parse_github_output(out.read_text())
    assert parsed == {"verdict": "fail", "report-markdown": hostile}
    headers = re.findall(
        r"^(?:verdict|report-markdown)<<(ghadelimiter_[0-9a-f]+)$", out.read_text(), re.M
    )
    assert len(headers) == 2
    assert headers[0] == headers[1]


def test_github_output_delimiter_is_random_per_write(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write_outputs(a, {"x": "1"})
    write_outputs(b, {"x": "1"})
    assert a.read_text() != b.read_text()


def test_github_output_rejects_bad_output_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'bad name'"):
        write_outputs(tmp_path / "o", {"bad name": "x"})


def test_github_summary_is_capped_below_one_mebibyte(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    row = "| case-ü | 0.5 |\n"  # multi-byte, so the cut must respect UTF-8
    written = append_summary(summary, row * 200_000)
    data = summary.read_bytes()
    assert len(data) == written <= SUMMARY_LIMIT_BYTES < 1024 * 1024
    text = data.decode("utf-8")  # would raise on a split character
    assert "cut to stay under GitHub's 1 MiB" in text
    assert all(line.startswith("| case-ü") for line in text.split("\n\n")[0].splitlines())


def test_github_summary_cap_accounts_for_existing_content(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("x" * (SUMMARY_LIMIT_BYTES - 100))
    append_summary(summary, "y\n" * 1000)
    assert summary.stat().st_size <= SUMMARY_LIMIT_BYTES


def test_github_workflow_command_escaping_keeps_untrusted_text_on_one_line() -> None:
    hostile = "50% done\r\n::add-mask::oops\n::set-env name=X::1"
    line = command("error", hostile, file="evals/checks,v2.yaml", title="a:b")
    assert "\n" not in line
    assert "\r" not in line
    assert line == (
        "::error file=evals/checks%2Cv2.yaml,title=a%3Ab::"
        "50%25 done%0D%0A::add-mask::oops%0A::set-env name=X::1"
    )
    assert escape_data("%0A") == "%250A"  # pre-escaped input cannot smuggle a newline
    assert escape_property("a,b:c") == "a%2Cb%3Ac"


def test_github_mask_masks_every_line_of_a_multiline_secret() -> None:
    stream = io.StringIO()
    Console(stream).mask("first\nsecond")
    assert stream.getvalue() == "::add-mask::first\n::add-mask::second\n"


def test_github_annotation_omits_missing_properties() -> None:
    assert Annotation("warning", "hi").render() == "::warning::hi"
    assert (
        Annotation("error", "x", file="c.yaml", line=3).render() == "::error file=c.yaml,line=3::x"
    )
