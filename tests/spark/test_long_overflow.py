"""Long overflow on Spark follows ``spark.sql.ansi.enabled``, read when the pipeline is built:
an error naming the key and window under ANSI (Spark 4's default), Flink's Java wrap-around
otherwise; never an encoder crash."""

from __future__ import annotations

from typing import Any

import pytest
from spark_scenarios import watermark

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.longs import wrap
from flinkwin.time import MAX_LONG

SCHEMA = "k string, ts long, v long"
T0 = 1_700_000_123_457


def _sum(
    spark: Any, rows: list[dict[str, Any]], size: Any, offset: Any = 0, **kwargs: Any
) -> Any:
    stream = DataStream(spark.createDataFrame(rows, SCHEMA))
    return (
        stream.assignTimestampsAndWatermarks(watermark(0))
        .keyBy("k")
        .window(TumblingEventTimeWindows.of(size, offset))
        .sum("v", **kwargs)
        .toDF()
    )


def test_spark_4_defaults_to_the_error_policy(spark: Any) -> None:
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    stage = (
        DataStream(spark.createDataFrame([{"k": "a", "ts": T0, "v": 1}], SCHEMA))
        .assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")._stage([])
    )
    assert stage.summary["long overflow"].startswith("error")


def test_sum_overflow_follows_ansi(spark: Any, ansi: Any) -> None:
    rows = [{"k": "a", "ts": T0, "v": MAX_LONG}, {"k": "a", "ts": T0 + 1, "v": 2}]
    ansi(False)
    assert [r.v for r in _sum(spark, rows, Time.seconds(10)).collect()] == [wrap(MAX_LONG + 2)]
    ansi(True)
    failing = _sum(spark, rows, Time.seconds(10))
    message = r"key 'a', window TimeWindow.*long overflow: sum of field 'v'"
    with pytest.raises(Exception, match=message):
        failing.collect()


def test_window_end_past_max_long_follows_ansi(spark: Any, ansi: Any) -> None:
    # event time stops at ±4e15 ms on Spark (see test_event_time_range.py): a window end passes
    # MAX_LONG through the window size
    rows = [{"k": "a", "ts": 2000, "v": 1}, {"k": "a", "ts": 2500, "v": 2}]
    size = MAX_LONG - 10
    ansi(False)  # Flink's window [1000, MIN + 989): fires at the end of input
    assert [(r.ts, r.v) for r in _sum(spark, rows, size, 1000).collect()] == [(2000, 3)]
    ansi(True)
    failing = _sum(spark, rows, size, 1000)
    with pytest.raises(Exception, match=r"key 'a': long overflow: end of the window"):
        failing.collect()
