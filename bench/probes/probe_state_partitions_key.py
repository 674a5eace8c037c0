"""Probe (issue 32, point 1): Spark's internal
``spark.sql.streaming.internal.stateStore.partitions`` set around ``start()`` (then unset
again) sizes only the query's stateful operators; the user's own upstream ``repartition``
keeps the session's ``spark.sql.shuffle.partitions``; the offset log records it, so a restart
keeps it; a client may set and unset it on Spark Connect.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_state_partitions_key.py classic
    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_state_partitions_key.py connect
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pandas as pd  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

KEY = "spark.sql.streaming.internal.stateStore.partitions"
SP = "spark.sql.shuffle.partitions"


def top(key, frames, state):
    pid = max(int(f["pid"].max()) for f in frames)
    yield pd.DataFrame({"k": [key[0]], "pid": [pid]})


def run(spark, src, chk, name, partitions):
    df = (spark.readStream.schema("k string, v long").option("maxFilesPerTrigger", 1).json(src)
          .repartition("k").withColumn("pid", F.spark_partition_id())
          .groupBy("k").applyInPandasWithState(top, "k string, pid int", "n long", "append",
                                                "NoTimeout"))
    out = os.path.join(os.path.dirname(chk), name)
    writer = (df.writeStream.format("parquet").option("path", out)
              .option("checkpointLocation", chk).trigger(availableNow=True))
    spark.conf.set(KEY, str(partitions))
    try:
        query = writer.start()
    finally:
        spark.conf.unset(KEY)
    query.awaitTermination()
    ops = [o["numShufflePartitions"] for o in query.lastProgress["stateOperators"]]
    rows = spark.read.schema("k string, pid int").parquet(out + "/*.parquet").collect()
    pids = {r["k"]: r["pid"] for r in rows}
    return ops, pids


def main() -> None:
    mode = sys.argv[1]
    builder = SparkSession.builder.config(SP, "200").config("spark.ui.enabled", "false")
    spark = (builder.remote("local[2]") if mode == "connect" else builder.master("local[2]")
             ).getOrCreate()
    print("internal key before:", spark.conf.get(KEY, None), "| shuffle:", spark.conf.get(SP))
    print("getAll has shuffle.partitions:", SP in spark.conf.getAll)
    tmp = tempfile.mkdtemp()
    src, chk = os.path.join(tmp, "in"), os.path.join(tmp, "chk")
    os.makedirs(src)
    keys = [f"k{i}" for i in range(20)]
    with open(os.path.join(src, "0.json"), "w") as f:
        f.writelines(json.dumps({"k": k, "v": 1}) + "\n" for k in keys)
    expected = {r["k"]: r["p"] for r in spark.createDataFrame([(k,) for k in keys], "k string")
                .select("k", F.expr("pmod(hash(k), 200)").alias("p")).collect()}
    ops, pids = run(spark, src, chk, "first", 3)
    print("first start, key=3: state partitions", ops, "| upstream pid == pmod(hash,200):",
          pids == expected, "| max pid", max(pids.values()))
    print("after: internal key", spark.conf.get(KEY, None), "| shuffle", spark.conf.get(SP))
    with open(os.path.join(src, "1.json"), "w") as f:
        f.writelines(json.dumps({"k": k, "v": 2}) + "\n" for k in keys)
    ops, pids = run(spark, src, chk, "second", 5)
    print("restart, key=5: state partitions", ops, "| upstream pids ok:", pids == expected)
    with open(os.path.join(chk, "offsets", "1")) as f:
        print("offset log conf:", {k: v for k, v in json.loads(f.read().splitlines()[1])["conf"]
                                   .items() if "partitions" in k})
    spark.stop()


if __name__ == "__main__":
    main()
