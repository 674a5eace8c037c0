"""Probe (test time, 2026-11-30): what building a window result's plan costs in a warm session.

Builds the same streaming pipeline (bounded out-of-orderness, keyed tumbling ``sum`` with
allowed lateness and a late side output) several times in one session and prints, per build,
the time of the result itself (its main-output stage) and of the second stage a query with
side outputs needs (``start(side_outputs=...)``, ``getSideOutput``), which reads the input
stage the first one built.

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_compile_cost.py [--builds 8]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402

import flinkwin as fw  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--builds", type=int, default=8)
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]")
             .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    source = tempfile.mkdtemp()
    late = fw.OutputTag("late")
    strategy = fw.WatermarkStrategy.for_bounded_out_of_orderness(
        fw.Duration.of_seconds(1)).with_timestamp_assigner("ts")
    for build in range(args.builds):
        df = (spark.readStream.schema("user string, ts long, v long")
              .option("maxFilesPerTrigger", 1).json(source))
        begin = time.perf_counter()
        result = (fw.DataStream(df).assign_timestamps_and_watermarks(strategy).key_by("user")
                  .window(fw.TumblingEventTimeWindows.of(fw.Time.seconds(10)))
                  .allowed_lateness(fw.Time.seconds(1)).side_output_late_data(late).sum("v"))
        built = time.perf_counter()
        result._stage([late])
        done = time.perf_counter()
        print(f"build {build}: the result {built - begin:.3f} s, "
              f"its stage with the side output {done - built:.3f} s", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
