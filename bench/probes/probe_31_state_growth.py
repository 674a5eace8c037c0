"""Issue 31, probe B: per-micro-batch cost as the held state grows (Deliver point 2).

One session, one data set per size: a first file with one event per key (N keys, all in the
same daily window, so N windows held), then BATCHES files of 10k events on random keys of the
same day (nothing fires; the watermark stays inside the day). Each variant is its own query
(fresh checkpoint) over the same files, maxFilesPerTrigger=1, availableNow, noop sink; the
per-batch time is lastProgress durationMs.triggerExecution of the 10k-event batches.

Variants:
  kg-apiws   applyInPandasWithState grouped by key group (16), the group's whole state one Arrow
             IPC snapshot rewritten every batch (flinkwin's layout today); HDFS provider
  key-apiws  applyInPandasWithState grouped per user key, count per key; HDFS provider
  kg-tws     transformWithStateInPandas grouped by key group (16), MapState (k, wstart)->count,
             only touched entries read/written, one timer per group; RocksDB provider
  kg-tws-log transformWithStateInPandas grouped by key group (16), the group's panes a change log
             in a ListState: one appendList of the changed panes per batch, reads served by a
             worker cache (the log replayed on a miss), compacted when twice the live size
  kg-apiws-rdb  kg-apiws on the RocksDB provider
  key-tws    transformWithStateInPandas grouped per user key, ValueState + timer; RocksDB
  native     groupBy(window(ts, 1 day), k).count(), append mode; HDFS provider
  native-rdb the same on RocksDB

Run: PYTHONPATH=$PWD python bench/probes/probe_31_state_growth.py N1,N2 variant,variant ...
"""

from __future__ import annotations

import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.state import GroupStateTimeout

DAY = 86_400_000
BATCH = 10_000
BATCHES = 5
KG = 16
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"


def write_data(root: str, n: int) -> str:
    src = os.path.join(root, f"in{n}")
    os.makedirs(src)
    rng = np.random.default_rng(7)
    base = pd.Timestamp("2026-01-01")
    keys = np.array([f"k{i:07d}" for i in range(n)])
    first = pd.DataFrame(
        {
            "k": keys,
            "ts": (base + pd.to_timedelta(rng.integers(0, 3600_000, n), "ms")).astype(
                "datetime64[us]"
            ),
        }
    )
    first.to_parquet(os.path.join(src, "f000.parquet"), index=False)
    for b in range(1, BATCHES + 1):
        ks = keys[rng.integers(0, n, BATCH)]
        ts = base + pd.to_timedelta(3600_000 * b + rng.integers(0, 3600_000, BATCH), "ms")
        pd.DataFrame({"k": ks, "ts": ts.astype("datetime64[us]")}).to_parquet(
            os.path.join(src, f"f{b:03d}.parquet"), index=False
        )
    return src


def kg_apiws(key, pdfs, state):
    if state.hasTimedOut:
        state.remove()
        return
    rows = pd.concat(list(pdfs))
    wstart = rows["ts"].astype("datetime64[ms]").astype("int64") // DAY * DAY
    new = (
        pd.DataFrame({"k": rows["k"].to_numpy(), "w": wstart.to_numpy()}).value_counts().rename("c")
    )
    new = new.reset_index()
    if state.exists:
        old = pa.ipc.open_stream(io.BytesIO(state.get[0])).read_pandas()
        new = pd.concat([old, new]).groupby(["k", "w"], as_index=False)["c"].sum()
    sink = io.BytesIO()
    table = pa.Table.from_pandas(new, preserve_index=False)
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    state.update((sink.getvalue(),))
    state.setTimeoutTimestamp(int(new["w"].min()) + DAY - 1)
    yield pd.DataFrame({"n": [len(new)]})


def key_apiws(key, pdfs, state):
    if state.hasTimedOut:
        state.remove()
        return
    n = sum(len(p) for p in pdfs)
    c = (state.get[0] if state.exists else 0) + n
    state.update((c,))
    state.setTimeoutTimestamp(int(pd.Timestamp("2026-01-02").value // 1_000_000) - 1)
    return iter(())


class KgTws(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.h = handle
        self.m = handle.getMapState("panes", "k string, w long", "c long")

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        pdf = pd.concat(list(rows))
        w = pdf["ts"].astype("datetime64[ms]").astype("int64") // DAY * DAY
        counts = pd.DataFrame({"k": pdf["k"].to_numpy(), "w": w.to_numpy()}).value_counts()
        for (k, wv), c in counts.items():
            old = self.m.getValue((k, int(wv)))
            self.m.updateValue((k, int(wv)), ((old[0] if old else 0) + int(c),))
        for wv in np.unique(w.to_numpy()):
            self.h.registerTimer(int(wv) + DAY - 1)
        return iter(())

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        return iter(())

    def close(self) -> None:
        pass


def _cache() -> dict:
    """Worker-local key group -> (version, panes), as flinkwin's operator cache; kept on an
    imported module (a __main__ global is pickled by value: a fresh dict in every task)."""
    import pyspark

    return pyspark.__dict__.setdefault("_p31_cache", {})


def _ipc(panes: pd.Series) -> bytes:
    table = pa.Table.from_pandas(panes.rename("c").reset_index(), preserve_index=False)
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def _read_ipc(blob: bytes) -> pd.DataFrame:
    return pa.ipc.open_stream(io.BytesIO(blob)).read_pandas()


class KgTwsLog(StatefulProcessor):
    """Key group state as a change log: each batch appends the panes it changed (one appendList
    call), a worker cache serves reads; the log is read whole only on a cache miss."""

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.h = handle
        self.log = handle.getListState("log", "b binary")
        self.ver = handle.getValueState("ver", "v long, n long")

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        kg = int(key[0])
        ver = self.ver.get() if self.ver.exists() else (0, 0)
        cached = _cache().get(kg)
        miss = not (cached is not None and cached[0] == ver[0])
        if not miss:
            panes = cached[1]
        elif ver[0] == 0:
            panes = pd.Series(
                dtype="int64", index=pd.MultiIndex.from_arrays([[], []], names=["k", "w"])
            )
        else:  # cache miss: replay the log (last write wins)
            log = pd.concat([_read_ipc(r[0]) for r in self.log.get()])
            panes = log.drop_duplicates(["k", "w"], keep="last").set_index(["k", "w"])["c"]
        pdf = pd.concat(list(rows))
        w = pdf["ts"].astype("datetime64[ms]").astype("int64") // DAY * DAY
        counts = pd.DataFrame({"k": pdf["k"].to_numpy(), "w": w.to_numpy()}).value_counts()
        changed = counts.add(panes.reindex(counts.index), fill_value=0).astype("int64")
        panes = pd.concat([panes.drop(changed.index, errors="ignore"), changed])
        n = ver[1] + len(changed)
        if n > 2 * len(panes) + 1000:  # compact: rewrite the live panes as one entry
            self.log.put([(_ipc(panes),)])
            n = len(panes)
        else:  # one entry per batch: the changed panes as one Arrow IPC blob
            self.log.appendValue((_ipc(changed),))
        new_ver = ver[0] + 1
        self.ver.update((new_ver, n))
        _cache()[kg] = (new_ver, panes)
        for wv in np.unique(w.to_numpy()):
            self.h.registerTimer(int(wv) + DAY - 1)
        return iter([pd.DataFrame({"n": [1]})] if miss else [])  # output rows = cache misses

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        return iter(())

    def close(self) -> None:
        pass


class KeyTws(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.h = handle
        self.v = handle.getValueState("c", "c long")

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        n = sum(len(p) for p in rows)
        had = self.v.exists()
        self.v.update(((self.v.get()[0] if had else 0) + n,))
        if not had:
            self.h.registerTimer(int(pd.Timestamp("2026-01-02").value // 1_000_000) - 1)
        return iter(())

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        return iter(())

    def close(self) -> None:
        pass


def plan(spark, src, variant):
    df = (
        spark.readStream.schema("k string, ts timestamp")
        .option("maxFilesPerTrigger", 1)
        .parquet(src)
    )
    df = df.withWatermark("ts", "1 hour")
    if variant in ("kg-apiws", "kg-apiws-rdb"):
        return (
            df.withColumn("kg", F.expr(f"pmod(hash(k), {KG})"))
            .groupBy("kg")
            .applyInPandasWithState(
                kg_apiws, "n long", "snap binary", "append", GroupStateTimeout.EventTimeTimeout
            )
        )
    if variant == "key-apiws":
        return df.groupBy("k").applyInPandasWithState(
            key_apiws, "n long", "c long", "append", GroupStateTimeout.EventTimeTimeout
        )
    if variant == "kg-tws":
        df = df.withColumn("kg", F.expr(f"pmod(hash(k), {KG})"))
        return df.groupBy("kg").transformWithStateInPandas(KgTws(), "n long", "Append", "EventTime")
    if variant == "kg-tws-log":
        df = df.withColumn("kg", F.expr(f"pmod(hash(k), {KG})"))
        return df.groupBy("kg").transformWithStateInPandas(
            KgTwsLog(), "n long", "Append", "EventTime"
        )
    if variant == "key-tws":
        return df.groupBy("k").transformWithStateInPandas(KeyTws(), "n long", "Append", "EventTime")
    return df.groupBy(F.window("ts", "1 day"), "k").count()


def run(spark, root, src, n, variant):
    provider = (
        ROCKSDB
        if variant in ("kg-tws", "kg-tws-log", "key-tws", "native-rdb", "kg-apiws-rdb")
        else HDFS
    )
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", provider)
    ckpt = os.path.join(root, f"ck-{variant}-{n}")
    q = (
        plan(spark, src, variant)
        .writeStream.format("noop")
        .outputMode("append")
        .option("checkpointLocation", ckpt)
        .trigger(availableNow=True)
        .start()
    )
    t0 = time.time()
    q.awaitTermination()
    wall = time.time() - t0
    if q.exception():
        print(f"{variant:10s} N={n}: FAILED {str(q.exception()).splitlines()[0][:300]}")
        return
    prog = [p for p in q.recentProgress if p["numInputRows"] > 0]
    load = prog[0]["durationMs"]["triggerExecution"]
    per = [p["durationMs"]["triggerExecution"] for p in prog[1:]]
    outs = [p["sink"]["numOutputRows"] for p in prog[1:]]
    state = prog[-1]["stateOperators"][0] if prog[-1]["stateOperators"] else {}
    print(
        f"{variant:10s} N={n:7d}: load {load:7d} ms | 10k batches {per} ms, median "
        f"{statistics.median(per):7.0f} | stateRows {state.get('numRowsTotal')} "
        f"updated {state.get('numRowsUpdated')} mem {state.get('memoryUsedBytes')} "
        f"| wall {wall:.0f}s "
        f"| out rows {outs} | load avg {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    sizes = [int(s) for s in sys.argv[1].split(",")]
    variants = sys.argv[2].split(",")
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "3g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="p31grow")
    try:
        for n in sizes:
            src = write_data(root, n)
            for v in variants:  # "name:max" runs name only up to max held keys
                name, _, cap = v.partition(":")
                if not cap or n <= int(cap):
                    run(spark, root, src, n, name)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
