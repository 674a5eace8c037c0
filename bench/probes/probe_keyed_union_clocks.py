"""What a graph's own source clocks cost: a union of two watermarked sources keyed by a column
(the keyed plan, flinkwin.spark.source_clocks) or, with ``--distributed``, keyed by a function
then a second window keyed by parity at ``set_parallelism(2)`` (the distributed plan's clock
rows, flinkwin.spark.graph_chained), then a tumbling sum, over parquet files read one per
micro-batch (``availableNow``, noop-like ``foreachBatch`` counting rows), in one session.

Run it from a checkout (``PYTHONPATH=<checkout>``) to time that checkout's plan; run it from two
checkouts in turn (e.g. ``git archive <rev> | tar -x -C /tmp/base``) for an A/B. Prints the
median wall time of ``--repeat`` runs after a warm-up, and the rows out (which must agree).

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_keyed_union_clocks.py --events 400000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from pyspark.sql import SparkSession

from flinkwin import Duration, Time, TumblingEventTimeWindows, Types, WatermarkStrategy
from flinkwin.datastream import DataStream


def write(root: Path, events: int, files: int, keys: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    per = events // files
    root.mkdir(parents=True)
    for f in range(files):
        ts = f * 60_000 + np.sort(rng.integers(0, 60_000, per))
        frame = pd.DataFrame({
            "k": rng.integers(0, keys, per).astype(str), "v": rng.integers(0, 100, per),
            "ts": pd.to_datetime(ts, unit="ms").astype("datetime64[us]"),
        })
        frame.to_parquet(root / f"part-{f:04d}.parquet")


def run(spark: SparkSession, root: Path, label: str, distributed: bool) -> tuple[float, int]:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5)) \
        .with_timestamp_assigner("ts")
    schema = spark.read.parquet(str(root / "a")).schema

    def source(name: str) -> DataStream:
        df = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 1)
              .parquet(str(root / name)))
        return DataStream(df).assign_timestamps_and_watermarks(strategy)

    union = source("a").union(source("b"))
    if distributed:
        sums = (union.key_by(lambda r: r.k, key_type=Types.STRING())
                .window(TumblingEventTimeWindows.of(Time.seconds(30))).sum("v"))
        result = (sums.key_by(lambda r: r.v % 2, key_type=Types.LONG())
                  .window(TumblingEventTimeWindows.of(Time.seconds(30))).sum("v")
                  .set_parallelism(2))
    else:
        result = union.key_by("k").window(TumblingEventTimeWindows.of(Time.seconds(30))).sum("v")
    count = [0]

    def batch(df, _id):  # noqa: ANN001
        count[0] += df.count()

    start = time.perf_counter()
    query = (result.toDF().writeStream.foreachBatch(batch)
             .option("checkpointLocation", str(root / f"cp_{label}"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    return time.perf_counter() - start, count[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=400_000, help="per source")
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--distributed", action="store_true")
    args = parser.parse_args()
    spark = (SparkSession.builder.master("local[2]")
             .config("spark.sql.shuffle.partitions", 4).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp())
    write(root / "a", args.events, args.files, args.keys, 1)
    write(root / "b", args.events, args.files, args.keys, 2)
    run(spark, root, "warm", args.distributed)
    times, rows = [], set()
    for i in range(args.repeat):
        seconds, out = run(spark, root, str(i), args.distributed)
        times.append(seconds)
        rows.add(out)
    print(f"median {statistics.median(times):.2f} s over {times}; rows out {rows}")


if __name__ == "__main__":
    main()
