"""The floor under any applyInPandasWithState pipeline: a no-op stateful stage vs native.

Runs, on the same input as ``bench/bench_spark.py`` (5M events, 10k keys, 10 parquet files read
one per micro-batch), the stage shape flinkwin compiles a UTC-session pipeline to (the user's
columns without ``ts``, the watermark helper ``_fw_wm``, 16 balanced key-group labels,
``EventTimeTimeout``) with a Python function that only counts its rows, against the native
``groupBy(window(...), key).agg(sum)``. The ratio is the best any implementation of that stage
could reach on this machine.

Two more shapes measure what changing the rows that cross the shuffle could reach:

- *pre-aggregated*: a stateless ``mapInArrow`` stage before the shuffle keeps one row per
  (key, 10-minute window) of each map partition (``pyarrow`` group-by: the sum and the latest
  watermark helper), as a perfect map-side pre-aggregation would ship, then the same no-op stage;
- *16 rows per batch*: the same stage over 10 files of 16 rows each (16 keys), so the stateful
  stage does nothing but exist: the fixed cost of a micro-batch of this stage shape.

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

from flinkwin.spark.pipeline import key_group_column  # noqa: E402

SHIFT_MS = 36500 * 86_400_000


def count_rows(key: Any, frames: Any, state: Any) -> Any:
    import pandas as pd

    n = sum(len(f) for f in frames)
    state.update((n,))
    state.setTimeoutTimestamp(max(state.getCurrentWatermarkMs(), 1))
    yield pd.DataFrame({"n": [n]})


WINDOW_MS = 600_000


def one_row_per_pane(batches: Any) -> Any:
    """Map side of the *pre-aggregated* shape: one row per (user, window, key group)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for batch in batches:
        table = pa.Table.from_batches([batch])
        wm = pc.cast(table["_fw_wm"], pa.int64())
        pane = pc.subtract(wm, pc.remainder(wm, WINDOW_MS * 1000))
        table = table.append_column("_pane", pane).append_column("_wm", wm)
        out = table.group_by(["user", "_fw_kg", "_pane"]).aggregate(
            [("amount", "sum"), ("_wm", "max")]
        )
        columns = (out["user"], out["amount_sum"], out["_fw_kg"],
                   pc.cast(out["_wm_max"], batch.schema.field("_fw_wm").type))
        yield pa.RecordBatch.from_arrays([c.combine_chunks() for c in columns],
                                         schema=batch.schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=None, help="input dir (generated there if empty)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--events", type=int, default=5_000_000,
                        help="events generated when --data is empty (10k keys, 10 files)")
    parser.add_argument("--write", action="store_true", help=f"append to {DEFAULT_OUTPUT}")
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    data = args.data or tempfile.mkdtemp(prefix="fw-floor-")
    if not any(p.endswith(".parquet") for p in os.listdir(data)):
        generate(data, args.events, 10_000, 10, WINDOW_MS, 42)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    tiny = tempfile.mkdtemp(prefix="fw-floor-16-")
    generate(tiny, 160, 16, 10, WINDOW_MS, 42)

    def source(directory: str = data) -> Any:
        return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(directory)

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

    def noop_stage(map_side: Any = None, directory: str = data) -> Any:
        staged = source(directory).select(
            "user", "amount",
            labels.alias("_fw_kg"),
            F.timestamp_micros(F.unix_micros("ts") + F.lit(SHIFT_MS * 1000)).alias("_fw_wm"),
        )
        if map_side is not None:
            staged = staged.mapInArrow(map_side, staged.schema)
        staged = staged.withWatermark("_fw_wm", f"{SHIFT_MS + 5000} milliseconds")
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

    shapes = {
        "native": native,
        "no-op stateful stage": noop_stage,
        "pre-aggregated + no-op stage": lambda: noop_stage(one_row_per_pane),
        "16 rows per batch + no-op stage": lambda: noop_stage(directory=tiny),
    }
    for starter in shapes.values():  # warm-up: JVM, Python workers
        timed(starter)
    results: dict[str, list[float]] = {name: [] for name in shapes}
    for _ in range(args.repeat):
        for name, starter in shapes.items():
            results[name].append(timed(starter))
    for name, times in results.items():
        print(f"{name:32}: " + ", ".join(f"{t:.1f} s" for t in times))
    ratios = {
        name: statistics.median(results["native"]) / statistics.median(times)
        for name, times in results.items() if name != "native"
    }
    for name, r in ratios.items():
        print(f"{name} / native throughput: {r:.2f}x (the ceiling for this shape)")
    if args.write:
        stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        rows = "\n".join(
            f"| {name} | " + ", ".join(f"{t:.1f} s" for t in times) + " |"
            for name, times in results.items()
        )
        write_report(
            f"## The floor of the stage shape ({stamp})\n\n"
            f"Command: `{the_command()}` ({args.events:,} events of bench_spark.py's generator "
            "unless --data is given, `local[2]`, 4 shuffle partitions; median of the runs)\n\n"
            f"| pipeline | runs |\n| --- | --- |\n{rows}\n\n"
            "Throughput relative to native (ratio of median times):\n\n"
            + "".join(f"- {name}: **{r:.2f}x** native\n" for name, r in ratios.items()),
            DEFAULT_OUTPUT,
        )


if __name__ == "__main__":
    main()
