"""The programs of the upgrade fixtures (tests/fixtures/checkpoints/): one per form a window
stage's state takes, and two graph stages.

``tests/fixtures/checkpoints/generate.py`` ran each program, under the flinkwin of the commit its
``fixture.json`` names, over the first input files, and kept the checkpoint; the upgrade test
(``test_upgrade_fixtures.py``) restarts the same program under this flinkwin on the remaining
files. The checkpoint's state belongs to these programs as they are: do not change one without
making its fixture again (a change a restart refuses is a change here).
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flinkwin import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    CountEvictor,
    Duration,
    EventTimeSessionWindows,
    OutputTag,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream

SCHEMA = "k string, ts long, v long"
LATE = OutputTag("late")


def ev(k: str, ts: int, v: int) -> dict[str, Any]:
    return {"k": k, "ts": ts, "v": v}


#: The input of every program with one source, one file per micro-batch. Windows of every key
#: are open when the first run stops after batch 2; batch 3 brings a late element.
BATCHES = [
    [ev("a", 1000, 1), ev("b", 2000, 10), ev("a", 3000, 2), ev("c", 4000, 7)],
    [ev("a", 12000, 4), ev("a", 9000, 3), ev("b", 11000, 5)],
    [ev("a", 13500, 6), ev("c", 16000, 8), ev("b", 12500, 1)],
    [ev("a", 500, 100), ev("b", 21000, 1), ev("a", 18000, 9)],
    [ev("c", 35000, 2), ev("a", 26000, 3)],
]
#: The second source of the union: its own files, read in the same micro-batches.
SECOND = [
    [ev("a", 1500, 20)],
    [ev("c", 10500, 30)],
    [ev("b", 14000, 40)],
    [ev("c", 19000, 50), ev("a", 300, 60)],
    [ev("b", 33000, 70)],
]
#: How many micro-batches the first run read (the checkpoint's); the rest come after.
BEFORE = 3


def source(spark: Any, directory: Path, before_1970: bool = False) -> DataStream:
    """The stream of ``directory``'s files; ``before_1970``: declared
    ``times_before_1970=True``, as a checkpoint of a flinkwin before that declaration needs."""
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(directory))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_seconds(1)).with_timestamp_assigner("ts")
    stream = DataStream(df, times_before_1970=True) if before_1970 else DataStream(df)
    return stream.assign_timestamps_and_watermarks(strategy)


TUMBLING = TumblingEventTimeWindows.of(Time.seconds(10))


class Acc:
    """A user accumulator: its instances live in the checkpoint, pickled by module and name."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0


class CountAndTotal(AggregateFunction):
    def create_accumulator(self) -> Acc:
        return Acc()

    def add(self, value: Any, accumulator: Acc) -> Acc:
        accumulator.count += 1
        accumulator.total += value["v"]
        return accumulator

    def get_result(self, accumulator: Acc) -> str:
        return f"{accumulator.count}/{accumulator.total}"

    def merge(self, a: Acc, b: Acc) -> Acc:
        a.count += b.count
        a.total += b.total
        return a


class Describe(ProcessWindowFunction):
    """A window's key, start and values (sorted), as one string."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        values = sorted(e["v"] for e in elements)
        yield f"{key}@{context.window().start}:{values}"


def _parity(row: Any) -> str:
    return "odd" if row["v"] % 2 else "even"


def tumbling_sum(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """Built-in aggregation over tumbling windows: the columnar state."""
    return (source(spark, inputs / "a", before_1970).key_by("k").window(TUMBLING)
            .side_output_late_data(LATE).sum("v"))


def sliding_sum(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """Built-in aggregation over sliding windows: the pane state."""
    return (source(spark, inputs / "a", before_1970).key_by("k")
            .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
            .side_output_late_data(LATE).sum("v"))


def session_sum(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """Built-in aggregation over event-time sessions: the session state."""
    return (source(spark, inputs / "a", before_1970).key_by("k")
            .window(EventTimeSessionWindows.with_gap(Time.seconds(3)))
            .side_output_late_data(LATE).sum("v"))


def process_lists(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """A ProcessWindowFunction: the element-list state."""
    return (source(spark, inputs / "a", before_1970).key_by("k").window(TUMBLING)
            .side_output_late_data(LATE).process(Describe(), Types.STRING()))


def continuous_sum(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """ContinuousEventTimeTrigger's early firings: the continuous state."""
    return (source(spark, inputs / "a", before_1970).key_by("k").window(TUMBLING)
            .trigger(ContinuousEventTimeTrigger.of(Time.seconds(2)))
            .side_output_late_data(LATE).sum("v"))


def user_aggregate(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """A user AggregateFunction with its own accumulator class: the object operator."""
    return (source(spark, inputs / "a", before_1970).key_by("k").window(TUMBLING)
            .allowed_lateness(Time.seconds(15)).side_output_late_data(LATE)
            .aggregate(CountAndTotal(), output_type=Types.STRING()))


def evicting(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """An evictor: the object operator keeping element lists."""
    return (source(spark, inputs / "a", before_1970).key_by("k").window(TUMBLING)
            .evictor(CountEvictor.of(2)).side_output_late_data(LATE)
            .process(Describe(), Types.STRING()))


def union_window(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """A graph: two sources' union, then a keyed window."""
    a, b = source(spark, inputs / "a", before_1970), source(spark, inputs / "b", before_1970)
    return a.union(b).key_by("k").window(TUMBLING).side_output_late_data(LATE).sum("v")


def _identity(row: Any) -> Any:
    return row


def mapped_union(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """A graph: a source mapped after its WatermarkStrategy, its union with another, then a
    keyed window. Until 0d0fe0d the mapped source's watermark was Spark's (taken before the
    map); since, the stage generates it from the elements, as any source's."""
    a = source(spark, inputs / "a", before_1970).map(_identity, output_type=SCHEMA)
    b = source(spark, inputs / "b", before_1970)
    return a.union(b).key_by("k").window(TUMBLING).side_output_late_data(LATE).sum("v")


def distributed_mapped_union(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """The mapped source's union distributed: its window, then sums per 20 s keyed by the
    sums' parity, each keyed window in its own key groups (``set_parallelism(2)``)."""
    sums = mapped_union(spark, inputs, before_1970)
    return (sums.key_by(_parity, key_type=Types.STRING())
            .window(TumblingEventTimeWindows.of(Time.seconds(20)))
            .side_output_late_data(LATE).sum("v").set_parallelism(2))


def window_after_window(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """A graph: per-key sums per 10 s, then sums per 20 s keyed by the sums' parity."""
    sums = source(spark, inputs / "a", before_1970).key_by("k").window(TUMBLING).sum("v")
    return (sums.key_by(_parity, key_type=Types.STRING())
            .window(TumblingEventTimeWindows.of(Time.seconds(20)))
            .side_output_late_data(LATE).sum("v"))


def distributed_window_after_window(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """The same graph distributed (``set_parallelism(2)``): each keyed window in its own key
    groups, a shuffle between them (transformWithStateInPandas on RocksDB)."""
    return window_after_window(spark, inputs, before_1970).set_parallelism(2)


class DescribeInterval(ProcessWindowFunction):
    """A window's interval key (its microseconds), start and values (sorted), as one string."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        micros = key // datetime.timedelta(microseconds=1)
        values = sorted(e["v"] for e in elements)
        yield f"{micros}us@{context.window().start}:{values}"


def interval_key(spark: Any, inputs: Path, before_1970: bool = False) -> Any:
    """A window keyed by a day-time interval column: its keys were ``pandas.Timedelta`` up to
    a49b90f and are ``datetime.timedelta`` since, restored keys too (equal, same key group;
    ``tests/core/test_restored_key_forms.py`` checks the class functions see)."""
    stream = source(spark, inputs / "a", before_1970)
    days = stream.toDF().selectExpr(
        "k", "ts", "v", "make_dt_interval(ascii(k) - 96, 0, 0, 0.000007) as d")
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_seconds(1)).with_timestamp_assigner("ts")
    keyed = DataStream(days).assign_timestamps_and_watermarks(strategy).key_by("d")
    return (keyed.window(TUMBLING).side_output_late_data(LATE)
            .process(DescribeInterval(), Types.STRING()))


def plain(row: Any) -> list[Any]:
    """An output row as JSON holds it (a day-time interval as its microseconds)."""
    return [v // datetime.timedelta(microseconds=1) if isinstance(v, datetime.timedelta) else v
            for v in row]


#: case -> (program, its sources' inputs: folder name -> batches)
CASES: dict[str, tuple[Callable[..., Any], dict[str, list[list[dict[str, Any]]]]]] = {
    "tumbling_sum": (tumbling_sum, {"a": BATCHES}),
    "sliding_sum": (sliding_sum, {"a": BATCHES}),
    "session_sum": (session_sum, {"a": BATCHES}),
    "process_lists": (process_lists, {"a": BATCHES}),
    "continuous_sum": (continuous_sum, {"a": BATCHES}),
    "user_aggregate": (user_aggregate, {"a": BATCHES}),
    "evicting": (evicting, {"a": BATCHES}),
    "union_window": (union_window, {"a": BATCHES, "b": SECOND}),
    "mapped_union": (mapped_union, {"a": BATCHES, "b": SECOND}),
    "distributed_mapped_union": (distributed_mapped_union, {"a": BATCHES, "b": SECOND}),
    "window_after_window": (window_after_window, {"a": BATCHES}),
    "distributed_window_after_window": (distributed_window_after_window, {"a": BATCHES}),
    "interval_key": (interval_key, {"a": BATCHES}),
}
#: cases whose plan a release did not have yet: the first release that wrote it
SINCE = {"distributed_window_after_window": "6d45d1e", "interval_key": "a49b90f",
         "mapped_union": "0d0fe0d", "distributed_mapped_union": "0d0fe0d"}
