"""The floor under any applyInPandasWithState pipeline: a no-op stateful stage vs native.

Runs, on the same input as ``bench/bench_spark.py`` (5M events, 10k keys, 10 parquet files read
one per micro-batch), the stage shape flinkwin compiles a UTC-session pipeline to (the user's
columns without ``ts``, the watermark helper ``_fw_wm``, 16 balanced key-group labels,
``EventTimeTimeout``) with a Python function that only counts its rows, against the native
``groupBy(window(...), key).agg(sum)``. The ratio is the best any implementation of that stage
could reach on this machine.

Usage::

    .venv/bin/python bench/bench_stateful_floor.py [--data DIR] [--repeat 3] [--write]
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

from bench_operator import the_command, write_report  # noqa: E402
from bench_spark import DEFAULT_OUTPUT, SCHEMA, generate  # noqa: E402

from flinkwin.spark.compiler import key_group_column  # noqa: E402

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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help=f"append to {DEFAULT_OUTPUT}")
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

    import flinkwin as fw

    labels = key_group_column(
        fw.DataStream(source(), key_groups=16).keyBy("user")
        .window(fw.TumblingProcessingTimeWindows.of(fw.Time.minutes(10))).sum("amount")._pipeline
    )

    def noop_stage() -> Any:
        staged = (
            source()
            .withColumn("_fw_wm", F.timestamp_micros(F.unix_micros("ts") + F.lit(SHIFT_MS * 1000)))
            .withWatermark("_fw_wm", f"{SHIFT_MS + 5000} milliseconds")
            .select("user", "amount", "_fw_wm", labels.alias("_fw_kg"))
        )
        return start(staged.groupBy("_fw_kg").applyInPandasWithState(
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
    if args.write:
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        rows = "\n".join(
            f"| {name} | " + ", ".join(f"{t:.1f} s" for t in times) + " |"
            for name, times in results.items()
        )
        write_report(
            f"## The floor of the stage shape ({stamp})\n\n"
            f"Command: `{the_command()}` (same input as bench_spark.py, `local[2]`, 4 shuffle "
            "partitions; median of the runs)\n\n"
            f"| pipeline | runs |\n| --- | --- |\n{rows}\n\n"
            f"A stateful stage of flinkwin's shape whose function only counts its rows reaches "
            f"**{ratio:.2f}x** native.\n",
            DEFAULT_OUTPUT,
        )


if __name__ == "__main__":
    main()
