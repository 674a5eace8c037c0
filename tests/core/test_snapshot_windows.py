"""Restoring a snapshot rebuilds its time windows: each distinct (start, end) once, shared by
every row that names it."""

from __future__ import annotations

from typing import Any

import numpy as np

from flinkwin import AggregateFunction, EventTimeSessionWindows, SlidingEventTimeWindows, Time
from flinkwin.operator.snapshots.window import _distinct_pairs
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG, MIN_LONG


def test_distinct_pairs_are_numpys_unique_rows() -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 5, 100, 5_000):
        starts = rng.choice(np.array([MIN_LONG, -5, 0, 3, 10**15, MAX_LONG]), n)
        ends = np.where(rng.random(n) < 0.5, starts, rng.choice(np.array([-1, 7, MAX_LONG]), n))
        starts, ends = starts.astype(np.int64), ends.astype(np.int64)
        unique_starts, unique_ends, inverse = _distinct_pairs(starts, ends)
        expected, expected_inverse = np.unique(
            np.stack([starts, ends], axis=1).reshape(n, 2), axis=0, return_inverse=True
        )
        assert unique_starts.tolist() == expected[:, 0].tolist()
        assert unique_ends.tolist() == expected[:, 1].tolist()
        assert inverse.tolist() == expected_inverse.reshape(-1).tolist()


class Sum(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, acc: int) -> int:
        return acc + value[1]

    def get_result(self, acc: int) -> int:
        return acc

    def merge(self, a: int, b: int) -> int:
        return a + b


def _windows_by_slot(harness: WindowOperatorHarness) -> dict[Any, Any]:
    return {slot: slot[1] for slot in harness.operator.window_contents}


def test_a_restored_operator_holds_the_same_windows_shared_per_start_and_end() -> None:
    for assigner in (
        SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(3)),
        EventTimeSessionWindows.with_gap(Time.seconds(4)),
    ):
        harness = WindowOperatorHarness(assigner, Sum(), key_field=lambda e: e[0])
        for i, ts in enumerate([1_000, 2_500, 9_000, 30_000, 4_000, 31_000, 12_000]):
            harness.process_element((("a", "b", "c")[i % 3], i), ts)
        restored = WindowOperatorHarness(assigner, Sum(), key_field=lambda e: e[0])
        restored.restore(harness.snapshot())
        before, after = _windows_by_slot(harness), _windows_by_slot(restored)
        assert after == before and len(after) > 3
        shared: dict[Any, Any] = {}
        for window in after.values():
            assert shared.setdefault(tuple(window), window) is window
        harness.process_watermark(60_000)
        restored.process_watermark(60_000)
        assert restored.output_with_timestamps() == harness.output_with_timestamps()
