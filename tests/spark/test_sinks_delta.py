"""DeltaSink with delta-rs: main and late tables from one streaming query, read back with
``deltalake``; a replayed batch adds nothing; the app id lives in the checkpoint; an existing
table that does not fit fails at start, naming the columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from spark_scenarios import watermark, write_batches
from test_spark_streaming import LATE, SCHEMA, TUMBLING_BATCHES, ev

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.sinks import DeltaSink, DeltaTableMismatchError, SinkContext

WINDOW_SUMS = [("a", 6), ("b", 10), ("c", 7), ("a", 4)]  # [0,10 s) a b c, then [10,20 s) a


def _tumbling(spark: Any, source: Path) -> Any:
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    return (
        DataStream(stream).assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE).sum("v", with_window=True)
    )


def _rows(path: Path) -> list[dict[str, Any]]:
    return DeltaTable(str(path)).to_pyarrow_table().to_pylist()


def test_main_and_late_outputs_land_in_delta_tables(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", TUMBLING_BATCHES)
    main = DeltaSink(str(tmp_path / "main"), partition_by=["k"], engine="deltalake")
    late = DeltaSink(str(tmp_path / "late"), engine="deltalake")
    query = _tumbling(spark, tmp_path / "in").start(
        main=main, side_outputs={LATE: late}, checkpoint_location=str(tmp_path / "ck"),
        trigger={"availableNow": True},
    )
    query.awaitTermination()

    main_table = DeltaTable(str(tmp_path / "main"))
    assert sorted((r["k"], r["v"]) for r in _rows(tmp_path / "main")) == sorted(WINDOW_SUMS)
    assert main_table.metadata().partition_columns == ["k"]
    types = {f["name"]: f["type"] for f in json.loads(main_table.schema().to_json())["fields"]}
    assert types == {"k": "string", "ts": "long", "v": "long",
                     "window_start": "timestamp", "window_end": "timestamp"}
    starts = {(r["k"], r["window_start"].timestamp()) for r in _rows(tmp_path / "main")}
    assert starts == {("a", 0.0), ("b", 0.0), ("c", 0.0), ("a", 10.0)}
    assert _rows(tmp_path / "late") == [ev("a", 500, 100)]

    # the app transactions: one id per output, kept in the checkpoint, last batch recorded
    ids = json.loads((tmp_path / "ck" / "flinkwin" / "sinks.json").read_text())["app_ids"]
    assert ids["main"] == main.resolved_app_id and ids["late"] == late.resolved_app_id
    assert ids["main"] != ids["late"]
    last_main = main_table.transaction_version(ids["main"])
    assert last_main is not None and last_main >= 2  # [10,20 s) fires in batch 3 (or later)
    assert DeltaTable(str(tmp_path / "late")).transaction_version(ids["late"]) == 2


def test_restart_keeps_the_app_id_and_a_new_checkpoint_draws_a_new_one(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", TUMBLING_BATCHES[:2])
    ids = []
    for checkpoint in ("ck", "ck", "ck2"):
        sink = DeltaSink(str(tmp_path / "main" / checkpoint), engine="deltalake")
        _tumbling(spark, tmp_path / "in").start(
            main=sink, checkpoint_location=str(tmp_path / checkpoint),
            trigger={"availableNow": True},
        ).awaitTermination()
        ids.append(sink.resolved_app_id)
    assert ids[0] == ids[1] != ids[2]


def test_a_replayed_batch_adds_no_rows(spark: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame([("a", 1), ("b", 2)], "k string, v long")
    sink = DeltaSink(str(tmp_path / "t"), engine="deltalake", app_id="fixed")
    sink.open(SinkContext(spark, df.schema, "main", str(tmp_path / "ck")))
    sink.write_batch(df, 0)
    sink.write_batch(df, 1)
    sink.write_batch(df, 1)  # Spark re-runs batch 1 after a crash
    sink.write_batch(df, 0)
    table = DeltaTable(str(tmp_path / "t"))
    assert table.to_pyarrow_table().num_rows == 4
    assert table.transaction_version("fixed") == 1
    assert table.version() == 2  # creation + two appends: the replays committed nothing


def test_timestamp_ntz_columns_become_delta_timestamp_ntz(spark: Any, tmp_path: Path) -> None:
    df = spark.sql("SELECT TIMESTAMP '2024-01-01 10:00:00' AS t, "
                   "TIMESTAMP_NTZ '2024-01-01 10:00:00' AS n")
    sink = DeltaSink(str(tmp_path / "t"), engine="deltalake")
    sink.open(SinkContext(spark, df.schema, "main", None))
    sink.write_batch(df, 0)
    table = DeltaTable(str(tmp_path / "t"))
    types = {f["name"]: f["type"] for f in json.loads(table.schema().to_json())["fields"]}
    assert types == {"t": "timestamp", "n": "timestamp_ntz"}
    row = table.to_pyarrow_table().to_pylist()[0]
    assert row["t"].timestamp() == 1704103200.0 and row["n"].isoformat() == "2024-01-01T10:00:00"


def test_an_existing_table_that_does_not_fit_fails_at_start(spark: Any, tmp_path: Path) -> None:
    table = str(tmp_path / "t")
    old = spark.createDataFrame([("a", 1)], "k string, v int")
    first = DeltaSink(table, engine="deltalake", partition_by="k")
    first.open(SinkContext(spark, old.schema, "main", None))
    write_batches(tmp_path / "in", TUMBLING_BATCHES[:1])
    with pytest.raises(DeltaTableMismatchError) as error:
        _tumbling(spark, tmp_path / "in").start(
            main=DeltaSink(table, engine="deltalake"),
            checkpoint_location=str(tmp_path / "ck"), trigger={"availableNow": True},
        )
    message = str(error.value)
    assert "['ts', 'window_start', 'window_end'] are not in the table" in message
    assert "column 'v' is integer in the table, long here" in message
    assert len(spark.streams.active) == 0
    other = spark.createDataFrame([("a", 1)], "k string, v int")
    with pytest.raises(DeltaTableMismatchError, match=r"partitioned by \['k'\], the sink asks"):
        DeltaSink(table, engine="deltalake", partition_by=["v"]).open(
            SinkContext(spark, other.schema, "main", None))
    with pytest.raises(DeltaTableMismatchError, match=r"partition column\(s\) \['x'\]"):
        DeltaSink(table, engine="deltalake", partition_by=["x"]).open(
            SinkContext(spark, other.schema, "main", None))


def test_an_explicit_app_id_the_table_already_has_is_refused_on_a_new_checkpoint(
    spark: Any, tmp_path: Path
) -> None:
    df = spark.createDataFrame([("a", 1)], "k string, v long")
    sink = DeltaSink(str(tmp_path / "t"), engine="deltalake", app_id="job")
    sink.open(SinkContext(spark, df.schema, "main", str(tmp_path / "ck")))
    sink.write_batch(df, 0)
    again = DeltaSink(str(tmp_path / "t"), engine="deltalake", app_id="job")
    again.open(SinkContext(spark, df.schema, "main", str(tmp_path / "ck")))  # same checkpoint
    with pytest.raises(ValueError, match="already holds app_id='job' up to batch 0"):
        DeltaSink(str(tmp_path / "t"), engine="deltalake", app_id="job").open(
            SinkContext(spark, df.schema, "main", str(tmp_path / "ck-new")))
    with pytest.raises(ValueError, match="writes as 'job'"):
        DeltaSink(str(tmp_path / "t"), engine="deltalake", app_id="other").open(
            SinkContext(spark, df.schema, "main", str(tmp_path / "ck")))


def test_auto_engine_falls_back_to_deltalake_without_sparks_delta(
    spark: Any, tmp_path: Path
) -> None:
    df = spark.createDataFrame([("a", 1)], "k string, v long")
    sink = DeltaSink(str(tmp_path / "t"))
    sink.open(SinkContext(spark, df.schema, "main", None))
    assert sink.resolved_engine == "deltalake"
    with pytest.raises(ValueError, match="needs Spark's Delta"):
        DeltaSink(table="cat.db.t").open(SinkContext(spark, df.schema, "main", None))


def test_write_stream_format_delta_writes_main_and_late_tables(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", TUMBLING_BATCHES)
    query = (
        _tumbling(spark, tmp_path / "in").writeStream.format("delta")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .outputMode("append").partitionBy("k").trigger(availableNow=True)
        .sideOutput(LATE, f"delta:{tmp_path / 'late'}")  # the short form flinkwin-job takes
        .start(str(tmp_path / "main"))
    )
    query.awaitTermination()
    assert sorted((r["k"], r["v"]) for r in _rows(tmp_path / "main")) == sorted(WINDOW_SUMS)
    assert DeltaTable(str(tmp_path / "main")).metadata().partition_columns == ["k"]
    assert _rows(tmp_path / "late") == [ev("a", 500, 100)]
    ids = json.loads((tmp_path / "ck" / "flinkwin" / "sinks.json").read_text())["app_ids"]
    assert DeltaTable(str(tmp_path / "late")).transaction_version(ids["late"]) == 2


def test_a_sink_string_means_the_same_sink_everywhere(tmp_path: Path) -> None:
    """``start()``, ``writeStream...sideOutput()`` and ``flinkwin-job --sink`` read one set of
    short forms: ``delta:<path>`` and ``delta-table:<name>`` are Delta sinks in each."""
    from flinkwin.job.config import sink_from_spec
    from flinkwin.sinks import as_sink

    for make in (as_sink, sink_from_spec):
        sink = make(f"delta:{tmp_path / 'late'}")
        assert isinstance(sink, DeltaSink) and sink.path == str(tmp_path / "late")
        table = make("delta-table:cat.db.late")
        assert isinstance(table, DeltaSink) and table.table == "cat.db.late"
    assert as_sink("delta:/t", delta_engine="deltalake").engine == "deltalake"
    with pytest.raises(ValueError, match="unknown sink 'delta'"):
        as_sink("delta")
