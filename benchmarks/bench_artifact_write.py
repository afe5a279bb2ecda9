"""Encode a large run artefact: evalkit's writer against ``json.dumps(indent=1)``, same run.

    uv run python benchmarks/bench_artifact_write.py                  # 100 rows x 1,000 ids
    uv run python benchmarks/bench_artifact_write.py --rows 10000 --ids 100

Builds a seeded artefact document with ``--rows`` rows whose output holds ``--ids``
document ids each, then times (best of ``--repeat``) the encoding that
``evalkit._spec.artifact.write_artifact`` uses and the old ``json.dumps(..., indent=1)``,
which CPython runs in its pure-Python encoder. Both texts must parse to the same
document. The last line printed is one JSON object with both times and their ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from evalkit._spec.artifact import encode_artifact


def _document(rows: int, ids: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    return {
        "schema_version": 2,
        "evalkit_version": "bench",
        "metrics": {"ndcg@10": {"higher_is_better": True}},
        "rows": [
            {
                "id": f"q{r}",
                "metrics": {"ndcg@10": rng.random(), "recall@100": rng.random()},
                "output": {"ids": [f"doc-{rng.randrange(10**6)}" for _ in range(ids)]},
                "latency_ms": rng.random() * 100,
                "meta": {"lang": "en"},
            }
            for r in range(rows)
        ],
    }


def _best(fn: object, repeat: int) -> float:
    assert callable(fn)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--ids", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    doc = _document(args.rows, args.ids, seed=7)
    ours = encode_artifact(doc)
    old = json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=1)
    assert json.loads(ours) == json.loads(old) == doc
    ours_s = _best(lambda: encode_artifact(doc), args.repeat)
    old_s = _best(
        lambda: json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=1), args.repeat
    )
    print(f"{args.rows} rows x {args.ids} ids: evalkit {ours_s:.3f} s, indent=1 {old_s:.3f} s")
    print(
        json.dumps(
            {"evalkit_s": ours_s, "indent1_s": old_s, "ratio": ours_s / old_s, "bytes": len(ours)}
        )
    )


if __name__ == "__main__":
    main()
