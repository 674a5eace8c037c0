"""Columnar element lists for full-window functions do exactly what the WindowOperator does.

Random scripts of batches (few keys, out-of-order and late timestamps; each batch in arrival
order, as the runtime hands it over in STREAMING mode, or sorted by event time as in BATCH mode)
and watermark advances run through :class:`ColumnarLists` (handing over to its ``to_operator()``
equivalent when a batch fires a window on arrival, and back with ``from_operator()``) and
through a plain :class:`WindowOperator`; every batch's main output (the window function sees its
elements in arrival order), late output, next timer and dropped count must agree, and so must
the state after a snapshot/restore at any point.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd
import pytest
from batch_scripts import batch_frame, batches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import (
    AllWindowFunction,
    CountTrigger,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
    WindowFunction,
)
from flinkwin.errors import NullKeyError
from flinkwin.operator import WindowOperator
from flinkwin.operator.element_rows import op_records
from flinkwin.operator.frames import read_frame
from flinkwin.operator.states.lists import ColumnarLists, _positions, supports
from flinkwin.operator.states.window_elements import WindowElements

LATE = OutputTag("late")
SIDE = OutputTag("sizes")
_COUNT = ValueStateDescriptor("count", Types.LONG())


class Lists(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        window = context.window()
        values = [tuple(e) for e in elements]
        context.output(SIDE, len(elements))
        yield (key, window.start, window.end, context.current_watermark(), values)


class AllLists(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        yield (context.window().start, [tuple(e) for e in elements])


class ApplyLists(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        return [(key, window.start, [e["v"] for e in inputs], inputs[0]["ts"])]


class AllApply(AllWindowFunction):
    def apply(self, window: Any, inputs: Any) -> Any:
        yield (window.end, sum(e["v"] for e in inputs), len(inputs))


FUNCTIONS = {"process": Lists, "process_all": AllLists, "apply": ApplyLists, "apply_all": AllApply}


def make_operator(assigner: Any, kind: str, lateness: int, late: bool) -> WindowOperator:
    keyed = kind in ("process", "apply")
    return WindowOperator(
        assigner, FUNCTIONS[kind](), key_selector="k" if keyed else None,
        allowed_lateness=lateness, late_output_tag=LATE if late else None,
    )


def timer_view(op: WindowOperator) -> list[tuple[int, frozenset[Any], list[Any]]]:
    """Timers per timestamp; the order that decides output order is that of the windows'
    ``max_timestamp`` timers (cleanup timers emit nothing)."""
    return [
        (ts, frozenset(slots), [slot for slot in slots if slot[1].max_timestamp() == ts])
        for ts, slots in op.event_timers.buckets()
    ]


def plain(outputs: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    return [(tuple(v) if isinstance(v, tuple) else v, ts) for v, ts in outputs]


batches_strategy = batches()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=batches_strategy,
    assigner=st.sampled_from([
        TumblingEventTimeWindows.of(Time.milliseconds(10)),
        TumblingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(3)),
        SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(4)),
    ]),
    kind=st.sampled_from(sorted(FUNCTIONS)),
    lateness=st.sampled_from([0, 7]),
    late=st.booleans(),
    cut=st.integers(0, 8),
    back=st.booleans(),
    sort=st.booleans(),  # batches in event-time order (BATCH mode) or in arrival order
)
def test_columnar_lists_match_the_window_operator(
    batches: list[Any], assigner: Any, kind: str, lateness: int, late: bool, cut: int,
    back: bool,
    sort: bool,
) -> None:
    def factory() -> WindowOperator:
        return make_operator(assigner, kind, lateness, late)

    reference = factory()
    state: Any = ColumnarLists(factory(), factory)
    watermark = 0
    for i, (elements, step) in enumerate(batches):
        if i == cut and isinstance(state, ColumnarLists):
            restored = ColumnarLists(factory(), factory)
            restored.restore(state.snapshot())
            state = restored
        frame, ts = batch_frame(elements, sort)
        if isinstance(state, ColumnarLists) and not state.accepts(frame, ts, watermark):
            state = state.to_operator()
        state.process_batch(frame, ts)
        reference.process_batch(frame, ts)
        watermark += step
        state.advance_watermark(watermark)
        reference.advance_watermark(watermark)

        assert plain(state.drain_output()) == plain(reference.drain_output()), f"main, batch {i}"
        assert state.drain_side_outputs() == reference.drain_side_outputs(), f"side, batch {i}"
        if back and isinstance(state, WindowOperator):
            state = ColumnarLists.from_operator(state, factory, ["k", "ts", "v"])
            assert state is not None
        assert state.next_event_time_timer() == reference.next_event_time_timer()
        assert state.num_late_records_dropped == reference.num_late_records_dropped
        if isinstance(state, ColumnarLists) and state.rows is not None:
            # the windows kept across appends and cleanups are those of the rows held
            seq, first = np.unique(state.rows["_fw_seq"].to_numpy(), return_index=True)
            kept = state._panes()
            assert kept[0].tolist() == seq.tolist() and kept[1].tolist() == first.tolist()
    if isinstance(state, ColumnarLists):
        state = state.to_operator()
    assert state.window_contents == reference.window_contents
    assert timer_view(state) == timer_view(reference)


def test_elements_are_built_lazily_in_arrival_order() -> None:
    seen: list[Any] = []

    class Keep(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            seen.append(elements)
            return [len(elements)]

    def factory() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), Keep(),
                              key_selector="k")

    state = ColumnarLists(factory(), factory)
    frame = pd.DataFrame({"k": ["a", "b", "a", "a"], "ts": [5, 1, 3, 9], "v": [1, 2, 3, 4]})
    state.process_batch(frame, frame["ts"].to_numpy())
    state.advance_watermark(100)
    assert [v for v, _ in state.drain_output()] == [3, 1]
    first, second = seen
    assert isinstance(first, WindowElements)
    assert first._source.records is None  # nothing built: len() only
    assert [e["v"] for e in first] == [1, 3, 4]  # arrival order, not timestamp order
    assert first[-1]["ts"] == 9 and first[1:] == [("a", 3, 3), ("a", 9, 4)]
    assert list(second) == [("b", 1, 2)] and type(second[0]).__fields__ == ("k", "ts", "v")
    assert pickle.loads(pickle.dumps(first)) == list(first)
    with pytest.raises(IndexError):
        first[3]
    assert state.holds_nothing()


def test_function_state_hands_over_to_the_operator() -> None:
    class Counting(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            count = context.global_state().get_state(_COUNT)
            count.update((count.value() or 0) + 1)
            yield (key, count.value())

    def factory() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), Counting(),
                              key_selector="k")

    state = ColumnarLists(factory(), factory)
    frame = pd.DataFrame({"k": ["a"], "ts": [1], "v": [1]})
    state.process_batch(frame, np.array([1]))
    state.advance_watermark(50)
    assert [v for v, _ in state.drain_output()] == [("a", 1)]
    assert state.holds_function_state() and not state.holds_nothing()
    op = state.to_operator()
    assert op.function_state.num_entries() == 1
    assert ColumnarLists.from_operator(op, factory, ["k", "ts", "v"]) is None
    op.process_batch(frame.assign(ts=[55]), np.array([55]))
    op.advance_watermark(100)
    assert [v for v, _ in op.drain_output()] == [("a", 2)]


def test_supported_configurations() -> None:
    tumbling = TumblingEventTimeWindows.of(Time.seconds(1))
    assert supports(WindowOperator(tumbling, Lists(), key_selector="k"))
    assert supports(WindowOperator(tumbling, AllLists()))
    few = SlidingEventTimeWindows.of(Time.seconds(4), Time.seconds(1))
    many = SlidingEventTimeWindows.of(Time.minutes(60), Time.minutes(1))
    assert supports(WindowOperator(few, Lists(), key_selector="k"))
    assert not supports(WindowOperator(many, Lists(), key_selector="k"))  # 60 copies
    assert not supports(WindowOperator(tumbling, Lists(), key_selector="k",
                                       trigger=CountTrigger.of(2)))
    assert not supports(WindowOperator(tumbling, lambda a, b: a, key_selector="k"))

    class Clearing(Lists):
        def clear(self, context: Any) -> None:
            pass

    assert not supports(WindowOperator(tumbling, Clearing(), key_selector="k"))


def test_timestamps_after_2262_survive_the_operator_round_trip_and_snapshots() -> None:
    """pandas' nanoseconds stop in 2262: element lists keep timestamps in microseconds."""
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.seconds(10)), "process", 0, False)

    micros = np.array(["2500-01-01T00:00:00.000001", "9000-06-01T12:00"], dtype="datetime64[us]")
    frame = pd.DataFrame({
        "k": ["a", "a"], "ts": [1000, 2000], "v": np.array([1, 2], dtype=np.int64),
        "at": pd.DatetimeIndex(micros).tz_localize("UTC"),
    })
    op = factory()
    op.process_batch(frame, np.array([1000, 2000], dtype=np.int64))
    lists = ColumnarLists.from_operator(op, factory, ["k", "ts", "v", "at"])
    assert lists is not None
    restored = ColumnarLists(factory(), factory)
    restored.restore(lists.snapshot())
    restored.advance_watermark(20_000)
    [(result, _)] = restored.drain_output()
    assert [v[-1] for v in result[-1]] == frame["at"].tolist()


def test_snapshot_keeps_nullable_and_timestamp_columns() -> None:
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.seconds(10)), "process", 0, False)

    state = ColumnarLists(factory(), factory)
    frame = pd.DataFrame({
        "k": ["a", "a"], "ts": [1000, 2000], "v": np.array([1, 2], dtype=np.int64),
        "extra": pd.Series([None, 7], dtype=object),
        "at": pd.to_datetime(
            ["2024-01-01 00:00:00.000001", "2024-01-01 00:00:01.000000"], utc=True
        ),
    })
    direct = ColumnarLists(factory(), factory)
    direct.process_batch(frame, np.array([1000, 2000], dtype=np.int64))
    state.process_batch(frame, np.array([1000, 2000], dtype=np.int64))
    restored = ColumnarLists(factory(), factory)
    restored.restore(state.snapshot())
    rows, meta = read_frame(state.snapshot(), "element-lists-1", "flinkwin.lists", "x")
    assert rows is not None and len(rows) == 2 and meta["next_seq"] == 1
    for s in (direct, restored):
        s.advance_watermark(20_000)
    assert restored.drain_output() == direct.drain_output()
    with pytest.raises(ValueError, match="not a element-list"):
        restored.restore(factory().snapshot())



class FirstOfWindow(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, context.window().start, elements[0])


@pytest.mark.parametrize("shape", ["fields", "tuples", "atomic", "converted", "pickled"])
def test_each_window_gets_the_key_of_its_elements(shape: str) -> None:
    """The window function's key is ``key_of`` of the window's elements, for every element
    shape (the columnar path computes it from the key columns alone)."""
    floats = [0.0, -0.0, float("nan"), 1.5, float("nan"), 0.0]
    frame = pd.DataFrame({
        "k": ["a", "b", "a", "c", "a", "b"], "g": floats, "v": np.arange(6, dtype=np.int64),
    })
    options: dict[str, Any] = {"key_selector": ["k", "g"]}
    if shape == "tuples":
        options["tuple_elements"] = True
    elif shape == "atomic":
        frame = frame[["k"]]
        options = {"key_selector": "k", "atomic_elements": True}
    elif shape == "converted":
        options["element_converters"] = {"k": str.upper}
    elif shape == "pickled":
        frame = pd.DataFrame({"value": [pickle.dumps({"k": k}) for k in frame["k"]]})
        options = {"key_selector": lambda value: value["k"], "pickled_elements": True}
    ts = np.array([1, 2, 3, 4, 15, 16], dtype=np.int64)

    def factory() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)),
                              FirstOfWindow(), **options)

    reference = factory()  # element by element
    for record, timestamp in zip(op_records(reference, frame), ts.tolist()):
        reference.process_element(record, timestamp)
    reference.advance_watermark(100)
    expected = reference.drain_output()
    template = factory()
    if shape == "pickled":  # a callable key selector: the object operator's path
        assert not supports(template)
        return
    state = ColumnarLists(template, factory)
    state.process_batch(frame, ts)
    state.advance_watermark(100)
    got = state.drain_output()
    assert len(got) == len(expected) == (5 if shape == "atomic" else 6)
    for (key, _start, first), _ in got:
        assert key == state.op.key_of(first) and type(key) is type(state.op.key_of(first))
    assert repr(got) == repr(expected)


@pytest.mark.parametrize("fields", [["k"], ["k", "g"]])
def test_a_null_key_fails_the_firing_as_the_operator_fails_the_element(fields: list[str]) -> None:
    """A null key value in the key columns: the columnar path (which reads keys from the key
    columns) fails with the operator's null-key error when the window fires."""
    frame = pd.DataFrame({"k": ["a", None, "b"], "g": [1.0, 2.0, float("nan")],
                          "v": np.arange(3, dtype=np.int64)})
    ts = np.array([1, 2, 3], dtype=np.int64)

    def factory() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)),
                              FirstOfWindow(), key_selector=fields)

    reference = factory()
    records = op_records(reference, frame)
    reference.process_element(records[0], 1)
    with pytest.raises(NullKeyError) as expected:
        reference.process_element(records[1], 2)
    state = ColumnarLists(factory(), factory)
    state.process_batch(frame, ts)
    with pytest.raises(NullKeyError) as got:
        state.advance_watermark(100)
    assert str(got.value) == str(expected.value)


def test_elements_read_from_held_rows_equal_those_of_the_taken_rows() -> None:
    """The firing windows' elements are read from the held rows' columns at their positions:
    values and types as the taken rows give them, for every column kind."""
    frame = pd.DataFrame({
        "k": ["a", None, "b", "c"],
        "i": np.array([1, -2, 3, 2**62], dtype=np.int64),
        "n": pd.array([1, None, 3, 4], dtype="Int64"),
        "f": [0.5, float("nan"), -0.0, None],
        "b": [True, False, True, False],
        "t": pd.to_datetime([1, 2, 3, 4], unit="ms", utc=True),
        "naive": pd.to_datetime([1, 2, 3, 4], unit="us"),
        "d": pd.to_timedelta([1, 2, 3, 4], unit="ms"),
        "_fw_seq": np.arange(4, dtype=np.int64),
    })
    op = make_operator(TumblingEventTimeWindows.of(Time.milliseconds(10)), "process", 0, False)
    rows = np.array([3, 0, 2], dtype=np.int64)
    columns = [c for c in frame.columns if c != "_fw_seq"]
    read = op_records(op, frame, rows, columns)
    taken = op_records(op, frame.iloc[rows, : len(columns)])
    assert repr(read) == repr(taken)
    assert [[type(v) for v in r] for r in read] == [[type(v) for v in r] for r in taken]


@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=30, unique=True),
       st.lists(st.integers(0, 10**6), max_size=60))
def test_row_window_positions_are_the_binary_searchs(values: list[int], picks: list[int]) -> None:
    """Each held row's window index (a table over the numbers' range, or binary search when
    the range is wide) is what ``np.searchsorted`` gives."""
    seq = np.array(sorted(values), dtype=np.int64)
    numbers = seq[np.array(picks, dtype=np.int64) % len(seq)] if picks else seq[:0]
    got = _positions(seq, numbers)
    assert got.tolist() == np.searchsorted(seq, numbers).tolist()
