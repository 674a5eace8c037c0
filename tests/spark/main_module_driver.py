"""A flinkwin streaming query run as its own driver process, as a user's script: every user piece
(accumulator, aggregate and window functions, trigger, evictor, key selector, timestamp
assigner, element class) is defined here, in ``__main__``, which the Python workers cannot
import. Run by ``test_user_code_lifecycle.py`` twice on the same checkpoint: the second run
restarts from the state the first one left (accumulators and elements of ``__main__`` classes).

``--query aggregate``: 10 s tumbling windows per user, a rich ``AggregateFunction`` (its
accumulator a ``__main__`` class) with a ``ProcessWindowFunction``, a trigger and key selector
of ``__main__`` classes. ``--query evicting``: elements mapped to a ``__main__`` class (no
declared type: pickled), an evictor and a ``ProcessWindowFunction``. The rich functions record
``open``/``close`` calls as lines in files under ``--log``.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from typing import Any

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.evictors.base import Evictor
from flinkwin.functions import AggregateFunction, KeySelector, ProcessWindowFunction
from flinkwin.timestamps import TimestampAssigner
from flinkwin.triggers import EventTimeTrigger
from flinkwin.watermark import WatermarkStrategy

SCHEMA = "user string, ts long, v long"


def _record(log: str, event: str, subtask: int) -> None:
    with open(os.path.join(log, f"{event}-{os.getpid()}-{subtask}"), "a") as f:
        f.write(f"{event}\n")


@dataclass
class Acc:
    total: int = 0
    count: int = 0


class SumCount(AggregateFunction):
    def __init__(self, log: str) -> None:
        self.log = log
        self.subtask = -1

    def open(self, runtime_context: Any) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()
        _record(self.log, "open", self.subtask)

    def close(self) -> None:
        _record(self.log, "close", self.subtask)

    def create_accumulator(self) -> Acc:
        return Acc()

    def add(self, value: Any, acc: Acc) -> Acc:
        return Acc(acc.total + value.v, acc.count + 1)

    def get_result(self, acc: Acc) -> tuple[int, int]:
        return acc.total, acc.count

    def merge(self, a: Acc, b: Acc) -> Acc:
        return Acc(a.total + b.total, a.count + b.count)


class Label(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for total, count in elements:
            yield json.dumps([key, context.window().start, total, count])


class ByUser(KeySelector):
    def get_key(self, value: Any) -> Any:
        return value[0] if isinstance(value, tuple) else value.user


class TsOf(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value.ts


class AtWatermark(EventTimeTrigger):
    """Flink's event-time trigger, as a user's subclass."""


@dataclass
class Click:
    user: str
    ts: int
    v: int


class KeepLastTwo(Evictor):
    def evict_before(self, elements: Any, size: int, window: Any, ctx: Any) -> None:
        items = list(elements)
        for item in items[:-2]:
            elements.remove(item)

    def evict_after(self, elements: Any, size: int, window: Any, ctx: Any) -> None:
        pass


class Listing(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield json.dumps([key, context.window().start, sorted(c.v for c in elements)])


def pipeline(spark: Any, source: str, query: str, log: str) -> Any:
    clicks = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(TsOf())
    windows = TumblingEventTimeWindows.of(Time.seconds(10))
    stream = DataStream(clicks)
    if query == "aggregate":
        return (
            stream.assign_timestamps_and_watermarks(strategy).key_by(ByUser()).window(windows)
            .trigger(AtWatermark()).aggregate(SumCount(log), Label())
        )
    return (
        stream.map(lambda r: Click(r.user, r.ts, r.v))
        .assign_timestamps_and_watermarks(strategy).key_by(ByUser()).window(windows)
        .evictor(KeepLastTwo()).process(Listing())
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--input", "--checkpoint", "--output", "--log", "--query"):
        parser.add_argument(name, required=True)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("flinkwin-main-module-driver")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.flinkwin.state.key", "a test key of the main-module driver")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    def collect(df: Any, batch_id: int) -> None:
        with open(args.output, "a") as f:
            for row in df.collect():
                f.write(f"{row[0]}\n")

    query = pipeline(spark, args.input, args.query, args.log).start(
        main=collect, checkpoint_location=args.checkpoint, trigger={"availableNow": True},
    )
    query.awaitTermination()
    print("BATCHES", len(query.recentProgress), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
