"""Probe (issue 31 performance, no Spark): the CPU time of the distributed HotItems plan's own
Python work per micro-batch, piece by piece, in one process.

HotItems as ``bench_hotitems.py`` builds it (sliding 60 min / 5 min ``aggregate(CountAgg,
WindowResultFunction)`` keyed by ``itemId``, then ``key_by(windowEnd).process(TopN(3))``), run
as the distributed plan runs it (``flinkwin.operator.graph_chain``): node 1's key groups take
their rows (``run_sources``), node 2's key groups (by ``windowEnd``) get node 1's firings.
Per micro-batch and key group it times, on the thread's CPU clock: node 1's run, its snapshot
and seal (what a call writes to Spark's state), a restore from that snapshot (what a call
pays when the worker's cache misses), the elements between the nodes on the wire (the old
encoding: cloudpickle of the Emission list; the new: ``emission_wire``), node 2's run and
snapshot; and the garbage collection the worker runs: PySpark's daemon runs a full
``gc.collect()`` after every task (here: after each of ``--partitions`` state partitions' calls
per node and micro-batch) unless flinkwin's ``young_collections_only`` makes it ``gc.collect(1)``
(``--gc flinkwin``, which also holds automatic collections off during a call, as
``automatic_collection_paused`` does).

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_31_chain_cpu.py \
        [--events 300000 --items 10000 --files 10 --key-groups 16] [--gc pyspark|flinkwin]
"""

from __future__ import annotations

import argparse
import gc
import secrets
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
from pyspark import cloudpickle

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

import bench_hotitems as hot  # noqa: E402

from flinkwin import SlidingEventTimeWindows, Time  # noqa: E402
from flinkwin.operator import WindowOperator, emission_wire  # noqa: E402
from flinkwin.operator.graph import OPERATOR, GraphPlan, NodeSpec, SourceSpec  # noqa: E402
from flinkwin.operator.graph_chain import ChainStep, key_group_of  # noqa: E402
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator  # noqa: E402
from flinkwin.operator.runtime_context import TaskInfo  # noqa: E402
from flinkwin.operator.snapshots import SnapshotBinding, StatePickler  # noqa: E402


def plan() -> GraphPlan:
    def counts(info: TaskInfo) -> WindowOperator:
        return WindowOperator(
            SlidingEventTimeWindows.of(Time.milliseconds(hot.SIZE_MS),
                                       Time.milliseconds(hot.SLIDE_MS)),
            (hot.CountAgg(), hot.WindowResultFunction()), key_selector="itemId",
            task_info=info)

    def top(info: TaskInfo) -> KeyedProcessOperator:
        return KeyedProcessOperator(hot.TopN(3), lambda r: r.windowEnd, task_info=info)

    source = SourceSpec(("_fw_i0_0", "_fw_i0_1", "_fw_i0_2"), ("itemId", "userId", "ts"),
                        delay_ms=hot.DELAY_MS)
    nodes = (NodeSpec("counts", OPERATOR, ((("source", 0), 0),), build=counts),
             NodeSpec("top", OPERATOR, ((("node", 0), 0),), build=top))
    return GraphPlan((source,), nodes, ("node", 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--key-groups", type=int, default=16)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--gc", choices=["pyspark", "flinkwin"], default="pyspark")
    args = parser.parse_args()
    paused = args.gc == "flinkwin"

    def task_end() -> None:  # what the daemon runs after each task
        c = t()
        gc.collect(1) if paused else gc.collect()
        cpu["daemon's collection after each task"] += t() - c

    def call_start() -> None:
        if paused:
            gc.disable()

    def call_end() -> None:
        if paused:
            gc.enable()

    rng = np.random.default_rng(42)
    weights = 1.0 / (np.arange(args.items) + 10.0)
    weights /= weights.sum()
    per = args.events // args.files
    span = 10 * 60_000
    g = plan()
    kgs = args.key_groups
    sealer = StatePickler(key=secrets.token_bytes(32), dumps=cloudpickle.dumps)
    old_wire = StatePickler(key=secrets.token_bytes(32), dumps=cloudpickle.dumps)
    new_wire = StatePickler(key=secrets.token_bytes(32), dumps=emission_wire.dumps)
    item_group = np.array([key_group_of(int(i), kgs) for i in range(args.items)])
    steps1 = {kg: ChainStep(g, 0, TaskInfo("counts", kg, kgs, kgs), kgs) for kg in range(kgs)}
    steps2: dict[int, ChainStep] = {}
    cpu: dict[str, float] = defaultdict(float)
    t = time.thread_time
    sizes: dict[str, int] = defaultdict(int)
    watermark = -2**63
    for b in range(args.files):
        start = hot.T0_MS + b * span
        ts = np.sort(rng.integers(start, start + span, per, dtype=np.int64))
        items = rng.choice(args.items, per, p=weights).astype(np.int64)
        frame = pd.DataFrame({"_fw_in": np.zeros(per, dtype=np.int64), "_fw_i0_0": items,
                              "_fw_i0_1": rng.integers(0, 10**6, per), "_fw_i0_2": ts})
        groups = item_group[items]
        pending = []
        for kg in range(kgs):
            if kg and kg % (kgs // args.partitions) == 0:
                task_end()
            call_start()
            rows = np.flatnonzero(groups == kg)
            s = steps1[kg]
            c = t()
            out = s.run_sources((frame.iloc[rows].reset_index(drop=True), ts[rows]),
                                watermark, b)
            cpu["node 1 run (elements, firings)"] += t() - c
            c = t()
            binding = SnapshotBinding("q", "node 0", str(kg))
            sealed = sealer.seal(s.snapshot(), binding)
            cpu["node 1 snapshot + seal (every call)"] += t() - c
            sizes["node 1 snapshot bytes"] += len(sealed)
            c = t()
            fresh = ChainStep(g, 0, TaskInfo("counts", kg, kgs, kgs), kgs)
            fresh.restore(sealer.unseal(sealed, binding))
            cpu["node 1 restore (per cache miss; x calls)"] += t() - c
            by_target = defaultdict(list)
            for e in out:
                by_target[e.key_group].append(e)
            for items_ in by_target.values():
                c = t()
                back = old_wire.load(old_wire.dump(items_))
                cpu["wire before (cloudpickle of Emissions)"] += t() - c
                c = t()
                back = emission_wire.unpack(new_wire.load(new_wire.dump(
                    emission_wire.pack(items_))))
                cpu["wire after (emission_wire)"] += t() - c
                pending.extend(back)
            call_end()
        task_end()
        inbox = defaultdict(list)
        for e in pending:
            inbox[e.key_group].append(e)
        for kg in sorted(set(inbox) | set(steps2)):
            call_start()
            s = steps2.get(kg) or ChainStep(g, 1, TaskInfo("top", kg, kgs, kgs), kgs)
            c = t()
            s.run(inbox.get(kg, []), watermark, b)
            cpu["node 2 run (TopN)"] += t() - c
            sizes["node 2 elements"] += len(inbox.get(kg, []))
            c = t()
            if s.holds_nothing():
                steps2.pop(kg, None)
            else:
                sealer.seal(s.snapshot(), SnapshotBinding("q", "node 1", str(kg)))
                steps2[kg] = s
            cpu["node 2 snapshot + seal"] += t() - c
            call_end()
        task_end()
        task_end()
        watermark = int(ts.max()) - hot.DELAY_MS - 1
    total = sum(v for k, v in cpu.items() if "before" not in k and "miss" not in k)
    print(f"{args.events:,} events, {args.items:,} items, {args.files} batches, {kgs} key "
          f"groups, gc {args.gc}; CPU seconds (thread clock), per micro-batch in ms:")
    for k, v in sorted(cpu.items(), key=lambda x: -x[1]):
        print(f"  {k:45s} {v:7.2f} s  {1000 * v / args.files:8.1f} ms/batch")
    print(f"  (run + snapshot + wire after + node 2: {total:.2f} s = "
          f"{1e6 * total / args.events:.1f} us/event)")
    for k, v in sizes.items():
        print(f"  {k}: {v / args.files:,.0f} per batch")


if __name__ == "__main__":
    main()
