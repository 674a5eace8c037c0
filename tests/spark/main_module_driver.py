"""A flinkwin streaming query run as its own driver process, as a user's script: every user piece
(accumulator, aggregate and window functions, trigger, evictor, key selector, timestamp
assigner, element class) is defined here, in ``__main__``, which the Python workers cannot
import. Run by ``test_user_code_lifecycle.py`` twice on the same checkpoints: the second run
restarts from the state the first one left (accumulators and elements of ``__main__`` classes).
``--query`` names one query or several, comma-separated, run one after the other in the one
driver (each driver run starts a JVM: the tests' main cost); query ``q`` writes its rows to
``<--output>/q.txt`` and keeps its checkpoint in ``<--checkpoint>/q``.

``--query aggregate``: 10 s tumbling windows per user, a rich ``AggregateFunction`` (its
accumulator a ``__main__`` class) with a ``ProcessWindowFunction``, a trigger and key selector
of ``__main__`` classes. ``--query evicting``: elements mapped to a ``__main__`` class (no
declared type: pickled), an evictor and a ``ProcessWindowFunction``. ``--query process``: a
graph stage, a ``KeyedProcessFunction`` holding no state (its key group's state is removed
after every batch, so every batch builds the key group's operators anew). ``--query failing``
and ``--query failing_window``: ``process`` and ``aggregate``, failing on the third file's
elements (``failing_window`` on user a's only, 3 s into its call). The rich functions record
``open``/``close`` calls as lines in files under ``<--log>/<query>`` (one file per worker
process and subtask).
``--wait-for-close``: after the query, wait (up to 20 s) until the idle workers closed every
opened subtask; ``--idle-close`` sets ``spark.flinkwin.subtask.closeAfterIdleSeconds``.
``--stop``: run each query with a processing-time trigger until its input is processed, then
``stop()`` it (or wait for it to fail), and print how many seconds after that every opened
subtask was closed (``CLOSED <query> <seconds>``, -1 if not within 15 s).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.evictors.base import Evictor
from flinkwin.functions import (
    AggregateFunction,
    KeyedProcessFunction,
    KeySelector,
    ProcessWindowFunction,
)
from flinkwin.timestamps import TimestampAssigner
from flinkwin.triggers import EventTimeTrigger
from flinkwin.types import Types
from flinkwin.watermark import WatermarkStrategy

SCHEMA = "user string, ts long, v long"


def _record(log: str, event: str, subtask: int) -> None:
    with open(os.path.join(log, f"{event}-{os.getpid()}-{subtask}"), "a") as f:
        f.write(f"{event}\n")


@dataclass
class Acc:
    total: int = 0
    count: int = 0


class Recorded:
    """Records its function's open and close in ``log`` (per process and subtask); fails from
    the element with value ``fail_from`` on, where the function says so."""

    def __init__(self, log: str, fail_from: int | None = None) -> None:
        self.log = log
        self.fail_from = fail_from
        self.subtask = -1

    def open(self, runtime_context: Any) -> None:
        self.subtask = runtime_context.get_index_of_this_subtask()
        _record(self.log, "open", self.subtask)

    def close(self) -> None:
        _record(self.log, "close", self.subtask)


class SumCount(Recorded, AggregateFunction):
    def create_accumulator(self) -> Acc:
        return Acc()

    def add(self, value: Any, acc: Acc) -> Acc:
        if self.fail_from is not None and value.v >= self.fail_from and value.user == "a":
            # user b's call of the batch ends first (Spark kills the Python worker of a task
            # still running when the job fails, which then closes nothing)
            time.sleep(3)
            raise ValueError(f"a failing query: element {value.v}")
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


class Numbering(Recorded, KeyedProcessFunction):
    """Emits each element's value with its key; records its lifecycle like ``SumCount``."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        if self.fail_from is not None and value.v >= self.fail_from:
            raise ValueError(f"a failing query: element {value.v}")
        yield json.dumps([ctx.get_current_key(), value.v])


class Listing(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield json.dumps([key, context.window().start, sorted(c.v for c in elements)])


def pipeline(spark: Any, source: str, query: str, log: str) -> Any:
    clicks = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(TsOf())
    windows = TumblingEventTimeWindows.of(Time.seconds(10))
    stream = DataStream(clicks)
    os.makedirs(log, exist_ok=True)
    if query in ("process", "failing"):
        fail_from = 20 if query == "failing" else None
        return (
            stream.assign_timestamps_and_watermarks(strategy).key_by(ByUser())
            .process(Numbering(log, fail_from), output_type=Types.STRING())
        )
    if query in ("aggregate", "failing_window"):
        fail_from = 20 if query == "failing_window" else None
        return (
            stream.assign_timestamps_and_watermarks(strategy).key_by(ByUser()).window(windows)
            .trigger(AtWatermark())
            .aggregate(SumCount(log, fail_from), Label(), output_type=Types.STRING())
        )
    return (
        stream.map(lambda r: Click(r.user, r.ts, r.v))
        .assign_timestamps_and_watermarks(strategy).key_by(ByUser()).window(windows)
        .evictor(KeepLastTwo()).process(Listing(), Types.STRING())
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    for name in ("--input", "--checkpoint", "--output", "--log", "--query"):
        parser.add_argument(name, required=True)
    parser.add_argument("--wait-for-close", action="store_true")
    parser.add_argument("--stop", action="store_true")
    parser.add_argument("--idle-close", default="60")
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("flinkwin-main-module-driver")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.flinkwin.state.secret", "a test key of the main-module driver")
        .config("spark.flinkwin.subtask.closeAfterIdleSeconds", args.idle_close)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    for name in args.query.split(","):
        output = os.path.join(args.output, f"{name}.txt")

        def collect(df: Any, batch_id: int, output: str = output) -> None:
            with open(output, "a") as f:
                for row in df.collect():
                    f.write(f"{row[0]}\n")

        log = os.path.join(args.log, name)
        query = pipeline(spark, args.input, name, log).start(
            main=collect, checkpoint_location=os.path.join(args.checkpoint, name),
            trigger={"processingTime": "0.2 seconds"} if args.stop else {"availableNow": True},
        )
        if args.stop:
            _stop(query, name, log)
        else:
            query.awaitTermination()
        print("BATCHES", name, len(query.recentProgress), flush=True)
        if args.wait_for_close:
            _wait_for_close(log, 30)
    spark.stop()


def _stop(query: Any, name: str, log: str) -> None:
    """Process the input, stop the query (or see it fail), print when every subtask closed."""
    try:
        query.processAllAvailable()
        query.stop()
    except Exception as exc:  # the failing query
        print("FAILED", name, type(exc).__name__, flush=True)
        with contextlib.suppress(Exception):  # the failure, again
            query.awaitTermination()
    ended = time.monotonic()
    closed = _wait_for_close(log, 15)
    print("CLOSED", name, round(time.monotonic() - ended, 2) if closed else -1, flush=True)


def _wait_for_close(log: str, seconds: float) -> bool:
    """Until every subtask a worker process opened is closed (once the query stopped or the
    stage is idle for longer than ``--idle-close``), or ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _lines(log, "open") == _lines(log, "close"):
            return True
        time.sleep(0.1)
    return False


def _lines(log: str, event: str) -> dict[str, int]:
    counts = {}
    for name in os.listdir(log):
        if name.startswith(f"{event}-"):
            with open(os.path.join(log, name)) as f:
                counts[name[len(event) + 1:]] = len(f.readlines())
    return counts


if __name__ == "__main__":
    main()
