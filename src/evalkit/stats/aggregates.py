"""Whole-run aggregates under resampling: recompute the aggregate on both sides."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from evalkit._model.results import Row
from evalkit._util.arrays import FloatArray, IntArray
from evalkit.errors import MetricError


class ResampledAggregate(Protocol):
    """An aggregate's Δ = agg(a) - agg(b), observed and under resampling."""

    @property
    def name(self) -> str: ...

    @property
    def value_a(self) -> float: ...

    @property
    def value_b(self) -> float: ...

    @property
    def vectorised(self) -> bool: ...

    def bootstrap(self, positions: IntArray) -> FloatArray:
        """Δ for each row of case positions (rows x n)."""
        ...

    def swapped(self, flips: IntArray) -> FloatArray:
        """Δ for each row of flips (rows x n, 1 = swap the systems on that case)."""
        ...


def _finite(name: str, value: float, where: str) -> float:
    if not math.isfinite(value):
        raise MetricError(
            f"aggregate {name!r} is {value} on {where}; a non-finite aggregate cannot be "
            "compared (fix the aggregate so it returns a finite number)"
        )
    return value


class GenericAggregate:
    """Any registered aggregate, recomputed by calling it (slow, always correct)."""

    vectorised = False

    def __init__(
        self,
        name: str,
        fn: Callable[[Sequence[Row]], float],
        rows_a: Sequence[Row],
        rows_b: Sequence[Row],
        names: tuple[str, str],
    ) -> None:
        self.name = name
        self._fn = fn
        self._a = list(rows_a)
        self._b = list(rows_b)
        self.value_a = _finite(name, float(fn(self._a)), f"run {names[0]!r}")
        self.value_b = _finite(name, float(fn(self._b)), f"run {names[1]!r}")

    def _delta(self, rows_a: list[Row], rows_b: list[Row]) -> float:
        va = _finite(self.name, float(self._fn(rows_a)), "a resample")
        vb = _finite(self.name, float(self._fn(rows_b)), "a resample")
        return va - vb

    def bootstrap(self, positions: IntArray) -> FloatArray:
        out = np.empty(positions.shape[0], dtype=np.float64)
        for r, row in enumerate(positions.tolist()):
            out[r] = self._delta([self._a[i] for i in row], [self._b[i] for i in row])
        return out

    def swapped(self, flips: IntArray) -> FloatArray:
        out = np.empty(flips.shape[0], dtype=np.float64)
        pairs = list(zip(self._a, self._b, strict=True))
        for r, row in enumerate(flips.tolist()):
            side_a = [b if f else a for (a, b), f in zip(pairs, row, strict=True)]
            side_b = [a if f else b for (a, b), f in zip(pairs, row, strict=True)]
            out[r] = self._delta(side_a, side_b)
        return out


class NearestRankAggregate:
    """``latency_pXX``: the ceil(p/100 * n)-th smallest value, vectorised."""

    vectorised = True

    def __init__(self, name: str, p: float, values_a: FloatArray, values_b: FloatArray) -> None:
        self.name = name
        n = values_a.shape[0]
        self._rank = max(1, math.ceil(p / 100 * n))
        self._a = values_a
        self._b = values_b
        self._order_a = np.argsort(values_a, kind="stable")
        self._order_b = np.argsort(values_b, kind="stable")
        self._sorted_a = values_a[self._order_a]
        self._sorted_b = values_b[self._order_b]
        self.value_a = float(self._sorted_a[self._rank - 1])
        self.value_b = float(self._sorted_b[self._rank - 1])
        self.p = p
        self.n = int(n)

        # Each case's sorted position and whether it lies in the tail that holds the
        # rank on (nearly) every resample: built once, read by every bootstrap block.
        self._start = self._tail_start(n)
        self._tails = tuple(
            (rank_of, rank_of >= self._start)
            # each case's sorted position: the inverse permutation of the order
            for rank_of in (np.argsort(self._order_a), np.argsort(self._order_b))
        )

    @property
    def is_maximum(self) -> bool:
        """True when the percentile is each run's slowest case (p95 below 20 cases)."""
        return bool(self._rank >= self.n)

    @property
    def cases_needed(self) -> int:
        """The fewest cases at which the percentile is not the maximum: ⌈100/(100 − p)⌉."""
        n = 2
        while max(1, math.ceil(self.p / 100 * n)) >= n:
            n += 1
        return n

    def _pick(self, counts: IntArray, order: IntArray, ordered: FloatArray) -> FloatArray:
        # first sorted position whose cumulative count reaches the rank
        cumulative = np.cumsum(counts[:, order], axis=1)
        position = np.count_nonzero(cumulative < self._rank, axis=1)
        picked: FloatArray = ordered[position]
        return picked

    def _counted(self, positions: IntArray) -> FloatArray:
        """Δ from each resample's per-case counts: O(n) per resample, any rank."""
        rows, n = positions.shape
        offsets = (np.arange(rows, dtype=np.int64) * n)[:, None]
        counts = np.bincount((positions + offsets).ravel(), minlength=rows * n).reshape(rows, n)
        delta: FloatArray = self._pick(counts, self._order_a, self._sorted_a) - self._pick(
            counts, self._order_b, self._sorted_b
        )
        return delta

    def _tail_start(self, n: int) -> int:
        """A sorted position the resampled rank lies above except with odds below 1e-9."""
        rank = self._rank
        sd = math.sqrt(rank * max(0.0, 1.0 - rank / n))
        start = int(rank - 2 - 6.5 * sd)
        return start if n >= 256 and start > n // 2 else 0

    def _tail_pick(
        self, positions: IntArray, side: int, ordered: FloatArray
    ) -> tuple[FloatArray, NDArray[np.bool_]]:
        """The rank-th smallest value of each resample, counting only the sorted tail."""
        rows, n = positions.shape
        start = self._start
        rank_of, tail = self._tails[side]
        in_tail = tail[positions]
        below = n - np.count_nonzero(in_tail, axis=1)
        where = np.flatnonzero(in_tail)
        width = n - start
        row_of = where // n
        tail_rank = rank_of[positions.ravel()[where]] - start
        counts = np.bincount(row_of * width + tail_rank, minlength=rows * width)
        cumulative = np.cumsum(counts.reshape(rows, width), axis=1)
        need = self._rank - below
        position = start + np.count_nonzero(cumulative < need[:, None], axis=1)
        picked: FloatArray = ordered[np.minimum(position, n - 1)]
        return picked, need <= 0

    def bootstrap(self, positions: IntArray) -> FloatArray:
        if self._start == 0:
            return self._counted(positions)
        a, missed_a = self._tail_pick(positions, 0, self._sorted_a)
        b, missed_b = self._tail_pick(positions, 1, self._sorted_b)
        delta: FloatArray = a - b
        missed = np.flatnonzero(missed_a | missed_b)
        if missed.size:
            delta[missed] = self._counted(positions[missed])
        return delta

    def swapped(self, flips: IntArray) -> FloatArray:
        flipped = flips.astype(bool)
        side_a = np.where(flipped, self._b, self._a)
        side_b = np.where(flipped, self._a, self._b)
        k = self._rank - 1
        delta: FloatArray = (
            np.partition(side_a, k, axis=1)[:, k] - np.partition(side_b, k, axis=1)[:, k]
        )
        return delta


class ItemCountAggregate:
    """``max_item_share[@k]`` and ``entropy``: per-item query counts, vectorised."""

    vectorised = True

    def __init__(
        self,
        name: str,
        statistic: str,
        sets_a: Sequence[set[str]],
        sets_b: Sequence[set[str]],
        values: tuple[float, float],
        answered: tuple[Sequence[bool], Sequence[bool]],
    ) -> None:
        self.name = name
        self._statistic = statistic
        self.value_a, self.value_b = values
        vocabulary: dict[str, int] = {}
        # 1.0 for a case whose (whole) response listed anything: max_item_share's
        # denominator counts only those.
        shown_a, shown_b = answered
        self._answered_a = np.asarray(shown_a, dtype=np.float64)
        self._answered_b = np.asarray(shown_b, dtype=np.float64)
        self._a = self._entries(sets_a, vocabulary)
        self._b = self._entries(sets_b, vocabulary)
        self._items = max(1, len(vocabulary))

    @staticmethod
    def _entries(sets: Sequence[set[str]], vocabulary: dict[str, int]) -> tuple[IntArray, IntArray]:
        cases: list[int] = []
        items: list[int] = []
        for case, shown in enumerate(sets):
            for item in sorted(shown):
                cases.append(case)
                items.append(vocabulary.setdefault(item, len(vocabulary)))
        return np.array(cases, dtype=np.int64), np.array(items, dtype=np.int64)

    def _counts(self, side: tuple[IntArray, IntArray], weights: FloatArray) -> FloatArray:
        cases, items = side
        rows = weights.shape[0]
        offsets = (np.arange(rows, dtype=np.int64) * self._items)[:, None]
        flat = (items[None, :] + offsets).ravel()
        summed = np.bincount(flat, weights=weights[:, cases].ravel(), minlength=rows * self._items)
        shaped: FloatArray = summed.reshape(rows, self._items).astype(np.float64, copy=False)
        return shaped

    def _value(self, counts: FloatArray, answered: FloatArray) -> FloatArray:
        if self._statistic == "share":
            top = counts.max(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                share: FloatArray = np.where(top > 0, top / answered, 0.0)
            return share
        shown = np.count_nonzero(counts > 0, axis=1)
        total = counts.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            c_log_c = np.where(counts > 0, counts * np.log(np.where(counts > 0, counts, 1)), 0.0)
            h = (np.log(total) - c_log_c.sum(axis=1) / total) / np.log(shown)
        out: FloatArray = np.where(shown <= 1, 0.0, np.clip(h, 0.0, 1.0))
        return out

    def _row_groups(self, rows: int) -> list[slice]:
        # weights gathered per entry are rows x entries: keep each group near 2**20 values
        entries = max(1, self._a[0].shape[0], self._b[0].shape[0])
        step = max(1, 2**20 // entries)
        return [slice(s, min(rows, s + step)) for s in range(0, rows, step)]

    def bootstrap(self, positions: IntArray) -> FloatArray:
        rows, n = positions.shape
        out = np.empty(rows, dtype=np.float64)
        for group in self._row_groups(rows):
            counts = np.stack([np.bincount(p, minlength=n) for p in positions[group]])
            weights: FloatArray = counts.astype(np.float64)
            a = self._value(self._counts(self._a, weights), weights @ self._answered_a)
            b = self._value(self._counts(self._b, weights), weights @ self._answered_b)
            out[group] = a - b
        return out

    def swapped(self, flips: IntArray) -> FloatArray:
        out = np.empty(flips.shape[0], dtype=np.float64)
        for group in self._row_groups(flips.shape[0]):
            flipped = flips[group].astype(np.float64)
            kept = 1.0 - flipped
            # side a shows a's items where not flipped and b's where flipped; b the reverse
            answered_a = kept @ self._answered_a + flipped @ self._answered_b
            answered_b = kept @ self._answered_b + flipped @ self._answered_a
            a = self._value(
                self._counts(self._a, kept) + self._counts(self._b, flipped), answered_a
            )
            b = self._value(
                self._counts(self._b, kept) + self._counts(self._a, flipped), answered_b
            )
            out[group] = a - b
        return out
