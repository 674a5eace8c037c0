"""The window stage's key-group function alone (no Spark): ``KeyGroupRuntime.process_stream``
on the bench suite's shape, for profiling flinkwin's own Python work per batch and per row.

Input as Spark hands it to the stage: per micro-batch and key group, pandas chunks of 10,000
rows with the shipped columns (``user``, ``amount``, the arrival sequence, event time in epoch
microseconds, the watermark helper, the null mask, the heartbeat flag, the key group), one
heartbeat row per key group; a stand-in for Spark's ``GroupState`` carries each group's state
and Spark's (shifted) watermark between batches. Data as ``bench_spark.generate``: 2M events
(``--large``: 10M), 10 batches of 10 minutes, 10k keys, 16 key groups. Workloads: ``tumbling``
(10 min tumbling built-in ``sum``, the columnar state), ``aggregate`` (the same with a
user-defined ``AggregateFunction``, the object operator's vectorized path) and ``session``
(session windows with a 10 min gap, built-in ``sum``, the columnar sessions; 1M events as the
bench suite's ``session``, ``--large``: 5M), ``process_window`` (the suite's count+sum
``ProcessWindowFunction`` on 10 min tumbling windows, the columnar element lists; 1M events)
and ``continuous`` (the suite's early firing: 1 h tumbling built-in ``sum`` with
``ContinuousEventTimeTrigger.of(1 min)``, the columnar continuous state; 1M events).

Prints per workload the CPU seconds of the timed run (after a warm-up on two batches), a digest
of every output frame (without the ``stateBytes`` metric) and of every snapshot written: equal
digests mean byte-identical outputs and state. ``--profile`` prints cProfile's top functions.
``--restore``: every call restores its key group's operator from the snapshot, as a call does
in a Python worker that did not run the key group's previous call (Spark hands a stage's tasks
to whichever idle worker comes first, so in a live run many calls restore).

Usage::

    .venv/bin/python bench/bench_key_group.py                 # every workload
    .venv/bin/python bench/bench_key_group.py aggregate --profile
    .venv/bin/python bench/bench_key_group.py aggregate --restore
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import time
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from pyspark import cloudpickle
from pyspark.sql.types import (
    ByteType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

import flinkwin as fw
from flinkwin.functions.builtin import sum_of
from flinkwin.operator import states
from flinkwin.operator.snapshots import StatePickler
from flinkwin.spark import runtime as stage_runtime
from flinkwin.spark.elements import RECORD_TIMESTAMP_COLUMN
from flinkwin.spark.inputs import EventTime
from flinkwin.spark.key_groups import key_group_labels
from flinkwin.spark.nulls import plan
from flinkwin.spark.operator_spec import OperatorCache, OperatorSpec
from flinkwin.spark.outputs import METRIC_COLUMNS, METRICS, TAG_COLUMN
from flinkwin.spark.pipeline import _nullable
from flinkwin.spark.row_encoder import RowEncoder
from flinkwin.spark.runtime import KeyGroupRuntime

T0_MS = 1_704_067_200_000
KEYS, BATCHES, GROUPS, CHUNK, DELAY_MS = 10_000, 10, 16, 10_000, 5_000
INPUT = StructType([
    StructField("user", StringType()), StructField("amount", LongType()),
    StructField("ts", TimestampType()),
])
STATE_BYTES = METRIC_COLUMNS[METRICS.index("stateBytes")]


class UserSum(fw.AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, acc: int) -> int:
        return acc + value["amount"]

    def get_result(self, acc: int) -> int:
        return acc

    def merge(self, a: int, b: int) -> int:
        return a + b


class CountSum(fw.ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        n = total = 0
        for e in elements:
            n += 1
            total += e["amount"]
        yield (key, total, n)


class FakeState:
    """What the stage uses of Spark's ``GroupState``."""

    def __init__(self) -> None:
        self.value: tuple[int, bytes, str] | None = None
        self.hasTimedOut = False
        self.watermark = 0
        self.now = 0

    @property
    def exists(self) -> bool:
        return self.value is not None

    @property
    def get(self) -> tuple[int, bytes, str] | None:
        return self.value

    def update(self, value: tuple[int, bytes, str]) -> None:
        self.value = value

    def remove(self) -> None:
        self.value = None

    def getCurrentWatermarkMs(self) -> int:  # noqa: N802 (Spark's name)
        return self.watermark

    def getCurrentProcessingTimeMs(self) -> int:  # noqa: N802
        return self.now

    def setTimeoutTimestamp(self, timestamp: int) -> None:  # noqa: N802
        pass

    def setTimeoutDuration(self, duration: int) -> None:  # noqa: N802
        pass


def runtime(kind: str) -> KeyGroupRuntime:
    """The stage function of the bench suite's ``tumbling``, ``aggregate_function``,
    ``session`` or ``process_window``."""
    function: Any
    trigger: Any = None
    assigner: Any = fw.TumblingEventTimeWindows.of(fw.Time.minutes(10))
    if kind in ("tumbling", "session", "continuous"):
        function, main, name = sum_of("amount"), INPUT, "sum('amount')"
        if kind == "session":
            assigner = fw.EventTimeSessionWindows.withGap(fw.Time.minutes(10))
        if kind == "continuous":
            assigner = fw.TumblingEventTimeWindows.of(fw.Time.hours(1))
            trigger = fw.ContinuousEventTimeTrigger.of(fw.Time.minutes(1))
    elif kind == "process_window":
        function, name = CountSum(), "process"
        main = StructType([StructField("user", StringType()), StructField("amount", LongType()),
                           StructField("n", LongType())])
    else:
        function, name = UserSum(), "aggregate"
        main = StructType([StructField("amount", LongType())])
    out_main, _ = _nullable(main, "_fw_m", {})
    fields = [StructField(TAG_COLUMN, ByteType(), False), *out_main.fields,
              StructField(RECORD_TIMESTAMP_COLUMN, LongType(), True)]
    fields += [StructField(c, LongType(), True) for c in METRIC_COLUMNS]
    stage = KeyGroupRuntime(
        operator=OperatorSpec(
            assigner=assigner, function=function,
            key_fields=["user"], trigger=trigger, evictor=None, allowed_lateness_ms=0,
            late_tag=None, key_groups=GROUPS, task_name=f"Window({name})",
            state_pickler=StatePickler(dumps=cloudpickle.dumps),
        ),
        input_schema=INPUT, event_time=EventTime("_fw_ts", "us", "ts"), time_zone="UTC",
        has_watermark=True, timer_domain="event time", key_groups=GROUPS,
        main_encoder=RowEncoder(main, "UTC", "output"), with_window=False, side_tags=[],
        side_encoders=[], output_schema=StructType(fields), sequence_column="_fw_seq",
        heartbeats=True, null_masks=plan(INPUT),
    )
    stage.state_kind = states.state_kind(stage.operator.build(), True)
    return stage


Batch = tuple[dict[int, list[pd.DataFrame]], int]


def batches(events: int, seed: int = 42) -> list[Batch]:
    """Per micro-batch: each key group's chunks, and the batch's largest timestamp."""
    rng = np.random.default_rng(seed)
    names = np.array([f"user_{k:05d}" for k in range(KEYS)], dtype=object)
    labels = key_group_labels(GROUPS)
    group_of = np.array([labels[zlib.crc32(n.encode()) % GROUPS] for n in names], dtype=np.int32)
    per, span = events // BATCHES, 10 * 60_000
    out = []
    for i in range(BATCHES):
        in_order = np.sort(rng.integers(T0_MS + i * span, T0_MS + (i + 1) * span, per))
        jitter = rng.integers(0, 4_001, per)
        jitter[rng.random(per) < 0.5] = 0
        ts = in_order - jitter
        keys = rng.integers(0, KEYS, per)
        frame = pd.DataFrame({
            "user": names[keys], "amount": rng.integers(1, 1_000, per, dtype=np.int64),
            "_fw_seq": np.arange(per, dtype=np.int64) + (i << 33), "_fw_ts": ts * 1_000,
            "_fw_wm": pd.Series(pd.NaT, index=range(per), dtype="datetime64[ns]"),
            "_fw_null0": np.zeros(per, dtype=np.int64), "_fw_hb": np.zeros(per, dtype=np.int32),
            "_fw_kg": group_of[keys],
        })
        groups = {}
        for j, label in enumerate(labels):
            rows = frame[frame["_fw_kg"].to_numpy() == label]
            beat = frame.iloc[:1].assign(_fw_hb=np.int32(j + 1), _fw_kg=np.int32(label))
            rows = pd.concat([rows, beat], ignore_index=True)
            groups[label] = [rows.iloc[k:k + CHUNK].reset_index(drop=True)
                             for k in range(0, len(rows), CHUNK)]
        out.append((groups, int(ts.max())))
    return out


def run(stage: KeyGroupRuntime, data: list[Batch], restore: bool = False) -> tuple[str, str]:
    """Every batch through every key group, then a wake-up past the last window; digests of
    the outputs and of the snapshots. ``restore``: no operator is kept between calls."""
    states_ = {g: FakeState() for g in key_group_labels(GROUPS)}
    outputs, snapshots = hashlib.sha256(), hashlib.sha256()
    watermark = 0

    def call(group: int, chunks: Iterator[pd.DataFrame]) -> None:
        state = states_[group]
        if restore:
            stage_runtime.OPERATORS = OperatorCache()
        for out in stage.process_stream((group,), chunks, state):
            hashed = pd.util.hash_pandas_object(out.drop(columns=[STATE_BYTES]), index=False)
            outputs.update(hashed.to_numpy().tobytes())
        if state.value is not None:
            snapshots.update(state.value[1])

    for b, (groups, max_ts) in enumerate(data):
        for group, chunks in groups.items():
            states_[group].watermark, states_[group].now = watermark, 1_000 + b
            call(group, iter(chunks))
        watermark = max_ts - DELAY_MS - 1
    for group, state in states_.items():
        state.watermark, state.now = T0_MS + 10**9, 2_000
        state.hasTimedOut = True
        call(group, iter(()))
    return outputs.hexdigest()[:16], snapshots.hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*",
                        help="tumbling, aggregate, session, process_window, continuous "
                        "(default: all)")
    parser.add_argument("--large", action="store_true",
                        help="10M events instead of 2M (session: 5M instead of 1M)")
    parser.add_argument("--profile", action="store_true", help="print cProfile's top functions")
    parser.add_argument("--top", type=int, default=40, help="functions --profile prints")
    parser.add_argument("--restore", action="store_true",
                        help="every call restores its operator from the snapshot")
    args = parser.parse_args()
    known = ["tumbling", "aggregate", "session", "process_window", "continuous"]
    workloads = args.workloads or known
    if not set(workloads) <= set(known):
        parser.error(f"unknown workload in {workloads}: use {', '.join(known)}")
    events = {"tumbling": 2_000_000, "aggregate": 2_000_000, "session": 1_000_000,
              "process_window": 1_000_000, "continuous": 1_000_000}
    generated: dict[int, list[Batch]] = {}
    for kind in workloads:
        size = events[kind] * (5 if args.large else 1)
        data = generated[size] = generated.get(size) or batches(size)
        run(runtime(kind), data[:2], args.restore)  # warm-up
        stage = runtime(kind)
        # CPU time, not wall time: the machine may be shared
        profile = cProfile.Profile(time.process_time) if args.profile else None
        begin = time.process_time()
        if profile is not None:
            profile.enable()
        digests = run(stage, data, args.restore)
        if profile is not None:
            profile.disable()
        seconds = time.process_time() - begin
        print(f"{kind:10s} {stage.state_kind:9s} {seconds:6.2f} s CPU  outputs {digests[0]}  "
              f"snapshots {digests[1]}", flush=True)
        if profile is not None:
            pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
