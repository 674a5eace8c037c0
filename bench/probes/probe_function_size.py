"""Probe (issue 32, point 3): the size and deserialization time of the function flinkwin hands
to applyInPandasWithState (a pyspark worker deserializes it at every Python runner start: once
per state partition and micro-batch, twice with a timeout configured).

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_function_size.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pandas as pd  # noqa: E402
from pyspark import cloudpickle  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.pandas import group_ops  # noqa: E402

import flinkwin as fw  # noqa: E402
from flinkwin.functions import AggregateFunction  # noqa: E402
from flinkwin.watermark import WatermarkStrategy  # noqa: E402

captured = []
_orig = group_ops.PandasGroupedOpsMixin.applyInPandasWithState


def _capture(self, func, *args, **kwargs):  # probe-only instrumentation
    captured.append(func)
    return _orig(self, func, *args, **kwargs)


group_ops.PandasGroupedOpsMixin.applyInPandasWithState = _capture


class Total(AggregateFunction):
    def create_accumulator(self):
        return 0

    def add(self, value, acc):
        return acc + value.amount

    def get_result(self, acc):
        return acc

    def merge(self, a, b):
        return a + b


def main() -> None:
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    d = tempfile.mkdtemp()
    spark.createDataFrame(pd.DataFrame({"user": ["a"], "amount": [1],
                                        "ts": [pd.Timestamp("2026-01-01")]}),
                          "user string, amount long, ts timestamp").write.parquet(d + "/x")
    src = spark.readStream.schema("user string, amount long, ts timestamp").parquet(d + "/x")
    wm = (WatermarkStrategy.forBoundedOutOfOrderness(fw.Duration.ofSeconds(5))
          .withTimestampAssigner("ts"))
    base = fw.DataStream(src).assignTimestampsAndWatermarks(wm).keyBy("user") \
        .window(fw.TumblingEventTimeWindows.of(fw.Time.minutes(10)))
    shapes = {
        "tumbling sum": lambda: base.sum("amount"),
        "user AggregateFunction": lambda: base.aggregate(Total(), output_schema="v long"),
    }
    for name, build in shapes.items():
        captured.clear()
        build().toDF()
        blob = cloudpickle.dumps(captured[-1])
        n = 200
        t0 = time.perf_counter()
        for _ in range(n):
            cloudpickle.loads(blob)
        per = (time.perf_counter() - t0) / n * 1000
        print(f"{name:24s} pickled function {len(blob):7d} bytes; loads {per:.2f} ms "
              "(in-process, modules already imported)")
    spark.stop()


if __name__ == "__main__":
    main()
