"""Issue 31, point 2 (a micro-batch costs what it changes): what a transformWithStateInPandas
(TWS) operator on RocksDB with changelog checkpointing (the distributed graph's layout) pays per
micro-batch for a key group's state written whole, against the same state kept as a list whose
micro-batches append only what changed.

Two queries over the same input (16 key groups, one JSON file per micro-batch naming them all):

- ``whole``: each key group's ValueState holds one blob of ``--state`` bytes (the key group's
  snapshot as today), rewritten whole every micro-batch;
- ``append``: each key group's ListState holds segments; the first micro-batch puts the same
  ``--state`` bytes, each later one appends one segment of ``--change`` bytes (what the
  micro-batch changed), read back never (the worker's cache would hold the state).

Reported per query, for the micro-batches after the first: the median ``triggerExecution``
and the stateful operator's ``commitTimeMs``, and the bytes the checkpoint's state folder grew
by per micro-batch (RocksDB's changelog files and uploaded SST files).

Run: PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_31_tws_append.py [--state N] [--change N]
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

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
GROUPS = 16


class _KeyGroup(StatefulProcessor):
    """One call per key group and micro-batch: ``write`` stores its ``n``-th state (0 first)."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.count = handle.getValueState("n", "n long")
        self.open(handle)

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[pd.DataFrame]:
        for _ in rows:
            pass
        stored = self.count.get()
        n = 0 if stored is None else stored[0] + 1
        self.write(n)
        self.count.update((n,))
        yield pd.DataFrame({"kg": [int(key[0])], "n": [n]})

    def open(self, handle: StatefulProcessorHandle) -> None:
        raise NotImplementedError

    def write(self, n: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class Whole(_KeyGroup):
    """The key group's state as one blob, rewritten every call."""

    def __init__(self, size: int) -> None:
        self.size = size

    def open(self, handle: StatefulProcessorHandle) -> None:
        self.blob = handle.getValueState("blob", "blob binary")

    def write(self, n: int) -> None:
        self.blob.update((os.urandom(self.size),))


class Append(_KeyGroup):
    """The key group's state as segments: the whole state once, then one change per call."""

    def __init__(self, size: int, change: int) -> None:
        self.size, self.change = size, change

    def open(self, handle: StatefulProcessorHandle) -> None:
        self.segments = handle.getListState("segments", "segment binary")

    def write(self, n: int) -> None:
        if n == 0:
            self.segments.put([(os.urandom(self.size),)])
        else:
            self.segments.appendValue((os.urandom(self.change),))


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def run(spark: Any, root: Path, name: str, processor: StatefulProcessor, batches: int
        ) -> dict[str, float]:
    source, checkpoint = root / name / "in", root / name / "ck"
    source.mkdir(parents=True)
    sizes, progress = [], []
    for i in range(batches):
        path = source / f"b{i:03d}.json"
        path.write_text("".join(json.dumps({"kg": g}) + "\n" for g in range(GROUPS)))
        os.utime(path, (1_000_000 + 10 * i, 1_000_000 + 10 * i))
        df = spark.readStream.schema("kg int").option("maxFilesPerTrigger", 1).json(str(source))
        query = (
            df.groupBy("kg").transformWithStateInPandas(
                processor, "kg int, n long", "Append", "None")
            .writeStream.format("noop").option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True).start()
        )
        query.awaitTermination()
        progress.extend(p for p in query.recentProgress if p["numInputRows"])
        sizes.append(_size(checkpoint / "state"))
    later = progress[1:]
    growth = [b - a for a, b in zip(sizes[1:], sizes[2:])]
    return {
        "trigger_ms": statistics.median(p["durationMs"]["triggerExecution"] for p in later),
        "commit_ms": statistics.median(
            p["stateOperators"][0]["commitTimeMs"] for p in later),
        "state_growth_bytes": statistics.median(growth),
        "state_bytes": sizes[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", type=int, default=1_300_000, help="bytes per key group")
    parser.add_argument("--change", type=int, default=20_000, help="bytes per micro-batch")
    parser.add_argument("--batches", type=int, default=8)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
        .config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="p31append"))
    try:
        print(f"{GROUPS} key groups, {args.state:,} bytes of state each, "
              f"{args.change:,} bytes changed per micro-batch, load {os.getloadavg()[0]:.2f}")
        for name, processor in (("whole", Whole(args.state)),
                                ("append", Append(args.state, args.change)),
                                ("whole", Whole(args.state)),
                                ("append", Append(args.state, args.change))):
            shutil.rmtree(root / name, ignore_errors=True)
            result = run(spark, root, name, processor, args.batches)
            print(f"{name:7s} " + ", ".join(f"{k} {v:,.0f}" for k, v in result.items()))
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
