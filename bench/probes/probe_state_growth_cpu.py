"""The Python side of bench_state_growth.py's workload, one process, no Spark: a 1-day tumbling
``sum(amount)`` per ``user`` over 16 key groups, a load batch holding every one of ``K`` keys,
then trickle batches of 10,000 events over the same day; prints each trickle batch's CPU
seconds (all 16 key groups' calls, operators kept between batches as a worker's cache keeps
them) and the snapshots' total size. ``--profile`` prints cProfile's top functions.

Usage::

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_state_growth_cpu.py --keys 50000 500000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import bench_key_group as kg  # noqa: E402

import flinkwin as fw  # noqa: E402
from flinkwin.spark.key_groups import key_group_labels  # noqa: E402

BATCH, TRICKLES, DAY_MS = 10_000, 10, 86_400_000


def daily_stage() -> kg.KeyGroupRuntime:
    """bench_key_group's tumbling stage with 1-day windows."""
    of = fw.TumblingEventTimeWindows.of
    fw.TumblingEventTimeWindows.of = staticmethod(lambda *_: of(fw.Time.days(1)))  # type: ignore
    try:
        return kg.runtime("tumbling")
    finally:
        fw.TumblingEventTimeWindows.of = of  # type: ignore[method-assign]


def run(keys: int, profile: bool) -> None:
    stage, labels = daily_stage(), key_group_labels(kg.GROUPS)
    names = np.array([f"user_{k:07d}" for k in range(keys)], dtype=object)
    group_of = np.array([labels[zlib.crc32(n.encode()) % kg.GROUPS] for n in names],
                        dtype=np.int32)
    rng = np.random.default_rng(1)
    states = {g: kg.FakeState() for g in labels}

    def batch(chosen: np.ndarray, ts: int, watermark: int) -> tuple[float, int]:
        n = len(chosen)
        frame = pd.DataFrame({
            "user": names[chosen], "amount": rng.integers(1, 1000, n, dtype=np.int64),
            "_fw_seq": np.arange(n, dtype=np.int64), "_fw_ts": np.full(n, ts * 1000),
            "_fw_wm": pd.Series(pd.NaT, index=range(n), dtype="datetime64[ns]"),
            "_fw_null0": np.zeros(n, dtype=np.int64), "_fw_hb": np.zeros(n, dtype=np.int32),
            "_fw_kg": group_of[chosen],
        })
        begin, size = time.process_time(), 0
        for j, group in enumerate(labels):
            rows = frame[frame["_fw_kg"].to_numpy() == group]
            beat = frame.iloc[:1].assign(_fw_hb=np.int32(j + 1), _fw_kg=np.int32(group))
            state = states[group]
            state.watermark, state.now = watermark, 1_000
            for _ in stage.process_stream((group,), iter([pd.concat([rows, beat])]), state):
                pass
            size += 0 if state.value is None else len(state.value[1])
        return time.process_time() - begin, size

    t0 = kg.T0_MS
    load, _ = batch(np.arange(keys), t0 + 1_000, 0)
    profiler = cProfile.Profile(time.process_time) if profile else None
    seconds, size = [], 0
    for i in range(TRICKLES):
        ts = t0 + 3_600_000 + i * 300_000
        if profiler is not None:
            profiler.enable()
        cpu, size = batch(rng.integers(0, keys, BATCH), ts, ts - 5_001)
        if profiler is not None:
            profiler.disable()
        seconds.append(cpu)
    print(f"{keys:>9,} keys: load {load:.3f} s CPU; trickle batches (s CPU) "
          f"{[round(s, 3) for s in seconds]}, median {float(np.median(seconds)):.3f}; "
          f"snapshots {size / 2**20:.1f} MiB", flush=True)
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keys", type=int, nargs="+", default=[50_000, 500_000])
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    for keys in args.keys:
        run(keys, args.profile)


if __name__ == "__main__":
    main()
