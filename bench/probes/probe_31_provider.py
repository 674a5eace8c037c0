"""Issue 31: can a checkpoint written by today's stage (applyInPandasWithState, default HDFS
state store) be continued by a query whose session asks for RocksDB, and by a TWS plan?

Run: PYTHONPATH=$PWD python bench/probes/probe_31_provider.py
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.state import GroupStateTimeout

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"


def count(key, pdfs, state):
    n = (state.get[0] if state.exists else 0) + sum(len(p) for p in pdfs)
    state.update((n,))
    yield pd.DataFrame({"k": [key[0]], "n": [n]})


class Count(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.v = handle.getValueState("n", "n long")

    def handleInputRows(self, key, rows, timerValues):
        n = (self.v.get()[0] if self.v.exists() else 0) + sum(len(p) for p in rows)
        self.v.update((n,))
        yield pd.DataFrame({"k": [key[0]], "n": [n]})

    def close(self) -> None:
        pass


def main() -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="p31prov")
    src, ckpt = os.path.join(root, "in"), os.path.join(root, "ck")
    os.makedirs(src)

    def put(i: int) -> None:
        with open(os.path.join(src, f"f{i}.json"), "w") as fh:
            fh.write(json.dumps({"k": "a"}) + "\n")

    def run(label: str, tws: bool) -> None:
        df = spark.readStream.schema("k string").json(src).groupBy("k")
        if tws:
            out = df.transformWithStateInPandas(Count(), "k string, n long", "Update", "None")
        else:
            out = df.applyInPandasWithState(
                count, "k string, n long", "n long", "update", GroupStateTimeout.NoTimeout
            )
        rows: list = []
        q = (
            out.writeStream.outputMode("update")
            .option("checkpointLocation", ckpt)
            .foreachBatch(lambda b, i: rows.extend(b.collect()))
            .start()
        )
        try:
            q.processAllAvailable()
            print(
                f"{label}: ok, rows {[tuple(r) for r in rows]}, session provider "
                f"{spark.conf.get(PROVIDER)}"
            )
        except Exception as e:  # noqa: BLE001
            msg = [m for m in str(e).split("\n") if m.strip() and not m.strip().startswith("at ")]
            print(f"{label}: FAILED {' | '.join(msg[:2])[:500]}")
        finally:
            q.stop()
        offsets = sorted(os.listdir(os.path.join(ckpt, "offsets")))
        with open(os.path.join(ckpt, "offsets", offsets[-1])) as fh:
            conf = json.loads(fh.read().splitlines()[1])["conf"]
        print(f"    offset log provider: {conf.get(PROVIDER)}")

    try:
        put(0)
        run("1 apiws, session default (HDFS)", tws=False)
        spark.conf.set(PROVIDER, ROCKSDB)
        put(1)
        run("2 apiws restart, session RocksDB", tws=False)
        put(2)
        run("3 TWS on the apiws checkpoint, session RocksDB", tws=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
