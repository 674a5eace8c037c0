"""Probe (issue 32): CPU per element of the window state a worker runs for the suite's session,
early-firing and tumbling workloads, without Spark (one process: what a loaded machine
barely changes), and where it goes (cProfile, top functions by own time).

The input is the suite's shape: 10,000 string keys, 10 batches of 10 minutes of event time,
``--events`` in all, split over ``--key-groups`` key groups as a worker gets it (one state
per key group, a batch's rows of a key group in one call); the watermark after each batch is
its end minus the 5 s delay.

    PYTHONPATH=$PWD .venv/bin/python bench/probes/profile_32_operators.py --events 1000000
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
import pandas as pd

from flinkwin.assigners.session import EventTimeSessionWindows
from flinkwin.assigners.tumbling import TumblingEventTimeWindows
from flinkwin.functions.base import FieldKeySelector
from flinkwin.functions.builtin import sum_of
from flinkwin.operator.states import new_state, prepare, state_kind
from flinkwin.operator.window_operator import WindowOperator
from flinkwin.triggers.continuous_event_time import ContinuousEventTimeTrigger

MINUTE = 60_000


def operators() -> dict:
    key = FieldKeySelector(["user"])
    return {
        "session": lambda: WindowOperator(
            EventTimeSessionWindows.withGap(10 * MINUTE), sum_of("amount"), key_selector=key),
        "continuous": lambda: WindowOperator(
            TumblingEventTimeWindows.of(60 * MINUTE), sum_of("amount"), key_selector=key,
            trigger=ContinuousEventTimeTrigger.of(MINUTE)),
        "continuous_baseline": lambda: WindowOperator(
            TumblingEventTimeWindows.of(60 * MINUTE), sum_of("amount"), key_selector=key),
        "tumbling": lambda: WindowOperator(
            TumblingEventTimeWindows.of(10 * MINUTE), sum_of("amount"), key_selector=key),
    }


def batches(events: int, keys: int, groups: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    names = np.array([f"user_{k:05d}" for k in range(keys)], dtype=object)
    per = events // 10
    out = []
    for i in range(10):
        ids = rng.integers(0, keys, per)
        start = i * 10 * MINUTE
        ts = np.sort(rng.integers(start, start + 10 * MINUTE, per))
        ts = ts - np.where(rng.random(per) < 0.5, rng.integers(0, 4001, per), 0)
        frame = pd.DataFrame({"user": names[ids], "amount": rng.integers(1, 1000, per)})
        group = ids % groups
        out.append(([(frame[group == g].reset_index(drop=True), ts[group == g])
                     for g in range(groups)], start + 10 * MINUTE - 5001))
    return out


def run(name: str, make, data: list) -> tuple[int, int]:
    template = make()
    kind = state_kind(template, True)
    states = [new_state(kind, make) for _ in data[0][0]]
    outputs = 0
    for parts, watermark in data:
        for g, (frame, ts) in enumerate(parts):
            state = states[g] = prepare(states[g], frame, ts, watermark)
            state.process_batch(frame, ts)
            state.advance_watermark(watermark)
            main, _ = state.drain_main_timed()
            outputs += 0 if main is None else len(main)
    return outputs, len(states)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--key-groups", type=int, default=16)
    parser.add_argument("--only", default="session,continuous,continuous_baseline,tumbling")
    parser.add_argument("--top", type=int, default=12, help="0: no profile")
    args = parser.parse_args()
    data = batches(args.events, args.keys, args.key_groups, 42)
    for name in args.only.split(","):
        make = operators()[name]
        run(name, make, batches(20_000, 1_000, args.key_groups, 1))  # warm
        begin = time.process_time()
        outputs, _ = run(name, make, data)
        cpu = time.process_time() - begin
        print(f"\n{name} ({state_kind(make(), True)}): {cpu:.2f} s CPU, "
              f"{cpu / args.events * 1e9:.0f} ns per element, {outputs:,} results "
              f"({args.key_groups} key groups x 10 batches)")
        if not args.top:
            continue
        profile = cProfile.Profile()
        profile.enable()
        run(name, make, data)
        profile.disable()
        pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
