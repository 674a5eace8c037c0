"""The two flinkwin queries run as one driver process by ``test_crash_recovery.py``.

Windowed sums of out-of-order clicks, late clicks to a side output; both outputs go to Delta
tables (delta-rs). The ``append`` query writes its main output with a ``DeltaSink``; the
``upsert`` query also fires its windows early (every 2 s of event time), carries the firing
columns and writes its main output with a ``DeltaUpsertSink``. Both read the same files, each
from its own checkpoint under ``--work/<query>``, side by side in one Spark session: a SIGKILL
of the driver interrupts both, and one JVM start serves both.
``--kill QUERY:BATCH:PHASE`` makes the driver SIGKILL its whole process group (Python, the JVM,
the Python workers: a lost driver machine) at one point of one batch of one of the queries:

* ``before-main``: in foreachBatch, before the main table's commit;
* ``after-main``: after the main table's commit, before the late table's;
* ``after-side``: after both commits, before Spark writes the batch to its commit log.

The kills come from the sinks wrapped here, not from flinkwin: the library has no test hooks.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any

from flinkwin import ContinuousEventTimeTrigger, OutputTag, Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.sinks import DeltaSink, DeltaUpsertSink
from flinkwin.watermark import WatermarkStrategy

SCHEMA = "user string, ts long, v long"
LATE = OutputTag("late")
PHASES = ("before-main", "after-main", "after-side")
QUERIES = ("append", "upsert")


def pipeline(spark: Any, source: str, upsert: bool = False) -> Any:
    """The query under test: 10 s tumbling sums per user, 3 s out-of-orderness, 4 s allowed
    lateness (late firings), later clicks to the side output; ``upsert``: early firings every
    2 s too, with firing columns."""
    clicks = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    strategy = WatermarkStrategy.forBoundedOutOfOrderness(3000).withTimestampAssigner("ts")
    windows = (
        DataStream(clicks).assignTimestampsAndWatermarks(strategy).keyBy("user")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    if upsert:
        windows = windows.trigger(ContinuousEventTimeTrigger.of(Time.seconds(2)))
    return (
        windows.allowedLateness(Time.seconds(4))
        .sideOutputLateData(LATE)
        .sum("v", with_window=True, with_firing=upsert)
    )


def _die() -> None:
    sys.stdout.flush()
    os.killpg(os.getpgrp(), signal.SIGKILL)


class _Kills:
    """Kills the driver just before and/or after the sink writes one batch."""

    def __init__(self, path: str, *, batch: int, before: bool, after: bool) -> None:
        super().__init__(path, engine="deltalake")  # type: ignore[call-arg]
        self.kill_batch, self.before, self.after = batch, before, after

    def write_batch(self, df: Any, batch_id: int) -> None:
        if batch_id == self.kill_batch and self.before:
            _die()
        super().write_batch(df, batch_id)  # type: ignore[misc]
        if batch_id == self.kill_batch and self.after:
            _die()


class KillingDeltaSink(_Kills, DeltaSink):
    """A DeltaSink that kills the driver just before and/or after writing one batch."""


class KillingDeltaUpsertSink(_Kills, DeltaUpsertSink):
    """A DeltaUpsertSink that kills the driver just before and/or after writing one batch."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", required=True)
    parser.add_argument("--work", required=True, help="<work>/<query>/{ck,main,late}")
    parser.add_argument("--kill", default=None, help="QUERY:BATCH:PHASE")
    args = parser.parse_args()
    target, batch, phase = "", -1, ""
    if args.kill:
        target, text, phase = args.kill.split(":")
        batch = int(text)
        assert target in QUERIES and phase in PHASES, args.kill

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("flinkwin-crash-driver")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    queries = []
    for name in QUERIES:
        upsert = name == "upsert"
        at = batch if name == target else -1
        folder = os.path.join(args.work, name)
        main_kind = KillingDeltaUpsertSink if upsert else KillingDeltaSink
        main_sink = main_kind(os.path.join(folder, "main"), batch=at,
                              before=phase == "before-main", after=False)
        late_sink = KillingDeltaSink(os.path.join(folder, "late"), batch=at,
                                     before=phase == "after-main", after=phase == "after-side")
        queries.append(pipeline(spark, args.input, upsert).start(
            main=main_sink, side_outputs={LATE: late_sink},
            checkpoint_location=os.path.join(folder, "ck"), trigger={"availableNow": True},
        ))
    for query in queries:
        query.awaitTermination()
    print("DONE", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
