"""Probe (issue 32, fixed cost round 4): the pickled commands the tumbling sum's micro-batches
ship to the Python workers (the combine pass's and the stateful stage's functions), their
sizes, what the stage function's closure holds, the unpickling time in a warm process, and
the cost of rebuilding the stage's cached parts after each unpickling (once per Python
session in a worker).

    cd <worktree> && PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_32_command_size.py
"""

from __future__ import annotations

import os
import pickle
import statistics
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pyspark.core.rdd as rdd  # noqa: E402
from pyspark import cloudpickle  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

import flinkwin as fw  # noqa: E402

commands = []
_prepare = rdd._prepare_for_python_RDD


def _recording(sc, command):  # probe-only instrumentation
    prepared = _prepare(sc, command)
    commands.append((getattr(command[0], "__qualname__", type(command[0]).__name__),
                     len(prepared[0]), command))
    return prepared


rdd._prepare_for_python_RDD = _recording


def main() -> None:
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    df = spark.readStream.schema("user string, ts long, v long").json(tempfile.mkdtemp())
    strategy = fw.WatermarkStrategy.for_bounded_out_of_orderness(
        fw.Duration.of_seconds(1)).with_timestamp_assigner("ts")
    (fw.DataStream(df).assign_timestamps_and_watermarks(strategy).key_by("user")
     .window(fw.TumblingEventTimeWindows.of(fw.Time.seconds(10))).sum("v")).toDF()
    for name, size, command in commands:
        data = cloudpickle.dumps(command)
        started = time.perf_counter()
        for _ in range(20):
            pickle.loads(data)
        print(f"{name}: {size} bytes, unpickled in "
              f"{(time.perf_counter() - started) / 20 * 1000:.3f} ms")
        for cell in getattr(command[0], "__closure__", None) or ():
            held = cell.cell_contents
            print(f"  closure {type(held).__name__}: {len(cloudpickle.dumps(held))} bytes")
            for key, value in sorted(vars(held).items()) if hasattr(held, "__dict__") else ():
                print(f"    {key}: {type(value).__name__} {len(cloudpickle.dumps(value))}")
    data = cloudpickle.dumps(commands[-1][2])
    rebuilds = []
    for _ in range(30):
        runtime = pickle.loads(data)[0].__closure__[0].cell_contents
        started = time.perf_counter()
        _ = runtime._outputs._metrics_template, runtime._inputs, runtime._outputs.arrow_schema
        rebuilds.append((time.perf_counter() - started) * 1000)
    print(f"the stage's parts rebuilt after unpickling: {statistics.median(rebuilds):.3f} ms "
          "(median of 30)")


if __name__ == "__main__":
    main()
