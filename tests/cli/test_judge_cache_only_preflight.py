"""`--judge-cache-only` with no judge cache file is refused before the target runs."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers.cli import evalkit

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag_answers"


def test_a_missing_cache_file_is_refused_before_any_target_call(tmp_path: Path) -> None:
    # Before: the target answered all 24 cases, then the first grade failed (exit 3).
    project = tmp_path / "rag"
    shutil.copytree(EXAMPLE, project)
    (project / "judge-cache.json").unlink()
    calls = tmp_path / "calls.txt"
    service = project / "answer_service.py"
    service.write_text(
        service.read_text().replace(
            "        return answer(case.query)",
            f"        with open({str(calls)!r}, 'a') as f:\n"
            "            f.write(case.id + '\\n')\n"
            "        return answer(case.query)",
        )
    )
    config = project / "evalkit.yaml"
    config.write_text(config.read_text().replace("output: ../../", "output: "))
    result = evalkit("gate", "--config", "evalkit.yaml", "--judge-cache-only", cwd=project)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("evalkit: evalkit.yaml:"), lines[0]
    assert "judge cache judge-cache.json does not exist" in lines[0]
    assert "without --judge-cache-only" in lines[0]
    assert not calls.exists(), calls.read_text()
