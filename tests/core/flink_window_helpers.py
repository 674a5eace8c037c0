"""Helpers shared by the ports of Flink's ``WindowOperatorTest``: Flink's test UDFs and the
translation of its expected ``StreamRecord`` queues."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flinkwin import OutputTag, ReduceFunction, WindowFunction
from flinkwin.testing import WindowOperatorHarness

LATE_OUTPUT_TAG = OutputTag("late-output")


def norm(v: Any) -> Any:
    """Records, dicts and tuples -> plain tuples of values; scalars unchanged."""
    if isinstance(v, Mapping):
        return tuple(v.values())
    if isinstance(v, (tuple, list)):
        return tuple(v)
    return v


def _sort_key(entry: tuple[Any, int]) -> tuple[int, tuple[Any, ...]]:
    """Flink's Tuple2/Tuple3ResultSortComparator: by timestamp, then by the tuple fields."""
    value, ts = entry
    return ts, value if isinstance(value, tuple) else (value,)


def expect(entries: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    return sorted(((norm(v), ts) for v, ts in entries), key=_sort_key)


def out_sorted(h: WindowOperatorHarness) -> list[tuple[Any, int]]:
    return expect(list(h.output_with_timestamps()))


def side_sorted(h: WindowOperatorHarness, tag: OutputTag) -> list[tuple[Any, int]]:
    return expect(list(h.side_output_with_timestamps(tag)))


def el(h: WindowOperatorHarness, key: str, value: int, timestamp: int) -> None:
    """``testHarness.processElement(new StreamRecord<>(new Tuple2<>(key, value), timestamp))``."""
    h.process_element({"key": key, "value": value}, timestamp)


class SumReducer(ReduceFunction):
    """``new Tuple2<>(value2.f0, value1.f1 + value2.f1)``."""

    def reduce(self, a: Any, b: Any) -> Any:
        return {"key": b["key"], "value": a["value"] + b["value"]}


class PassThroughFunction(WindowFunction):
    """Emits every element of the window unchanged."""

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        return list(inputs)
