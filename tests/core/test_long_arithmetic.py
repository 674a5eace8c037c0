"""One long arithmetic on every path: window bounds, lateness, timers and built-in sums near the
Java ``long`` limits give the same answer per element, vectorized and columnar — Flink's Java
wrap-around under ``overflow="wrap"`` (the default), a ``LongOverflowError`` naming the key and
window under ``overflow="error"``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from flinkwin import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TimeEvictor,
    TimeWindow,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import sum_of
from flinkwin.longs import ERROR, WRAP, LongOverflowError, to_long, wrap
from flinkwin.operator import WindowOperator, states
from flinkwin.operator.states.columnar import ColumnarAggregation
from flinkwin.operator.states.continuous import ContinuousAggregation
from flinkwin.time import MAX_LONG, MIN_LONG


class Collect(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield [e["t"] for e in elements]


def java_window_start(timestamp: int, offset: int, size: int) -> int:
    """Flink's ``TimeWindow.getWindowStartWithOffset`` with every step wrapped as Java does."""
    remainder = int(np.fmod(np.int64(wrap(timestamp - offset)), np.int64(size)))
    return wrap(timestamp - (remainder + size)) if remainder < 0 else wrap(timestamp - remainder)


def test_wrap_is_javas_twos_complement() -> None:
    assert wrap(MAX_LONG + 1) == MIN_LONG
    assert wrap(MIN_LONG - 1) == MAX_LONG
    assert wrap(2**64 + 5) == 5
    assert to_long(MAX_LONG, ERROR, "x") == MAX_LONG
    with pytest.raises(LongOverflowError, match="the thing = 9223372036854775808"):
        to_long(MAX_LONG + 1, ERROR, "the thing")


def test_window_end_near_max_long_wraps_as_in_flink() -> None:
    ts = MAX_LONG - 3
    start = TimeWindow.get_window_start_with_offset(ts, 0, 10)
    assert start == java_window_start(ts, 0, 10) == MAX_LONG - 7
    window = TumblingEventTimeWindows.of(10).assign_windows(None, ts, _Ctx(WRAP))[0]
    assert window == TimeWindow(MAX_LONG - 7, wrap(MAX_LONG - 7 + 10))
    assert window.end < 0 and window.max_timestamp() == wrap(window.end - 1)


def test_window_start_with_offset_wraps_each_step() -> None:
    ts, offset, size = MIN_LONG + 2, 7, 10  # timestamp - offset wraps in Java
    assert TimeWindow.get_window_start_with_offset(ts, offset, size) == java_window_start(
        ts, offset, size
    )
    with pytest.raises(LongOverflowError, match="window offset"):
        TimeWindow.get_window_start_with_offset(ts, offset, size, ERROR)


def test_max_timestamp_of_an_end_wrapped_to_min_long_is_max_long() -> None:
    assert TimeWindow(MAX_LONG - 9, MIN_LONG).max_timestamp() == MAX_LONG


class _Ctx:
    def __init__(self, overflow: str) -> None:
        self.overflow = overflow

    def get_current_processing_time(self) -> int:
        return 0


def test_sliding_windows_near_min_long() -> None:
    assigner = SlidingEventTimeWindows.of(10, 3)
    # timestamp - size wraps to a huge value in Java: Flink's loop assigns no window at all
    assert assigner.assign_windows(None, MIN_LONG + 5, _Ctx(WRAP)) == []
    with pytest.raises(LongOverflowError, match="window size"):
        assigner.assign_windows(None, MIN_LONG + 5, _Ctx(ERROR))
    # the next start wraps while the loop continues: Flink's loop would not terminate
    with pytest.raises(LongOverflowError, match="would not terminate"):
        assigner.assign_windows(None, MIN_LONG + 10, _Ctx(WRAP))


def test_session_window_end_overflow() -> None:
    assigner = EventTimeSessionWindows.withGap(Time.milliseconds(100))
    (window,) = assigner.assign_windows(None, MAX_LONG - 10, _Ctx(WRAP))
    assert window == TimeWindow(MAX_LONG - 10, wrap(MAX_LONG + 90))
    with pytest.raises(LongOverflowError, match="session window"):
        assigner.assign_windows(None, MAX_LONG - 10, _Ctx(ERROR))


# ------------------------------------------------------------ the paths agree
def _frame(keys: list[str], values: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"k": keys, "v": np.array(values, dtype=np.int64)})


def _run(
    path: str, overflow: str, frames: list[tuple[pd.DataFrame, list[int]]], watermark: int,
    assigner: Any = None, lateness: int = 0, trigger: Any = None,
) -> list[tuple[Any, ...]]:
    """Run batches on one path (per element / vectorized / columnar), then the watermark;
    the main outputs as (k, v, timestamp)."""
    assigner = assigner or TumblingEventTimeWindows.of(Time.seconds(10))

    def build() -> WindowOperator:
        return WindowOperator(
            assigner, sum_of("v"), key_selector="k", trigger=trigger,
            allowed_lateness=lateness, overflow=overflow,
        )

    op: Any = build()
    if path == "columnar":
        op = ColumnarAggregation(op, build)
    for frame, timestamps in frames:
        ts = np.array(timestamps, dtype=np.int64)
        if path == "element":
            for row, t in zip(frame.to_dict("records"), timestamps):
                op.process_element(row, t)
        elif isinstance(op, ColumnarAggregation) and not op.accepts(
            frame, ts, op.current_watermark
        ):
            op = op.to_operator()
            op.process_batch(frame, ts)
        else:
            op.process_batch(frame, ts)
    op.advance_watermark(watermark)
    if isinstance(op, ColumnarAggregation):
        out = op.drain_main()
        rows = [] if out is None else list(zip(out["k"], out["v"].tolist()))
        return sorted(rows)
    return sorted((r["k"], r["v"]) for r, _ in op.drain_output())


PATHS = ("element", "vectorized", "columnar")
T0 = 1_700_000_123_457


@pytest.mark.parametrize("path", PATHS)
def test_sum_overflow_wraps_identically_on_every_path(path: str) -> None:
    frames = [
        (_frame(["a", "a", "b"], [MAX_LONG, 5, MIN_LONG]), [T0, T0 + 1, T0 + 2]),
        (_frame(["a", "b"], [MAX_LONG, -1]), [T0 + 3, T0 + 4]),
    ]
    got = _run(path, WRAP, frames, T0 + 20_000)
    assert got == [("a", wrap(MAX_LONG + 5 + MAX_LONG)), ("b", MAX_LONG)]


@pytest.mark.parametrize("path", PATHS)
def test_sum_overflow_raises_on_every_path_under_error(path: str) -> None:
    frames = [
        (_frame(["a", "a"], [MAX_LONG - 1, 1]), [T0, T0 + 1]),
        (_frame(["b", "a"], [1, 1]), [T0 + 2, T0 + 3]),
    ]
    with pytest.raises(LongOverflowError, match=r"key 'a', window TimeWindow.*field 'v'"):
        _run(path, ERROR, frames, T0 + 20_000)


@pytest.mark.parametrize("path", PATHS)
def test_sum_without_overflow_under_error_is_exact(path: str) -> None:
    frames = [(_frame(["a", "a", "a"], [MAX_LONG, MIN_LONG, MAX_LONG]), [T0, T0 + 1, T0 + 2])]
    assert _run(path, ERROR, frames, T0 + 20_000) == [("a", MAX_LONG - 1)]


@pytest.mark.parametrize("path", PATHS)
def test_window_near_max_long_is_the_same_on_every_path(path: str) -> None:
    """A window whose end wraps past MAX_LONG: Flink's window [MAX - 7, MIN + 2) has the
    max timestamp MIN + 1, so the watermark MIN + 1 (as any later watermark) fires it."""
    ts = [MAX_LONG - 3, MAX_LONG - 1]
    frames = [(_frame(["a", "a"], [1, 2]), ts)]
    assigner = TumblingEventTimeWindows.of(10)
    # the watermark is above MIN_LONG + 1 (every watermark is, after the initial one)
    assert _run(path, WRAP, frames, 0, assigner) == [("a", 3)]


@pytest.mark.parametrize("path", PATHS)
def test_window_near_max_long_raises_on_every_path_under_error(path: str) -> None:
    frames = [(_frame(["a"], [1]), [MAX_LONG - 3])]
    with pytest.raises(LongOverflowError, match="key 'a'.*end of the window of timestamp"):
        _run(path, ERROR, frames, 0, TumblingEventTimeWindows.of(10))


@pytest.mark.parametrize("path", PATHS)
def test_lateness_near_max_long_is_the_same_on_every_path(path: str) -> None:
    """Cleanup time saturates at MAX_LONG (Flink's guard): windows near the top stay live."""
    frames = [(_frame(["a", "b"], [1, 2]), [MAX_LONG - 10_000, MAX_LONG - 20_000])]
    assigner = TumblingEventTimeWindows.of(1000, 807)
    got = _run(path, ERROR, frames, MAX_LONG - 15_000, assigner, lateness=MAX_LONG // 2)
    assert got == [("b", 2)]


def test_element_late_check_wraps_like_flink() -> None:
    """``timestamp + allowedLateness`` wraps in Flink: an element in no live window near
    MAX_LONG counts as late (dropped) rather than disappearing uncounted."""
    op = WindowOperator(
        TumblingEventTimeWindows.of(10), sum_of("v"), key_selector="k", allowed_lateness=100
    )
    op.advance_watermark(MAX_LONG)  # the end-of-input watermark: even [.., MAX) is late
    op.process_element({"k": "a", "v": 1}, MAX_LONG - 20)
    assert op.num_late_records_dropped == 1
    strict = WindowOperator(
        TumblingEventTimeWindows.of(10), sum_of("v"), key_selector="k", allowed_lateness=100,
        overflow=ERROR,
    )
    strict.advance_watermark(MAX_LONG)
    with pytest.raises(LongOverflowError, match="key 'a'.*allowed lateness"):
        strict.process_element({"k": "a", "v": 1}, MAX_LONG - 20)


def test_continuous_trigger_next_firing_overflow_raises_on_every_path() -> None:
    trigger = ContinuousEventTimeTrigger.of(Time.milliseconds(1000))
    # window [MAX - 307, MAX - 207); the next interval boundary after it is beyond MAX_LONG
    frames = [(_frame(["a", "a"], [1, 2]), [MAX_LONG - 307, MAX_LONG - 300])]
    assigner = TumblingEventTimeWindows.of(100)
    # in Java the next firing wraps negative and the trigger fires every interval from there
    # on, about 2^54 times: both paths raise under both policies instead
    for path in ("element", "vectorized"):
        for overflow in (WRAP, ERROR):
            with pytest.raises(LongOverflowError, match="interval 1000"):
                _run(path, overflow, frames, 0, assigner, trigger=trigger)


def _evicted(overflow: str, window_size: int, timestamps: list[int]) -> list[int]:
    """The timestamps a TimeEvictor keeps of elements at ``timestamps`` in GlobalWindows."""
    op = WindowOperator(
        GlobalWindows.create(), Collect(), key_selector="k", trigger=CountTrigger.of(3),
        evictor=TimeEvictor.of(window_size), overflow=overflow,
    )
    for t in timestamps:
        op.process_element({"k": "a", "t": t}, t)
    ((kept, _),) = op.drain_output()
    return list(kept)


def test_time_evictor_cutoff_wraps_like_flink() -> None:
    # Flink: evictCutoff = max - windowSize = MIN_LONG + 5 - 10 wraps to MAX_LONG - 4: every
    # element is at or below it and is evicted (Python ints would keep them all)
    stamps = [MIN_LONG + 1, MIN_LONG + 3, MIN_LONG + 5]  # MIN_LONG itself: no timestamp
    assert wrap(MIN_LONG + 5 - 10) == MAX_LONG - 4
    assert _evicted(WRAP, 10, stamps) == []
    with pytest.raises(LongOverflowError, match="TimeEvictor cutoff"):
        _evicted(ERROR, 10, stamps)
    # no overflow: the same on both policies
    assert _evicted(WRAP, 3, [T0, T0 + 3, T0 + 5]) == [T0 + 3, T0 + 5]
    assert _evicted(ERROR, 3, [T0, T0 + 3, T0 + 5]) == [T0 + 3, T0 + 5]


def test_continuous_processing_time_trigger_next_firing_overflow_raises() -> None:
    # Flink: min(time + interval, maxTimestamp) with time + interval wrapped negative: a timer
    # in the past, firing every interval from there (about 2^64 / interval times)
    trigger = ContinuousProcessingTimeTrigger.of(Time.milliseconds(1000))
    for overflow in (WRAP, ERROR):
        op = WindowOperator(
            GlobalWindows.create(), Collect(), key_selector="k", trigger=trigger,
            overflow=overflow,
        )
        op.advance_processing_time(MAX_LONG - 1500)
        op.process_element({"k": "a", "t": 1}, 1)  # the next boundary MAX_LONG - 807 fits
        with pytest.raises(LongOverflowError, match="interval 1000"):
            op.advance_processing_time(MAX_LONG - 807)  # fires, then MAX_LONG + 193


def test_overflow_policy_is_validated() -> None:
    with pytest.raises(ValueError, match="overflow must be one of"):
        WindowOperator(TumblingEventTimeWindows.of(10), sum_of("v"), overflow="saturate")


@pytest.mark.parametrize("path", PATHS)
def test_negative_timestamps_with_offsets_fall_in_flinks_windows_on_every_path(path: str) -> None:
    """Before 1970, windows start where Flink's ``getWindowStartWithOffset`` puts them (Java's
    remainder truncates toward zero; Python's ``%`` floors)."""
    # tumbling 10 s, offset 3 s: -1 and 2999 in [-7000, 3000); -7001 and -17000 in [-17000, -7000)
    frames = [(_frame(["a"] * 4, [1, 2, 4, 8]), [-1, 2999, -7001, -17_000])]
    tumbling = TumblingEventTimeWindows.of(10_000, 3_000)
    assert _run(path, ERROR, frames, 2_999, tumbling) == [("a", 3), ("a", 12)]
    # sliding 10 s every 4 s, offset -1 s: -1 in [-9000, 1000), [-5000, 5000), [-1000, 9000);
    # -6000 in [-13000, -3000), [-9000, 1000)
    frames = [(_frame(["a", "a"], [1, 10]), [-1, -6_000])]
    sliding = SlidingEventTimeWindows.of(10_000, 4_000, -1_000)
    assert _run(path, ERROR, frames, 10_000, sliding) == [("a", 1), ("a", 1), ("a", 10), ("a", 11)]


class _Lists(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, context.window().start, [e["v"] for e in elements])


@pytest.mark.parametrize("assigner", [
    TumblingEventTimeWindows.of(20), SlidingEventTimeWindows.of(12, 4),
    SlidingEventTimeWindows.of(20, 5), EventTimeSessionWindows.with_gap(5),
], ids=["tumbling", "sliding", "sliding-panes", "sessions"])
@pytest.mark.parametrize("trigger", ["default", "continuous", "continuous-processing"])
@pytest.mark.parametrize("function", ["sum", "lists"])
@pytest.mark.parametrize("lateness", [0, 7, MAX_LONG - 30, MAX_LONG])
def test_every_state_form_takes_the_end_of_input_watermark(
    assigner: Any, trigger: str, function: str, lateness: int
) -> None:
    """``advance_watermark(MAX_LONG)`` (Flink's end of bounded input) fires every pending timer
    in whichever state form the configuration takes (columnar, continuous, panes, sessions,
    element lists, object), as the per-element operator does; later elements are late."""
    def factory() -> WindowOperator:
        triggers: dict[str, Any] = {
            "default": {},
            "continuous": {"trigger": ContinuousEventTimeTrigger.of(Time.milliseconds(3))},
            "continuous-processing": {
                "trigger": ContinuousProcessingTimeTrigger.of(Time.milliseconds(3))
            },
        }
        fn = sum_of("v") if function == "sum" else _Lists()
        return WindowOperator(
            assigner, fn, key_selector="k", allowed_lateness=lateness, **triggers[trigger]
        )

    kind = states.state_kind(factory(), True)
    state = states.new_state(kind, factory)
    reference = factory()
    for op in (state, reference):  # processing time before every window's end
        op.advance_processing_time(-100)
    script = [([("a", 4, 1), ("b", 9, 2), ("a", 15, 3)], 5), ([("a", 6, 4)], MAX_LONG),
              ([("b", 30, 5)], MAX_LONG)]
    for elements, watermark in script:
        frame = pd.DataFrame({"k": [k for k, _, _ in elements], "ts": [t for _, t, _ in elements],
                              "v": np.array([v for _, _, v in elements], dtype=np.int64)})
        timestamps = frame["ts"].to_numpy(dtype=np.int64)
        state = states.prepare(state, frame, timestamps, state.current_watermark)
        state.process_batch(frame, timestamps)
        reference.process_batch(frame, timestamps)
        state.advance_watermark(watermark)
        reference.advance_watermark(watermark)
        expected = [(tuple(r), t) for r, t in reference.drain_output()]
        if states.frame_outputs(state):
            out, stamps = state.drain_main_timed()
            got = [] if out is None else [
                (tuple(r), t) for r, t in zip(out.itertuples(index=False), stamps.tolist())
            ]
        else:
            got = [(tuple(r), t) for r, t in state.drain_output()]
        assert got == expected
        assert state.next_event_time_timer() == reference.next_event_time_timer()
        assert state.num_late_records_dropped == reference.num_late_records_dropped
        state = states.settle(state, kind, factory, ["k", "ts", "v"])
    # at watermark MAX_LONG every window is late, whatever the lateness (cleanup saturates)
    assert reference.num_late_records_dropped == 1


def test_continuous_state_fires_its_remaining_timers_at_the_end_of_input() -> None:
    """The columnar state under ContinuousEventTimeTrigger: the end-of-input watermark fires
    every early firing and the window end, then stops (it raised OverflowError)."""
    def factory() -> WindowOperator:
        return WindowOperator(
            TumblingEventTimeWindows.of(20), sum_of("v"), key_selector="k",
            trigger=ContinuousEventTimeTrigger.of(Time.milliseconds(3)),
        )

    state = ContinuousAggregation(factory(), factory)
    frame = pd.DataFrame({"k": ["a"], "ts": [4], "v": np.array([1], dtype=np.int64)})
    state.process_batch(frame, np.array([4], dtype=np.int64))
    state.advance_watermark(MAX_LONG)
    out, stamps = state.drain_main_timed()
    assert out is not None and stamps.tolist() == [19] * 6  # at 6, 9, 12, 15, 18 and 19
    assert state.holds_nothing() and state.next_event_time_timer() is None
