"""``key_by(...).reduce/sum/min/max/min_by/max_by`` and the keyed ``map``/``filter``/
``flat_map`` without a window, run by Spark: ports of
PyFlink's ``ProcessDataStreamStreamingTests``/``ProcessDataStreamBatchTests`` rolling
aggregation tests (``flink-python/pyflink/datastream/tests/test_data_stream.py``, same elements
and expected results), and the key's value surviving micro-batches of a streaming DataFrame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import run_stream, watermark, write_batches

from flinkwin.common import Row, Types
from flinkwin.datastream import MapFunction, RuntimeContext, RuntimeExecutionMode
from flinkwin.datastream.state import ValueStateDescriptor


@pytest.fixture(autouse=True)
def _session(spark: Any, fresh_env: Any) -> None:
    """``from_collection`` builds its DataFrame on the active (shared) session."""


def test_keyed_sum(fresh_env: Any) -> None:
    """Port of ProcessDataStreamStreamingTests#test_keyed_sum: three rolling sums in a row,
    each element yielding its key's running value (STREAMING)."""
    ds = fresh_env.from_collection(
        [(1, 1), (1, 2), (1, 3), (2, 5), (2, 1)],
        type_info=Types.ROW_NAMED(["v1", "v2"], [Types.INT(), Types.INT()]))
    result = ds.key_by(lambda x: x[0]).sum("v2") \
        .key_by(lambda x: x[0]).sum(1) \
        .map(lambda x: (x[1], x[0]), output_type=Types.TUPLE([Types.INT(), Types.INT()])) \
        .key_by(lambda x: x[1]).sum()
    # v2 per v1: 1, 3, 6 | 5, 6; summed again per v1: 1, 4, 10 | 5, 11; swapped and summed
    # on field 0 per v1: 1, 5, 15 | 5, 16
    assert sorted(result.execute_and_collect()) == sorted(
        [(1, 1), (5, 1), (15, 1), (5, 2), (16, 2)])


def test_keyed_sum_batch(fresh_env: Any) -> None:
    """Port of ProcessDataStreamBatchTests#test_keyed_sum: in BATCH mode each rolling sum
    emits only its keys' final values, at the end of input."""
    fresh_env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    ds = fresh_env.from_collection(
        [(1, 1), (1, 2), (1, 3), (5, 1), (5, 5)],
        type_info=Types.ROW_NAMED(["v1", "v2"], [Types.INT(), Types.INT()]))

    def flat_map_func1(data: Any) -> Any:
        for i in data:
            yield 12, i

    def flat_map_func2(data: Any) -> Any:
        yield from data

    result = ds.key_by(lambda x: x[0]).sum("v2") \
        .key_by(lambda x: x[1]).sum() \
        .flat_map(flat_map_func1, output_type=Types.TUPLE([Types.INT(), Types.INT()])) \
        .key_by(lambda x: x[0]).sum(1) \
        .flat_map(flat_map_func2, output_type=Types.INT()) \
        .key_by(lambda x: x).sum()
    # finals (1, 6) and (5, 6); both keyed by 6, summed on v1: (6, 6); its fields as (12, 6)
    # twice, summed: (12, 12); 12 and 12 summed: 24, emitted once
    assert list(result.execute_and_collect()) == [24]


def test_keyed_min_by_and_max(fresh_env: Any) -> None:
    """Port of ProcessDataStreamStreamingTests#test_keyed_min_by_and_max."""
    ds = fresh_env.from_collection(
        [("a", 3, 0), ("a", 1, 1), ("b", 5, 0), ("b", 3, 1)],
        type_info=Types.ROW_NAMED(["v1", "v2", "v3"],
                                  [Types.STRING(), Types.INT(), Types.INT()]))
    result = ds.key_by(lambda x: x[0]).min_by("v2") \
        .map(lambda x: (x[0], x[1], x[2]),
             output_type=Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])) \
        .key_by(lambda x: x[2]).max(1) \
        .key_by(lambda x: x[2]).min() \
        .map(lambda x: x[0], output_type=Types.STRING()) \
        .key_by(lambda x: x).max_by()
    # max(1) keeps field 0 of each key's first element, 'a' for both v3 keys
    assert list(result.execute_and_collect()) == ["a", "a", "a", "a"]


def test_rolling_reduce_keeps_each_keys_value_across_micro_batches(
    spark: Any, tmp_path: Path
) -> None:
    batches = [[{"k": "a", "v": 1, "ts": 0}, {"k": "b", "v": 10, "ts": 0}],
               [{"k": "a", "v": 2, "ts": 1}],
               [{"k": "b", "v": 5, "ts": 2}, {"k": "a", "v": 4, "ts": 2}]]
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "chk", "k string, v long, ts long",
        lambda ds: ds.assign_timestamps_and_watermarks(watermark(0))
        .key_by(lambda r: r.k).reduce(lambda a, b: Row(k=a.k, v=a.v + b.v, ts=b.ts)),
        type_info=Types.ROW_NAMED(["k", "v", "ts"],
                                  [Types.STRING(), Types.LONG(), Types.LONG()]),
    )
    per_batch = [sorted((r["k"], r["v"]) for r in run.main[b]) for b in sorted(run.main)
                 if run.main[b]]
    # one output per element, each the key's running sum, carried over from earlier batches
    assert per_batch == [[("a", 1), ("b", 10)], [("a", 3)], [("a", 7), ("b", 15)]]


def test_a_rolling_sum_without_watermarks_finishes_under_available_now(
    spark: Any, tmp_path: Path
) -> None:
    """Flink's rolling aggregations need no watermark and register no timers: a stream of
    them (and a keyed map) needs no timeouts, so ``availableNow`` ends after the input, through
    ``start()`` and through ``toDF().writeStream`` (it ran on with empty micro-batches, or was
    refused as a processing-time stage)."""
    from flinkwin import DataStream
    from flinkwin.spark import MemorySink

    write_batches(tmp_path / "in", [[{"k": "a", "v": 1}, {"k": "b", "v": 10}],
                                    [{"k": "a", "v": 2}]])

    def result() -> Any:
        df = (spark.readStream.schema("k string, v long").option("maxFilesPerTrigger", 1)
              .json(str(tmp_path / "in")))
        return DataStream(df).key_by("k").sum("v").key_by("k").map(
            lambda r: Row(k=r.k, v=r.v * 2), output_type=Types.ROW_NAMED(
                ["k", "v"], [Types.STRING(), Types.LONG()]))

    sink = MemorySink("rolling_available_now")
    query = result().start(main=sink, checkpoint_location=str(tmp_path / "c1"),
                           trigger={"availableNow": True})
    query.awaitTermination()
    expected = [("a", 2), ("a", 6), ("b", 20)]
    assert sorted(tuple(r) for r in sink.rows()) == expected
    rows: list[tuple[Any, ...]] = []
    query = (result().toDF().writeStream
             .foreachBatch(lambda df, _: rows.extend(tuple(r) for r in df.collect()))
             .option("checkpointLocation", str(tmp_path / "c2"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(120), "availableNow did not end"
    assert sorted(rows) == expected


def test_keyed_map_filter_and_flat_map_see_each_keys_state(fresh_env: Any) -> None:
    # PyFlink runs a keyed map/filter/flat_map as a KeyedProcessFunction: a rich function's
    # keyed state in open() is the current key's, elements per key in arrival order
    class CountPerKey(MapFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

        def map(self, value: Any) -> Any:
            n = (self.count.value() or 0) + 1
            self.count.update(n)
            return value[0], n

    ds = fresh_env.from_collection(
        [("a", 1), ("b", 2), ("a", 3), ("a", 4)],
        type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    result = ds.key_by(lambda x: x[0]).filter(lambda x: x[1] > 1) \
        .key_by(lambda x: x[0]).map(CountPerKey(),
                                    output_type=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .key_by(lambda x: x[0]).flat_map(lambda x: [x[0]] * x[1], output_type=Types.STRING())
    # filtered: (b,2) (a,3) (a,4); counted per key: (b,1) (a,1) (a,2); repeated n times
    assert sorted(result.execute_and_collect()) == ["a", "a", "a", "b"]
