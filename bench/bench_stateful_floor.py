"""The floor under any applyInPandasWithState pipeline: a no-op stateful stage vs native.

Runs, on the same input as ``bench/bench_spark.py`` (5M events, 10k keys, 10 parquet files read
one per micro-batch), the stage shape flinkwin compiles to (helper watermark column, 16 key
groups, ``EventTimeTimeout``) with a Python function that only counts its rows, against the native
``groupBy(window(...), key).agg(sum)``. The ratio is the best any implementation of that stage
could reach on this machine.

Usage::

    .venv/bin/python bench/bench_stateful_floor.py [--data DIR] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from bench_spark import SCHEMA, generate  # noqa: E402

SHIFT_MS = 36500 * 86_400_000


def count_rows(key: Any, frames: Any, state: Any) -> Any:
    import pandas as pd

    n = sum(len(f) for f in frames)
    state.update((n,))
    state.setTimeoutTimestamp(max(state.getCurrentWatermarkMs(), 1))
    yield pd.DataFrame({"n": [n]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="input dir (generated there if empty)")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    data = args.data or tempfile.mkdtemp(prefix="fw-floor-")
    if not any(p.endswith(".parquet") for p in os.listdir(data)):
        generate(data, 5_000_000, 10_000, 10, 600_000, 42)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    def source() -> Any:
        return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(data)

    def sink(df: Any, batch_id: int) -> None:
        df.count()

    def start(out: Any) -> Any:
        writer = out.writeStream.outputMode("append").foreachBatch(sink)
        return writer.option("checkpointLocation", tempfile.mkdtemp()).trigger(
            availableNow=True
        ).start()

    def noop_stage() -> Any:
        staged = (
            source()
            .withColumn("_ts", F.unix_millis("ts"))
            .withColumn("_wm", F.timestamp_millis(F.col("_ts") + F.lit(SHIFT_MS)))
            .withWatermark("_wm", f"{SHIFT_MS + 5000} milliseconds")
            .withColumn("_kg", F.pmod(F.hash("user"), F.lit(16)))
        )
        return start(staged.groupBy("_kg").applyInPandasWithState(
            count_rows, "n long", "n long", "append", GroupStateTimeout.EventTimeTimeout
        ))

    def native() -> Any:
        windowed = source().withWatermark("ts", "5 seconds").groupBy(
            F.window("ts", "10 minutes"), "user"
        ).agg(F.sum("amount"))
        return start(windowed)

    def timed(starter: Any) -> float:
        t0 = time.perf_counter()
        starter().awaitTermination()
        return time.perf_counter() - t0

    timed(native), timed(noop_stage)  # warm-up: JVM, Python workers
    results: dict[str, list[float]] = {"native": [], "no-op stateful stage": []}
    for _ in range(args.repeat):
        results["native"].append(timed(native))
        results["no-op stateful stage"].append(timed(noop_stage))
    for name, times in results.items():
        print(f"{name:22}: " + ", ".join(f"{t:.1f} s" for t in times))
    ratio = statistics.median(results["native"]) / statistics.median(
        results["no-op stateful stage"]
    )
    print(f"no-op stage / native throughput: {ratio:.2f}x (the ceiling for this stage shape)")


if __name__ == "__main__":
    main()
