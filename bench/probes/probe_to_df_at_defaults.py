"""Probe (issue 32, point 1): the README idiom ``result.toDF().writeStream...start()`` in a
session left at Spark's defaults (200 shuffle partitions), before and after flinkwin sizes it.

"unsized" is the path flinkwin cannot size (a DataFrame derived from ``toDF()``, here
``select("*")``: what ``toDF()`` gave for every query before); "sized" is ``toDF()`` itself;
"native" is Spark's own ``groupBy(window, user).sum`` in the same session. Tumbling 10 s sum
per user, ``--keys`` keys, ``--files`` JSON files of ``--rows`` rows read one per micro-batch,
noop sink, ``availableNow``. Prints the state partitions, the batches run and the median
``triggerExecution`` of the data batches.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_to_df_at_defaults.py
    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_to_df_at_defaults.py --connect
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import flinkwin as fw  # noqa: E402

SCHEMA = "user string, ts long, n long"


def write(directory: str, files: int, rows: int, keys: int) -> None:
    os.makedirs(directory)
    for i in range(files):
        path = os.path.join(directory, f"{i:04d}.json")
        with open(path, "w") as f:
            for j in range(rows):
                ts = i * 10_000 + j * 10_000 // rows
                f.write(json.dumps({"user": f"u{j % keys}", "ts": ts, "n": 1}) + "\n")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def run(spark: SparkSession, source: str, how: str, work: str) -> dict[str, object]:
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source)
    if how == "native":
        df = (stream.withColumn("t", F.timestamp_millis("ts")).withWatermark("t", "0 seconds")
              .groupBy(F.window("t", "10 seconds"), "user").agg(F.sum("n")))
    else:
        df = (fw.DataStream(stream).assign_timestamps_and_watermarks(
            fw.WatermarkStrategy.for_bounded_out_of_orderness(fw.Duration.of_millis(0))
            .with_timestamp_assigner("ts")).key_by("user")
            .window(fw.TumblingEventTimeWindows.of(fw.Time.seconds(10))).sum("n").toDF())
        if how == "unsized":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df = df.select("*")
    began = time.monotonic()
    query = (df.writeStream.format("noop").option("checkpointLocation", f"{work}/{how}")
             .trigger(availableNow=True).start())
    query.awaitTermination()
    wall = time.monotonic() - began
    progress = [json.loads(p.json) if hasattr(p, "json") else p for p in query.recentProgress]
    data = [p for p in progress if sum(s["numInputRows"] for s in p["sources"])]
    return {
        "state partitions": progress[-1]["stateOperators"][0]["numShufflePartitions"],
        "batches": len(progress),
        "median data batch s": statistics.median(
            p["durationMs"]["triggerExecution"] for p in data) / 1000,
        "wall s": round(wall, 2),
        "session after": spark.conf.get("spark.sql.shuffle.partitions"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--keys", type=int, default=100)
    parser.add_argument("--only", default="sized,unsized,native")
    parser.add_argument("--connect", action="store_true",
                        help="on a local Spark Connect server (remote('local[2]'))")
    args = parser.parse_args()
    builder = (SparkSession.builder.config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    spark = (builder.remote("local[2]") if args.connect else builder.master("local[2]")
             ).getOrCreate()
    if not args.connect:
        spark.sparkContext.setLogLevel("ERROR")
    work = tempfile.mkdtemp()
    write(f"{work}/in", args.files, args.rows, args.keys)
    print(f"load average at start: {os.getloadavg()}")
    for how in ["warm-up", *args.only.split(",")]:
        result = run(spark, f"{work}/in", "sized" if how == "warm-up" else how, work + "/" + how)
        print(how, result, flush=True)
    print(f"load average at end: {os.getloadavg()}")
    spark.stop()


if __name__ == "__main__":
    main()
