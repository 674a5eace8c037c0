"""Issue 31, probe D: flinkwin's own ChainStep (flinkwin/operator/graph_chain.py) in chained
transformWithStateInPandas (TWS) operators, one per keyed node, each grouped by its own key
group, in ONE streaming query; results against GraphOperator (the whole graph in one place).

Graph: HotItems (sliding 20 s / 10 s count per item with 15 s allowed lateness and a late
side output, then key_by(window_end).process(TopN) firing at the window end). Plumbing, as
the design of FINDINGS-31.md section C says:

* sources' step: ``mapInArrow`` running ``ChainStep(plan, None)`` (no watermark metadata on
  its output);
* node j: the emissions to node j, ``groupBy(_fw_kg).transformWithStateInPandas`` in
  EventTime mode, no eventTimeColumnName; per key group a ValueState with the step's snapshot
  and a ValueState with its tick timer (``spark watermark + 1``) kept while the step holds
  anything; elements and outputs travel pickled in a binary column (a probe only: the product
  would encode them by the streams' types or seal them);
* one linear chain: every row passes every node's TWS (grouped by its key group), which runs
  the rows sent to it and passes the others on (a stateful operator read by two consumers is
  planned twice, with two states: found in this probe's first run); ``foreachBatch`` records
  the rows sent to no node (the outputs) per batch id.

One file per micro-batch (``maxFilesPerTrigger=1``), the driver waits for the no-data batch
after each; stop and restart from the checkpoint after file 2; RocksDB set on the session.
The oracle replays the same batches (rows, Flink watermark from each batch's progress) into
GraphOperator and the probe compares every batch's outputs.

Run: cd <worktree> && PYTHONPATH=$PWD python bench/probes/probe_31_chainstep.py
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle

from flinkwin import (
    ListStateDescriptor,
    OutputTag,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
)
from flinkwin.functions import KeyedProcessFunction
from flinkwin.operator import WindowOperator
from flinkwin.operator.graph import OPERATOR, GraphOperator, GraphPlan, NodeSpec, SourceSpec
from flinkwin.operator.graph_chain import ChainStep, Emission, keyed_nodes
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.spark.watermarks import flink_watermark

KEY_GROUPS = 8
LATE = OutputTag("late")
FILES = [
    [("a1", 1000), ("a2", 2000), ("a1", 3000), ("b1", 12000)],
    [("a1", 5000), ("c1", 25000), ("a2", 14000)],  # a1@5s late, within lateness
    [("b1", 31000), ("a1", 8000)],
    # --- restart here ---
    [("a1", 2000), ("d1", 45000)],  # a1@2s: too late for every window: side output
    [("e1", 61000), ("a2", 44000)],
]
RESTART_AT = 3
WIRE = (
    "node int, idx int, kg int, tag string, value binary, ts long, phase int, "
    "o0 int, o1 int, o2 int, pw long, pt long"
)


class CountWithEnd(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, context.window().end, len(list(elements)))


class TopN(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.items = runtime_context.get_list_state(ListStateDescriptor("items", None))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.items.add(value)
        ctx.timer_service().register_event_time_timer(value[1])
        yield ("seen", value[0], value[2], ctx.timestamp(),
               ctx.timer_service().current_watermark())

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        items = sorted(self.items.get(), key=lambda t: (-t[2], t[0], t))
        self.items.clear()
        yield ("top", timestamp, tuple(items[:2]))


def counts(info: TaskInfo) -> WindowOperator:
    return WindowOperator(
        SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10)), CountWithEnd(),
        key_selector="k", allowed_lateness=15000, late_output_tag=LATE, task_info=info,
    )


def top(info: TaskInfo) -> KeyedProcessOperator:
    return KeyedProcessOperator(TopN(), lambda t: t[1], task_info=info)


PLAN = GraphPlan(
    (SourceSpec(("_fw_i0_0", "_fw_i0_1"), ("k", "v"), delay_ms=0),),
    (NodeSpec("counts", OPERATOR, ((("source", 0), 0),), build=counts),
     NodeSpec("top", OPERATOR, ((("node", 0), 0),), build=top)),
    ("node", 1), {LATE: ("side", 0, LATE)},
)
TAGS = {LATE.tag_id: LATE}


def encode(out: list[Emission]) -> pd.DataFrame:
    rows = [(
        -1 if e.node is None else e.node, e.input_index, e.key_group,
        None if e.tag is None else e.tag.tag_id, pickle.dumps(e.value), e.timestamp, e.phase,
        *e.order, *e.previous,
    ) for e in out]
    return pd.DataFrame(rows, columns=[c.split()[0] for c in WIRE.split(", ")])


def decode(pdf: pd.DataFrame) -> list[Emission]:
    return [Emission(
        None if r.node < 0 else int(r.node), int(r.idx), int(r.kg),
        None if r.tag is None else TAGS[r.tag], pickle.loads(r.value),
        None if pd.isna(r.ts) else int(r.ts), int(r.phase),
        (int(r.o0), int(r.o1), int(r.o2)), (int(r.pw), int(r.pt)),
    ) for r in pdf.itertuples(index=False)]


def sources_step(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    from pyspark import TaskContext

    context = TaskContext.get()
    partition = context.partitionId() if context is not None else 0
    step = ChainStep(PLAN, None, TaskInfo("Sources", partition, 1, 1), KEY_GROUPS)
    for batch in batches:
        pdf = batch.to_pandas()
        frame = pd.DataFrame({"_fw_in": 0, "_fw_i0_0": pdf["k"], "_fw_i0_1": pdf["v"]})
        stamps = pdf["ets"].to_numpy()
        out = encode(step.process_sources(frame, stamps))
        yield pa.RecordBatch.from_pandas(out, schema=WIRE_ARROW, preserve_index=False)


class NodeProcessor(StatefulProcessor):
    """Keyed node ``j`` of PLAN, one key group per grouping key."""

    def __init__(self, j: int) -> None:
        self.j = j

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.snap = handle.getValueState("snap", "b binary")
        self.tick = handle.getValueState("tick", "t long")

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[pd.DataFrame]:
        elements = [e for pdf in rows for e in decode(pdf)]
        mine = [e for e in elements if e.node == self.j]
        passing = [e for e in elements if e.node != self.j]  # for later nodes, outputs
        if passing:
            yield encode(passing)
        if mine or self.snap.exists():
            yield self._step(int(key[0]), mine, timerValues, None)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any
                           ) -> Iterator[pd.DataFrame]:
        yield self._step(int(key[0]), [], timerValues, expiredTimerInfo.getExpiryTimeInMs())

    def _step(self, kg: int, elements: list[Emission], timer_values: Any,
              expired: int | None) -> pd.DataFrame:
        spark_wm = timer_values.getCurrentWatermarkInMs()
        now = timer_values.getCurrentProcessingTimeInMs()
        step = ChainStep(PLAN, self.j, TaskInfo(PLAN.nodes[self.j].name, kg, KEY_GROUPS,
                                                KEY_GROUPS), KEY_GROUPS)
        if self.snap.exists():
            step.restore(self.snap.get()[0])
        out = step.run(elements, flink_watermark(spark_wm, 0), now)
        if self.tick.exists():
            old = self.tick.get()[0]
            if old != expired:
                self.handle.deleteTimer(old)
        if step.holds_nothing():
            self.snap.clear()
            self.tick.clear()
        else:
            self.snap.update((step.snapshot(),))
            self.tick.update((spark_wm + 1,))
            self.handle.registerTimer(spark_wm + 1)
        step.close()
        return encode(out)

    def close(self) -> None:
        pass


WIRE_ARROW = pa.schema([
    ("node", pa.int32()), ("idx", pa.int32()), ("kg", pa.int32()), ("tag", pa.string()),
    ("value", pa.binary()), ("ts", pa.int64()), ("phase", pa.int32()), ("o0", pa.int32()),
    ("o1", pa.int32()), ("o2", pa.int32()), ("pw", pa.int64()), ("pt", pa.int64()),
])


def record(items: list[tuple[Any, Any]]) -> Counter[Any]:
    return Counter((repr(v), ts) for v, ts in items)


def main() -> None:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.streaming.stateStore.providerClass",
                "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp(prefix="p31step")
    src, ckpt = os.path.join(root, "in"), os.path.join(root, "ckpt")
    os.makedirs(src)

    def build() -> Any:
        df = (spark.readStream.schema("k string, v long, ts timestamp")
              .option("maxFilesPerTrigger", 1).json(src)
              .withWatermark("ts", "1 millisecond"))  # Spark's = Flink's max - 0 - 1
        df = df.select("k", "v", F.unix_millis("ts").alias("ets"))  # no watermark metadata
        # ONE linear chain: a stateful operator read by two consumers would be planned twice
        # (two operators, two states); every row passes every node, which processes its own
        emitted = df.mapInArrow(sources_step, WIRE)
        for j in keyed_nodes(PLAN):
            emitted = emitted.groupBy("kg").transformWithStateInPandas(
                NodeProcessor(j), WIRE, "Append", "EventTime")
        return emitted

    log: dict[int, list[Emission]] = defaultdict(list)
    progress: dict[int, dict[str, Any]] = {}

    def sink(bdf: Any, bid: int) -> None:
        log[bid].extend(decode(bdf.toPandas()))

    def run(files: list[tuple[int, list[tuple[str, int]]]]) -> None:
        q = (build().writeStream.foreachBatch(sink).option("checkpointLocation", ckpt)
             .outputMode("append").start())
        try:
            for i, rows in files:
                with open(os.path.join(src, f"f{i:03d}.json"), "w") as fh:
                    for n, (k, t) in enumerate(rows):
                        iso = pd.Timestamp(t, unit="ms").strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3]
                        fh.write(json.dumps({"k": k, "v": n + 1, "ts": iso + "Z"}) + "\n")
                q.processAllAvailable()
                time.sleep(2.5)
                q.processAllAvailable()
            for p in q.recentProgress:
                progress[p["batchId"]] = p
        finally:
            q.stop()
        if q.exception():
            raise q.exception()

    try:
        run(list(enumerate(FILES))[:RESTART_AT])
        print("--- restart from the checkpoint ---")
        run(list(enumerate(FILES))[RESTART_AT:])
        # the oracle: the same batches into the whole graph
        whole = GraphOperator(replace(PLAN, own_watermarks=False), TaskInfo("Graph", 0, 1, 1))
        next_file = 0
        ok = True
        for bid in sorted(progress):
            p = progress[bid]
            wm_text = p.get("eventTime", {}).get("watermark", "1970-01-01T00:00:00.000Z")
            spark_wm = int(pd.Timestamp(wm_text).value // 1_000_000)
            whole.advance_watermark(flink_watermark(spark_wm, 0))
            states = [(s.get("numShufflePartitions"), s.get("numStateStoreInstances"),
                       s.get("operatorName")) for s in p.get("stateOperators", [])]
            if p["numInputRows"]:
                rows = FILES[next_file]
                next_file += 1
                frame = pd.DataFrame({"_fw_in": 0, "_fw_i0_0": [k for k, _ in rows],
                                      "_fw_i0_1": list(range(1, len(rows) + 1))})
                whole.process_batch(frame, [t for _, t in rows])
            expected_main = record(whole.drain_output())
            expected_side = record(
                [x for items in whole.drain_side_outputs().values() for x in items])
            got = log.get(bid, [])
            got_main = record([(e.value, e.timestamp) for e in got if e.tag is None])
            got_side = record([(e.value, e.timestamp) for e in got if e.tag is not None])
            same = got_main == expected_main and got_side == expected_side
            ok &= same
            print(f"batch {bid}: rows {p['numInputRows']} wm {spark_wm} state ops {states} "
                  f"{'SAME' if same else 'DIFFERENT'}")
            for v, ts in sorted(got_main.elements()):
                print("    main", v, ts)
            for v, ts in sorted(got_side.elements()):
                print("    side", v, ts)
            if not same:
                print("    expected main", sorted(expected_main.elements()))
                print("    expected side", sorted(expected_side.elements()))
        print("ALL BATCHES EQUAL" if ok else "SOME BATCHES DIFFER")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        spark.stop()


if __name__ == "__main__":
    main()
