"""PyFlink's window API surface on Spark (static inputs, so fast): builders that set options on
the windowed stream, PyFlink's and Java's count windows, outputs without a declared type
(pickled, as PyFlink's ``PICKLED_BYTE_ARRAY``), the Row element shape, the runtime context of
rich functions, and assigners calling ``get_default_trigger(env)``."""

from __future__ import annotations

from typing import Any

import pytest
from spark_scenarios import watermark

from flinkwin import (
    CountTrigger,
    CountWindow,
    ProcessWindowFunction,
    RuntimeContext,
    Time,
    TimeWindow,
    TimeWindowSerializer,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
    WindowAssigner,
    WindowFunction,
)
from flinkwin.datastream import DataStream
from flinkwin.errors import PickledElementsError
from flinkwin.spark.schema import is_pickled, unpickle

SCHEMA = "k string, ts long, v long"


@pytest.fixture(scope="module")
def five_a(spark: Any) -> DataStream:
    rows = [("a", i, i) for i in range(1, 6)] + [("b", 10, 100)]
    return DataStream(spark.createDataFrame(rows, SCHEMA))


class SumApply(WindowFunction[Any, tuple, str, CountWindow]):
    def apply(self, key: str, window: Any, inputs: Any) -> Any:
        values = [e.v for e in inputs]
        yield key, sum(values), len(values)


def _sorted(result: Any) -> list[tuple]:
    return sorted(tuple(r) for r in result.toDF().collect())


def test_count_window_is_pyflinks_and_count_window_camel_is_javas(five_a: DataStream) -> None:
    out = "k string, total long, n int"
    pyflink = five_a.key_by("k").count_window(3, 2).apply(SumApply(), out)
    # PyFlink: only full windows [1, 2, 3] and [3, 4, 5]
    assert _sorted(pyflink) == [("a", 6, 3), ("a", 12, 3)]
    java = five_a.keyBy("k").countWindow(3, 2).apply(SumApply(), output_schema=out)
    # Java: every 2 elements from the first, over the last (up to) 3
    assert _sorted(java) == [("a", 3, 2), ("a", 9, 3)]
    tumbling = five_a.key_by("k").count_window(2).apply(SumApply(), out)
    assert _sorted(tumbling) == [("a", 3, 2), ("a", 7, 2)]
    everything = five_a.count_window_all(3).apply(
        _AllSum(), Types.ROW_NAMED(["total"], [Types.LONG()])
    )
    assert _sorted(everything) == [(6,), (109,)]  # 1+2+3, 4+5+100 (event-time order)


class _AllSum:
    def apply(self, window: Any, inputs: Any) -> Any:
        yield (sum(e.v for e in inputs),)


def test_windowed_stream_builders_set_options_on_the_stream(five_a: DataStream) -> None:
    ws = five_a.assign_timestamps_and_watermarks(watermark(0)).key_by("k").window(
        TumblingEventTimeWindows.of(Time.seconds(10))
    )
    assert ws.trigger(CountTrigger.of(2)) is ws  # not chained: the trigger must stick
    ws.allowed_lateness(0)
    result = ws.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
    # CountTrigger(2) without purging: fires at the 2nd and 4th element of key a
    assert sorted(r.v for r in result.toDF().collect()) == [3, 10]


class Describe(ProcessWindowFunction[Any, Any, str, TimeWindow]):
    def process(self, key: str, context: Any, elements: Any) -> Any:
        for e in elements:
            yield key, type(e).__name__, repr(e)


def test_process_without_output_type_outputs_pickled_values(five_a: DataStream) -> None:
    windowed = five_a.assign_timestamps_and_watermarks(watermark(0)).key_by("k").window(
        TumblingEventTimeWindows.of(Time.milliseconds(3))
    )
    result = windowed.reduce(lambda a, b: (a[0], a[1], a[2] + b[2]), Describe())
    assert result.get_type() == Types.PICKLED_BYTE_ARRAY()
    with pytest.raises(PickledElementsError, match=r"reduce\(<lambda>, Describe\)"):
        result.toDF()  # Spark would see pickle bytes
    values = sorted(result.execute_and_collect())
    # the window function gets what the reduce returned, as in PyFlink
    assert values == [
        ("a", "tuple", "('a', 1, 3)"),  # [0, 3): reduced from 2 elements
        ("a", "tuple", "('a', 3, 12)"),  # [3, 6): from 3 elements
        ("b", "Row", "Row(k='b', ts=10, v=100)"),  # a single element: the element itself
    ]
    explicit = windowed.process(Describe(), Types.PICKLED_BYTE_ARRAY())
    assert explicit.get_type() == Types.PICKLED_BYTE_ARRAY()
    assert len(explicit.execute_and_collect()) == 6  # every element of every window


class RunningTotal(ProcessWindowFunction[Any, tuple, str, TimeWindow]):
    """Keyed state from ``open``, as PyFlink programs keep it."""

    def open(self, runtime_context: RuntimeContext) -> None:
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))
        self.subtask = runtime_context.get_index_of_this_subtask()
        self.parallelism = runtime_context.get_number_of_parallel_subtasks()

    def process(self, key: str, context: Any, elements: Any) -> Any:
        total = (self.total.value() or 0) + sum(e.v for e in elements)
        self.total.update(total)
        yield key, total, self.subtask, self.parallelism


def test_rich_function_runtime_context_on_spark(five_a: DataStream) -> None:
    result = (
        five_a.assign_timestamps_and_watermarks(watermark(0)).key_by("k")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(2)))
        .process(RunningTotal(), "k string, total long, subtask int, parallelism int")
    )
    rows = _sorted(result)
    assert [(k, total) for k, total, _, _ in rows] == [("a", 1), ("a", 6), ("a", 15), ("b", 100)]
    assert all(p == 16 and 0 <= s < 16 for _, _, s, p in rows)


class PyFlinkStyleAssigner(WindowAssigner[Any, TimeWindow]):
    """Written for PyFlink: ``get_default_trigger(self, env)``, no ``.trigger()`` call."""

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> Any:
        start = timestamp - timestamp % 4
        return [TimeWindow(start, start + 4)]

    def get_default_trigger(self, env: Any) -> Any:
        return CountTrigger.of(2)

    def get_window_serializer(self) -> Any:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return True


def test_pyflink_style_assigner_without_trigger_compiles_and_runs(five_a: DataStream) -> None:
    result = (
        five_a.assign_timestamps_and_watermarks(watermark(0)).key_by("k")
        .window(PyFlinkStyleAssigner()).reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
    )
    # CountTrigger(2): [0, 4) fires at its 2nd element (1 + 2), [4, 8) at 4 + 5
    assert sorted(r.v for r in result.toDF().collect()) == [3, 9]


def test_named_rows_fill_flinks_tuple_fields_by_position(spark: Any) -> None:
    """``Types.ROW([...])`` names its fields ``f0, f1...``; PyFlink encodes a Row into it by
    position whatever the Row's names (DDL parsing needs the session)."""
    from flinkwin import Row
    from flinkwin.spark.row_encoder import RowEncoder, SchemaMismatchError
    from flinkwin.spark.schema import parse_schema

    encoder = RowEncoder(parse_schema(Types.ROW([Types.STRING(), Types.LONG()])), "UTC", "out")
    assert encoder.to_row(Row.of(("word", "count"), ("a", 1))) == ("a", 1)
    named = RowEncoder(parse_schema("word string, n bigint"), "UTC", "out")
    with pytest.raises(SchemaMismatchError, match="missing field"):
        named.to_row(Row.of(("word", "count"), ("a", 1)))
    assert is_pickled(parse_schema(Types.PICKLED_BYTE_ARRAY()))
    assert not is_pickled(parse_schema("value binary"))
    pickled = RowEncoder(parse_schema(Types.PICKLED_BYTE_ARRAY()), "UTC", "out")
    assert unpickle(pickled.arrays([Row(x=1)])[0][0].as_py()) == Row(x=1)


class MinReading(ProcessWindowFunction[Any, tuple, str, TimeWindow]):
    """Flink documentation, "ProcessWindowFunction with Incremental Aggregation" (Python)."""

    def process(self, key: str, context: Any, min_readings: Any) -> Any:
        min_reading = next(iter(min_readings))
        yield context.window().start, min_reading


def test_pickled_field_in_a_tuple_output_type(five_a: DataStream) -> None:
    result = (
        five_a.assign_timestamps_and_watermarks(watermark(0)).key_by("k")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
        .reduce(
            lambda r1, r2: r2 if r1.v > r2.v else r1,
            window_function=MinReading(),
            output_type=Types.TUPLE([Types.LONG(), Types.PICKLED_BYTE_ARRAY()]),
        )
    )
    rows = sorted((r.f0, unpickle(r.f1)) for r in result.toDF().collect())
    assert rows == [(0, ("a", 1, 1)), (3, ("a", 3, 3)), (9, ("b", 10, 100))]
    assert repr(rows[0][1]) == "Row(k='a', ts=1, v=1)"
