"""Probe (issue 31): the CPU of HotItems' graph stage per event, its window node batched or
element by element, against the same window as a single chain, in one process (no Spark).

What one key group of each stage does per micro-batch, as ``KeyGroupRuntime`` runs it (the
operator kept in memory between micro-batches, as the runtime's cache does): advance the
watermark and the batch time, process the micro-batch's rows (a pandas frame in the stage's
column layout), drain the outputs, snapshot the state. Three variants over the same input
(``bench_hotitems.generate``'s distribution: ``--items`` items weighted ``1 / (i + 10)``,
``--batches`` micro-batches of ``--span-minutes`` of event time, timestamps up to 4 s out of
order, watermark ``max - 5 s - 1`` from the rows before):

* ``graph, batched``: HotItems' graph (``GraphOperator``: the sliding count per item, then
  ``TopN`` keyed by window end), its window node taking its quiet rows in one batch
  (``flinkwin.operator.graph_batches``);
* ``graph, element path``: the same graph with the window node fed element by element (what
  every graph did before);
* ``chain``: the first stage alone, a ``WindowOperator`` fed ``process_batch`` (what a window
  stage's key group runs for this configuration).

Reported: thread CPU time per event (``time.thread_time``, robust to the machine's load), the
ratios, and whether the two graphs' outputs are equal. Usage::

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/profile_graph_windows.py \\
        --events 200000 --items 10000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "bench")]

import bench_hotitems as hot  # noqa: E402

from flinkwin import SlidingEventTimeWindows, Time  # noqa: E402
from flinkwin.operator import WindowOperator  # noqa: E402
from flinkwin.operator.graph import OPERATOR, GraphOperator, GraphPlan, NodeSpec, SourceSpec  # noqa: E402,E501
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator  # noqa: E402
from flinkwin.operator.runtime_context import TaskInfo  # noqa: E402
from flinkwin.record import Row  # noqa: E402

INFO = TaskInfo("Graph", 0, 1, 1)
COLUMNS = ("_fw_i0_0", "_fw_i0_1", "_fw_i0_2")
NAMES = ("itemId", "userId", "ts")


def window(task_info: TaskInfo) -> WindowOperator:
    return WindowOperator(
        SlidingEventTimeWindows.of(Time.milliseconds(hot.SIZE_MS), Time.milliseconds(hot.SLIDE_MS)),
        (hot.CountAgg(), hot.WindowResultFunction()), key_selector="itemId", task_info=task_info,
    )


def shape(value: Any) -> Any:
    """The window's result as the next node sees it (a Row of the declared fields)."""
    return Row(itemId=value.itemId, windowEnd=value.windowEnd, viewCount=value.viewCount)


def plan() -> GraphPlan:
    nodes = (
        NodeSpec("count", OPERATOR, ((("source", 0), 0),), build=window, shape=shape),
        NodeSpec("top", OPERATOR, ((("node", 0), 0),), build=lambda info: KeyedProcessOperator(
            hot.TopN(3), "windowEnd", task_info=info)),
    )
    return GraphPlan((SourceSpec(COLUMNS, NAMES, delay_ms=hot.DELAY_MS),), nodes, ("node", 1))


def batches(events: int, items: int, count: int, span_ms: int, seed: int
            ) -> list[tuple[pd.DataFrame, np.ndarray]]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(items) + 10.0)
    weights /= weights.sum()
    out = []
    per = -(-events // count)
    for i in range(count):
        start = hot.T0_MS + i * span_ms
        ts = np.sort(rng.integers(start, start + span_ms, per, dtype=np.int64))
        jitter = rng.integers(0, hot.JITTER_MS + 1, per, dtype=np.int64)
        jitter[rng.random(per) < 0.5] = 0
        ts = ts - jitter
        frame = pd.DataFrame({
            "_fw_in": np.zeros(per, dtype=np.int64),
            "_fw_i0_0": rng.choice(items, per, p=weights).astype(np.int64),
            "_fw_i0_1": rng.integers(0, 1_000_000, per, dtype=np.int64),
            "_fw_i0_2": pd.to_datetime(ts, unit="ms", utc=True),
        })
        out.append((frame, ts))
    return out


def run(variant: str, data: list[tuple[pd.DataFrame, np.ndarray]]) -> tuple[float, list[Any]]:
    """Thread CPU seconds of the micro-batches, and the outputs."""
    if variant == "chain":
        op: Any = window(INFO)
    else:
        op = GraphOperator(plan(), INFO)
        if variant == "graph, element path":
            op._batches.nodes = [[]]
    outputs: list[Any] = []
    top = hot.T0_MS - 1
    cpu = 0.0
    for now, (frame, ts) in enumerate(data, 1):
        start = time.thread_time()
        watermark = top - hot.DELAY_MS - 1
        if watermark > op.current_watermark:
            op.advance_watermark(watermark)
        op.advance_processing_time(now)
        if variant == "chain":
            rows = frame.loc[:, list(COLUMNS)]
            rows.columns = list(NAMES)
            op.process_batch(rows, ts)
        else:
            op.process_batch(frame, ts)
        outputs.extend(op.drain_output())
        op.snapshot()
        cpu += time.thread_time() - start
        top = max(top, int(ts.max()))
    return cpu, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--span-minutes", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    data = batches(args.events, args.items, args.batches, int(args.span_minutes * 60_000), 7)
    events = sum(len(f) for f, _ in data)
    results: dict[str, list[float]] = {}
    outputs: dict[str, list[Any]] = {}
    for _ in range(args.repeat):
        for variant in ("graph, element path", "graph, batched", "chain"):
            cpu, out = run(variant, data)
            results.setdefault(variant, []).append(cpu)
            outputs[variant] = out
    per = {v: min(c) / events * 1e6 for v, c in results.items()}
    print(f"{events} events, {args.items} items, {args.batches} micro-batches "
          f"(best of {args.repeat}, thread CPU)")
    for variant, us in per.items():
        print(f"  {variant:22s} {us:7.1f} us/event")
    print(f"  element path / batched: {per['graph, element path'] / per['graph, batched']:.2f}x;"
          f" batched / chain: {per['graph, batched'] / per['chain']:.2f}x")
    same = outputs["graph, batched"] == outputs["graph, element path"]
    print(f"  graph outputs equal: {same} ({len(outputs['graph, batched'])} rows)")
    if not same:
        raise SystemExit("the batched graph's outputs differ from the element path's")


if __name__ == "__main__":
    main()
