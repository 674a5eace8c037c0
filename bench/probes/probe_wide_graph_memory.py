"""Probe (found 2026-11-29, open): the driver heap a union graph needs grows steeply with its
sources' width. Two watermarked sources of ``3 + --columns`` long columns (the same stream
twice), unioned, keyed by a column, sliding windows of 10 s every 5 s, ``maxBy``; three
micro-batches of a few rows through flinkwin's ``start()`` on ``local[2]``.

Observed on the 2-core machine (PySpark 4.3.0): 12 columns a source run in the default 1 GB
driver heap; 16 columns fail at the first micro-batch with ``java.lang.OutOfMemoryError: Java
heap space`` in 1 GB, and pass in 6 GB (46 s for the whole script). A window chain over one
source of 16 columns runs in 1 GB. Packed outputs or not makes no difference. Cause not found.

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_wide_graph_memory.py --columns 13
    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_wide_graph_memory.py --columns 13 \\
        --driver-memory 6g
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "spark"))

from pyspark.sql import SparkSession  # noqa: E402
from spark_scenarios import run_stream, watermark, write_batches  # noqa: E402

from flinkwin import SlidingEventTimeWindows, Time  # noqa: E402
from flinkwin.datastream import DataStream  # noqa: E402

BATCHES = [
    [{"k": "a", "ts": 1000, "v": 1}, {"k": "b", "ts": 3000, "v": 2}],
    [{"k": "a", "ts": 12000, "v": 3}],
    [{"k": "b", "ts": 25000, "v": 4}],
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--columns", type=int, default=13, help="extra long columns")
    parser.add_argument("--driver-memory", default="1g")
    args = parser.parse_args()
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", args.driver_memory)
        .getOrCreate()
    )
    directory = Path(tempfile.mkdtemp())
    write_batches(directory / "in", BATCHES)

    def build(stream: DataStream) -> Any:
        df = stream.toDF().selectExpr(
            "k", "ts", "v", *[f"v + {i} AS c{i}" for i in range(args.columns)])
        first = DataStream(df).assignTimestampsAndWatermarks(watermark(0))
        second = DataStream(df).assignTimestampsAndWatermarks(watermark(0))
        return (
            first.union(second).keyBy("k")
            .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))).maxBy("v")
        )

    try:
        run = run_stream(spark, directory / "in", directory / "ck", "k string, ts long, v long",
                         build)
        print(f"{3 + args.columns} columns a source: ok,",
              sum(len(rows) for rows in run.main.values()), "results")
    except Exception as e:  # noqa: BLE001 (the probe reports the failure)
        print(f"{3 + args.columns} columns a source: FAILED:", str(e).splitlines()[0][:200])


if __name__ == "__main__":
    main()
