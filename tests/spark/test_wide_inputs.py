"""Wide inputs: a stream of many columns runs as a narrow one does.

flinkwin's checks as a row enters a stage (a null key, an event time out of range) describe the
whole row in their error messages. Such an expression names every column; a projection that
then renamed those columns (Spark renames each micro-batch's relation so; a graph renames its
sources) made Spark's constraint propagation copy its constraint once per renamed column: 2^n
constraints, out of the default 1 GB driver heap at 16 to 20 columns, before the first
micro-batch ran. The row's description is now nondeterministic, so Spark infers no constraint
from it (:func:`flinkwin.spark.timestamps.described_row`). These tests read raw 24-column JSON
streams (the timestamp the second column, as a user's file has it) through Spark's own
``toDF().writeStream``, over two micro-batches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import watermark, write_batches

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream

COLUMNS = [f"c{i}" for i in range(22)]
SCHEMA = "k string, ts long, " + ", ".join(f"{c} long" for c in COLUMNS)
#: past 2^53: exact only if no value goes through a double
BIG = 2**53 + 1


def _row(k: str, ts: int, i: int) -> dict[str, Any]:
    return {"k": k, "ts": ts, **{c: BIG + i * 100 + j for j, c in enumerate(COLUMNS)}}


def _stream(spark: Any, directory: Path) -> DataStream:
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(directory))
    return DataStream(df).assignTimestampsAndWatermarks(watermark(0))


def _collect(spark: Any, result: Any, checkpoint: Path, name: str) -> list[tuple[Any, ...]]:
    query = (result.toDF().writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination()
    return sorted(tuple(r) for r in spark.table(name).collect())


@pytest.mark.parametrize("shape", ["chain", "union"])
def test_a_stream_of_24_columns_runs_through_to_df_write_stream(
    spark: Any, tmp_path: Path, shape: str
) -> None:
    write_batches(tmp_path / "a", [[_row("a", 1000, 1)], [_row("a", 12000, 2)]])
    write_batches(tmp_path / "b", [[_row("a", 1500, 3)], [_row("a", 13000, 4)]])
    stream = _stream(spark, tmp_path / "a")
    if shape == "union":
        stream = stream.union(_stream(spark, tmp_path / "b"))
    result = stream.keyBy("k").window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("c0")
    got = _collect(spark, result, tmp_path / "ck", f"wide_{shape}")
    # the window [0, 10 s) fires when 12000 (and 13000) pass it; sum keeps the first element's
    # other fields, as Flink's
    total = BIG + 100 if shape == "chain" else 2 * BIG + 400
    assert got == [("a", 1000, total, *(BIG + 100 + j for j in range(1, len(COLUMNS))))]
