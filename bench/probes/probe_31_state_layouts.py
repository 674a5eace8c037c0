"""Issue 31, point 2: what one micro-batch costs a long-running query for three layouts of the
same key-group state, in one Spark session, steady state (one query per layout, every batch a
file of the same 16 key-group rows):

- ``apiws_whole``: ``applyInPandasWithState`` (a window stage's layout today), one state value
  per key group holding ``--state`` bytes, rewritten whole every micro-batch (HDFS-backed
  state store, Spark's default);
- ``tws_whole``: ``transformWithStateInPandas`` on RocksDB with changelog checkpointing (the
  distributed graph's layout), one ValueState blob per key group rewritten whole;
- ``tws_append``: the same TWS, the key group's state a ListState of segments: the whole state
  once, then one ``--change``-byte segment per micro-batch (writes proportional to the change).

Reported per layout, over the batches after the first two: median ``triggerExecution``, the
stateful operator's ``commitTimeMs``, and the checkpoint's state folder growth per batch. The
layouts alternate over ``--rounds``. This asks whether moving window stages onto TWS with
segment logs would cost a micro-batch more or less than today's whole-value writes.

Run: PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_31_state_layouts.py [--state N]
     [--change N] [--batches N] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.state import GroupStateTimeout

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
GROUPS = 16


class TwsWhole(StatefulProcessor):
    def __init__(self, size: int) -> None:
        self.size = size

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.blob = handle.getValueState("blob", "blob binary")

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[pd.DataFrame]:
        for _ in rows:
            pass
        self.blob.update((os.urandom(self.size),))
        yield pd.DataFrame({"kg": [int(key[0])]})

    def close(self) -> None:
        pass


class TwsAppend(StatefulProcessor):
    def __init__(self, size: int, change: int) -> None:
        self.size, self.change = size, change

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.segments = handle.getListState("segments", "segment binary")

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[pd.DataFrame]:
        for _ in rows:
            pass
        if self.segments.exists():
            self.segments.appendValue((os.urandom(self.change),))
        else:
            self.segments.put([(os.urandom(self.size),)])
        yield pd.DataFrame({"kg": [int(key[0])]})

    def close(self) -> None:
        pass


def apiws_whole(size: int) -> Any:
    def call(key: Any, frames: Any, state: Any) -> Iterator[pd.DataFrame]:
        for _ in frames:
            pass
        state.update((os.urandom(size),))
        yield pd.DataFrame({"kg": [int(key[0])]})
    return call


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def write_input(source: Path, batches: int) -> None:
    source.mkdir(parents=True)
    for i in range(batches):
        path = source / f"b{i:03d}.json"
        path.write_text("".join(json.dumps({"kg": g}) + "\n" for g in range(GROUPS)))
        os.utime(path, (1_000_000 + 10 * i, 1_000_000 + 10 * i))


def run(spark: Any, root: Path, layout: str, args: Any) -> dict[str, float]:
    source, checkpoint = root / "in", root / layout / "ck"
    shutil.rmtree(root / layout, ignore_errors=True)
    spark.conf.set("spark.sql.streaming.stateStore.providerClass",
                   HDFS if layout == "apiws_whole" else ROCKSDB)
    df = spark.readStream.schema("kg int").option("maxFilesPerTrigger", 1).json(str(source))
    grouped = df.groupBy("kg")
    if layout == "apiws_whole":
        out = grouped.applyInPandasWithState(
            apiws_whole(args.state), "kg int", "blob binary", "append",
            GroupStateTimeout.NoTimeout)
    else:
        processor = (TwsWhole(args.state) if layout == "tws_whole"
                     else TwsAppend(args.state, args.change))
        out = grouped.transformWithStateInPandas(processor, "kg int", "Append", "None")
    sizes: list[int] = []

    def sink(frame: Any, batch_id: int) -> None:
        frame.count()
        sizes.append(_size(checkpoint / "state") if (checkpoint / "state").exists() else 0)

    query = (out.writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    later = [p for p in query.recentProgress if p["numInputRows"]][2:]
    growth = [b - a for a, b in zip(sizes[2:], sizes[3:])]
    return {
        "trigger_ms": statistics.median(p["durationMs"]["triggerExecution"] for p in later),
        "commit_ms": statistics.median(p["stateOperators"][0]["commitTimeMs"] for p in later),
        "growth_bytes": statistics.median(growth) if growth else 0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", type=int, default=1_300_000, help="bytes per key group")
    parser.add_argument("--change", type=int, default=20_000, help="bytes per micro-batch")
    parser.add_argument("--batches", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="p31layouts"))
    try:
        write_input(root / "in", args.batches)
        print(f"{GROUPS} key groups, {args.state:,} bytes of state each, {args.change:,} bytes "
              f"changed per micro-batch, {args.batches} batches, load {os.getloadavg()[0]:.2f}",
              flush=True)
        for r in range(args.rounds):
            for layout in ("apiws_whole", "tws_whole", "tws_append"):
                result = run(spark, root, layout, args)
                print(f"round {r + 1} {layout:11s} " + ", ".join(
                    f"{k} {v:,.0f}" for k, v in result.items()), flush=True)
        print(f"load at the end {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
