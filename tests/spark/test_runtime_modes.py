"""Static input in Flink's two execution modes: STREAMING (the DataFrame's row order, as a
PyFlink program over a bounded source) and BATCH (event-time order)."""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin import (
    CountEvictor,
    DataStream,
    ProcessWindowFunction,
    RuntimeExecutionMode,
    Time,
    TumblingEventTimeWindows,
    Types,
)
from flinkwin.watermark import WatermarkStrategy

SCHEMA = "k string, ts long, label string"
# one window [0, 10 s) per key; rows are out of event-time order
ROWS = [("a", 5000, "first"), ("a", 1000, "second"), ("b", 7000, "b1"), ("a", 3000, "third"),
        ("a", 9000, "fourth")]


class Labels(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, ",".join(e.label for e in elements))


def _stream(spark: Any, mode: RuntimeExecutionMode | None, slices: int = 3) -> DataStream:
    rdd = spark.sparkContext.parallelize(ROWS, slices)  # several partitions, order kept
    df = spark.createDataFrame(rdd, SCHEMA)
    stream = DataStream(df) if mode is None else DataStream(df, runtime_mode=mode)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    return stream.assign_timestamps_and_watermarks(strategy)


def _windowed(stream: DataStream) -> Any:
    return stream.key_by(lambda r: r.k, key_type=Types.STRING()).window(
        TumblingEventTimeWindows.of(Time.seconds(10))
    )


def _run(spark: Any, mode: RuntimeExecutionMode | None) -> dict[str, Any]:
    windowed = _windowed(_stream(spark, mode))
    first = windowed.reduce(lambda a, b: a)
    evicted = _windowed(_stream(spark, mode)).evictor(CountEvictor.of(2)).process(
        Labels(), Types.TUPLE([Types.STRING(), Types.STRING()])
    )
    return {
        "first": sorted(r.label for r in first.collect()),
        "labels": sorted(evicted.execute_and_collect()),
    }


def test_streaming_mode_is_the_default_and_keeps_row_order(spark: Any) -> None:
    expected = {
        "first": ["b1", "first"],
        "labels": [("a", "third,fourth"), ("b", "b1")],
    }
    assert _run(spark, None) == expected
    assert _run(spark, RuntimeExecutionMode.STREAMING) == expected


def test_batch_mode_sorts_each_key_by_event_time(spark: Any) -> None:
    expected = {
        "first": ["b1", "second"],
        "labels": [("a", "first,fourth"), ("b", "b1")],
    }
    assert _run(spark, RuntimeExecutionMode.BATCH) == expected
    assert _run(spark, RuntimeExecutionMode.AUTOMATIC) == expected


def test_batch_mode_needs_bounded_input(spark: Any, tmp_path: Any) -> None:
    (tmp_path / "in").mkdir()
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path / "in"))
    stream = DataStream(df, runtime_mode=RuntimeExecutionMode.BATCH)
    with pytest.raises(ValueError, match="BATCH needs bounded input"):
        _windowed(stream.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
        )).reduce(lambda a, b: a)
    with pytest.raises(TypeError, match="runtime_mode must be a RuntimeExecutionMode"):
        DataStream(df, runtime_mode="BATCH")  # type: ignore[arg-type]
