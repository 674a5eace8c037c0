"""Probe (issue 31, no Spark): HotItems' window node as the distributed graph plan runs it
(``ChainStep.run_sources`` of node 1, its snapshot, the emissions' wire) against the same
window as a window chain's key group runs it (``WindowOperator``: watermark, ``process_batch``,
drain, snapshot), over the same rows and key groups, on the thread's CPU clock, one process.
``--profile`` adds cProfile's top functions of the graph node's run.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_31_node_vs_chain.py \
        [--events 300000 --items 10000 --files 10 --key-groups 16] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "bench"), str(REPO / "bench" / "probes")]

import bench_hotitems as hot  # noqa: E402
from probe_31_chain_cpu import plan  # noqa: E402

from flinkwin import SlidingEventTimeWindows, Time  # noqa: E402
from flinkwin.functions.builtin import sum_of  # noqa: E402
from flinkwin.operator import WindowOperator, emission_wire  # noqa: E402
from flinkwin.operator.graph_chain import ChainStep, key_group_of  # noqa: E402
from flinkwin.operator.runtime_context import TaskInfo  # noqa: E402
from flinkwin.operator.states import new_state, state_kind  # noqa: E402


def window(info: TaskInfo) -> WindowOperator:
    return WindowOperator(
        SlidingEventTimeWindows.of(Time.milliseconds(hot.SIZE_MS), Time.milliseconds(hot.SLIDE_MS)),
        (hot.CountAgg(), hot.WindowResultFunction()), key_selector="itemId", task_info=info)


def counting(info: TaskInfo) -> WindowOperator:
    """The same windows with a built-in ``sum`` of a column of ones: a count the pane form
    (``states.panes``) can hold, for comparison only (HotItems' own user AggregateFunction and
    WindowFunction have no columnar form)."""
    return WindowOperator(
        SlidingEventTimeWindows.of(Time.milliseconds(hot.SIZE_MS), Time.milliseconds(hot.SLIDE_MS)),
        sum_of("views"), key_selector="itemId", task_info=info)


def batches(args: argparse.Namespace) -> list[tuple[pd.DataFrame, np.ndarray]]:
    rng = np.random.default_rng(42)
    weights = 1.0 / (np.arange(args.items) + 10.0)
    weights /= weights.sum()
    per, span = args.events // args.files, 10 * 60_000
    out = []
    for b in range(args.files):
        start = hot.T0_MS + b * span
        ts = np.sort(rng.integers(start, start + span, per, dtype=np.int64))
        items = rng.choice(args.items, per, p=weights).astype(np.int64)
        out.append((pd.DataFrame({"_fw_in": np.zeros(per, dtype=np.int64), "_fw_i0_0": items,
                                  "_fw_i0_1": rng.integers(0, 10**6, per), "_fw_i0_2": ts}), ts))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--key-groups", type=int, default=16)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    kgs = args.key_groups
    data = batches(args)
    group_of = np.array([key_group_of(int(i), kgs) for i in range(args.items)])
    g = plan()
    t = time.thread_time
    cpu: dict[str, float] = defaultdict(float)
    kind = state_kind(window(TaskInfo("w", 0, 1, 1)), True)
    chain = {kg: new_state(kind, lambda kg=kg: window(TaskInfo("w", kg, kgs, kgs)))
             for kg in range(kgs)}
    pane_kind = state_kind(counting(TaskInfo("w", 0, 1, 1)), True)
    panes = {kg: new_state(pane_kind, lambda kg=kg: counting(TaskInfo("w", kg, kgs, kgs)))
             for kg in range(kgs)}
    steps = {kg: ChainStep(g, 0, TaskInfo("counts", kg, kgs, kgs), kgs) for kg in range(kgs)}
    profiler = cProfile.Profile(t) if args.profile else None
    fired = {"chain": 0, "node": 0, "panes": 0}
    gc.disable()
    watermark = -2**63
    for frame, ts in data:
        groups = group_of[frame["_fw_i0_0"].to_numpy()]
        for kg in range(kgs):
            rows = np.flatnonzero(groups == kg)
            part = frame.iloc[rows].reset_index(drop=True)
            stamps = ts[rows]
            renamed = part[["_fw_i0_0", "_fw_i0_1", "_fw_i0_2"]].set_axis(
                ["itemId", "userId", "ts"], axis=1)
            op = chain[kg]
            c = t()
            op.advance_watermark(watermark)
            op.process_batch(renamed, stamps)
            out = op.drain_output()
            cpu["chain: run (watermark, batch, drain)"] += t() - c
            fired["chain"] += len(out)
            c = t()
            op.snapshot()
            cpu["chain: snapshot"] += t() - c
            ones = renamed.assign(views=np.ones(len(renamed), dtype=np.int64))
            p = panes[kg]
            c = t()
            p.advance_watermark(watermark)
            p.process_batch(ones, stamps)
            main_rows, _ = p.drain_main_timed()
            cpu[f"{pane_kind} count (hypothetical): run"] += t() - c
            fired["panes"] += 0 if main_rows is None else len(main_rows)
            c = t()
            p.snapshot()
            cpu[f"{pane_kind} count (hypothetical): snapshot"] += t() - c
            s = steps[kg]
            c = t()
            if profiler is not None:
                profiler.enable()
            emitted = s.run_sources((part, stamps), watermark, 0)
            if profiler is not None:
                profiler.disable()
            cpu["node: run_sources"] += t() - c
            fired["node"] += len(emitted)
            c = t()
            s.snapshot()
            cpu["node: snapshot"] += t() - c
            c = t()
            if emitted:
                emission_wire.pack(emitted)
            cpu["node: emission_wire.pack"] += t() - c
        gc.collect(1)
        watermark = int(ts.max()) - hot.DELAY_MS - 1
    gc.enable()
    print(f"{args.events:,} events, {args.items:,} items, {args.files} batches, {kgs} key "
          f"groups; state kind of the chain: {kind}; results chain {fired['chain']:,}, node "
          f"{fired['node']:,}, {pane_kind} {fired['panes']:,}; CPU seconds (thread clock):")
    for k, v in sorted(cpu.items()):
        print(f"  {k:42s} {v:7.2f} s  {1e6 * v / args.events:6.1f} us/event")
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)


if __name__ == "__main__":
    main()
