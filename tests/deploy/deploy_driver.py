"""Runs one restartable flinkwin streaming pipeline on the Spark given on the command line and
writes what its sinks hold as JSON: the deployment tests run it on ``local[2]``, on a
Spark Connect server and on a standalone cluster and compare the three files.

    python deploy_driver.py --master local[2] WORK OUT.json
    python deploy_driver.py --master spark://127.0.0.1:7077 WORK OUT.json
    python deploy_driver.py --remote sc://127.0.0.1:15002 WORK OUT.json

The input arrives in three steps (JSON files, one per micro-batch under ``maxFilesPerTrigger=1``),
out of order and with late elements; after each step the query runs under ``availableNow`` to
the end and stops, and the next step starts a new query (a restarted job) from the same
checkpoint. The first two steps run under ``availableNow``; the last under a ``processingTime``
trigger, drained (every file read, no batch due) and stopped, as a continuous job is. The
pipeline is a keyed tumbling window keyed by a ``KeySelector`` defined in this script (pickled
by value, as a notebook's classes are) with a user ``ReduceFunction`` +
``ProcessWindowFunction`` (from the module ``deploy_functions``, shipped to the Python
workers), allowed lateness (re-firing) and the late side output; the main output goes to a
Delta table (delta-rs), the late output to parquet files.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "spark"))

from batch_files import write_batches  # noqa: E402
from deploy_functions import LabelWindow, SumValues  # noqa: E402

from flinkwin import (  # noqa: E402
    DataStream,
    DeltaSink,
    Duration,
    KeySelector,
    OutputTag,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.spark import FileSink  # noqa: E402

SCHEMA = "k string, ts long, v long"
OUTPUT = "k string, window_start long, window_end long, total long, watermark long"
LATE = OutputTag("late")


def ev(k: str, ts: int, v: int) -> dict[str, Any]:
    return {"k": k, "ts": ts, "v": v}


# Steps of micro-batches (one file each). Tumbling 10 s, out-of-orderness 2 s, lateness 5 s.
# Spark moves the watermark at the end of a batch: each batch is judged by the one before.
STEPS: list[list[list[dict[str, Any]]]] = [
    [
        [ev("a", 1000, 1), ev("b", 2000, 10), ev("a", 3000, 2), ev("c", 4000, 7)],
        [ev("a", 12500, 4), ev("a", 9000, 3), ev("b", 8000, 5)],  # -> watermark 10.5 s
    ],                                                               # [0, 10) fires
    [   # restart; within lateness, [0, 10) re-fires for a and c
        [ev("a", 7000, 100), ev("c", 500, 1000), ev("b", 18000, 1), ev("d", 19000, 2)],
        # watermark 17 s: [0, 10) is past its lateness, these two are late (side output)
        [ev("a", 2000, 10000), ev("b", 11000, 20), ev("d", 5000, 9)],
    ],
    [   # restart; watermark 38 s fires [10, 20) and [20, 30)
        [ev("c", 25000, 3), ev("a", 13000, 30), ev("d", 40000, 1)],
    ],
]


class KeyOfElement(KeySelector):
    """A user class defined in the driver's ``__main__``, as in a notebook: cloudpickle ships
    it by value to the Python workers (executors, Connect's foreachBatch worker)."""

    def get_key(self, value: Any) -> str:
        return str(value["k"])


def build(df: Any) -> Any:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_seconds(2)
    ).with_timestamp_assigner("ts")
    return (
        DataStream(df)
        .assign_timestamps_and_watermarks(strategy)
        .key_by(KeyOfElement(), key_type=Types.STRING())
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .allowed_lateness(Time.seconds(5))
        .side_output_late_data(LATE)
        .reduce(SumValues(), LabelWindow(), output_schema=OUTPUT)
    )


def session(args: argparse.Namespace) -> Any:
    from pyspark.sql import SparkSession

    functions = str(HERE / "deploy_functions.py")
    if args.remote:
        spark = SparkSession.builder.remote(args.remote).getOrCreate()
        spark.addArtifacts(functions, pyfile=True)
        # flinkwin's query is a foreachBatch, and Connect's foreachBatch worker does not see
        # addArtifacts' Python files (No module named 'deploy_functions'): the user module
        # travels by value inside the pickled function, as a notebook's classes do.
        import deploy_functions
        from pyspark import cloudpickle

        cloudpickle.register_pickle_by_value(deploy_functions)
    else:
        builder = (
            SparkSession.builder.master(args.master)
            .appName("flinkwin-deploy-test")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
        )
        if args.master.startswith("spark://"):
            builder = (
                builder.config("spark.executor.memory", "512m")
                .config("spark.executor.cores", "1")
                .config("spark.cores.max", "2")
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
            )
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("ERROR")
        spark.sparkContext.addPyFile(functions)
    return spark


# Spark Connect starts the foreachBatch Python worker when the query starts and gives it a fixed
# few seconds to connect back; on a heavily loaded machine that can pass. Nothing ran yet then.
WORKER_START_TIMEOUT = "Timed out while waiting for the Python worker to connect back"
START_ATTEMPTS = 12


def start(pipeline: Any, main_path: Path, late_path: Path, checkpoint: Path,
          trigger: dict[str, Any]) -> Any:
    for attempt in range(START_ATTEMPTS):
        try:
            return pipeline.start(
                main=DeltaSink(str(main_path), engine="deltalake"),
                side_outputs={LATE: FileSink(str(late_path))},
                checkpoint_location=str(checkpoint),
                trigger=trigger,
            )
        except Exception as exc:
            if WORKER_START_TIMEOUT not in str(exc) or attempt == START_ATTEMPTS - 1:
                raise
            print(f"retrying the query's start: {WORKER_START_TIMEOUT}", file=sys.stderr)
    raise AssertionError("unreachable")


def drain(query: Any, quiet_s: float = 5.0, limit_s: float = 600.0) -> None:
    """Under a processingTime trigger: wait until every file is read and no batch ran for
    ``quiet_s`` (a no-data batch that fires windows at the new watermark runs one trigger
    after the last data batch), then stop the query."""
    query.processAllAvailable()
    deadline = time.monotonic() + limit_s
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        progress = query.lastProgress
        batch = None if progress is None else progress["batchId"]
        if batch != last or query.status["isTriggerActive"]:
            last, since = batch, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            query.stop()
            return
        time.sleep(0.5)
    query.stop()
    raise SystemExit(f"the processing-time query did not go quiet within {limit_s:.0f} s")


def rows(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every row a sink holds, in a fixed order (duplicates kept: a re-firing shows as a
    second row)."""
    return sorted(found, key=lambda r: json.dumps(r, sort_keys=True))


def delta_rows(path: Path) -> list[dict[str, Any]]:
    import deltalake

    return rows(deltalake.DeltaTable(str(path)).to_pyarrow_table().to_pylist())


def connect_limits(spark: Any, pipeline: Any, work: Path) -> dict[str, str]:
    """The errors flinkwin gives for what Spark Connect lacks (see docs/deployment.md)."""
    from flinkwin.spark import MemorySink
    from flinkwin.spark.checkpoint import CheckpointMetadataError, CheckpointStore

    found: dict[str, str] = {}
    try:
        query = pipeline.start(main=MemorySink("rows"), checkpoint_location=str(work / "mem-ck"),
                               trigger={"availableNow": True})
        query.stop()
    except ValueError as exc:
        found["memory_sink"] = str(exc)
    try:
        CheckpointStore(spark, "s3a://bucket/checkpoint").read_json("probe")
    except CheckpointMetadataError as exc:
        found["remote_checkpoint"] = str(exc)
    return found


def connect_sizing(spark: Any, source: Path, work: Path) -> dict[str, Any]:
    """Spark's own ``writeStream`` on ``toDF()`` in a Connect session at Spark's default 200
    shuffle partitions: the state partitions the stage ran in, the session's settings after the
    start, and the warnings of a DataFrame derived from ``toDF()``."""
    import warnings

    from flinkwin.spark.sizing import STATE_PARTITIONS

    shuffle = "spark.sql.shuffle.partitions"
    before = spark.conf.get(shuffle)
    spark.conf.set(shuffle, "200")
    try:
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
        df = build(stream).toDF()
        query = (df.writeStream.format("noop").option("checkpointLocation", str(work / "sized"))
                 .trigger(availableNow=True).start())
        after = {"shuffle": spark.conf.get(shuffle),
                 "state": spark.conf.get(STATE_PARTITIONS, None)}
        query.awaitTermination(600)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df.select("k")
        return {
            "state_partitions": [o["numShufflePartitions"]
                                 for o in query.lastProgress["stateOperators"]],
            "session_after": after,
            "derived_warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
        }
    finally:
        spark.conf.set(shuffle, before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--master", help="classic session's master (local[2], spark://...)")
    where.add_argument("--remote", help="Spark Connect URL (sc://host:port)")
    parser.add_argument("work", type=Path, help="a fresh directory for input, output, checkpoint")
    parser.add_argument("out", type=Path, help="where to write the result JSON")
    args = parser.parse_args()
    spark = session(args)
    work = args.work.resolve()
    source, main_path, late_path = work / "in", work / "main", work / "late"
    executors: set[str] = set()
    limits: dict[str, str] = {}
    sizing: dict[str, Any] = {}
    for step in range(len(STEPS)):
        write_batches(source, STEPS[step], first=sum(len(s) for s in STEPS[:step]))
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
        last = step == len(STEPS) - 1
        trigger = {"processingTime": "1 second"} if last else {"availableNow": True}
        query = start(build(df), main_path, late_path, work / "checkpoint", trigger)
        if last:
            drain(query)
        query.awaitTermination(600)
        if query.isActive:
            query.stop()
            raise SystemExit(f"step {step}: the query did not finish within 600 s")
        if query.exception() is not None:
            raise SystemExit(f"step {step}: the query failed: {query.exception()}")
    if args.master and args.master.startswith("spark://"):
        # The driver and every executor that registered (block manager addresses).
        tracker = spark.sparkContext._jsc.sc().statusTracker()
        executors = {e.host() + ":" + str(e.port()) for e in tracker.getExecutorInfos()}
    if args.remote:
        limits = connect_limits(spark, build(spark.readStream.schema(SCHEMA).json(str(source))),
                                work)
        sizing = connect_sizing(spark, source, work)
    result = {
        "connect_sizing": sizing,
        "connect_limits": limits,
        "main": delta_rows(main_path),
        "late": rows([r.asDict() for r in spark.read.parquet(str(late_path)).collect()]),
        "executors": sorted(executors),
    }
    args.out.write_text(json.dumps(result, sort_keys=True, indent=1, default=str))
    spark.stop()


if __name__ == "__main__":
    main()
