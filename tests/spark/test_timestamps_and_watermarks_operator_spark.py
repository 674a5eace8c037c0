"""Ports of Flink's ``TimestampsAndWatermarksOperatorTest`` (flink-streaming-java,
``org.apache.flink.streaming.runtime.operators``): what ``assign_timestamps_and_watermarks``
gives the operators after it. flinkwin's counterpart of the operator is its Spark stage (the
timestamp assigner runs before the shuffle, the watermark is Spark's, once per micro-batch),
so these run on Spark; the operator downstream is :class:`test_timestamp_itcase.Recorder`
(element, timestamp and watermark, and a timer at each element's timestamp).

Flink's test generator ``PeriodicWatermarkGenerator`` emits ``last timestamp - 1``; flinkwin's
``for_monotonous_timestamps()`` emits ``max - 1``, the same for the increasing inputs used
here. The periodic emit is the micro-batch boundary (docs/spark-semantics.md, "Spark's
watermark"); a static DataFrame runs in BATCH mode, where, as in Flink's batch mode, no
watermark comes before the end of input.

Not ported: inputStatusesAreNotForwarded (no input carries a watermark status into a
flinkwin strategy), the punctuated cases (punctuatedWatermarksEmitImmediatelyStreamMode,
punctuatedWatermarksBatchMode, punctuatedWatermarksDoNotRegressStreamMode) and the regressing
generator of periodicWatermarksDoNotRegressStreamMode: flinkwin has no custom
``WatermarkGenerator`` (docs/migration.md; the no-regress rule is ported in
``test_timestamp_itcase.py::test_timestamp_extractor_with_decreasing_watermarks``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_files import write_batches
from test_timestamp_itcase import (
    SCHEMA,
    ValueAsTimestamp,
    e,
    monotonous,
    recorded,
    run,
    static,
    stream,
    t,
)

from flinkwin import (
    Duration,
    OneTaskGraphWarning,
    ProcessFunction,
    TimestampAssigner,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.time import MAX_LONG, MIN_LONG

pytestmark = pytest.mark.filterwarnings(f"ignore::{OneTaskGraphWarning.__module__}."
                                        f"{OneTaskGraphWarning.__name__}")


class Timestamps(ProcessFunction):
    """Each element's value and ``ctx.timestamp()``."""

    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        yield value.v, ctx.timestamp()


class ValuePlus100(TimestampAssigner):
    """``(element, ts) -> element + 100``"""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.v) + 100


class RecordTimestampLess100(TimestampAssigner):
    """``(element, recordTimestamp) -> recordTimestamp - 100``"""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return record_timestamp - 100


def identity(value: Any) -> Any:
    return value


def test_input_watermarks_are_not_forwarded(spark: Any, tmp_path: Path) -> None:
    """Flink: TimestampsAndWatermarksOperatorTest#inputWatermarksAreNotForwarded and
    #periodicWatermarksEmitOnPeriodicEmitStreamMode: a stream whose upstream strategy
    (timestamps from ``ts``, 100 ms ahead of ``v``) would give the watermarks 101 and 103;
    the second ``assign_timestamps_and_watermarks`` drops them and emits its own at each
    periodic emit: elements 2 and 4 in two micro-batches give the watermarks 1 then 3. The
    second assigner gets each element's timestamp so far as ``record_timestamp`` (Flink's
    ``processElement``: ``previousTimestamp``) and takes 100 off: each element has its
    value as its new timestamp. (flinkwin handed it ``Long.MIN_VALUE``.)"""
    write_batches(tmp_path / "s", [[{"v": 2, "ts": 102}], [{"v": 4, "ts": 104}]])
    source = (stream(spark, tmp_path / "s").assign_timestamps_and_watermarks(monotonous())
              .assign_timestamps_and_watermarks(monotonous(RecordTimestampLess100())))
    assert run(recorded(source), tmp_path / "cp", "twao_not_forwarded") == {
        0: [e(2, MIN_LONG)],  # periodicWatermarksOnlyEmitOnPeriodicEmit: none before the emit
        1: [e(4, 1)],
        2: [t(2, 3)],
    }


@pytest.mark.parametrize("first", ["column", "assigner"])
def test_the_next_assigner_gets_the_timestamps_so_far(spark: Any, first: str) -> None:
    """Flink's ``TimestampsAndWatermarksOperator.processElement`` hands the assigner the
    element's timestamp so far: the previous ``assign_timestamps_and_watermarks``'s, directly
    after it (a column or a ``TimestampAssigner``) as after a ``map``."""
    df = spark.createDataFrame([(2, 102), (4, 104)], SCHEMA)
    strategy = monotonous("ts" if first == "column" else ValuePlus100())
    for between in (identity, lambda s: s.map(identity, output_type=SCHEMA)):
        source = between(DataStream(df).assign_timestamps_and_watermarks(strategy)
                         ).assign_timestamps_and_watermarks(monotonous(RecordTimestampLess100()))
        result = source.process(Timestamps(), output_type="v long, ts long")
        assert sorted(tuple(r) for r in result.execute_and_collect()) == [(2, 2), (4, 4)]


def test_a_strategy_without_an_assigner_keeps_the_timestamps_so_far(spark: Any) -> None:
    """A ``WatermarkStrategy`` without ``with_timestamp_assigner`` keeps each element's
    timestamp (Flink's default ``RecordTimestampAssigner`` returns ``recordTimestamp``):
    after an earlier strategy, directly or after a ``map``, the elements keep its timestamps.
    (flinkwin refused the strategy for lack of a timestamp column.)"""
    df = spark.createDataFrame([(2, 102), (4, 104)], SCHEMA)
    for between in (identity, lambda s: s.map(identity, output_type=SCHEMA)):
        source = between(DataStream(df).assign_timestamps_and_watermarks(monotonous())
                         ).assign_timestamps_and_watermarks(
                             WatermarkStrategy.for_monotonous_timestamps())
        result = source.process(Timestamps(), output_type="v long, ts long")
        assert sorted(tuple(r) for r in result.execute_and_collect()) == [(2, 102), (4, 104)]
    # after a window, its results' timestamps: window.max_timestamp()
    windowed = (DataStream(df).assign_timestamps_and_watermarks(monotonous())
                .key_by("v").window(TumblingEventTimeWindows.of(Duration.of_millis(100)))
                .reduce(lambda a, b: a)
                .assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps()))
    result = windowed.process(Timestamps(), output_type="v long, ts long")
    assert sorted(tuple(r) for r in result.execute_and_collect()) == [(2, 199), (4, 199)]


def test_a_strategy_without_an_assigner_on_a_stream_keeps_the_timestamps_and_its_watermark(
    spark: Any, tmp_path: Path
) -> None:
    """The same on a stream, directly after the first strategy: the elements keep ``ts``
    (102, 104) and the watermarks are the second strategy's over them (101 after the first
    micro-batch), as Flink's ``TimestampsAndWatermarksOperator`` with the default
    assigner gives."""
    write_batches(tmp_path / "s", [[{"v": 2, "ts": 102}], [{"v": 4, "ts": 104}]])
    source = (stream(spark, tmp_path / "s").assign_timestamps_and_watermarks(monotonous())
              .assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps()))
    assert run(recorded(source), tmp_path / "cp", "twao_default_assigner") == {
        0: [("e", 2, 102, MIN_LONG)],
        1: [("e", 4, 104, 101)],
        2: [("t", 102, 102, 103)],
    }


def test_long_max_input_watermark_is_forwarded(spark: Any) -> None:
    """Flink: TimestampsAndWatermarksOperatorTest#longMaxInputWatermarkIsForwarded: the end of
    a bounded input's ``Long.MAX_VALUE`` watermark passes a strategy emitting no watermarks of
    its own (``no_watermarks()``): the timer at 2 fires under ``MAX_LONG``."""
    source = DataStream(static(spark, [2])).assign_timestamps_and_watermarks(
        WatermarkStrategy.no_watermarks().with_timestamp_assigner(ValueAsTimestamp()))
    assert sorted(tuple(r) for r in recorded(source).execute_and_collect()) == [
        e(2, MIN_LONG), t(2, MAX_LONG)]


def test_periodic_watermarks_batch_mode(spark: Any) -> None:
    """Flink: TimestampsAndWatermarksOperatorTest#periodicWatermarksBatchMode: in BATCH mode
    (a static DataFrame's) the periodic generator emits nothing: the elements 2 and 4 keep
    their timestamps and see no watermark; only the end of input's ``MAX_LONG`` fires the
    timers."""
    source = DataStream(static(spark, [2, 4])).assign_timestamps_and_watermarks(
        monotonous(ValueAsTimestamp()))
    assert sorted(tuple(r) for r in recorded(source).execute_and_collect()) == [
        e(2, MIN_LONG), e(4, MIN_LONG), t(2, MAX_LONG), t(4, MAX_LONG)]


#: flinkwin's event-time range (docs/reliability.md, "Bad input"): Flink takes any long
LIMIT = 4_000_000_000_000_000


def test_negative_timestamps(spark: Any) -> None:
    """Flink: TimestampsAndWatermarksOperatorTest#testNegativeTimestamps: negative timestamps
    are forwarded as they are, with a generator that emits no watermark. Flink's values are
    ``Long.MIN_VALUE, -1, 0, 1, 2, 3, Long.MAX_VALUE``; flinkwin's event times lie within
    ``±4·10^15`` ms (a documented limit: the batch fails naming the value, see
    ``tests/spark/test_event_time_range.py``), so the extremes here are the range's ends."""
    values = [-LIMIT, -1, 0, 1, 2, 3, LIMIT]
    source = DataStream(spark.createDataFrame([(v, 0) for v in values], SCHEMA)
                        ).assign_timestamps_and_watermarks(
        WatermarkStrategy.no_watermarks().with_timestamp_assigner(ValueAsTimestamp()))
    result = source.process(Timestamps(), output_type="v long, ts long")
    assert sorted(tuple(r) for r in result.execute_and_collect()) == [(v, v) for v in values]
