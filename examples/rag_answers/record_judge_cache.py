"""Re-record judge-cache.json and baseline.json for this example, offline.

    uv run python examples/rag_answers/record_judge_cache.py

CI has no API key, so the example's judge replays grades from the committed cache
(``--judge-cache-only``).  Those grades come from this script: a loopback Messages API
server (tests/fakes) answers every grading request with a deterministic stand-in
grade -- 5 when the response contains every word of the expected answer, otherwise
1 + round(4 x token F1) -- and the real ``evalkit`` CLI, through the real anthropic
client, writes them to the cache while it runs the baseline (v1), the candidate (v2)
and the regressed version (v3).  Rerun it whenever the answers, the goldens, the
rubric or the judge's prompt change.  The stand-in is not a language model: the grades
are there so the gate, the cache and the agreement check can run in CI.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))

from evalkit.metrics.answer_text import normalize_answer, tokens_f1  # noqa: E402
from fakes.anthropic_server import FakeAnthropic, Reply, grade  # noqa: E402

_TAG = r"<{0}>\n(.*?)\n</{0}>"


def stand_in_grade(expected: str, response: str) -> int:
    """5 if every expected word is in the response, else 1 + round(4 * F1)."""
    ref, got = normalize_answer(expected).split(), normalize_answer(response).split()
    if ref and not Counter(ref) - Counter(got):
        return 5
    return 1 + round(4 * tokens_f1(got, ref))


def respond(request: dict[str, object]) -> Reply:
    messages = request.get("messages")
    assert isinstance(messages, list)
    prompt = str(messages[0]["content"])
    expected = re.search(_TAG.format("expected_answer"), prompt, re.S)
    answer = re.search(_TAG.format("response"), prompt, re.S)
    if expected is None or answer is None:
        return grade(1, "stand-in: no expected answer or no response to compare")
    score = stand_in_grade(expected.group(1), answer.group(1))
    return grade(score, f"stand-in grade from word overlap with {expected.group(1)!r}")


def evalkit(base_url: str, *args: str) -> int:
    env = {**os.environ, "ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "stand-in"}
    command = [sys.executable, "-m", "evalkit", *args]
    return subprocess.run(command, cwd=HERE, env=env, check=False).returncode


def main() -> None:
    (HERE / "judge-cache.json").unlink(missing_ok=True)
    with FakeAnthropic(responder=respond) as api:
        steps = [
            (("run", "--config", "evalkit-baseline.yaml", "--out", "baseline.json"), 0),
            (("gate", "--config", "evalkit.yaml"), 0),
            (("gate", "--config", "evalkit-regressed.yaml"), 1),
        ]
        for args, expected in steps:
            code = evalkit(api.base_url, *args)
            if code != expected:
                raise SystemExit(f"evalkit {' '.join(args)} exited {code}, expected {expected}")
        print(f"recorded {len(api.message_requests)} grades in {HERE / 'judge-cache.json'}")


if __name__ == "__main__":
    main()
