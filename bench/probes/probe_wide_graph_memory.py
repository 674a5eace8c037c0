"""Probe (2026-11-29): the driver heap a stream graph of wide sources needs while Spark optimizes
its stage. Watermarked sources of ``3 + --columns`` long columns (the same stream again), keyed
by a column: ``--shape union`` (two sources, sliding windows of 10 s every 5 s over their union,
``maxBy``), ``union3`` (three sources), ``join`` (a tumbling window join of two) or ``chain``
(one window chain, no graph); three micro-batches of a few rows through flinkwin's ``start()``
on ``local[2]``.

Found: 12 columns a source ran in the default 1 GB driver heap, 16 failed at the first
micro-batch with ``java.lang.OutOfMemoryError: Java heap space`` (6 GB passed, in 46 s).
Cause: Spark's constraint propagation. The key group label's and the event-time range check's
error messages describe the row, an expression naming every column; each projection renaming
those columns afterwards (a graph's sources; Spark's relation of each micro-batch) copied its
constraint once per renamed column: 2^n for n columns. A window chain over a raw JSON source
of 20 columns failed the same way through ``toDF().writeStream``. Fixed by making the row's
description nondeterministic (``flinkwin.spark.timestamps.described_row``): 43 columns a
source then run in each graph shape, and 63 in a chain.

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_wide_graph_memory.py --columns 40
    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_wide_graph_memory.py --columns 40 \\
        --shape join
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

from flinkwin import SlidingEventTimeWindows, Time, TumblingEventTimeWindows  # noqa: E402
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
    parser.add_argument("--shape", choices=["union", "union3", "join", "chain"], default="union")
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
        first, second, third = (
            DataStream(df).assignTimestampsAndWatermarks(watermark(0)) for _ in range(3))
        if args.shape == "join":
            return (
                first.join(second).where("k").equal_to("k")
                .window(TumblingEventTimeWindows.of(Time.seconds(10)))
                .apply(lambda a, b: (a["k"], a["v"] + b["v"]), output_type="k string, v long")
            )
        if args.shape == "chain":  # no graph: a window chain, for comparison
            return first.keyBy("k").window(
                SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))).maxBy("v")
        union = first.union(second, third) if args.shape == "union3" else first.union(second)
        return (
            union.keyBy("k")
            .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))).maxBy("v")
        )

    try:
        run = run_stream(spark, directory / "in", directory / "ck", "k string, ts long, v long",
                         build)
        print(f"{args.shape}, {3 + args.columns} columns a source: ok,",
              sum(len(rows) for rows in run.main.values()), "results")
    except Exception as e:  # noqa: BLE001 (the probe reports the failure)
        print(f"{args.shape}, {3 + args.columns} columns a source: FAILED:",
              str(e).splitlines()[0][:200])


if __name__ == "__main__":
    main()
