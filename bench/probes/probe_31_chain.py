"""Issue 31, probe A: two stateful Python operators in ONE streaming query with a re-keying
shuffle between them (Deliver point 1).

Shape (flinkwin's HotItems in miniature): op1 keyed by ``k`` counts events in 10 s tumbling
windows with its own lateness (a late event re-fires its window at once, as Flink does within
allowed lateness), firing on an event-time timer at ``wend - 1``; op2 is keyed by ``wend``
(the re-keying shuffle) and sums the counts, firing at its own timer ``wend`` (so it must see
op1's firing before its watermark passes ``wend``). op2 also emits a ``seen`` row for every
input row with the watermark it sees, so we can tell in which micro-batch an upstream firing
arrives and whether a late firing survives the shuffle.

Run: PYTHONPATH=$PWD python bench/probes/probe_31_chain.py MODE [options]
MODE: tws-tws | apiws-apiws | apiws-tws | tws-union-tws (op2 also reads the source rows)
| tws-tws-agg (TWS then Spark groupBy(wend).sum, update mode)
options: --hdfs (default provider), --nocheck (checkCorrectness off), --keep-meta (do not hide
the watermark metadata from op1's input), --etcol (op1 eventTimeColumnName='ts'),
--policy max.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.state import GroupStateTimeout

WIN = 10_000
OUT1 = "k string, wend long, cnt long, ts timestamp, kind string, wm1 long"
OUT2 = "kind string, wend long, k string, cnt long, wm2 long"

# one file per micro-batch: (k, seconds)
FILES = [
    [("a", 1), ("b", 2), ("a", 12)],  # wm -> 12s: window [0,10) due
    [("a", 5), ("c", 25)],  # a@5 late (op1 re-fires [0,10)), wm -> 25s
    [("b", 31)],  # wm -> 31s
    # --- restart here ---
    [("a", 8), ("d", 45)],  # a@8 late again, wm -> 45s
    [("e", 61)],
]
RESTART_AT = 3


def ms(ts: pd.Series) -> pd.Series:
    return pd.to_datetime(ts).astype("datetime64[ms]").astype("int64")


class Op1Tws(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.h = handle
        self.counts = handle.getMapState("counts", "wend long", "cnt long")

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = timerValues.getCurrentWatermarkInMs()
        out = []
        for pdf in rows:
            for t in ms(pdf["ets"]):
                wend = (t // WIN + 1) * WIN
                if wend - 1 <= wm:  # flinkwin's own lateness: re-fire at once
                    out.append((key[0], wend, 1, pd.Timestamp(wend - 1, unit="ms"), "late", wm))
                    continue
                cur = self.counts.getValue((wend,))
                self.counts.updateValue((wend,), ((cur[0] if cur else 0) + 1,))
                self.h.registerTimer(wend - 1)
        if out:
            yield pd.DataFrame(out, columns=OUT1_COLS)

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        wend = expiredTimerInfo.getExpiryTimeInMs() + 1
        cur = self.counts.getValue((wend,))
        self.counts.removeKey((wend,))
        wm = timerValues.getCurrentWatermarkInMs()
        yield pd.DataFrame(
            [(key[0], wend, cur[0] if cur else -1, pd.Timestamp(wend - 1, unit="ms"), "fire", wm)],
            columns=OUT1_COLS,
        )

    def close(self) -> None:
        pass


OUT1_COLS = ["k", "wend", "cnt", "ts", "kind", "wm1"]
OUT2_COLS = ["kind", "wend", "k", "cnt", "wm2"]


class Op2Tws(StatefulProcessor):
    def init(self, handle: StatefulProcessorHandle) -> None:
        self.h = handle
        self.total = handle.getValueState("total", "total long")
        self.clock = handle.getValueState("clock", "wm long, tick long")

    def handleInputRows(self, key, rows, timerValues) -> Iterator[pd.DataFrame]:
        wm = timerValues.getCurrentWatermarkInMs()
        wend = int(key[0])
        out = []
        clock = self.clock.get() if self.clock.exists() else None
        out.append(("clock-before-input", wend, "*", clock[0] if clock else -99, wm))
        if clock is None:  # tick: a timer just past the watermark wakes the key at every advance
            self.clock.update((wm, wm + 1))
            self.h.registerTimer(wm + 1)
        tot = self.total.get()[0] if self.total.exists() else 0
        for pdf in rows:
            for r in pdf.itertuples():
                out.append(("seen:" + r.kind, wend, f"{r.k}@wm1={r.wm1}", int(r.cnt), wm))
                tot += int(r.cnt)
        if wend <= wm:  # behind op2's current watermark: does a timer registered now fire?
            out.append(("behind2", wend, "*", tot, wm))
        self.h.registerTimer(wend)
        self.total.update((tot,))
        yield pd.DataFrame(out, columns=OUT2_COLS)

    def handleExpiredTimer(self, key, timerValues, expiredTimerInfo) -> Iterator[pd.DataFrame]:
        wend = int(key[0])
        wm = timerValues.getCurrentWatermarkInMs()
        clock = self.clock.get()
        if expiredTimerInfo.getExpiryTimeInMs() == clock[1]:
            self.clock.update((wm, wm + 1))
            self.h.registerTimer(wm + 1)
            yield pd.DataFrame([("tick", wend, "*", clock[0], wm)], columns=OUT2_COLS)
            return
        tot = self.total.get()[0] if self.total.exists() else -1
        yield pd.DataFrame([("fire2", wend, "*", tot, wm)], columns=OUT2_COLS)

    def close(self) -> None:
        pass


def op1_apiws(key, pdfs, state):
    """op1 as applyInPandasWithState: state = json {wend: cnt}; timeout = earliest window end."""
    wm = state.getCurrentWatermarkMs()
    counts = {int(w): c for w, c in json.loads(state.get[0]).items()} if state.exists else {}
    out = []
    if state.hasTimedOut:
        for wend in sorted(w for w in counts if w - 1 <= wm):
            out.append(
                (key[0], wend, counts.pop(wend), pd.Timestamp(wend - 1, unit="ms"), "fire", wm)
            )
    else:
        for pdf in pdfs:
            for t in ms(pdf["ets"]):
                wend = (t // WIN + 1) * WIN
                if wend - 1 <= wm:
                    out.append((key[0], wend, 1, pd.Timestamp(wend - 1, unit="ms"), "late", wm))
                else:
                    counts[wend] = counts.get(wend, 0) + 1
    if counts:
        state.update((json.dumps({str(w): c for w, c in counts.items()}),))
        state.setTimeoutTimestamp(min(counts) - 1)
    else:
        state.remove()
    yield pd.DataFrame(out, columns=OUT1_COLS)


def op2_apiws(key, pdfs, state):
    wm = state.getCurrentWatermarkMs()
    wend = int(key[0])
    tot = state.get[0] if state.exists else 0
    out = []
    if state.hasTimedOut:
        out.append(("fire2", wend, "*", tot, wm))
        state.remove()
        yield pd.DataFrame(out, columns=OUT2_COLS)
        return
    for pdf in pdfs:
        for r in pdf.itertuples():
            out.append(("seen:" + r.kind, wend, f"{r.k}@wm1={r.wm1}", int(r.cnt), wm))
            tot += int(r.cnt)
    if wend <= wm:
        out.append(("behind2", wend, "*", tot, wm))
    state.update((tot,))
    state.setTimeoutTimestamp(wend)
    yield pd.DataFrame(out, columns=OUT2_COLS)


def main() -> None:
    mode = sys.argv[1]
    opts = set(sys.argv[2:])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    b = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "true")
    )
    if "--hdfs" not in opts:
        b = b.config(
            "spark.sql.streaming.stateStore.providerClass",
            "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        )
    if "--nocheck" in opts:
        b = b.config("spark.sql.streaming.statefulOperator.checkCorrectness.enabled", "false")
    if "--policy-max" in opts:
        b = b.config("spark.sql.streaming.multipleWatermarkPolicy", "max")
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="p31chain")
    src, ckpt = os.path.join(root, "in"), os.path.join(root, "ckpt")
    os.makedirs(src)

    def build():
        df = (
            spark.readStream.schema("k string, ts timestamp")
            .option("maxFilesPerTrigger", 1)
            .json(src)
            .withWatermark("ts", "0 seconds")
        )
        if "--keep-meta" in opts or mode.startswith("apiws"):  # apiws needs the mark
            df = df.select("k", F.col("ts").alias("ets"))
        else:  # hide the watermark metadata: a computed copy, watermarked column dropped
            df = df.select("k", (F.col("ts") + F.expr("INTERVAL 0 SECONDS")).alias("ets"))
        g1 = df.groupBy("k")
        if mode.startswith("tws"):
            kw = {"eventTimeColumnName": "ts"} if "--etcol" in opts else {}
            s1 = g1.transformWithStateInPandas(Op1Tws(), OUT1, "Append", "EventTime", **kw)
        else:
            s1 = g1.applyInPandasWithState(
                op1_apiws, OUT1, "value string", "append", GroupStateTimeout.EventTimeTimeout
            )
        if mode == "tws-union-tws":  # a two-input op2: op1's firings and the raw source rows
            raw = df.select(
                "k",
                (F.floor(F.col("ets").cast("long") / 10) * 10000 + 10000).alias("wend"),
                F.lit(1).cast("long").alias("cnt"),
                F.col("ets").alias("ts"),
                F.lit("src").alias("kind"),
                F.lit(-1).cast("long").alias("wm1"),
            )
            s1 = s1.unionByName(raw)
        if mode == "tws-tws-agg":
            return s1.groupBy("wend").agg(F.sum("cnt").alias("c"))
        g2 = s1.groupBy("wend")
        if mode.endswith("-tws"):  # tws-tws, apiws-tws, tws-union-tws
            return g2.transformWithStateInPandas(Op2Tws(), OUT2, "Append", "EventTime")
        return g2.applyInPandasWithState(
            op2_apiws, OUT2, "tot long", "append", GroupStateTimeout.EventTimeTimeout
        )

    log: list[tuple] = []

    def sink(bdf, bid):
        for r in bdf.collect():
            log.append((bid, *r))

    def run(files):
        q = build().writeStream.foreachBatch(sink).option("checkpointLocation", ckpt)
        q = q.outputMode("update" if mode == "tws-tws-agg" else "append").start()
        try:
            for i, rows in files:
                with open(os.path.join(src, f"f{i:03d}.json"), "w") as fh:
                    for k, s in rows:
                        fh.write(
                            json.dumps({"k": k, "ts": f"1970-01-01T00:{s // 60:02d}:{s % 60:02d}Z"})
                            + "\n"
                        )
                q.processAllAvailable()
                time.sleep(2.5)  # let the no-data batch for the new watermark run
                q.processAllAvailable()
                p = q.lastProgress
                print(
                    f"  file {i}: batch {p['batchId']} wm {p.get('eventTime', {}).get('watermark')}"
                )
        finally:
            q.stop()
        if q.exception():
            raise q.exception()

    try:
        run(list(enumerate(FILES))[:RESTART_AT])
        print("  --- restart from checkpoint ---")
        run(list(enumerate(FILES))[RESTART_AT:])
    except Exception as e:  # noqa: BLE001
        msg = [m for m in str(e).split("\n") if m.strip() and not m.strip().startswith("at ")]
        print("FAILED:", type(e).__name__, " | ".join(msg[:3])[:900])
    finally:
        for r in sorted(log, key=lambda r: (r[0], str(r[1:]))):
            print("  ", r)
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
