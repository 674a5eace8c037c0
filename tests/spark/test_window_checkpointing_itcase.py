"""Flink's ``EventTimeWindowCheckpointingITCase`` and ``EventTimeAllWindowCheckpointingITCase``
(flink-tests, ``org.apache.flink.test.checkpointing``), ported: event-time windows whose job
fails part-way and restarts from its last checkpoint must emit every window exactly once, with
exactly the contents of a run without failure.

The ITCases' shape, scaled down: ``KeyedEventTimeGenerator`` emits, for each sequence number
``n`` in ``[0, N)``, the element ``(key, n)`` at event time ``n`` for every key, its watermark
trailing by ``4/3`` of a window's elements (here ``forBoundedOutOfOrderness(133)``: Flink's
``n - 133 - 1``); the source is finite, so Flink's end-of-input watermark fires the last
windows (a Spark stream has none: the last file carries one element of another key far ahead in
event time, whose own window never fires, as that watermark). Each window's function emits
``(key, start, end, sum)`` and the ``ValidatingSink`` checks every window once: its sum is
``sum(i for i in [start, min(end, N)) if i > 0)`` and each key has exactly its windows.

The failure: the elements arrive in 4 files, one micro-batch each. Flink's ``FailingSource``
throws an "Artificial Failure" after two completed checkpoints; here a user function raises it
in micro-batch 3, after 3 committed batches, while a flag file exists (the Spark task fails, the
query stops with nothing of that batch committed); the test removes the flag and starts the same
program on the same checkpoint, which replays batch 3 and goes on. The windowAll scenarios stop
the query cleanly after 3 files instead (``availableNow`` over the files present) and restart it
once the last file is there. Outputs of both runs together must equal, as a multiset, the
windows computed here from the input (what an uninterrupted run gives). Every scenario's queries
run concurrently (one module fixture), the restarts too, to keep the module's run time small.

Not ported: the ITCases' state-backend parameters (MEM, FILE, ROCKSDB...: Spark's state store
is the one backend) and the removed ``testPreAggregatedFoldingTumblingTimeWindow`` (fold has no
PyFlink API). The session-window scenario with allowed lateness is no ITCase method: the same
check applied to merging windows, late firings and late data across a restart.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import write_batches

from flinkwin import (
    AggregateFunction,
    AllWindowFunction,
    Duration,
    EventTimeSessionWindows,
    OutputTag,
    ProcessWindowFunction,
    ReduceFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
    WatermarkStrategy,
    WindowFunction,
)
from flinkwin.datastream import DataStream
from flinkwin.datastream.window_result_stream import WindowResultStream
from flinkwin.spark import MemorySink

SCHEMA = "k long, v long, ts long"
#: elements per key (the ITCase's numElementsPerKey)
N = 480
#: elements per key in each file (micro-batch): 4 files, none aligned to a window
PER_FILE = 120
#: the ITCase's window size and slide for tumbling windows; sliding windows are 3 slides long
SIZE, SLIDE, SLIDING_SIZE = 100, 100, 300
#: the generator's watermark trailing, 4/3 of a window's (or slide's) elements
TRAILING = 4 * SLIDE // 3
KEYS = 4
#: the key and event time of the element standing for Flink's end-of-input watermark
END_KEY, END_TS = 99, 1_000_000
#: a full-window function fails on the first window ending at or after this (fired in batch 3)
FAIL_END = 200
#: an incremental function fails on the first element at or after this (the first of file 3)
FAIL_TS = 3 * PER_FILE
#: the micro-batch the failure hits, and the files present when a query is stopped instead
RESTART_AT = 3
#: twelve scenarios of concurrent queries: the lane beside the shared-session tests
pytestmark = pytest.mark.beside
TUPLE4 = Types.TUPLE([Types.LONG(), Types.LONG(), Types.LONG(), Types.LONG()])
LATE = OutputTag("late")

Window4 = tuple[int, int, int, int]


def _failing(flag: str | None) -> bool:
    """The artificial failure is armed (its flag file exists)."""
    return flag is not None and os.path.exists(flag)


class _Opened:
    """The ITCase's ``open = true`` / ``assertTrue(open)``: the function was opened before
    use, also after the restore."""

    opened = False

    def open(self, runtime_context: Any) -> None:
        self.opened = True

    def check_opened(self) -> None:
        assert self.opened, "the function was not opened before use"


# --------------------------------------------------------------------- the ITCases' functions
class SumWindowFunction(_Opened, WindowFunction):
    """The ITCase's ``RichWindowFunction``: ``(key, start, end, sum)`` of all elements."""

    def __init__(self, flag: str | None = None) -> None:
        self.flag = flag

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Window4]:
        self.check_opened()
        if window.end >= FAIL_END and _failing(self.flag):
            raise RuntimeError("Artificial Failure")
        total = 0
        for e in inputs:
            total += e["v"]
        return [(key, window.start, window.end, total)]


class CountingWindowFunction(_Opened, WindowFunction):
    """The KV-state ITCase's function: a per-key ``ValueState`` count starting at the key, one
    more per window fired, emitted as the window's value."""

    def __init__(self, flag: str | None = None) -> None:
        self.flag = flag

    def open(self, runtime_context: Any) -> None:
        super().open(runtime_context)
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Window4]:
        self.check_opened()
        if window.end >= FAIL_END and _failing(self.flag):
            raise RuntimeError("Artificial Failure")
        if not self.count.value():  # Flink's default value 0
            self.count.update(key)
        self.count.update(self.count.value() + 1)
        return [(key, window.start, window.end, self.count.value())]


class SumReduce(ReduceFunction):
    """The ITCase's ``ReduceFunction``: ``(a.f0, a.f1 + b.f1)``."""

    def __init__(self, flag: str | None = None) -> None:
        self.flag = flag

    def reduce(self, a: Any, b: Any) -> Any:
        if b["ts"] >= FAIL_TS and _failing(self.flag):
            raise RuntimeError("Artificial Failure")
        return {"k": a["k"], "v": a["v"] + b["v"], "ts": b["ts"]}


class PassWindowFunction(_Opened, WindowFunction):
    """The pre-aggregated ITCases' window function: each (reduced) input as
    ``(in.f0, start, end, in.f1)``."""

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Window4]:
        self.check_opened()
        return [(e["k"], window.start, window.end, e["v"]) for e in inputs]


class SumAggregate(AggregateFunction):
    """The ``ReduceFunction`` as PyFlink's ``AggregateFunction``: ``(key, sum)``."""

    def __init__(self, flag: str | None = None) -> None:
        self.flag = flag

    def create_accumulator(self) -> tuple[int, int]:
        return (-1, 0)

    def add(self, value: Any, accumulator: tuple[int, int]) -> tuple[int, int]:
        if value["ts"] >= FAIL_TS and _failing(self.flag):
            raise RuntimeError("Artificial Failure")
        return (value["k"], accumulator[1] + value["v"])

    def get_result(self, accumulator: tuple[int, int]) -> tuple[int, int]:
        return accumulator

    def merge(self, acc_a: tuple[int, int], acc_b: tuple[int, int]) -> tuple[int, int]:
        return (max(acc_a[0], acc_b[0]), acc_a[1] + acc_b[1])


class PassProcessWindowFunction(_Opened, ProcessWindowFunction):
    """:class:`PassWindowFunction` as a ``ProcessWindowFunction`` (the window from the
    context)."""

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Window4]:
        self.check_opened()
        window = context.window()
        return [(k, window.start, window.end, total) for k, total in elements]


class SumAllWindowFunction(_Opened, AllWindowFunction):
    """The all-window ITCase's ``RichAllWindowFunction``: ``(last key, start, end, sum)``."""

    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterable[Window4]:
        self.check_opened()
        total, key = 0, -1
        for e in inputs:
            total += e["v"]
            key = e["k"]
        return [(key, window.start, window.end, total)]


class PassAllWindowFunction(_Opened, AllWindowFunction):
    """The pre-aggregated all-window ITCases' function."""

    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterable[Window4]:
        self.check_opened()
        return [(e["k"], window.start, window.end, e["v"]) for e in inputs]


# ------------------------------------------------------------------------------- the input
Files = list[list[dict[str, int]]]


def generator_files(keys: int) -> Files:
    """``KeyedEventTimeGenerator``'s elements in 4 files, the last one ending with the
    end-of-input element."""
    rows = [{"k": k, "v": n, "ts": n} for n in range(N) for k in range(keys)]
    step = PER_FILE * keys
    files = [rows[i:i + step] for i in range(0, len(rows), step)]
    files[-1].append({"k": END_KEY, "v": 0, "ts": END_TS})
    return files


def validated_windows(keys: int, size: int, slide: int) -> Counter[Window4]:
    """What the ITCase's ``SinkValidatorUpdateFun``/``SinkValidatorCheckFun`` accept, once
    each: every window of each key over ``[0, N)``, summing ``i`` in ``[start, min(end, N))``,
    ``i > 0``."""
    windows: Counter[Window4] = Counter()
    for key in range(keys):
        for start in range(-(size - slide), N, slide):
            end = start + size
            windows[(key, start, end, sum(i for i in range(max(start, 1), min(end, N))))] += 1
    return windows


def counted_windows(keys: int) -> Counter[Window4]:
    """What the KV-state ITCase's ``CountingSinkValidatorUpdateFun`` accepts: key ``k``'s
    ``j``-th tumbling window (``j`` from 1) carries ``k + j``."""
    return Counter(
        (key, start, start + SIZE, key + j)
        for key in range(keys)
        for j, start in enumerate(range(0, N, SIZE), start=1)
    )


# --------------------------------------------------------------------------- the scenarios
Build = Callable[[DataStream, "str | None"], WindowResultStream]
#: a window function applied to a windowed stream, given the failure flag
Windowing = Callable[[Any, "str | None"], WindowResultStream]


def _source(stream: DataStream, delay_ms: int = TRAILING) -> DataStream:
    return stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(delay_ms))
        .with_timestamp_assigner("ts"))


def _tumbling() -> TumblingEventTimeWindows:
    return TumblingEventTimeWindows.of(Time.milliseconds(SIZE))


def _sliding() -> SlidingEventTimeWindows:
    return SlidingEventTimeWindows.of(Time.milliseconds(SLIDING_SIZE), Time.milliseconds(SLIDE))


@dataclass
class Scenario:
    """One ITCase method: its program (``build(stream, failure flag)``), its input and what
    the validating sink accepts."""

    name: str
    build: Build
    files: Files
    expected: Counter[Window4]
    #: "fail": a user function fails in batch RESTART_AT; "stop": the query stops after
    #: RESTART_AT files
    restart: str = "fail"
    expected_late: Counter[tuple[int, int, int]] = field(default_factory=Counter)
    key_groups: int | None = None

    def __repr__(self) -> str:
        return self.name


def keyed(name: str, window: Windowing, *, sliding: bool = False,
          expected: Counter[Window4] | None = None, key_groups: int | None = None) -> Scenario:
    def build(stream: DataStream, flag: str | None) -> WindowResultStream:
        windowed = _source(stream).key_by("k").window(_sliding() if sliding else _tumbling())
        return window(windowed, flag)

    if expected is None:
        expected = validated_windows(KEYS, SLIDING_SIZE if sliding else SIZE, SLIDE)
    return Scenario(name, build, generator_files(KEYS), expected, key_groups=key_groups)


def all_windows(name: str, window: Windowing, *,
                sliding: bool = False) -> Scenario:
    def build(stream: DataStream, flag: str | None) -> WindowResultStream:
        return window(_source(stream).window_all(_sliding() if sliding else _tumbling()), flag)

    return Scenario(name, build, generator_files(1),
                    validated_windows(1, SLIDING_SIZE if sliding else SIZE, SLIDE),
                    restart="stop")


def _apply(windowed: Any, flag: str | None) -> WindowResultStream:
    return windowed.apply(SumWindowFunction(flag), TUPLE4)


def _counting(windowed: Any, flag: str | None) -> WindowResultStream:
    return windowed.apply(CountingWindowFunction(flag), TUPLE4)


def _reduce(windowed: Any, flag: str | None) -> WindowResultStream:
    return windowed.reduce(SumReduce(flag), PassWindowFunction(), output_type=TUPLE4)


def _aggregate(windowed: Any, flag: str | None) -> WindowResultStream:
    return windowed.aggregate(SumAggregate(flag), PassProcessWindowFunction(),
                              output_type=TUPLE4)


def _apply_all(windowed: Any, flag: str | None) -> WindowResultStream:
    return windowed.apply(SumAllWindowFunction(), TUPLE4)


def _reduce_all(windowed: Any, flag: str | None) -> WindowResultStream:
    return windowed.reduce(SumReduce(), PassAllWindowFunction(), output_type=TUPLE4)


# Session windows with allowed lateness (no ITCase method). Per key, v = ts; gap 100 ms,
# lateness 300 ms, watermark max - 1 (one per batch, before the batch's elements):
#   file 0: 0, 10, 20        -> session [0, 120)
#   file 1: 400              -> watermark 19; session [400, 500)
#   file 2: 50               -> watermark 399 fires [0, 120) = 30; 50 merges it into [0, 150),
#                               already due: fires at once, 80 (cleanup at 149 + 300 = 449)
#   (restart: the query stops after file 2)
#   file 3: 30, 700          -> watermark 399; 30 merges into [0, 150): late firing, 110
#   file 4: 10, end element  -> watermark 699: [0, 150) cleaned up, [400, 500) fires = 400;
#                               10 would be [10, 110), late (109 + 300 <= 699): side output
#   no-data batch            -> [700, 800) fires = 700
SESSION_KEYS = 2
SESSION_FILES: Files = [
    [{"k": k, "v": t, "ts": t} for k in range(SESSION_KEYS) for t in ts]
    for ts in ([0, 10, 20], [400], [50], [30, 700], [10])
]
SESSION_FILES[-1].append({"k": END_KEY, "v": 0, "ts": END_TS})
SESSION_EXPECTED = Counter(
    (k, *w) for k in range(SESSION_KEYS)
    for w in [(0, 120, 30), (0, 150, 80), (0, 150, 110), (400, 500, 400), (700, 800, 700)]
)


def _sessions(stream: DataStream, flag: str | None) -> WindowResultStream:
    return (_source(stream, delay_ms=0).key_by("k")
            .window(EventTimeSessionWindows.with_gap(Time.milliseconds(100)))
            .allowed_lateness(Time.milliseconds(300)).side_output_late_data(LATE)
            .aggregate(SumAggregate(), PassProcessWindowFunction(), output_type=TUPLE4))


KEYED_TUMBLING = keyed("keyed_tumbling_apply", _apply)
KV_STATE_MIN = keyed("kv_state_min_max_parallelism", _counting,
                     expected=counted_windows(KEYS), key_groups=4)
KV_STATE_MAX = keyed("kv_state_max_max_parallelism", _counting,
                     expected=counted_windows(KEYS), key_groups=1 << 15)
KEYED_SLIDING = keyed("keyed_sliding_apply", _apply, sliding=True)
KEYED_TUMBLING_REDUCE = keyed("keyed_tumbling_reduce", _reduce)
KEYED_TUMBLING_AGGREGATE = keyed("keyed_tumbling_aggregate_process", _aggregate)
KEYED_SLIDING_REDUCE = keyed("keyed_sliding_reduce", _reduce, sliding=True)
ALL_TUMBLING = all_windows("all_tumbling_apply", _apply_all)
ALL_SLIDING = all_windows("all_sliding_apply", _apply_all, sliding=True)
ALL_TUMBLING_REDUCE = all_windows("all_tumbling_reduce", _reduce_all)
ALL_SLIDING_REDUCE = all_windows("all_sliding_reduce", _reduce_all, sliding=True)
SESSIONS = Scenario("keyed_sessions_lateness", _sessions, SESSION_FILES, SESSION_EXPECTED,
                    restart="stop", expected_late=Counter((k, 10, 10)
                                                          for k in range(SESSION_KEYS)))


# ------------------------------------------------------------------------------ the runs
@dataclass
class Outcome:
    """What a scenario's queries emitted: ``(key, start, end, value)`` rows as multisets."""

    before: Counter[Window4]
    after: Counter[Window4]
    #: the batch ids each run wrote, and how the first run ended
    before_batches: list[int]
    after_batches: list[int]
    failure: str | None
    late: Counter[tuple[int, int, int]]


def _start(spark: Any, scenario: Scenario, source: Path, checkpoint: Path, flag: str | None,
           label: str) -> tuple[Any, MemorySink, MemorySink]:
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    result = scenario.build(DataStream(df, key_groups=scenario.key_groups), flag)
    main, late = MemorySink(f"itc_{label}"), MemorySink(f"itc_{label}_late")
    sides = {LATE: late} if scenario.expected_late else {}
    query = result.start(main=main, side_outputs=sides, checkpoint_location=str(checkpoint),
                         trigger={"availableNow": True})
    return query, main, late


def _rows(sink: MemorySink) -> Counter[Any]:
    return Counter(tuple(r) for r in sink.rows())


def run_scenarios(spark: Any, root: Path, scenarios: list[Scenario]) -> dict[str, Outcome]:
    """Per scenario, concurrently: the failing (or stopped) query; then, concurrently, each
    restarted on its checkpoint."""
    first: dict[str, Any] = {}
    flags: dict[str, Path] = {}
    for s in scenarios:
        base = root / s.name
        present = s.files if s.restart == "fail" else s.files[:RESTART_AT]
        write_batches(base / "in", present)
        flag = None
        if s.restart == "fail":
            flags[s.name] = base / "fail"
            flags[s.name].write_text("armed")
            flag = str(flags[s.name])
        first[s.name] = _start(spark, s, base / "in", base / "ck", flag, f"{s.name}_1")
    failures: dict[str, str | None] = {}
    for name, before in first.items():
        try:
            before[0].awaitTermination()
            failures[name] = None
        except Exception as failure:  # noqa: BLE001 (the artificial failure, checked later)
            failures[name] = str(failure)
    second = {}
    for s in scenarios:
        base = root / s.name
        if s.restart == "fail":
            flags[s.name].unlink()
        else:
            write_batches(base / "in", s.files[RESTART_AT:], first=RESTART_AT)
        second[s.name] = _start(spark, s, base / "in", base / "ck", None, f"{s.name}_2")
    outcomes = {}
    for name, (query, main, late) in second.items():
        query.awaitTermination()
        _, before_main, before_late = first[name]
        outcomes[name] = Outcome(
            _rows(before_main), _rows(main), sorted(before_main.batches),
            sorted(main.batches), failures[name], _rows(before_late) + _rows(late),
        )
    return outcomes


ALL_SCENARIOS = [
    KEYED_TUMBLING, KV_STATE_MIN, KV_STATE_MAX, KEYED_SLIDING, KEYED_TUMBLING_REDUCE,
    KEYED_TUMBLING_AGGREGATE, KEYED_SLIDING_REDUCE, ALL_TUMBLING, ALL_SLIDING,
    ALL_TUMBLING_REDUCE, ALL_SLIDING_REDUCE, SESSIONS,
]


@pytest.fixture(scope="module")
def outcomes(spark: Any, tmp_path_factory: pytest.TempPathFactory,
             request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """The selected tests' scenarios, all run at once."""
    wanted = {
        item.callspec.params["scenario"].name for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec")
    }
    selected = [s for s in ALL_SCENARIOS if s.name in wanted]
    return run_scenarios(spark, tmp_path_factory.mktemp("itcase"), selected)


def check(scenario: Scenario, outcomes: dict[str, Outcome]) -> None:
    """The validating sink's check over both runs."""
    out = outcomes[scenario.name]
    if scenario.restart == "fail":
        assert out.failure is not None and "Artificial Failure" in out.failure, out.failure
        # batches 0..2 committed before the failure; the restart replays batch 3
        assert out.before_batches == list(range(RESTART_AT)), out.before_batches
        assert out.after_batches[0] == RESTART_AT, out.after_batches
    else:
        assert out.failure is None, out.failure
    # the restart is mid-stream: windows fired on both sides of it
    assert out.before and out.after, (out.before, out.after)
    union = out.before + out.after
    assert union == scenario.expected, (
        f"missing {scenario.expected - union}, unexpected or repeated {union - scenario.expected}")
    assert out.late == scenario.expected_late


# ------------------------------------------------------- EventTimeWindowCheckpointingITCase
@pytest.mark.parametrize("scenario", [KEYED_TUMBLING], ids=repr)
def test_tumbling_time_window(scenario: Scenario, outcomes: dict[str, Outcome]) -> None:
    """Flink: EventTimeWindowCheckpointingITCase#testTumblingTimeWindow (keyBy, tumbling
    windows, a ``WindowFunction`` summing all elements)."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [
    KV_STATE_MIN, KV_STATE_MAX,
], ids=repr)
def test_tumbling_time_window_with_kv_state(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: EventTimeWindowCheckpointingITCase#testTumblingTimeWindowWithKVStateMinMaxParallelism
    and #testTumblingTimeWindowWithKVStateMaxMaxParallelism (a per-key ``ValueState`` of the
    window function's runtime context counting the windows fired; max parallelism 4 and
    ``1 << 15``, flinkwin's key groups)."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [KEYED_SLIDING], ids=repr)
def test_sliding_time_window(scenario: Scenario, outcomes: dict[str, Outcome]) -> None:
    """Flink: EventTimeWindowCheckpointingITCase#testSlidingTimeWindow (sliding windows of
    three slides: the first two start before 0)."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [KEYED_TUMBLING_REDUCE, KEYED_TUMBLING_AGGREGATE],
                         ids=repr)
def test_pre_aggregated_tumbling_time_window(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: EventTimeWindowCheckpointingITCase#testPreAggregatedTumblingTimeWindow
    (``reduce(ReduceFunction, WindowFunction)``; also as PyFlink writes it,
    ``aggregate(AggregateFunction, ProcessWindowFunction)``)."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [KEYED_SLIDING_REDUCE], ids=repr)
def test_pre_aggregated_sliding_time_window(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: EventTimeWindowCheckpointingITCase#testPreAggregatedSlidingTimeWindow."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [SESSIONS], ids=repr)
def test_session_window_with_allowed_lateness(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: no ITCase method; EventTimeWindowCheckpointingITCase's check applied to
    ``EventTimeSessionWindows`` with ``allowedLateness`` and late data: a merged session fired
    before the restart fires again after it with the late element, its cleanup timer drops
    a later element to the side output, each once."""
    check(scenario, outcomes)


# ---------------------------------------------------- EventTimeAllWindowCheckpointingITCase
@pytest.mark.parametrize("scenario", [ALL_TUMBLING], ids=repr)
def test_all_window_tumbling_time_window(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: EventTimeAllWindowCheckpointingITCase#testTumblingTimeWindow (``windowAll``,
    an ``AllWindowFunction``, one key)."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [ALL_SLIDING], ids=repr)
def test_all_window_sliding_time_window(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: EventTimeAllWindowCheckpointingITCase#testSlidingTimeWindow."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [ALL_TUMBLING_REDUCE], ids=repr)
def test_all_window_pre_aggregated_tumbling_time_window(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: EventTimeAllWindowCheckpointingITCase#testPreAggregatedTumblingTimeWindow."""
    check(scenario, outcomes)


@pytest.mark.parametrize("scenario", [ALL_SLIDING_REDUCE], ids=repr)
def test_all_window_pre_aggregated_sliding_time_window(
    scenario: Scenario, outcomes: dict[str, Outcome]
) -> None:
    """Flink: EventTimeAllWindowCheckpointingITCase#testPreAggregatedSlidingTimeWindow."""
    check(scenario, outcomes)
