"""``result.writeStream``: Spark's DataStreamWriter chain on a flinkwin result, one query for the
main output and every side output; unsupported calls fail naming the reason."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException
from spark_scenarios import watermark, write_batches
from test_spark_streaming import LATE, SCHEMA, TUMBLING_BATCHES, ev

from flinkwin import OutputTag, Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.datastream.window_result_stream import WindowResultStream
from flinkwin.spark import ConsoleSink, FileSink, ForeachBatchSink, MemorySink
from flinkwin.spark.writer import WindowDataStreamWriter

MAIN_ROWS = [("a", 1000, 6), ("a", 12000, 4), ("b", 2000, 10), ("c", 4000, 7)]


def _result(spark: Any, source: Path) -> WindowResultStream:
    source.mkdir(parents=True, exist_ok=True)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    return (
        DataStream(df).assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE).sum("v")
    )


def _wait_for(condition: Any, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.5)


def _parquet_rows(spark: Any, path: Path) -> list[tuple[Any, ...]]:
    try:
        rows = spark.read.parquet(str(path)).collect()
    except AnalysisException:  # nothing written yet
        return []
    return sorted((r["k"], r["ts"], r["v"]) for r in rows)


def test_a_spark_write_stream_chain_runs_one_query_for_main_and_late_data(
    spark: Any, tmp_path: Path, capsys: Any
) -> None:
    write_batches(tmp_path / "in", TUMBLING_BATCHES)
    query = (
        _result(spark, tmp_path / "in").writeStream
        .format("parquet")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .outputMode("append")
        .trigger(processingTime="200 milliseconds")
        .queryName("fw_write_stream")
        .partitionBy("k")
        .option("compression", "snappy")
        .sideOutput(LATE, f"parquet:{tmp_path / 'late'}")
        .start(str(tmp_path / "out"))
    )
    try:
        assert [q.id for q in spark.streams.active] == [query.id]
        assert query.name == "fw_write_stream"
        query.processAllAvailable()
        query.explain()
        plan = capsys.readouterr().out
        # one stateful stage computes both outputs
        assert plan.count("FlatMapGroupsInPandasWithState") == 1
        _wait_for(lambda: len(_parquet_rows(spark, tmp_path / "out")) == 4)
    finally:
        query.stop()
    assert _parquet_rows(spark, tmp_path / "out") == MAIN_ROWS
    assert sorted(p.name for p in (tmp_path / "out").glob("k=*")) == ["k=a", "k=b", "k=c"]
    assert _parquet_rows(spark, tmp_path / "late") == [("a", 500, 100)]


def test_write_stream_memory_format_and_foreach_batch(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", TUMBLING_BATCHES)
    query = (
        _result(spark, tmp_path / "in").writeStream.format("memory").queryName("fw_ws_memory")
        .trigger(availableNow=True).option("checkpointLocation", str(tmp_path / "ck1"))
        .side_output(LATE, "memory:fw_ws_memory_late").start()
    )
    query.awaitTermination()
    rows = sorted(tuple(r) for r in spark.table("fw_ws_memory").collect())
    assert rows == MAIN_ROWS
    assert [r.asDict() for r in spark.table("fw_ws_memory_late").collect()] == [ev("a", 500, 100)]

    seen: list[tuple[Any, ...]] = []

    def collect(df: Any, batch_id: int) -> None:
        seen.extend(tuple(r) for r in df.collect())

    query = (
        _result(spark, tmp_path / "in").writeStream.foreachBatch(collect)
        .trigger(availableNow=True).start(checkpointLocation=str(tmp_path / "ck2"))
    )
    query.awaitTermination()
    assert sorted(seen) == MAIN_ROWS


def test_write_stream_chooses_sinks_like_spark(spark: Any, tmp_path: Path) -> None:
    result = _result(spark, tmp_path / "in")
    assert isinstance(result.writeStream, WindowDataStreamWriter)

    def main_sink(writer: WindowDataStreamWriter, table: str | None = None) -> Any:
        return writer._main_sink(table)

    sink = main_sink(result.writeStream.format("json").option("path", "/p").partitionBy(["k"]))
    assert isinstance(sink, FileSink)
    assert (sink.path, sink.format, sink.partition_by) == ("/p", "json", ["k"])
    # no format: the session's default source, as in Spark
    assert main_sink(result.writeStream.option("path", "/p")).format == "parquet"
    console = main_sink(result.writeStream.format("console").option("numRows", 5)
                        .option("truncate", False))
    assert isinstance(console, ConsoleSink)
    assert (console.num_rows, console.truncate) == (5, False)
    assert isinstance(main_sink(result.writeStream.foreachBatch(print)), ForeachBatchSink)
    memory = main_sink(result.writeStream.format("memory").queryName("v"))
    assert isinstance(memory, MemorySink) and memory.name == "v"


@pytest.mark.parametrize(
    ("chain", "message"),
    [
        (lambda w: w.outputMode("complete"), "outputMode\\('complete'\\) is not supported"),
        (lambda w: w.outputMode("update"), "'append' mode only"),
        (lambda w: w.trigger(continuous="1 second"), "continuous processing runs no stateful"),
        (lambda w: w.trigger(), "exactly one of"),
        (lambda w: w.foreach(print), "use foreachBatch"),
        (lambda w: w.format("kafka").start(), "format 'kafka' is not supported"),
        (lambda w: w.toTable("t"), "catalog tables as Delta tables only"),
        (lambda w: w.format("memory").start(), "queryName must be specified"),
        (lambda w: w.format("parquet").start(), "needs a path"),
        (lambda w: w.format("memory").queryName("x").partitionBy("k").start(),
         "memory sink takes no partitionBy"),
        (lambda w: w.sideOutput("late", "console"), "takes an OutputTag"),
    ],
)
def test_unsupported_writer_calls_fail_naming_why(
    spark: Any, tmp_path: Path, chain: Any, message: str
) -> None:
    writer = _result(spark, tmp_path / "in").writeStream
    with pytest.raises((ValueError, TypeError), match=message):
        chain(writer)
    assert spark.streams.active == []


def test_write_stream_needs_a_streaming_input(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1, 1)], SCHEMA)
    result = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")
    )
    with pytest.raises(ValueError, match="only on a streaming input"):
        result.writeStream  # noqa: B018


def test_a_side_output_stream_keeps_spark_s_own_writer(spark: Any, tmp_path: Path) -> None:
    """``getSideOutput(tag)`` is a plain stream: its writeStream is the DataFrame's."""
    side = _result(spark, tmp_path / "in").getSideOutput(OutputTag("late"))
    assert not isinstance(side.writeStream, WindowDataStreamWriter)
