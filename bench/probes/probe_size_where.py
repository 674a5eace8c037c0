"""Probe (issue 32, point 1): when, and from which session, Spark reads a NEW streaming query's
state partition count, and which DataFrame-level ideas change it.

Each case starts the same tiny query (3 parquet files read one per micro-batch,
availableNow trigger, groupBy(k).applyInPandasWithState counting rows, noop sink) in a session
whose spark.sql.shuffle.partitions is 200, and prints the stateful operator's
``numShufflePartitions`` from the query's last progress.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_size_where.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import pandas as pd

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQueryListener
from pyspark.sql.streaming.state import GroupStateTimeout

SP = "spark.sql.shuffle.partitions"
INTERNAL = "spark.sql.streaming.internal.stateStore.partitions"


def count(key, frames, state):
    n = sum(len(f) for f in frames)
    state.update(((state.get[0] if state.exists else 0) + n,))
    yield pd.DataFrame({"k": [key[0]], "n": [n]})


def source(spark: SparkSession, data: str) -> DataFrame:
    return (spark.readStream.schema("k long, v long").option("maxFilesPerTrigger", 1)
            .parquet(data))


def stage(df: DataFrame) -> DataFrame:
    return df.groupBy("k").applyInPandasWithState(
        count, "k long, n long", "n long", "append", GroupStateTimeout.NoTimeout)


def run(df: DataFrame, chk: str, name: str):
    q = (df.writeStream.format("noop").option("checkpointLocation", chk)
         .trigger(availableNow=True).queryName(name).start())
    q.awaitTermination()
    return q


def parts(q) -> list:
    ops = q.lastProgress["stateOperators"]
    return [(o["operatorName"], o["numShufflePartitions"]) for o in ops]


def main() -> None:
    spark = (SparkSession.builder.master("local[2]").appName("probe_size_where")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="probe_size_")
    data = os.path.join(root, "data")
    for i in range(3):
        spark.createDataFrame(pd.DataFrame({"k": range(100), "v": [i] * 100})) \
            .coalesce(1).write.mode("append").parquet(data)
    n = iter(range(1000))

    def chk() -> str:
        return os.path.join(root, f"chk{next(n)}")

    spark.conf.set(SP, "200")

    # A: baseline, session at 200
    q = run(stage(source(spark, data)), chk(), "A_baseline")
    print("A session 200                     ->", parts(q))

    # B: DataFrame built at 200, conf 4 set just before start(), restored right after
    df = stage(source(spark, data))
    spark.conf.set(SP, "4")
    w = df.writeStream.format("noop").option("checkpointLocation", chk()).trigger(availableNow=True)
    q = w.start()
    spark.conf.set(SP, "200")
    q.awaitTermination()
    print("B conf 4 only around start()      ->", parts(q))

    # C: conf 4 set right AFTER start() returns (stream thread plans batch 0 later)
    q = (stage(source(spark, data)).writeStream.format("noop")
         .option("checkpointLocation", chk()).trigger(availableNow=True).start())
    spark.conf.set(SP, "4")
    q.awaitTermination()
    spark.conf.set(SP, "200")
    print("C conf 4 set after start()        ->", parts(q))

    # D: a StreamingQueryListener sets conf 4 in onQueryStarted (sleeping 2 s to show whether
    # start() waits for it)
    class Sizer(StreamingQueryListener):
        def __init__(self):
            self.when = None

        def onQueryStarted(self, event):
            spark.conf.set(SP, "4")
            time.sleep(2)
            self.when = time.monotonic()

        def onQueryProgress(self, event):
            pass

        def onQueryIdle(self, event):
            pass

        def onQueryTerminated(self, event):
            pass

    sizer = Sizer()
    spark.streams.addListener(sizer)
    t0 = time.monotonic()
    q = (stage(source(spark, data)).writeStream.format("noop")
         .option("checkpointLocation", chk()).trigger(availableNow=True).start())
    t_start = time.monotonic()
    q.awaitTermination()
    spark.streams.removeListener(sizer)
    print(f"D listener sets 4 in onQueryStarted -> {parts(q)}; start() took {t_start - t0:.2f}s, "
          f"listener finished {'before' if sizer.when and sizer.when <= t_start else 'after'} "
          "start() returned")
    spark.conf.set(SP, "200")

    # E: repartition(4, k) before the stateful stage
    q = run(stage(source(spark, data).repartition(4, "k")), chk(), "E_repartition")
    print("E repartition(4, k) first         ->", parts(q))

    # F: coalesce(2) before the stateful stage
    q = run(stage(source(spark, data).coalesce(2)), chk(), "F_coalesce")
    print("F coalesce(2) first               ->", parts(q))

    # G: Spark's internal state-partition conf (sizes stateful operators only)
    spark.conf.set(INTERNAL, "4")
    df = stage(source(spark, data).repartition("v"))  # a non-stateful shuffle upstream
    q = run(df, chk(), "G_internal")
    print("G", INTERNAL, "=4 ->", parts(q))
    exch = [n for n in q.lastProgress.get("sources", [])]  # noqa: F841
    spark.conf.unset(INTERNAL)
    plan = q.explain  # noqa: F841

    # H: DataFrame rebound to a clone of the session that carries 4 (the user session at 200)
    jclone = spark._jsparkSession.cloneSession()
    jclone.conf().set(SP, "4")
    base = stage(source(spark, data))
    jdf = spark._jvm.org.apache.spark.sql.classic.Dataset.ofRows(jclone, base._jdf.logicalPlan())
    clone = SparkSession(spark.sparkContext, jclone)
    df = DataFrame(jdf, clone)
    q = (df.writeStream.format("noop").option("checkpointLocation", chk())
         .trigger(availableNow=True).queryName("H_clone").start())
    active_user = [x.name for x in spark.streams.active]
    active_clone = [x.name for x in clone.streams.active]
    q.awaitTermination()
    print("H clone session at 4, user at 200 ->", parts(q), "; user session conf",
          spark.conf.get(SP), "; user spark.streams.active", active_user,
          "; clone's", active_clone)
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
