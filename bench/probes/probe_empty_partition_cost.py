"""Probe (issue 32, point 3): what each (mostly empty) state partition of an
applyInPandasWithState stage costs per micro-batch, and whether Spark starts the Python runner
for partitions with no rows.

A tiny stream (8 parquet files of 16 rows, 16 keys, read one file per micro-batch,
availableNow) through ``groupBy(k).applyInPandasWithState`` (a row counter) or the native
``groupBy(window, k).count()``, at a given number of state partitions, with NoTimeout or
EventTimeTimeout, on the HDFS-backed or RocksDB state store. Prints the median
``durationMs.addBatch`` of micro-batches 3..8, the CPU time the JVM and the Python workers
spent per micro-batch (all batches of the query: less sensitive to other load than wall
time) and, for the Python stage, how many times a
Python worker deserialized the function per micro-batch (once per Python runner start:
pyspark's worker reads the command at every runner start).

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_empty_partition_cost.py \
        200:none:hdfs 200:event:hdfs 2:event:hdfs native:200:hdfs ...
"""

from __future__ import annotations

import glob
import os
import statistics
import sys
import tempfile

import pandas as pd
import psutil

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.streaming.state import GroupStateTimeout  # noqa: E402

FILES = 8
COUNTS = tempfile.mkdtemp(prefix="probe_unpickle_")
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


def _mark(counts_dir: str) -> Marker:
    # runs in the worker each time the function is deserialized
    with open(os.path.join(counts_dir, str(os.getpid())), "a") as f:
        f.write("x")
    return Marker(counts_dir)


class Marker:
    def __init__(self, counts_dir: str) -> None:
        self.counts_dir = counts_dir

    def __reduce__(self):
        return (_mark, (self.counts_dir,))


def make_counter(event_time: bool):
    marker = Marker(COUNTS)

    def count(key, frames, state):
        assert marker is not None
        if state.hasTimedOut:
            state.remove()
            yield pd.DataFrame({"k": [key[0]], "n": [0]})
            return
        n = sum(len(f) for f in frames)
        state.update(((state.get[0] if state.exists else 0) + n,))
        if event_time:
            state.setTimeoutTimestamp(state.getCurrentWatermarkMs() + 60_000)
        yield pd.DataFrame({"k": [key[0]], "n": [n]})

    return count


def tree_cpu() -> float:
    """CPU seconds (user + system) used so far by this process's descendants: the JVM, the
    Python worker daemon and its workers (robust to other load on the machine, unlike wall
    time)."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def unpickles() -> int:
    return sum(os.path.getsize(p) for p in glob.glob(os.path.join(COUNTS, "*")))


def run_case(spark: SparkSession, data: str, case: str, root: str) -> str:
    parts = case.split(":")
    native = parts[0] == "native"
    if native:
        parts = parts[1:]
    partitions, store = parts[0], parts[-1]
    timeout = None if native else parts[1]
    spark.conf.set("spark.sql.shuffle.partitions", partitions)
    spark.conf.set("spark.sql.streaming.stateStore.providerClass",
                   ROCKSDB if store == "rocksdb" else HDFS)
    src = (spark.readStream.schema("k long, ts timestamp").option("maxFilesPerTrigger", 1)
           .parquet(data).withWatermark("ts", "1 minute"))
    if native:
        df = src.groupBy(F.window("ts", "10 minutes"), "k").count()
    else:
        df = src.groupBy("k").applyInPandasWithState(
            make_counter(timeout == "event"), "k long, n long", "n long", "append",
            GroupStateTimeout.EventTimeTimeout if timeout == "event"
            else GroupStateTimeout.NoTimeout)
    before = unpickles()
    cpu0 = tree_cpu()
    q = (df.writeStream.format("noop").outputMode("append")
         .option("checkpointLocation", os.path.join(root, case.replace(":", "_")))
         .trigger(availableNow=True).start())
    q.awaitTermination()
    cpu = tree_cpu() - cpu0
    progress = [p for p in q.recentProgress if p["numInputRows"] > 0]
    batches = len(q.recentProgress)
    add = [p["durationMs"].get("addBatch", 0) for p in progress[2:]]
    ops = q.lastProgress["stateOperators"]
    n_parts = ops[0]["numShufflePartitions"] if ops else None
    per_batch = (unpickles() - before) / batches
    return (f"{case:22s} state partitions {n_parts}: median addBatch {statistics.median(add):7.0f} "
            f"ms (data batches 3..{len(progress)}: {add}); batches run {batches}; "
            f"CPU of JVM+workers per batch {cpu / batches * 1000:6.0f} ms; "
            f"python function deserializations per batch {per_batch:.0f}")


def main() -> None:
    spark = (SparkSession.builder.master("local[2]").appName("probe_empty_partition_cost")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="probe_cost_")
    data = os.path.join(root, "data")
    base = pd.Timestamp("2026-01-01")
    for i in range(FILES):
        pdf = pd.DataFrame({"k": range(16), "ts": [base + pd.Timedelta(minutes=i)] * 16})
        spark.createDataFrame(pdf, "k long, ts timestamp").coalesce(1) \
            .write.mode("append").parquet(data)
    for case in sys.argv[1:]:
        print(run_case(spark, data, case, root), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
