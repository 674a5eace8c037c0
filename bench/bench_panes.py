"""Operator-level benchmark of sliding 60 min / 1 min ``sum``: the pane state against the
per-window columnar state, one process, no Spark.

Both states get the same batches (``--batches`` of 10 minutes of event time each, ``--keys``
keys, watermark 5 s behind the batch) and must emit the same rows; reported: seconds each and
the ratio.

Usage::

    .venv/bin/python bench/bench_panes.py                       # 500k events, 10k keys
    .venv/bin/python bench/bench_panes.py --events 100000       # quicker
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np
import pandas as pd

from flinkwin import SlidingEventTimeWindows, Time
from flinkwin.functions.builtin import sum_of
from flinkwin.operator import WindowOperator
from flinkwin.operator.states.columnar import ColumnarAggregation
from flinkwin.operator.states.panes import PaneAggregation

T0_MS = 1_704_067_200_000
SPAN_MS = 600_000


def batches(events: int, keys: int, n_batches: int, seed: int) -> list[pd.DataFrame]:
    rng = np.random.default_rng(seed)
    out = []
    per = events // n_batches
    for i in range(n_batches):
        ts = np.sort(rng.integers(T0_MS + i * SPAN_MS, T0_MS + (i + 1) * SPAN_MS, per))
        users = np.char.add("user_", rng.integers(0, keys, per).astype(str)).astype(object)
        out.append(pd.DataFrame({"user": users, "amount": rng.integers(1, 1000, per), "ts": ts}))
    return out


def run(cls: Any, data: list[pd.DataFrame]) -> tuple[float, list[pd.DataFrame]]:
    assigner = SlidingEventTimeWindows.of(Time.minutes(60), Time.minutes(1))

    def factory() -> WindowOperator:
        return WindowOperator(assigner, sum_of("amount"), key_selector="user")

    state = cls(factory(), factory)
    outputs = []
    begin = time.perf_counter()
    for frame in data:
        state.advance_watermark(int(frame["ts"].iloc[0]) - 5_000)
        state.process_batch(frame, frame["ts"].to_numpy())
        outputs.append(state.drain_main())
    state.advance_watermark(2**60)
    outputs.append(state.drain_main())
    return time.perf_counter() - begin, [o for o in outputs if o is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=500_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    data = batches(args.events, args.keys, args.batches, args.seed)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    panes_s, panes_out = run(PaneAggregation, data)
    columnar_s, columnar_out = run(ColumnarAggregation, data)
    same = all(a.equals(b) for a, b in zip(panes_out, columnar_out)) and len(panes_out) == len(
        columnar_out)
    rows = sum(len(o) for o in panes_out)
    print(f"sliding 60 min / 1 min sum, {args.events:,} events, {args.keys:,} keys, load {load}")
    print(f"panes   : {panes_s:8.2f} s ({args.events / panes_s:,.0f} events/s), {rows:,} rows")
    print(f"columnar: {columnar_s:8.2f} s ({args.events / columnar_s:,.0f} events/s)")
    print(f"panes / columnar speed-up: {columnar_s / panes_s:.1f}x; same outputs: {same}")


if __name__ == "__main__":
    main()
