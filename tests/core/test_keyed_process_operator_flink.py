"""Ports of Flink's ``KeyedProcessOperatorTest`` and ``ProcessOperatorTest`` (test names as in
Flink), the TopN function of Flink's HotItems example driven through the operator, and the
operators' own contract (timer order, keyed state kinds, snapshots, errors).

Flink's test harness output interleaves watermarks with records; :class:`Harness` does the same:
an advanced watermark is appended after what it fired, as Flink forwards it after emitting.
A record is ``(value, timestamp)``, ``None`` for a record without timestamp.
"""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from flinkwin import (
    AggregateFunction,
    AggregatingStateDescriptor,
    KeyedProcessFunction,
    KeySelector,
    ListStateDescriptor,
    MapStateDescriptor,
    OutputTag,
    ProcessFunction,
    ReducingStateDescriptor,
    Row,
    SlidingEventTimeWindows,
    Time,
    TimeDomain,
    TimerService,
    ValueStateDescriptor,
    WindowFunction,
)
from flinkwin.errors import IllegalStateError, UnsupportedOperationError, UserFunctionError
from flinkwin.operator import StatePickler, WindowOperator
from flinkwin.operator.graph import OPERATOR, GraphOperator, GraphPlan, NodeSpec, SourceSpec
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator, ProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.operator.snapshots import SnapshotAuthenticationError
from flinkwin.operator.stream_operator import StreamOperator
from flinkwin.time import MIN_LONG


class Harness:
    """Flink's ``OneInputStreamOperatorTestHarness`` over a process operator."""

    def __init__(self, op: Any) -> None:
        self.op = op
        self.output: list[Any] = []
        self.side: dict[OutputTag, list[tuple[Any, int | None]]] = {}
        op.open()

    def _drain(self) -> None:
        self.output += self.op.drain_output()
        for tag, records in self.op.drain_side_outputs().items():
            self.side.setdefault(tag, []).extend(records)

    def process_element(self, value: Any, timestamp: int | None = None) -> None:
        self.op.process_element(value, timestamp)
        self._drain()

    def process_watermark(self, watermark: int) -> None:
        self.op.advance_watermark(watermark)
        self._drain()
        self.output.append(("WM", watermark))

    def set_processing_time(self, time: int) -> None:
        self.op.advance_processing_time(time)
        self._drain()

    def close(self) -> None:
        self.op.close()


def keyed(function: Any) -> Harness:
    """``new KeyedOneInputStreamOperatorTestHarness<>(operator, new IdentityKeySelector<>(),
    ...)``."""
    return Harness(KeyedProcessOperator(function, lambda value: value))


# --------------------------------------------------------------- Flink's UDFs


class QueryingFlatMapFunction(KeyedProcessFunction):
    def __init__(self, time_domain: TimeDomain) -> None:
        self.expected_time_domain = time_domain

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        service = ctx.timer_service()
        now = (service.current_watermark() if self.expected_time_domain is TimeDomain.EVENT_TIME
               else service.current_processing_time())
        ts = "null" if ctx.timestamp() is None else ctx.timestamp()
        yield f"{value}TIME:{now} TS:{ts}"


class TriggeringFlatMapFunction(KeyedProcessFunction):
    def __init__(self, time_domain: TimeDomain, expected_key: int) -> None:
        self.expected_time_domain = time_domain
        self.expected_key = expected_key

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        service = ctx.timer_service()
        if self.expected_time_domain is TimeDomain.EVENT_TIME:
            service.register_event_time_timer(service.current_watermark() + 5)
        else:
            service.register_processing_time_timer(service.current_processing_time() + 5)
        return [value]

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        assert ctx.get_current_key() == self.expected_key
        assert ctx.time_domain() is self.expected_time_domain
        yield 1777


class TriggeringStatefulFlatMapFunction(KeyedProcessFunction):
    state = ValueStateDescriptor("seen-element")

    def __init__(self, time_domain: TimeDomain) -> None:
        self.expected_time_domain = time_domain

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        service = ctx.timer_service()
        state = self.get_runtime_context().get_state(self.state)
        event_time = self.expected_time_domain is TimeDomain.EVENT_TIME
        if state.value() is None:
            yield f"INPUT:{value}"
            state.update(value)
            if event_time:
                service.register_event_time_timer(service.current_watermark() + 5)
            else:
                service.register_processing_time_timer(service.current_processing_time() + 5)
        else:
            state.clear()
            if event_time:
                service.delete_event_time_timer(service.current_watermark() + 4)
            else:
                service.delete_processing_time_timer(service.current_processing_time() + 4)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        assert ctx.time_domain() is self.expected_time_domain
        yield f"STATE:{self.get_runtime_context().get_state(self.state).value()}"


class BothTriggeringFlatMapFunction(KeyedProcessFunction):
    def __init__(self, expected_key: int) -> None:
        self.expected_key = expected_key

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
        service = ctx.timer_service()
        service.register_processing_time_timer(3)
        service.register_event_time_timer(4)
        service.register_processing_time_timer(5)
        service.register_event_time_timer(6)
        service.delete_processing_time_timer(3)
        service.delete_event_time_timer(4)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        assert ctx.get_current_key() == self.expected_key
        if ctx.time_domain() is TimeDomain.EVENT_TIME:
            yield "EVENT:1777"
        else:
            yield "PROC:1777"


INTEGER_OUTPUT_TAG = OutputTag("int-out")
LONG_OUTPUT_TAG = OutputTag("long-out")


class SideOutputProcessFunction(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        yield f"IN:{value}"
        ctx.output(INTEGER_OUTPUT_TAG, value)
        ctx.output(LONG_OUTPUT_TAG, value * 1.0)


class NullOutputTagEmittingProcessFunction(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
        ctx.output(None, value)


# ------------------------------------------------------ KeyedProcessOperatorTest


def test_key_querying() -> None:
    """Port of KeyedProcessOperatorTest#testKeyQuerying."""
    class KeyQueryingProcessFunction(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            assert ctx.get_current_key() == value[0], "Did not get expected key."
            yield value[1]

    h = Harness(KeyedProcessOperator(KeyQueryingProcessFunction(), lambda value: value[0]))
    h.process_element((5, "5"), 12)
    h.process_element((42, "42"), 13)
    assert h.output == [("5", 12), ("42", 13)]


def test_timestamp_and_watermark_querying() -> None:
    """Port of KeyedProcessOperatorTest#testTimestampAndWatermarkQuerying."""
    h = keyed(QueryingFlatMapFunction(TimeDomain.EVENT_TIME))
    h.process_watermark(17)
    h.process_element(5, 12)
    h.process_watermark(42)
    h.process_element(6, 13)
    assert h.output == [
        ("WM", 17), ("5TIME:17 TS:12", 12), ("WM", 42), ("6TIME:42 TS:13", 13),
    ]
    h.close()


def test_timestamp_and_processing_time_querying() -> None:
    """Port of KeyedProcessOperatorTest#testTimestampAndProcessingTimeQuerying."""
    h = keyed(QueryingFlatMapFunction(TimeDomain.PROCESSING_TIME))
    h.set_processing_time(17)
    h.process_element(5)
    h.set_processing_time(42)
    h.process_element(6)
    assert h.output == [("5TIME:17 TS:null", None), ("6TIME:42 TS:null", None)]


def test_event_time_timers() -> None:
    """Port of KeyedProcessOperatorTest#testEventTimeTimers."""
    expected_key = 17
    h = keyed(TriggeringFlatMapFunction(TimeDomain.EVENT_TIME, expected_key))
    h.process_watermark(0)
    h.process_element(expected_key, 42)
    h.process_watermark(5)
    assert h.output == [("WM", 0), (expected_key, 42), (1777, 5), ("WM", 5)]


def test_processing_time_timers() -> None:
    """Port of KeyedProcessOperatorTest#testProcessingTimeTimers."""
    expected_key = 17
    h = keyed(TriggeringFlatMapFunction(TimeDomain.PROCESSING_TIME, expected_key))
    h.process_element(expected_key)
    h.set_processing_time(5)
    # MIN_LONG + 5 fires at 5; the processing-time timer's output carries no timestamp
    assert h.output == [(expected_key, None), (1777, None)]


def test_event_time_timer_with_state() -> None:
    """Port of KeyedProcessOperatorTest#testEventTimeTimerWithState: no leakage between keys."""
    h = keyed(TriggeringStatefulFlatMapFunction(TimeDomain.EVENT_TIME))
    h.process_watermark(1)
    h.process_element(17, 0)  # should set timer for 6
    h.process_element(13, 0)  # should set timer for 6
    h.process_watermark(2)
    h.process_element(42, 1)  # should set timer for 7
    h.process_element(13, 1)  # should delete timer
    h.process_watermark(6)
    h.process_watermark(7)
    assert h.output == [
        ("WM", 1), ("INPUT:17", 0), ("INPUT:13", 0), ("WM", 2), ("INPUT:42", 1),
        ("STATE:17", 6), ("WM", 6), ("STATE:42", 7), ("WM", 7),
    ]


def test_processing_time_timer_with_state() -> None:
    """Port of KeyedProcessOperatorTest#testProcessingTimeTimerWithState: no leakage between
    keys."""
    h = keyed(TriggeringStatefulFlatMapFunction(TimeDomain.PROCESSING_TIME))
    h.set_processing_time(1)
    h.process_element(17)  # should set timer for 6
    h.process_element(13)  # should set timer for 6
    h.set_processing_time(2)
    h.process_element(13)  # should delete timer
    h.process_element(42)  # should set timer for 7
    h.set_processing_time(6)
    h.set_processing_time(7)
    assert h.output == [
        ("INPUT:17", None), ("INPUT:13", None), ("INPUT:42", None),
        ("STATE:17", None), ("STATE:42", None),
    ]


def test_snapshot_and_restore() -> None:
    """Port of KeyedProcessOperatorTest#testSnapshotAndRestore."""
    expected_key = 5
    h = keyed(BothTriggeringFlatMapFunction(expected_key))
    h.process_element(expected_key, 12)
    snapshot = h.op.snapshot()
    h.close()

    h = keyed(BothTriggeringFlatMapFunction(expected_key))
    h.op.restore(snapshot)
    h.set_processing_time(5)
    h.process_watermark(6)
    assert h.output == [("PROC:1777", None), ("EVENT:1777", 6), ("WM", 6)]


def test_null_output_tag_refusal() -> None:
    """Port of KeyedProcessOperatorTest#testNullOutputTagRefusal."""
    h = keyed(NullOutputTagEmittingProcessFunction())
    h.set_processing_time(17)
    with pytest.raises(UserFunctionError, match="OutputTag must not be null.") as raised:
        h.process_element(5)
    assert isinstance(raised.value.__cause__, ValueError)  # Java's IllegalArgumentException
    h.close()


def test_side_output() -> None:
    """Port of KeyedProcessOperatorTest#testSideOutput (with the side outputs' timestamps)."""
    h = keyed(SideOutputProcessFunction())
    h.process_element(42, 17)
    assert h.output == [("IN:42", 17)]
    assert h.side[INTEGER_OUTPUT_TAG] == [(42, 17)]
    assert h.side[LONG_OUTPUT_TAG] == [(42.0, 17)]


# ------------------------------------------------------------ ProcessOperatorTest


class QueryingProcessFunction(ProcessFunction):
    def __init__(self, time_domain: TimeDomain) -> None:
        self.time_domain = time_domain

    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
        service = ctx.timer_service()
        now = (service.current_watermark() if self.time_domain is TimeDomain.EVENT_TIME
               else service.current_processing_time())
        ts = "null" if ctx.timestamp() is None else ctx.timestamp()
        return [f"{value}TIME:{now} TS:{ts}"]


def test_process_operator_timestamp_and_watermark_querying() -> None:
    """Port of ProcessOperatorTest#testTimestampAndWatermarkQuerying."""
    h = Harness(ProcessOperator(QueryingProcessFunction(TimeDomain.EVENT_TIME)))
    h.process_watermark(17)
    h.process_element(5, 12)
    h.process_watermark(42)
    h.process_element(6, 13)
    assert h.output == [
        ("WM", 17), ("5TIME:17 TS:12", 12), ("WM", 42), ("6TIME:42 TS:13", 13),
    ]


def test_process_operator_timestamp_and_processing_time_querying() -> None:
    """Port of ProcessOperatorTest#testTimestampAndProcessingTimeQuerying."""
    h = Harness(ProcessOperator(QueryingProcessFunction(TimeDomain.PROCESSING_TIME)))
    h.set_processing_time(17)
    h.process_element(5)
    h.set_processing_time(42)
    h.process_element(6)
    assert h.output == [("5TIME:17 TS:null", None), ("6TIME:42 TS:null", None)]


def test_process_operator_null_output_tag_refusal() -> None:
    """Port of ProcessOperatorTest#testNullOutputTagRefusal."""
    class NullTag(ProcessFunction):
        def process_element(self, value: Any, ctx: ProcessFunction.Context) -> None:
            ctx.output(None, value)

    h = Harness(ProcessOperator(NullTag()))
    h.set_processing_time(17)
    with pytest.raises(UserFunctionError, match="OutputTag must not be null."):
        h.process_element(5)


def test_process_operator_side_output() -> None:
    """Port of ProcessOperatorTest#testSideOutput."""
    class SideOutput(ProcessFunction):
        def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
            yield f"IN:{value}"
            ctx.output(INTEGER_OUTPUT_TAG, value)
            yield LONG_OUTPUT_TAG, value * 1.0  # PyFlink's way

    h = Harness(ProcessOperator(SideOutput()))
    h.process_element(42, 17)
    assert h.output == [("IN:42", 17)]
    assert h.side == {INTEGER_OUTPUT_TAG: [(42, 17)], LONG_OUTPUT_TAG: [(42.0, 17)]}


@pytest.mark.parametrize(("call", "message"), [
    (lambda s: s.register_event_time_timer(5), "Setting timers is only supported on a keyed"),
    (lambda s: s.register_processing_time_timer(5), "Setting timers is only supported"),
    (lambda s: s.delete_event_time_timer(5), "Deleting timers is only supported on a keyed"),
    (lambda s: s.delete_processing_time_timer(5), "Deleting timers is only supported"),
])
def test_timers_on_a_non_keyed_stream_raise_flinks_error(call: Any, message: str) -> None:
    class SetsTimers(ProcessFunction):
        def process_element(self, value: Any, ctx: ProcessFunction.Context) -> None:
            call(ctx.timer_service())

    h = Harness(ProcessOperator(SetsTimers()))
    with pytest.raises(UnsupportedOperationError, match=message):
        h.process_element(1, 1)
    assert h.op.holds_nothing() and h.op.state_size() == (0, 0)


def test_keyed_state_on_a_non_keyed_stream_is_refused() -> None:
    class UsesState(ProcessFunction):
        def process_element(self, value: Any, ctx: ProcessFunction.Context) -> None:
            self.get_runtime_context().get_state(ValueStateDescriptor("s")).update(value)

    with pytest.raises(UserFunctionError, match="only available on a keyed stream"):
        Harness(ProcessOperator(UsesState())).process_element(1, 1)


def test_a_keyed_process_function_needs_a_keyed_stream() -> None:
    with pytest.raises(TypeError, match="runs on a keyed stream"):
        ProcessOperator(SideOutputProcessFunction())
    with pytest.raises(TypeError, match="needs a key selector"):
        KeyedProcessOperator(SideOutputProcessFunction(), None)
    with pytest.raises(TypeError, match="process_element"):
        KeyedProcessOperator(object(), "k")
    with pytest.raises(TypeError, match="not the class"):
        KeyedProcessOperator(SideOutputProcessFunction, "k")


def test_process_operator_snapshot_keeps_its_clocks() -> None:
    op = ProcessOperator(QueryingProcessFunction(TimeDomain.EVENT_TIME))
    op.advance_watermark(17)
    op.advance_processing_time(99)
    restored = ProcessOperator(QueryingProcessFunction(TimeDomain.EVENT_TIME))
    restored.restore(op.snapshot())
    assert (restored.current_watermark, restored.current_processing_time) == (17, 99)
    with pytest.raises(ValueError, match="non-keyed process operator cannot restore a keyed"):
        KeyedProcessOperator(SideOutputProcessFunction(), "k").restore(op.snapshot())


# --------------------------------------------------------------------- HotItems


class CountAgg(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class WindowResultFunction(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        yield Row(item_id=key, window_end=window.end, view_count=next(iter(inputs)))


class TopNHotItems(KeyedProcessFunction):
    """Flink's HotItems ``TopNHotItems extends KeyedProcessFunction<Tuple, ItemViewCount,
    String>``, with PyFlink's signatures."""

    def __init__(self, top_size: int) -> None:
        self.top_size = top_size

    def open(self, runtime_context: Any) -> None:
        self.item_state = runtime_context.get_list_state(ListStateDescriptor("itemState-state"))

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
        self.item_state.add(value)
        ctx.timer_service().register_event_time_timer(value.window_end + 1)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        all_items = list(self.item_state.get())
        self.item_state.clear()
        all_items.sort(key=lambda item: -item.view_count)
        lines = [f"time: {timestamp - 1}"]
        for i, item in enumerate(all_items[: self.top_size]):
            lines.append(f"No{i}: item={item.item_id} views={item.view_count}")
        yield "\n".join(lines)


MINUTE = 60_000
#: (item_id, timestamp) page views of user behaviour, in timestamp order
VIEWS = [(item, t * MINUTE + item) for t in range(0, 130, 3) for item in (1, 2, 3, 4)
         if (t + item) % (item + 1) != 0]


def top_n(views: list[tuple[int, int]], window_end: int, n: int) -> list[tuple[int, int]]:
    """The top ``n`` (item, count) of the hour ending at ``window_end``, brute force, ties in
    the order the operator sees them (ascending item: the window operator fires keys in
    order of their first element)."""
    counts: dict[int, int] = {}
    for item, ts in views:
        if window_end - 60 * MINUTE <= ts < window_end:
            counts[item] = counts.get(item, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])[:n]


def run_hot_items(snapshot_every_step: bool) -> list[tuple[str, int | None]]:
    """``keyBy(itemId).window(sliding 60 min / 5 min).aggregate(CountAgg, WindowResult)
    .keyBy(windowEnd).process(TopNHotItems(3))``, the watermark advancing with the views."""
    windows = WindowOperator(
        SlidingEventTimeWindows.of(Time.minutes(60), Time.minutes(5)),
        (CountAgg(), WindowResultFunction()), key_selector=lambda v: v[0],
    )
    top = KeyedProcessOperator(TopNHotItems(3), "window_end")
    results: list[tuple[str, int | None]] = []

    def forward(watermark: int) -> None:
        nonlocal top
        windows.advance_watermark(watermark)
        for value, ts in windows.drain_output():
            top.process_element(value, ts)
        if snapshot_every_step:  # a micro-batch boundary: the state goes through bytes
            fresh = KeyedProcessOperator(TopNHotItems(3), "window_end")
            fresh.restore(top.snapshot())
            top = fresh
        top.advance_watermark(watermark)
        results.extend(top.drain_output())

    for item, ts in VIEWS:
        windows.process_element((item, ts), ts)
        forward(ts - 1)  # ascending timestamps: WatermarkStrategy.for_monotonous_timestamps()
    forward(200 * MINUTE)
    assert top.holds_nothing() and top.state_size() == (0, 0)
    return results


def test_hot_items_top_n_emits_each_windows_top_items_once_its_end_passes() -> None:
    results = run_hot_items(snapshot_every_step=False)
    # every window holding views, in order, once: the last view (129 min) is in windows up to
    # the one ending at 185 min
    assert [ts - 1 for _, ts in results] == list(range(5 * MINUTE, 186 * MINUTE, 5 * MINUTE))
    for text, ts in results:
        assert ts is not None
        window_end = ts - 1
        lines = text.split("\n")
        assert lines[0] == f"time: {window_end}"
        got = [(int(line.split("item=")[1].split()[0]), int(line.split("views=")[1]))
               for line in lines[1:]]
        expected = top_n(VIEWS, window_end, 3)
        assert [count for _, count in got] == [count for _, count in expected]
        assert set(got) <= {(i, c) for i, c in top_n(VIEWS, window_end, 4)}


def test_hot_items_results_do_not_depend_on_snapshots_between_steps() -> None:
    assert run_hot_items(snapshot_every_step=True) == run_hot_items(snapshot_every_step=False)


def test_hot_items_in_a_stream_graph_equals_the_operators_chained_by_hand() -> None:
    """The same pipeline as one stream graph (the window node feeding the keyed process
    node), snapshotted and restored between every step."""
    plan = GraphPlan(
        sources=(SourceSpec(columns=("item", "ts"), names=("item", "ts"), tuple_elements=True,
                            stage_watermark=True),),
        nodes=(
            NodeSpec("window", OPERATOR, ((("source", 0), 0),), build=lambda info: WindowOperator(
                SlidingEventTimeWindows.of(Time.minutes(60), Time.minutes(5)),
                (CountAgg(), WindowResultFunction()), key_selector=lambda v: v[0],
                task_info=info)),
            NodeSpec("top", OPERATOR, ((("node", 0), 0),), build=lambda info: KeyedProcessOperator(
                TopNHotItems(3), "window_end", task_info=info)),
        ),
        main=("node", 1),
    )
    graph = GraphOperator(plan, TaskInfo())
    results = []
    for item, ts in VIEWS:
        graph.process_element((item, ts), ts)
        restored = GraphOperator(plan, TaskInfo())
        restored.restore(graph.snapshot())
        graph = restored
        graph.advance_watermark(ts - 1)
        results += graph.drain_output()
    graph.advance_watermark(200 * MINUTE)
    results += graph.drain_output()
    assert results == run_hot_items(snapshot_every_step=False)
    assert graph.holds_nothing()


# ------------------------------------------------------------ operator contract


class Recorder(KeyedProcessFunction):
    """Registers the timers it is given as ``(value, [timer timestamps])`` and reports firings."""

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
        for t in value[1]:
            ctx.timer_service().register_event_time_timer(t)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
        yield (ctx.get_current_key(), timestamp, ctx.timestamp())


def test_timers_fire_in_timestamp_order_each_with_its_key_and_once_per_key_and_time() -> None:
    op = KeyedProcessOperator(Recorder(), lambda v: v[0])
    op.process_element(("b", [30, 10, 10]), 1)
    op.process_element(("a", [20, 10]), 2)
    op.process_element(("b", [10]), 3)  # already registered for b: one timer
    assert op.next_event_time_timer() == 10
    assert op.state_size() == (2, 4)
    op.advance_watermark(25)
    assert op.drain_output() == [
        (("b", 10, 10), 10), (("a", 10, 10), 10), (("a", 20, 20), 20),
    ]
    op.advance_watermark(25)  # not above: nothing
    op.advance_watermark(24)
    assert op.drain_output() == []
    op.advance_watermark(30)
    assert op.drain_output() == [(("b", 30, 30), 30)]
    assert op.holds_nothing() and op.next_event_time_timer() is None


def test_a_timer_registered_while_firing_below_the_watermark_fires_in_that_advance() -> None:
    class Chain(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
            ctx.timer_service().register_event_time_timer(1)

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
            if timestamp < 3:
                ctx.timer_service().register_event_time_timer(timestamp + 1)
            yield timestamp

    op = KeyedProcessOperator(Chain(), lambda v: v)
    op.process_element("k", None)
    op.advance_watermark(10)
    assert op.drain_output() == [(1, 1), (2, 2), (3, 3)]


def test_timer_timestamps_must_be_java_longs() -> None:
    class Bad(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
            ctx.timer_service().register_event_time_timer(value)

    op = KeyedProcessOperator(Bad(), lambda v: "k")
    for bad, message in ((1.5, "must be an int"), (None, "must be an int"),
                         (True, "must be an int"), (2**63, "Java long")):
        with pytest.raises(UserFunctionError, match=message):
            op.process_element(bad, 1)
    assert op.holds_nothing()


def test_every_keyed_state_kind_is_the_current_keys_in_process_element_and_on_timer() -> None:
    class Avg(AggregateFunction):
        def create_accumulator(self) -> tuple[int, int]:
            return (0, 0)

        def add(self, value: int, acc: tuple[int, int]) -> tuple[int, int]:
            return (acc[0] + value, acc[1] + 1)

        def get_result(self, acc: tuple[int, int]) -> float:
            return acc[0] / acc[1]

        def merge(self, a: Any, b: Any) -> Any:
            raise AssertionError("not merged")

    class AllStates(KeyedProcessFunction):
        def open(self, runtime_context: Any) -> None:
            # handles kept from open follow the current key (PyFlink programs do this)
            self.values = runtime_context.get_list_state(ListStateDescriptor("values"))
            self.seen = runtime_context.get_map_state(MapStateDescriptor("seen"))
            self.total = runtime_context.get_reducing_state(
                ReducingStateDescriptor("total", lambda a, b: a + b))
            self.avg = runtime_context.get_aggregating_state(
                AggregatingStateDescriptor("avg", Avg()))

        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
            key, n = value
            last = self.get_runtime_context().get_state(ValueStateDescriptor("last"))
            last.update(n)
            self.values.add(n)
            self.seen.put(n, True)
            self.total.add(n)
            self.avg.add(n)
            ctx.timer_service().register_event_time_timer(100)

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
            last = self.get_runtime_context().get_state(ValueStateDescriptor("last"))
            yield (ctx.get_current_key(), last.value(), self.values.get(),
                   sorted(self.seen.keys()), self.total.get(), self.avg.get())
            for state in (last, self.values, self.seen, self.total, self.avg):
                state.clear()

    op = KeyedProcessOperator(AllStates(), lambda v: v[0])
    for value in (("a", 1), ("b", 10), ("a", 3), ("b", 20), ("a", 2)):
        op.process_element(value, 5)
    assert op.state_size() == (2, 2 * 5 + 2)
    snapshot = op.snapshot()
    op.advance_watermark(100)
    expected = [(("a", 2, [1, 3, 2], [1, 2, 3], 6, 2.0), 100),
                (("b", 20, [10, 20], [10, 20], 30, 15.0), 100)]
    assert op.drain_output() == expected
    assert op.holds_nothing() and op.state_size() == (0, 0)

    restored = KeyedProcessOperator(AllStates(), lambda v: v[0])
    restored.restore(snapshot)
    restored.advance_watermark(100)
    assert restored.drain_output() == expected


def test_a_process_function_runs_keyed_with_timers_and_java_on_timer() -> None:
    class Plain(ProcessFunction):
        def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
            ctx.timer_service().register_processing_time_timer(50)
            return None

        def on_timer(self, timestamp: int, ctx: ProcessFunction.OnTimerContext) -> Any:
            assert isinstance(ctx, KeyedProcessFunction.OnTimerContext)
            yield ctx.get_current_key(), ctx.time_domain(), ctx.timestamp()
            yield INTEGER_OUTPUT_TAG, timestamp
            ctx.output(LONG_OUTPUT_TAG, timestamp)

    op = KeyedProcessOperator(Plain(), lambda v: v)
    op.process_element("x", 7)
    assert op.next_processing_time_timer() == 50
    op.advance_processing_time(49)
    assert op.drain_output() == []
    op.advance_processing_time(60)
    assert op.drain_output() == [(("x", TimeDomain.PROCESSING_TIME, 50), None)]
    # side outputs of a timer carry its timestamp, whatever its time domain (Flink's output())
    assert op.drain_side_outputs() == {INTEGER_OUTPUT_TAG: [(50, 50)], LONG_OUTPUT_TAG: [(50, 50)]}


def test_side_outputs_of_an_element_without_timestamp_carry_long_min_value() -> None:
    class Side(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            yield value
            yield INTEGER_OUTPUT_TAG, value
            ctx.output(LONG_OUTPUT_TAG, value)

    op = KeyedProcessOperator(Side(), lambda v: v)
    op.process_element(1, None)
    assert op.drain_output() == [(1, None)]
    assert op.drain_side_outputs() == {
        INTEGER_OUTPUT_TAG: [(1, MIN_LONG)], LONG_OUTPUT_TAG: [(1, MIN_LONG)],
    }


def test_the_context_is_only_valid_during_the_call() -> None:
    class Keeps(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> None:
            self.ctx = ctx
            ctx.timer_service().register_event_time_timer(1)

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> None:
            self.timer_ctx = ctx

    fn = Keeps()
    op = KeyedProcessOperator(fn, lambda v: v)
    op.process_element(1, 1)
    op.advance_watermark(1)
    with pytest.raises(IllegalStateError):
        fn.ctx.timestamp()
    with pytest.raises(IllegalStateError):
        fn.timer_ctx.time_domain()


def test_user_errors_name_the_key_and_keep_the_cause() -> None:
    class Fails(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            ctx.timer_service().register_event_time_timer(3)
            return [1 // value[1]]

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
            raise KeyError("lost")

    op = KeyedProcessOperator(Fails(), lambda v: v[0])
    with pytest.raises(UserFunctionError, match="key 'z'.*ZeroDivisionError") as raised:
        op.process_element(("z", 0), 1)
    assert isinstance(raised.value.__cause__, ZeroDivisionError)
    with pytest.raises(UserFunctionError, match="key 'z'.*KeyError"):
        op.advance_watermark(3)


def test_outputs_must_be_an_iterable_or_none() -> None:
    class ReturnsInt(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            return 5

    with pytest.raises(UserFunctionError, match=r"ReturnsInt.process_element must return an"):
        KeyedProcessOperator(ReturnsInt(), lambda v: v).process_element(1, 1)


def test_open_close_and_key_selectors() -> None:
    events: list[str] = []

    class ByFirst(KeySelector):
        def open(self, runtime_context: Any) -> None:
            events.append("selector open")

        def get_key(self, value: Any) -> Any:
            return value[0]

    class Lifecycle(KeyedProcessFunction):
        def open(self, runtime_context: Any) -> None:
            events.append(f"open {runtime_context.get_task_name()}")

        def close(self) -> None:
            events.append("close")

        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            yield ctx.get_current_key()

    op = KeyedProcessOperator(Lifecycle(), ByFirst())
    op.process_element(("a", 1), 1)
    op.process_element(("b", 1), 1)
    op.close()
    assert events == ["open KeyedProcess", "selector open", "close"]
    assert [v for v, _ in op.drain_output()] == ["a", "b"]

    by_field = KeyedProcessOperator(Lifecycle(), "name")
    by_field.process_element({"name": "n", "x": 1}, 1)
    by_fields = KeyedProcessOperator(Lifecycle(), ["name", "x"])
    by_fields.process_element({"name": "n", "x": 1}, 1)
    atomic = KeyedProcessOperator(Lifecycle(), "f0", atomic_elements=True)
    atomic.process_element("word", 1)
    assert [by_field.drain_output(), by_fields.drain_output(), atomic.drain_output()] == [
        [("n", 1)], [(("n", 1), 1)], [("word", 1)],
    ]


def test_nan_keys_are_one_key_as_in_java() -> None:
    op = KeyedProcessOperator(Recorder(), lambda v: v[0])
    op.process_element((float("nan"), [5]), 1)
    op.process_element((float("nan"), [5]), 1)
    assert op.state_size() == (1, 1)


def test_snapshots_are_signed_and_checked() -> None:
    op = KeyedProcessOperator(Recorder(), lambda v: v[0], state_pickler=StatePickler(b"k1"))
    op.process_element(("a", [5]), 1)
    data = op.snapshot()
    with pytest.raises(SnapshotAuthenticationError):
        KeyedProcessOperator(Recorder(), lambda v: v[0],
                             state_pickler=StatePickler(b"k2")).restore(data)
    with pytest.raises(ValueError, match="not a flinkwin operator snapshot"):
        op.restore(pickle.dumps("junk"))
    window_snapshot = WindowOperator(
        SlidingEventTimeWindows.of(Time.minutes(60), Time.minutes(5)), CountAgg(),
        key_selector=lambda v: v).snapshot()
    with pytest.raises(ValueError, match="is not a process operator's"):
        op.restore(window_snapshot)


def test_snapshot_keeps_clocks_and_keys_of_distinct_types() -> None:
    op = KeyedProcessOperator(Recorder(), lambda v: v[0])
    for key in (1, "1", (1, "a"), 2.5):
        op.process_element((key, [7]), 1)
    op.advance_watermark(3)
    op.advance_processing_time(44)
    restored = KeyedProcessOperator(Recorder(), lambda v: v[0])
    restored.restore(op.snapshot())
    assert (restored.current_watermark, restored.current_processing_time) == (3, 44)
    assert restored.state_size() == op.state_size() == (4, 4)
    restored.advance_watermark(7)
    assert [v[0] for v, _ in restored.drain_output()] == [1, "1", (1, "a"), 2.5]


def test_operators_implement_the_stream_operator_protocol() -> None:
    keyed_op = KeyedProcessOperator(Recorder(), lambda v: v)
    plain = ProcessOperator(QueryingProcessFunction(TimeDomain.EVENT_TIME))
    for op in (keyed_op, plain):
        assert isinstance(op, StreamOperator)
        assert op.current_watermark == op.current_processing_time == MIN_LONG
        assert op.num_late_records_dropped == 0
        with pytest.raises(ValueError, match="one input"):
            op.process_element(1, 1, input_index=1)


def test_timer_service_and_contexts_have_java_names_too() -> None:
    class Java(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            service = ctx.timerService()
            assert isinstance(service, TimerService)
            service.registerEventTimeTimer(service.currentWatermark() + 10)
            service.registerProcessingTimeTimer(5)
            service.deleteProcessingTimeTimer(5)
            yield ctx.getCurrentKey()

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
            yield ctx.timeDomain()

    op = KeyedProcessOperator(Java(), lambda v: v)
    op.advance_watermark(0)
    op.process_element("k", 0)
    op.advance_processing_time(100)
    op.advance_watermark(10)
    assert op.drain_output() == [("k", 0), (TimeDomain.EVENT_TIME, 10)]
