"""Ports of Flink's ``TimestampITCase`` on Spark: timestamps and watermarks as the operators
downstream of sources, maps, unions and a union of a stream with itself see them.

Source: apache/flink, flink-tests/src/test/java/org/apache/flink/test/streaming/runtime/
TimestampITCase.java (master). Flink's ``CustomOperator`` records every watermark it receives
and checks ``timestamp == value``; flinkwin has no ``transform`` (a custom
``AbstractStreamOperator``), so a ``KeyedProcessFunction`` (:class:`Recorder`) reports, per
element, its value, ``ctx.timestamp()`` and ``ctx.timer_service().current_watermark()``, and
registers an event-time timer at the element's timestamp, whose firing reports the watermark
that fired it. ``connect(...).map(IdentityCoMap)`` is a ``union`` (flinkwin has no
``connect``; an identity CoMap forwards both inputs and takes the minimum of their watermarks,
as a union does).

Sources: bounded ones (``fromData``, Flink's bounded sources) are static DataFrames: their
watermark is ``Long.MIN_VALUE`` until the end of input, then ``MAX_LONG``
(docs/spark-semantics.md, "Static DataFrames"). Streams are files read one per micro-batch;
Flink's sources emitting a watermark after each element are
``WatermarkStrategy.for_monotonous_timestamps()`` (``max - 1``), periodic, which flinkwin
emits once per micro-batch (docs/spark-semantics.md, "Spark's watermark"): with one element
per micro-batch an operator receives one watermark per element, as in Flink's tests. A stream
never ends, so it never sends Flink's end-of-input ``MAX_LONG`` (documented there too): the
stream ports check the watermarks up to that point.

Not ported: testTimestampExtractorWithCustomWatermarkEmit needs a custom (punctuated)
``WatermarkGenerator``, which flinkwin does not have (Spark computes the watermark;
docs/migration.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_files import write_batches

from flinkwin import (
    KeyedProcessFunction,
    OneTaskGraphWarning,
    ProcessFunction,
    Time,
    TimestampAssigner,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.spark.pipeline import PipelineError
from flinkwin.time import MAX_LONG, MIN_LONG

pytestmark = pytest.mark.filterwarnings(f"ignore::{OneTaskGraphWarning.__module__}."
                                        f"{OneTaskGraphWarning.__name__}")

SCHEMA = "v long, ts long"
RECORDED = "kind string, v long, ts long, wm long"


class Recorder(KeyedProcessFunction):
    """Flink's ``CustomOperator(true)``: per element ``("e", value, timestamp, watermark)``,
    and a timer at the element's timestamp, whose firing gives ``("t", time, time,
    watermark)``."""

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Iterator[Any]:
        service = ctx.timer_service()
        if ctx.timestamp() is not None:
            service.register_event_time_timer(ctx.timestamp())
        yield "e", value.v, ctx.timestamp(), service.current_watermark()

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext
                 ) -> Iterator[Any]:
        yield "t", timestamp, ctx.timestamp(), ctx.timer_service().current_watermark()


class ValueAsTimestamp(TimestampAssigner):
    """``(element, ts) -> element``"""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value.v)


def monotonous(assigner: Any = "ts") -> WatermarkStrategy:
    return WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(assigner)


def recorded(stream: DataStream) -> DataStream:
    """``.transform("Custom Operator", ..., new CustomOperator(true))``, keyed by one key."""
    return stream.key_by(lambda r: 0, key_type=Types.INT()).process(
        Recorder(), output_type=RECORDED)


def e(v: int, wm: int) -> tuple[str, int, int, int]:
    """An element ``v`` with timestamp ``v`` seen under the watermark ``wm``."""
    return "e", v, v, wm


def t(time: int, wm: int) -> tuple[str, int, int, int]:
    """The timer at ``time`` fired by the watermark ``wm``."""
    return "t", time, time, wm


def static(spark: Any, values: list[int]) -> Any:
    return spark.createDataFrame([(v, v) for v in values], SCHEMA)


def stream(spark: Any, directory: Path, schema: str = SCHEMA) -> DataStream:
    """Files read one per micro-batch. The tests' event times are Flink's, a few ms after
    1970: declared (``times_before_1970``), so the watermark near the epoch is exact
    (docs/spark-semantics.md, "Watermarks: Spark's view, times before 1970")."""
    return DataStream(spark.readStream.schema(schema).option("maxFilesPerTrigger", 1)
                      .json(str(directory)), times_before_1970=True)


def run(result: DataStream, checkpoint: Path, name: str) -> dict[int, list[Any]]:
    """The main output of each micro-batch with output, each sorted."""
    sink = MemorySink(name)
    query = result.start(main=sink, checkpoint_location=str(checkpoint),
                         trigger={"availableNow": True})
    query.awaitTermination()
    return {b: sorted(tuple(r) for r in rows) for b, rows in sorted(sink.batches.items())
            if rows}


def one_per_batch(values: list[int]) -> list[list[dict[str, int]]]:
    return [[{"v": v, "ts": v}] for v in values]


# ------------------------------------------------------------------ watermark propagation
def test_watermark_propagation(spark: Any) -> None:
    """Flink: TimestampITCase#testWatermarkPropagation, on bounded input: source2 ends first
    (5 elements against 10); the operator after ``union``, ``map`` and a second input of
    source2 sees every element with its timestamp (source2's twice: it reaches the operator
    by two paths) and, at the end of input, the watermark ``MAX_LONG``, which fires every
    timer."""
    source1 = DataStream(static(spark, list(range(10)))).assign_timestamps_and_watermarks(
        monotonous())
    source2 = DataStream(static(spark, list(range(5)))).assign_timestamps_and_watermarks(
        monotonous())
    result = recorded(source1.union(source2).map(lambda r: r, output_type=SCHEMA)
                      .union(source2))
    rows = sorted(tuple(r) for r in result.execute_and_collect())
    assert rows == sorted([e(v, MIN_LONG) for v in range(10)]
                          + [e(v, MIN_LONG) for v in range(5)] * 2
                          + [t(v, MAX_LONG) for v in range(10)])


def test_watermark_propagation_no_final_watermark_on_stop(spark: Any, tmp_path: Path) -> None:
    """Flink: TimestampITCase#testWatermarkPropagationNoFinalWatermarkOnStop: the same graph on
    sources that never end (a stream): the operator receives the watermarks one by one,
    increasing, and no ``MAX_LONG``. source1 has elements 0..4, source2 0..2, one per
    micro-batch; the operator's watermark at micro-batch N is the minimum over the sources of
    their greatest timestamp before N, less 1: -1, 0, 1, then source2, without new elements,
    holds it at 1 (Flink's test, with 10 and 5 elements, checks the watermarks it got are
    0, 1, ... in order and the last is not MAX_LONG)."""
    write_batches(tmp_path / "s1", one_per_batch(list(range(5))))
    write_batches(tmp_path / "s2", one_per_batch(list(range(3))))
    source1 = stream(spark, tmp_path / "s1").assign_timestamps_and_watermarks(
        monotonous())
    source2 = stream(spark, tmp_path / "s2").assign_timestamps_and_watermarks(
        monotonous())
    result = recorded(source1.union(source2).map(lambda r: r, output_type=SCHEMA)
                      .union(source2))
    assert run(result, tmp_path / "cp", "ts_itcase_no_final") == {
        0: [e(0, MIN_LONG)] * 3,
        1: [e(1, -1)] * 3,
        2: [e(2, 0)] * 3 + [t(0, 0)],
        3: [e(3, 1), t(1, 1)],
        4: [e(4, 1)],
    }


# ------------------------------------------------------------------ self union (FLINK-6116)
def test_self_union_watermark_propagation(spark: Any) -> None:
    """Flink: TimestampITCase#testSelfUnionWatermarkPropagation: ``s.union(s)`` of
    ``fromData(1, 2, 3)`` (no timestamps): every element twice, and the operator's last
    watermark is ``MAX_LONG`` (the timer it registers fires under it)."""

    class TimerAt100(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
            ctx.timer_service().register_event_time_timer(100)
            yield "e", value.v, ctx.timestamp(), ctx.timer_service().current_watermark()

        def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
            yield "t", timestamp, ctx.timestamp(), ctx.timer_service().current_watermark()

    data = DataStream(spark.createDataFrame([(1, 1), (2, 2), (3, 3)], SCHEMA))
    result = data.union(data).key_by(lambda r: 0, key_type=Types.INT()).process(
        TimerAt100(), output_type=RECORDED)
    assert sorted(tuple(r) for r in result.execute_and_collect()) == sorted(
        [("e", v, None, MIN_LONG) for v in (1, 2, 3)] * 2 + [t(100, MAX_LONG)])


def test_self_union_watermark_propagation_on_a_stream(spark: Any, tmp_path: Path) -> None:
    """Flink: TimestampITCase#testSelfUnionWatermarkPropagation (FLINK-6116: the union of a
    stream with itself must still forward its watermarks), on a stream, into a keyed
    tumbling window (10 ms): each element counts twice, and the watermark of each
    micro-batch (the greatest timestamp before it, less 1) fires the windows it passes:
    [0, 10) at 11 (micro-batch 2), [10, 20) at 24 (the micro-batch Spark runs without data
    after the last); [20, 30) stays open (a stream has no end of input)."""
    batches = [[{"k": "a", "v": 1, "ts": 1}, {"k": "b", "v": 2, "ts": 2}],
               [{"k": "a", "v": 3, "ts": 12}], [{"k": "a", "v": 4, "ts": 25}]]
    write_batches(tmp_path / "s", batches)
    data = stream(spark, tmp_path / "s", "k string, v long, ts long"
                  ).assign_timestamps_and_watermarks(monotonous())
    result = (data.union(data).key_by("k")
              .window(TumblingEventTimeWindows.of(Time.milliseconds(10))).sum("v"))
    assert run(result, tmp_path / "cp", "ts_itcase_self_union") == {
        2: [("a", 2, 1), ("b", 4, 2)],
        3: [("a", 6, 12)],
    }


# ------------------------------------------------------------------ timestamps
def test_timestamp_handling(spark: Any) -> None:
    """Flink: TimestampITCase#testTimestampHandling: timestamps assigned at the sources
    (``(element, ts) -> element``, ``forMonotonousTimestamps``) reach the operator after a
    ``map`` and the (co-)union unchanged (``TimestampCheckingOperator``: timestamp ==
    value); flinkwin adds a ``filter`` and a ``flat_map`` to the chain."""

    class TimestampChecking(ProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
            yield value.v, ctx.timestamp()

    source1 = DataStream(static(spark, list(range(10)))).assign_timestamps_and_watermarks(
        monotonous(ValueAsTimestamp()))
    source2 = DataStream(static(spark, list(range(10)))).assign_timestamps_and_watermarks(
        monotonous(ValueAsTimestamp()))
    chained = (source1.map(lambda r: r, output_type=SCHEMA).filter(lambda r: True)
               .flat_map(lambda r: [r], output_type=SCHEMA))
    result = chained.union(source2).process(TimestampChecking(), output_type="v long, ts long")
    assert sorted(tuple(r) for r in result.execute_and_collect()) == sorted(
        [(v, v) for v in range(10)] * 2)


def test_disabled_timestamps(spark: Any) -> None:
    """Flink: TimestampITCase#testDisabledTimestamps: sources without timestamps (Flink's
    ``noWatermarks()`` source whose timestamps are erased; flinkwin's DataFrame without a
    ``WatermarkStrategy``): after ``map`` and the (co-)union the elements have no timestamp
    (``DisabledTimestampCheckingOperator``: ``!hasTimestamp()``; PyFlink's
    ``ctx.timestamp()`` is None)."""

    class DisabledTimestampChecking(ProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
            yield value.v, ctx.timestamp() is None

    source1, source2 = DataStream(static(spark, list(range(10)))), DataStream(
        static(spark, list(range(10))))
    result = source1.map(lambda r: r, output_type=SCHEMA).union(source2).process(
        DisabledTimestampChecking(), output_type="v long, none boolean")
    assert sorted(tuple(r) for r in result.execute_and_collect()) == sorted(
        [(v, True) for v in range(10)] * 2)


# ------------------------------------------------------------------ timestamp extractors
def test_timestamp_extractor_with_auto_interval(spark: Any, tmp_path: Path) -> None:
    """Flink: TimestampITCase#testTimestampExtractorWithAutoInterval: elements 1..N, one per
    periodic watermark (flinkwin: one per micro-batch), timestamps from a
    ``TimestampAssigner`` (the element), ascending-timestamp watermarks (``max - 1``): the
    operator gets the watermarks 0, 1, ..., N - 1 in order (element k sees k - 2, the timer
    at k fires under k) and every element has its value as timestamp. N = 4 (Flink: 10);
    Flink's final ``MAX_LONG`` of its bounded source does not come on a stream, so the timer
    at N stays (watermark N - 1 comes in the micro-batch Spark runs without data)."""
    write_batches(tmp_path / "s", one_per_batch([1, 2, 3, 4]))
    source = stream(spark, tmp_path / "s").assign_timestamps_and_watermarks(
        monotonous(ValueAsTimestamp()))
    assert run(recorded(source), tmp_path / "cp", "ts_itcase_auto") == {
        0: [e(1, MIN_LONG)],
        1: [e(2, 0)],
        2: [e(3, 1), t(1, 1)],
        3: [e(4, 2), t(2, 2)],
        4: [t(3, 3)],
    }


def test_timestamp_extractor_with_decreasing_watermarks(spark: Any, tmp_path: Path) -> None:
    """Flink: TimestampITCase#testTimestampExtractorWithDecreasingCustomWatermarkEmit: the
    source emits k, then k - 1 (1, 0, 2, 1, 3, 2, ...); the watermark never goes back:
    the operator gets 0, 1, 2, ... in order. Flink's generator is punctuated (``ts - 1``
    after each element, the operator dropping the decreasing ones); flinkwin's periodic
    ``max - 1`` per micro-batch, each holding k and k - 1, gives the same sequence. k = 1..3
    (Flink: 1..10); no ``MAX_LONG`` on a stream."""
    write_batches(tmp_path / "s", [[{"v": k, "ts": k}, {"v": k - 1, "ts": k - 1}]
                                   for k in (1, 2, 3)])
    source = stream(spark, tmp_path / "s").assign_timestamps_and_watermarks(
        monotonous(ValueAsTimestamp()))
    assert run(recorded(source), tmp_path / "cp", "ts_itcase_decreasing") == {
        0: sorted([e(1, MIN_LONG), e(0, MIN_LONG)]),
        1: sorted([e(2, 0), e(1, 0), t(0, 0)]),
        2: sorted([e(3, 1), e(2, 1), t(1, 1)]),
        3: [t(2, 2)],
    }


def test_timestamp_extractor_with_long_max_watermark_from_source(spark: Any) -> None:
    """Flink: TimestampITCase#testTimestampExtractorWithLongMaxWatermarkFromSource and ...2
    (the same program since Flink 2.x): a bounded source emitting k, k - 1 for k = 1..10 with
    watermarks (here: an upstream ``for_monotonous_timestamps()``), then
    ``assign_timestamps_and_watermarks`` with a generator that emits none
    (``no_watermarks()``): the only watermark the operator receives is the end of input's
    ``MAX_LONG`` (every element sees none, every timer fires under ``MAX_LONG``)."""
    values = [v for k in range(1, 11) for v in (k, k - 1)]
    source = (DataStream(static(spark, values)).assign_timestamps_and_watermarks(monotonous())
              .assign_timestamps_and_watermarks(WatermarkStrategy.no_watermarks()
                                                .with_timestamp_assigner(ValueAsTimestamp())))
    rows = sorted(tuple(r) for r in recorded(source).execute_and_collect())
    assert rows == sorted([e(v, MIN_LONG) for v in values] + [t(v, MAX_LONG) for v in range(11)])


# ------------------------------------------------------------------ errors
def test_error_on_event_time_without_timestamps(spark: Any, fresh_env: Any) -> None:
    """Flink: TimestampITCase#testErrorOnEventTimeWithoutTimestamps and
    #testErrorOnEventTimeOverProcessingTime (the same program in Flink 2.x, which has no time
    characteristic): an event-time window over ``fromData`` elements, which carry no
    timestamp, fails. Flink fails when the job runs; flinkwin refuses it when it is built,
    naming the missing ``assign_timestamps_and_watermarks``."""
    source = fresh_env.from_collection(
        [("a", 1), ("b", 2)], type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    with pytest.raises(PipelineError, match="works on event time: call "
                                            "assignTimestampsAndWatermarks"):
        (source.key_by(lambda x: x[0], key_type=Types.STRING())
         .window(TumblingEventTimeWindows.of(Time.seconds(5))).reduce(lambda a, b: a)
         .execute_and_collect())
