"""Flink's HotItems example (the top N items by page views per sliding hour, every 5 minutes),
ported to flinkwin as a PyFlink user would write it, and runnable as a user's script:

    python hot_items_driver.py UserBehavior.csv

reads the CSV (``userId,itemId,categoryId,behavior,timestamp``, timestamps in seconds, as
Flink's ``UserBehavior.csv``) and prints each window's top 3 with ``print()``. Run as a script,
every user class below is ``__main__``'s, which Spark's Python workers cannot import
(``test_process_functions_spark.py`` runs it so); imported, the same classes serve the in-process
tests.

The pipeline is Flink's: ``filter(pv)`` after the timestamps, ``keyBy(itemId)
.window(SlidingEventTimeWindows.of(60 min, 5 min)).aggregate(CountAgg, WindowResultFunction)``,
then ``keyBy(windowEnd).process(TopNHotItems(3))``, whose ``ListState`` collects a window's
counts and whose event-time timer at ``windowEnd + 1`` prints them sorted.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from typing import Any

from flinkwin import (
    AggregateFunction,
    KeyedProcessFunction,
    ListStateDescriptor,
    Row,
    SlidingEventTimeWindows,
    Time,
    TimestampAssigner,
    Types,
    WatermarkStrategy,
    WindowFunction,
)
from flinkwin.datastream import DataStream

USER_BEHAVIOR = "userId long, itemId long, categoryId int, behavior string, timestamp long"
RULE = "===================================="


def java_timestamp(millis: int) -> str:
    """``new java.sql.Timestamp(millis).toString()`` in UTC: ``2017-11-26 09:05:00.0``."""
    text = datetime.fromtimestamp(millis // 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    fraction = f"{millis % 1000:03d}".rstrip("0") or "0"
    return f"{text}.{fraction}"


class SecondsToMillis(TimestampAssigner):
    """HotItems' ``AscendingTimestampExtractor``: ``userBehavior.timestamp * 1000``."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value.timestamp * 1000


class CountAgg(AggregateFunction):
    """Counts the views: ``createAccumulator`` 0, ``add`` +1."""

    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class WindowResultFunction(WindowFunction):
    """``ItemViewCount.of(itemId, window.getEnd(), count)``."""

    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        yield Row(itemId=key, windowEnd=window.end, viewCount=next(iter(inputs)))


class TopNHotItems(KeyedProcessFunction):
    """HotItems' ``TopNHotItems``: a window's counts in ``ListState`` until the timer at
    ``windowEnd + 1`` sorts them (stable, by views descending) and emits the top N."""

    def __init__(self, top_size: int) -> None:
        self.top_size = top_size
        self.item_state: Any = None

    def open(self, runtime_context: Any) -> None:
        self.item_state = runtime_context.get_list_state(
            ListStateDescriptor("itemState-state", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value: Any, ctx: Any) -> None:
        self.item_state.add(value)
        ctx.timer_service().register_event_time_timer(value.windowEnd + 1)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        all_items = list(self.item_state.get())
        self.item_state.clear()
        all_items.sort(key=lambda item: -item.viewCount)
        result = [RULE, f"时间: {java_timestamp(timestamp - 1)}"]
        for i, item in enumerate(all_items[: self.top_size]):
            result.append(f"No{i + 1}:  商品ID={item.itemId}  浏览量={item.viewCount}")
        result.append(RULE)
        yield "\n".join(result) + "\n\n"


def hot_items(user_behavior: DataStream, top_size: int = 3) -> Any:
    """The HotItems job over a stream of ``USER_BEHAVIOR`` rows."""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        SecondsToMillis())
    pv = (user_behavior.assign_timestamps_and_watermarks(strategy)
          .filter(lambda behavior: behavior.behavior == "pv"))
    windowed = (
        pv.key_by("itemId")
        .window(SlidingEventTimeWindows.of(Time.minutes(60), Time.minutes(5)))
        .aggregate(CountAgg(), WindowResultFunction(),
                   output_type="itemId long, windowEnd long, viewCount long")
    )
    return windowed.key_by("windowEnd").process(TopNHotItems(top_size), Types.STRING())


def main(csv_path: str) -> None:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("HotItems")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    user_behavior = DataStream(spark.read.schema(USER_BEHAVIOR).csv(csv_path))
    hot_items(user_behavior).print()
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
