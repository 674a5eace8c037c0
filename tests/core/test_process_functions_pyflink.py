"""Ports of PyFlink's own process-function tests (apache/flink
``flink-python/pyflink/datastream/tests/test_data_stream.py``), run through the process operators
exactly as PyFlink's pipelines run them: the same functions, the same elements, the same expected
outputs. (The ``StateTtlConfig`` of two of them is left out: flinkwin refuses state TTL.)

PyFlink's pipelines stamp elements with ``for_monotonous_timestamps`` and an automatic watermark
interval longer than the test, so no watermark reaches the functions: the operators see the
elements with their timestamps and no watermark.
"""

from __future__ import annotations

from typing import Any

from flinkwin.common import Row, Types
from flinkwin.datastream import KeyedProcessFunction, ProcessFunction, RuntimeContext
from flinkwin.datastream.functions import AggregateFunction
from flinkwin.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator, ProcessOperator

PAIRS = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello")]


def run(op: Any, elements: list[tuple[Any, int | None]]) -> list[Any]:
    for value, timestamp in elements:
        op.process_element(value, timestamp)
    op.close()
    return [value for value, _ in op.drain_output()]


def test_process_function() -> None:
    """Port of DataStreamTests#test_process_function."""

    class MyProcessFunction(ProcessFunction):
        def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
            current_timestamp = ctx.timestamp()
            current_watermark = ctx.timer_service().current_watermark()
            template = "current timestamp: {}, current watermark: {}, current_value: {}"
            yield template.format(str(current_timestamp), str(current_watermark), str(value))

    rows = [Row(f0=i, f1=ts) for i, ts in ((1, "1603708211000"), (2, "1603708224000"),
                                           (3, "1603708226000"), (4, "1603708289000"))]
    results = run(ProcessOperator(MyProcessFunction()), [(r, int(r[1])) for r in rows])
    expected = ["current timestamp: 1603708211000, current watermark: "
                "-9223372036854775808, current_value: Row(f0=1, f1='1603708211000')",
                "current timestamp: 1603708224000, current watermark: "
                "-9223372036854775808, current_value: Row(f0=2, f1='1603708224000')",
                "current timestamp: 1603708226000, current watermark: "
                "-9223372036854775808, current_value: Row(f0=3, f1='1603708226000')",
                "current timestamp: 1603708289000, current watermark: "
                "-9223372036854775808, current_value: Row(f0=4, f1='1603708289000')"]
    assert sorted(results) == sorted(expected)


def test_keyed_process_function_with_state() -> None:
    """Port of DataStreamTests#test_keyed_process_function_with_state."""

    class MyProcessFunction(KeyedProcessFunction):
        def __init__(self) -> None:
            self.value_state = None
            self.list_state = None
            self.map_state = None

        def open(self, runtime_context: RuntimeContext) -> None:
            value_state_descriptor = ValueStateDescriptor("value_state", Types.INT())
            self.value_state = runtime_context.get_state(value_state_descriptor)
            list_state_descriptor = ListStateDescriptor("list_state", Types.INT())
            self.list_state = runtime_context.get_list_state(list_state_descriptor)
            map_state_descriptor = MapStateDescriptor("map_state", Types.INT(), Types.STRING())
            self.map_state = runtime_context.get_map_state(map_state_descriptor)

        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            current_value = self.value_state.value()
            self.value_state.update(value[0])
            current_list = [_ for _ in self.list_state.get()]
            self.list_state.add(value[0])
            map_entries = {k: v for k, v in self.map_state.items()}
            keys = sorted(map_entries.keys())
            map_entries_string = [str(k) + ": " + str(map_entries[k]) for k in keys]
            map_entries_string = "{" + ", ".join(map_entries_string) + "}"
            self.map_state.put(value[0], value[1])
            current_key = ctx.get_current_key()
            template = ("current key: {}, current value state: {}, current list state: {}, "
                        "current map state: {}, current value: {}")
            yield template.format(str(current_key), str(current_value), str(current_list),
                                  map_entries_string, str(value))

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> None:
            pass

    rows = [Row(f0=i, f1=word, f2=ts) for i, word, ts in (
        (1, "hi", "1603708211000"), (2, "hello", "1603708224000"),
        (3, "hi", "1603708226000"), (4, "hello", "1603708289000"),
        (5, "hi", "1603708291000"), (6, "hello", "1603708293000"))]
    op = KeyedProcessOperator(MyProcessFunction(), lambda x: x[1])
    results = run(op, [(r, int(r[2])) for r in rows])
    expected = ["current key: hi, current value state: None, current list state: [], "
                "current map state: {}, current value: Row(f0=1, f1='hi', "
                "f2='1603708211000')",
                "current key: hello, current value state: None, "
                "current list state: [], current map state: {}, current value: Row(f0=2,"
                " f1='hello', f2='1603708224000')",
                "current key: hi, current value state: 1, current list state: [1], "
                "current map state: {1: hi}, current value: Row(f0=3, f1='hi', "
                "f2='1603708226000')",
                "current key: hello, current value state: 2, current list state: [2], "
                "current map state: {2: hello}, current value: Row(f0=4, f1='hello', "
                "f2='1603708289000')",
                "current key: hi, current value state: 3, current list state: [1, 3], "
                "current map state: {1: hi, 3: hi}, current value: Row(f0=5, f1='hi', "
                "f2='1603708291000')",
                "current key: hello, current value state: 4, current list state: [2, 4],"
                " current map state: {2: hello, 4: hello}, current value: Row(f0=6, "
                "f1='hello', f2='1603708293000')"]
    assert sorted(results) == sorted(expected)
    assert op.state_size() == (2, 6)  # value, list and map state of each key


def test_reducing_state() -> None:
    """Port of DataStreamTests#test_reducing_state."""

    class MyProcessFunction(KeyedProcessFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            self.reducing_state = runtime_context.get_reducing_state(
                ReducingStateDescriptor("reducing_state", lambda i, i2: i + i2, Types.INT()))

        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            self.reducing_state.add(value[0])
            yield self.reducing_state.get(), value[1]

    results = run(KeyedProcessOperator(MyProcessFunction(), lambda x: x[1]),
                  [(pair, None) for pair in PAIRS])
    expected = [(1, "hi"), (2, "hello"), (4, "hi"), (6, "hello"), (9, "hi"), (12, "hello")]
    assert sorted(results) == sorted(expected)


def test_aggregating_state() -> None:
    """Port of DataStreamTests#test_aggregating_state."""

    class MyAggregateFunction(AggregateFunction):
        def create_accumulator(self) -> int:
            return 0

        def add(self, value: int, accumulator: int) -> int:
            return value + accumulator

        def get_result(self, accumulator: int) -> int:
            return accumulator

        def merge(self, acc_a: int, acc_b: int) -> int:
            return acc_a + acc_b

    class MyProcessFunction(KeyedProcessFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            descriptor = AggregatingStateDescriptor(
                "aggregating_state", MyAggregateFunction(), Types.INT())
            self.aggregating_state = runtime_context.get_aggregating_state(descriptor)

        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            self.aggregating_state.add(value[0])
            yield self.aggregating_state.get(), value[1]

    results = run(KeyedProcessOperator(MyProcessFunction(), lambda x: x[1]),
                  [(pair, None) for pair in PAIRS])
    expected = [(1, "hi"), (2, "hello"), (4, "hi"), (6, "hello"), (9, "hi"), (12, "hello")]
    assert sorted(results) == sorted(expected)


def test_map_and_list_state_work_as_pyflinks_dict_and_iterable_and_with_javas_names() -> None:
    """PyFlink's ``MapState`` is a dict too (``state[k]``, ``state[k] = v``, ``del state[k]``,
    ``k in state``, ``for k in state``) and ``ListState`` iterable; Java's ``isEmpty``,
    ``putAll``, ``entries``, ``iterator`` and ``Time.toMilliseconds`` port Java code (the
    PseudoWindow of Flink's "event-driven applications" page)."""
    from flinkwin.common import Time

    class PseudoWindow(KeyedProcessFunction):
        def __init__(self, size: Time) -> None:
            self.size = size.toMilliseconds()

        def open(self, runtime_context: RuntimeContext) -> None:
            self.sums = runtime_context.get_map_state(
                MapStateDescriptor("sums", Types.LONG(), Types.FLOAT()))
            self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.LONG()))

        def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
            end = value[1] - value[1] % self.size + self.size - 1
            if end not in self.sums:
                self.sums[end] = 0.0
            self.sums[end] = self.sums[end] + value[2]
            self.seen.add(value[1])
            ctx.timer_service().register_event_time_timer(end)

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Any:
            assert not self.sums.isEmpty() and sorted(self.sums) == self.sums.keys()
            assert dict(self.sums.entries()) == dict(self.sums.iterator())
            yield ctx.get_current_key(), timestamp, self.sums[timestamp], sorted(self.seen)
            del self.sums[timestamp]
            self.sums.putAll({})

    op = KeyedProcessOperator(PseudoWindow(Time.milliseconds(10)), lambda x: x[0])
    for value in [("a", 1, 1.0), ("a", 12, 2.0), ("b", 5, 4.0), ("a", 3, 8.0)]:
        op.process_element(value, value[1])
    op.advance_watermark(10)
    assert sorted(value for value, _ in op.drain_output()) == [
        ("a", 9, 9.0, [1, 3, 12]), ("b", 9, 4.0, [5])
    ]
