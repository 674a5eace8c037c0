"""Ports of the window cases of Flink's ``SideOutputITCase`` (test names as in Flink), driven
through the window operator element by element, watermark by watermark.

Source: apache/flink, flink-tests/src/test/java/org/apache/flink/test/streaming/runtime/
SideOutputITCase.java (master, JUnit 5 / ``Duration`` version).

Every window case there reads ``elements`` (1, 2, 5, 3, 4) through ``TestWatermarkAssigner``,
a punctuated assigner: an element's timestamp is its value and after each element the
watermark is that timestamp; the bounded input ends with ``Long.MAX_VALUE``. The assigner runs
with its source's parallelism (``assignTimestampsAndWatermarks`` keeps the input's), so every
window subtask sees one sequence of watermarks, and with ``TestKeySelector`` (the identity) the
parallelism of 3 only spreads the keys: one keyed operator over all keys gives the same
results. :func:`punctuated` replays that input.

These cases are not in ``tests/spark/test_side_output_itcase.py``: a punctuated watermark
(``watermark = timestamp``) cannot be declared in flinkwin, nor in PyFlink (its
``WatermarkStrategy`` has ``for_bounded_out_of_orderness``/``for_monotonous_timestamps``,
``watermark = max - D - 1``), and a stream gets no end-of-input watermark, so no Spark run of
these programs is Flink's.

The process-function cases of the ITCase (``getSideOutput`` wiring, several consumers, union
of side outputs) are ported on Spark, in ``tests/spark/test_side_output_itcase.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flinkwin import (
    AllWindowFunction,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    Types,
    WindowFunction,
)
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG

#: ``SideOutputITCase.elements``
ELEMENTS = [1, 2, 5, 3, 4]


def punctuated(harness: WindowOperatorHarness, elements: Iterable[int]) -> None:
    """``fromData(elements).assignTimestampsAndWatermarks(new TestWatermarkAssigner())``:
    each element at timestamp = value, then the watermark = that timestamp; the end of the
    bounded input's ``Long.MAX_VALUE`` last."""
    for value in elements:
        harness.process_element(value, value)
        harness.process_watermark(value)
    harness.process_watermark(MAX_LONG)


def one_ms_windows() -> SlidingEventTimeWindows:
    """``SlidingEventTimeWindows.of(Duration.ofMillis(1), Duration.ofMillis(1))``."""
    return SlidingEventTimeWindows.of(Time.milliseconds(1), Time.milliseconds(1))


def identity(value: int) -> int:
    """``TestKeySelector``."""
    return value


class PassThroughAll(AllWindowFunction):
    """``for (Integer val : values) out.collect(val)``."""

    def apply(self, window: Any, inputs: Iterable[int]) -> Iterator[int]:
        yield from inputs


class KeyDashValue(WindowFunction):
    """``out.collect(String.valueOf(key) + "-" + String.valueOf(val))`` for every element."""

    def apply(self, key: int, window: Any, inputs: Iterable[int]) -> Iterator[str]:
        for value in inputs:
            yield f"{key}-{value}"


SIDE = OutputTag("side", Types.STRING())


class KeyWithSideOutput(ProcessWindowFunction):
    """Emits the key, and ``"sideout-" + key`` to ``SIDE``, once per window."""

    def process(self, key: int, context: Any, elements: Iterable[int]) -> Iterator[int]:
        yield key
        context.output(SIDE, f"sideout-{key}")


class ElementsWithSideOutput(ProcessAllWindowFunction):
    """Emits every element, and ``"sideout-" + e`` to ``SIDE``."""

    def process(self, context: Any, elements: Iterable[int]) -> Iterator[int]:
        for e in elements:
            yield e
            context.output(SIDE, f"sideout-{e}")


def test_all_window_late_arriving_events() -> None:
    """Flink: SideOutputITCase#testAllWindowLateArrivingEvents (parallelism 1): 3 and 4 come
    after the watermark 5, past their windows' ends, and go to the late side output."""
    late = OutputTag("late", Types.INT())
    h = WindowOperatorHarness(one_ms_windows(), PassThroughAll(), late_output_tag=late,
                              atomic_elements=True)
    punctuated(h, ELEMENTS)
    # .getSideOutput(lateDataTag).flatMap(value -> "late-" + value)
    assert sorted(f"late-{v}" for v in h.side_output(late)) == ["late-3", "late-4"]


def test_keyed_window_late_arriving_events() -> None:
    """Flink: SideOutputITCase#testKeyedWindowLateArrivingEvents: with an allowed lateness of
    2 ms, 3 (window [3, 4), cleanup time 5) is late under the watermark 5, 4 (cleanup at 6)
    still fires its window."""
    late = OutputTag("late", Types.INT())
    h = WindowOperatorHarness(one_ms_windows(), KeyDashValue(), key_field=identity,
                              allowed_lateness=Time.milliseconds(2), late_output_tag=late,
                              atomic_elements=True)
    punctuated(h, ELEMENTS)
    assert sorted(h.output()) == ["1-1", "2-2", "4-4", "5-5"]
    assert sorted(h.side_output(late)) == [3]


def test_processd_window_function_side_output() -> None:
    """Flink: SideOutputITCase#testProcessdWindowFunctionSideOutput: a ProcessWindowFunction's
    ``context.output``; 3 and 4 are late (no allowed lateness, no late tag) and dropped."""
    h = WindowOperatorHarness(one_ms_windows(), KeyWithSideOutput(), key_field=identity,
                              atomic_elements=True)
    punctuated(h, ELEMENTS)
    assert sorted(h.side_output(SIDE)) == ["sideout-1", "sideout-2", "sideout-5"]
    assert sorted(h.output()) == [1, 2, 5]
    assert h.num_late_records_dropped == 2


def test_process_all_window_function_side_output() -> None:
    """Flink: SideOutputITCase#testProcessAllWindowFunctionSideOutput (parallelism 1): a
    ProcessAllWindowFunction's ``context.output``; 3 and 4 are late and dropped."""
    h = WindowOperatorHarness(one_ms_windows(), ElementsWithSideOutput(), atomic_elements=True)
    punctuated(h, ELEMENTS)
    assert sorted(h.side_output(SIDE)) == ["sideout-1", "sideout-2", "sideout-5"]
    assert sorted(h.output()) == [1, 2, 5]
    assert h.num_late_records_dropped == 2
