"""Ports of Flink's ``KeyedCoProcessOperatorTest`` (with the ``LegacyKeyedCoProcessOperatorTest``
it extends) and ``CoProcessOperatorTest`` (test names as in Flink), and the co-process
operators' own contract: keys per input, shared state, PyFlink's co-map adapters, errors.

:class:`TwoInputHarness` is Flink's ``KeyedTwoInputStreamOperatorTestHarness``: each input has
its own watermark, the operator advances to their minimum, and an advanced watermark is
appended after what it fired, as Flink forwards it after emitting. A record is
``(value, timestamp)``, ``None`` for a record without timestamp.
"""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    OutputTag,
    TimeDomain,
    ValueStateDescriptor,
)
from flinkwin.datastream.connected_streams import _CoFlatMap, _CoMap
from flinkwin.errors import UnsupportedOperationError, UserFunctionError
from flinkwin.operator.co_process_operator import CoProcessOperator, KeyedCoProcessOperator
from flinkwin.operator.snapshots import StatePickler
from flinkwin.time import MIN_LONG


class TwoInputHarness:
    """Flink's ``(Keyed)TwoInputStreamOperatorTestHarness`` over a co-process operator."""

    def __init__(self, op: Any) -> None:
        self.op = op
        self.output: list[Any] = []
        self.side: dict[OutputTag, list[tuple[Any, int | None]]] = {}
        self.watermarks = [MIN_LONG, MIN_LONG]
        self.combined = MIN_LONG
        op.open()

    def _drain(self) -> None:
        self.output += self.op.drain_output()
        for tag, records in self.op.drain_side_outputs().items():
            self.side.setdefault(tag, []).extend(records)

    def process_element1(self, value: Any, timestamp: int | None = None) -> None:
        self.op.process_element(value, timestamp, 0)
        self._drain()

    def process_element2(self, value: Any, timestamp: int | None = None) -> None:
        self.op.process_element(value, timestamp, 1)
        self._drain()

    def _watermark(self, index: int, watermark: int) -> None:
        self.watermarks[index] = watermark
        combined = min(self.watermarks)
        if combined > self.combined:
            self.combined = combined
            self.op.advance_watermark(combined)
            self._drain()
            self.output.append(("WM", combined))

    def process_watermark1(self, watermark: int) -> None:
        self._watermark(0, watermark)

    def process_watermark2(self, watermark: int) -> None:
        self._watermark(1, watermark)

    def set_processing_time(self, time: int) -> None:
        self.op.advance_processing_time(time)
        self._drain()

    def close(self) -> None:
        self.op.close()


def keyed(function: Any) -> TwoInputHarness:
    """``new KeyedTwoInputStreamOperatorTestHarness<>(operator, new IntToStringKeySelector<>(),
    new IdentityKeySelector<String>(), BasicTypeInfo.STRING_TYPE_INFO)``."""
    return TwoInputHarness(KeyedCoProcessOperator(
        function, (lambda value: str(value), lambda value: value), atomic_elements=(True, True)))


def non_keyed(function: Any) -> TwoInputHarness:
    return TwoInputHarness(CoProcessOperator(function, atomic_elements=(True, True)))


def _ts(ctx: Any) -> Any:
    return "null" if ctx.timestamp() is None else ctx.timestamp()


# --------------------------------------------------------------- Flink's UDFs
class WatermarkQueryingProcessFunction(CoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield f"{value}WM:{ctx.timer_service().current_watermark()} TS:{_ts(ctx)}"

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield f"{value}WM:{ctx.timer_service().current_watermark()} TS:{_ts(ctx)}"


class ProcessingTimeQueryingProcessFunction(CoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield f"{value}PT:{ctx.timer_service().current_processing_time()} TS:{_ts(ctx)}"

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield f"{value}PT:{ctx.timer_service().current_processing_time()} TS:{_ts(ctx)}"


class _EventTimeTriggering:
    """Both ITCases' ``EventTimeTriggeringProcessFunction``: a timer at 5 for input 1, at 6
    for input 2."""

    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield f"INPUT1:{value}"
        ctx.timer_service().register_event_time_timer(5)

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield f"INPUT2:{value}"
        ctx.timer_service().register_event_time_timer(6)


class EventTimeTriggeringProcessFunction(_EventTimeTriggering, CoProcessFunction):
    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        assert ctx.time_domain() is TimeDomain.EVENT_TIME
        yield "1777"


class ProcessingTimeTriggeringProcessFunction(CoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield f"INPUT1:{value}"
        ctx.timer_service().register_processing_time_timer(5)

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield f"INPUT2:{value}"
        ctx.timer_service().register_processing_time_timer(6)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        assert ctx.time_domain() is TimeDomain.PROCESSING_TIME
        yield "1777"


class TriggeringStatefulProcessFunction(CoProcessFunction):
    """Flink's ``EventTimeTriggeringStatefulProcessFunction`` and its processing-time twin."""

    state = ValueStateDescriptor("seen-element")

    def __init__(self, domain: TimeDomain) -> None:
        self.domain = domain

    def _handle(self, value: Any, ctx: Any, channel: int) -> Any:
        service = ctx.timer_service()
        state = self.get_runtime_context().get_state(self.state)
        event = self.domain is TimeDomain.EVENT_TIME
        now = service.current_watermark() if event else service.current_processing_time()
        if state.value() is None:
            yield f"INPUT{channel}:{value}"
            state.update(str(value))
            register = (service.register_event_time_timer if event
                        else service.register_processing_time_timer)
            register(now + 5)
        else:
            state.clear()
            delete = (service.delete_event_time_timer if event
                      else service.delete_processing_time_timer)
            delete(now + 4)

    def process_element1(self, value: Any, ctx: Any) -> Any:
        return self._handle(value, ctx, 1)

    def process_element2(self, value: Any, ctx: Any) -> Any:
        return self._handle(value, ctx, 2)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        assert ctx.time_domain() is self.domain
        yield f"STATE:{self.get_runtime_context().get_state(self.state).value()}"


class BothTriggeringProcessFunction(CoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_event_time_timer(6)
        return None

    def process_element2(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_processing_time_timer(5)
        return None

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ("EVENT:1777" if ctx.time_domain() is TimeDomain.EVENT_TIME else "PROC:1777")


class RepeatKeyProcessFunction(KeyedCoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield f"{value},{ctx.get_current_key()}"

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield f"{value},{ctx.get_current_key()}"


class KeyedEventTimeTriggeringProcessFunction(_EventTimeTriggering, KeyedCoProcessFunction):
    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        assert ctx.time_domain() is TimeDomain.EVENT_TIME
        yield f"{ctx.get_current_key()}:1777"


# ------------------------------------------------ LegacyKeyedCoProcessOperatorTest
def test_timestamp_and_watermark_querying() -> None:
    """Port of LegacyKeyedCoProcessOperatorTest#testTimestampAndWatermarkQuerying."""
    h = keyed(WatermarkQueryingProcessFunction())
    h.process_watermark1(17)
    h.process_watermark2(17)
    h.process_element1(5, 12)
    h.process_watermark1(42)
    h.process_watermark2(42)
    h.process_element2("6", 13)
    assert h.output == [("WM", 17), ("5WM:17 TS:12", 12), ("WM", 42), ("6WM:42 TS:13", 13)]
    h.close()


def test_timestamp_and_processing_time_querying() -> None:
    """Port of LegacyKeyedCoProcessOperatorTest#testTimestampAndProcessingTimeQuerying."""
    h = keyed(ProcessingTimeQueryingProcessFunction())
    h.set_processing_time(17)
    h.process_element1(5)
    h.set_processing_time(42)
    h.process_element2("6")
    assert h.output == [("5PT:17 TS:null", None), ("6PT:42 TS:null", None)]


def _event_time_timers(function: Any) -> list[Any]:
    """Both ITCases' event-time timer run: an element of each input at 42, then both inputs'
    watermarks to 5, then to 6."""
    h = keyed(function)
    h.process_element1(17, 42)
    h.process_element2("18", 42)
    for wm in (5, 6):
        h.process_watermark1(wm)
        h.process_watermark2(wm)
    return h.output


def test_event_time_timers() -> None:
    """Port of LegacyKeyedCoProcessOperatorTest#testEventTimeTimers."""
    assert _event_time_timers(EventTimeTriggeringProcessFunction()) == [
        ("INPUT1:17", 42), ("INPUT2:18", 42), ("1777", 5), ("WM", 5), ("1777", 6), ("WM", 6)]


def test_processing_time_timers() -> None:
    """Port of LegacyKeyedCoProcessOperatorTest#testProcessingTimeTimers."""
    h = keyed(ProcessingTimeTriggeringProcessFunction())
    h.process_element1(17)
    h.process_element2("18")
    h.set_processing_time(5)
    h.set_processing_time(6)
    assert h.output == [("INPUT1:17", None), ("INPUT2:18", None), ("1777", None),
                        ("1777", None)]


def test_event_time_timer_with_state() -> None:
    """Port of LegacyKeyedCoProcessOperatorTest#testEventTimeTimerWithState: no leakage
    between keys; the two inputs share a key's state ("13" of input 1 deletes its timer)."""
    h = keyed(TriggeringStatefulProcessFunction(TimeDomain.EVENT_TIME))
    h.process_watermark1(1)
    h.process_watermark2(1)
    h.process_element1(17, 0)  # timer at 6
    h.process_element1(13, 0)  # timer at 6
    h.process_watermark1(2)
    h.process_watermark2(2)
    h.process_element1(13, 1)  # deletes its timer
    h.process_element2("42", 1)  # timer at 7
    for wm in (6, 7):
        h.process_watermark1(wm)
        h.process_watermark2(wm)
    assert h.output == [
        ("WM", 1), ("INPUT1:17", 0), ("INPUT1:13", 0), ("WM", 2), ("INPUT2:42", 1),
        ("STATE:17", 6), ("WM", 6), ("STATE:42", 7), ("WM", 7),
    ]


def test_processing_time_timer_with_state() -> None:
    """Port of LegacyKeyedCoProcessOperatorTest#testProcessingTimeTimerWithState."""
    h = keyed(TriggeringStatefulProcessFunction(TimeDomain.PROCESSING_TIME))
    h.set_processing_time(1)
    h.process_element1(17)
    h.process_element1(13)
    h.set_processing_time(2)
    h.process_element1(13)
    h.process_element2("42")
    h.set_processing_time(6)
    h.set_processing_time(7)
    assert h.output == [("INPUT1:17", None), ("INPUT1:13", None), ("INPUT2:42", None),
                        ("STATE:17", None), ("STATE:42", None)]


def test_snapshot_and_restore() -> None:
    """Port of LegacyKeyedCoProcessOperatorTest#testSnapshotAndRestore."""
    pickler = StatePickler()
    op = KeyedCoProcessOperator(BothTriggeringProcessFunction(), (str, lambda v: v),
                                atomic_elements=(True, True), state_pickler=pickler)
    h = TwoInputHarness(op)
    h.process_element1(5, 12)
    h.process_element2("5", 12)
    snapshot = h.op.snapshot()
    h.close()

    restored = KeyedCoProcessOperator(BothTriggeringProcessFunction(), (str, lambda v: v),
                                      atomic_elements=(True, True), state_pickler=pickler)
    restored.restore(snapshot)
    h = TwoInputHarness(restored)
    h.set_processing_time(5)
    h.process_watermark1(6)
    h.process_watermark2(6)
    assert h.output == [("PROC:1777", None), ("EVENT:1777", 6), ("WM", 6)]


# ------------------------------------------------------ KeyedCoProcessOperatorTest
def test_get_current_key_from_context() -> None:
    """Port of KeyedCoProcessOperatorTest#testGetCurrentKeyFromContext."""
    h = keyed(RepeatKeyProcessFunction())
    h.process_element1(5)
    h.process_element1(6)
    h.process_element2("hello")
    h.process_element2("world")
    assert [v for v, _ in h.output] == ["5,5", "6,6", "hello,hello", "world,world"]


def test_get_current_key_from_timers() -> None:
    """Port of KeyedCoProcessOperatorTest#testGetCurrentKeyFromTimers."""
    assert _event_time_timers(KeyedEventTimeTriggeringProcessFunction()) == [
        ("INPUT1:17", 42), ("INPUT2:18", 42), ("17:1777", 5), ("WM", 5), ("18:1777", 6),
        ("WM", 6)]


# ----------------------------------------------------------- CoProcessOperatorTest
def test_co_process_timestamp_and_watermark_querying() -> None:
    """Port of CoProcessOperatorTest#testTimestampAndWatermarkQuerying."""
    h = non_keyed(WatermarkQueryingProcessFunction())
    h.process_watermark1(17)
    h.process_watermark2(17)
    h.process_element1(5, 12)
    h.process_watermark1(42)
    h.process_watermark2(42)
    h.process_element2("6", 13)
    assert h.output == [("WM", 17), ("5WM:17 TS:12", 12), ("WM", 42), ("6WM:42 TS:13", 13)]


def test_co_process_timestamp_and_processing_time_querying() -> None:
    """Port of CoProcessOperatorTest#testTimestampAndProcessingTimeQuerying."""
    h = non_keyed(ProcessingTimeQueryingProcessFunction())
    h.set_processing_time(17)
    h.process_element1(5)
    h.set_processing_time(42)
    h.process_element2("6")
    assert h.output == [("5PT:17 TS:null", None), ("6PT:42 TS:null", None)]


# ------------------------------------------------------------- flinkwin's contract
def test_the_watermark_is_the_minimum_of_the_two_inputs() -> None:
    """An event-time timer fires only when both inputs' watermarks have passed it."""
    h = keyed(EventTimeTriggeringProcessFunction())
    h.process_element1(17, 42)
    h.process_watermark1(10)
    assert h.output == [("INPUT1:17", 42)]
    h.process_watermark2(10)
    assert h.output[-2:] == [("1777", 5), ("WM", 10)]


def test_setting_a_timer_on_non_keyed_connected_streams_is_refused_with_flinks_message() -> None:
    h = non_keyed(EventTimeTriggeringProcessFunction())
    with pytest.raises(UnsupportedOperationError,
                       match="Setting timers is only supported on a keyed streams."):
        h.process_element1(1, 5)


def test_a_keyed_co_process_function_is_refused_on_non_keyed_inputs() -> None:
    with pytest.raises(TypeError, match="RepeatKeyProcessFunction is a KeyedCoProcessFunction"):
        CoProcessOperator(RepeatKeyProcessFunction())


def test_a_one_input_process_function_is_refused_naming_both_methods() -> None:
    class OneInput(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield value

    with pytest.raises(TypeError, match=r"process_element1\(value, ctx\) and "
                                        r"process_element2\(value, ctx\)"):
        KeyedCoProcessOperator(OneInput(), ("k", "k"))


def test_each_input_is_keyed_by_its_own_selector_and_a_null_key_names_the_input() -> None:
    op = KeyedCoProcessOperator(RepeatKeyProcessFunction(), ("user", "name"))
    h = TwoInputHarness(op)
    h.process_element1({"user": "a", "v": 1})
    h.process_element2({"name": "a", "w": 2})
    assert [v for v, _ in h.output] == ["Row(user='a', v=1),a", "Row(name='a', w=2),a"]
    with pytest.raises(Exception, match="second input"):
        h.process_element2({"name": None, "w": 3})


def test_a_side_output_of_process_element2_carries_the_elements_timestamp() -> None:
    late = OutputTag("odd")

    class Split(KeyedCoProcessFunction):
        def process_element1(self, value: Any, ctx: Any) -> Any:
            yield value

        def process_element2(self, value: Any, ctx: Any) -> Any:
            ctx.output(late, value)
            yield late, value * 10

    h = keyed(Split())
    h.process_element2(3, 40)
    assert h.side[late] == [(3, 40), (30, 40)]


def test_a_failing_map2_names_the_key_and_a_bad_flat_map2_result_the_users_method() -> None:
    class Fails(CoMapFunction):
        def map1(self, value: Any) -> Any:
            return value

        def map2(self, value: Any) -> Any:
            raise ValueError("boom")

    h = keyed(_CoMap(Fails()))
    with pytest.raises(UserFunctionError, match=r"(?s)key 'x': ValueError: boom.*in map2"):
        h.process_element2("x")

    class NotIterable(CoFlatMapFunction):
        def flat_map1(self, value: Any) -> Any:
            return [value]

        def flat_map2(self, value: Any) -> Any:
            return 42

    h = keyed(_CoFlatMap(NotIterable()))
    with pytest.raises(UserFunctionError, match=r"NotIterable\.flat_map2 must return an iterable"):
        h.process_element2("x")


def test_the_co_map_and_co_flat_map_adapters_open_the_users_function_with_keyed_state() -> None:
    """PyFlink's adapters: ``map1``/``map2`` give one output each (None gives none),
    ``flat_map1``/``flat_map2`` any number; ``open`` gets the runtime context, whose keyed
    state is the current key's."""
    seen = ValueStateDescriptor("seen")

    class Latest(CoMapFunction):
        def open(self, runtime_context: Any) -> None:
            self.state = runtime_context.get_state(seen)

        def map1(self, value: Any) -> Any:
            self.state.update(value)
            return None

        def map2(self, value: Any) -> Any:
            return f"{value}:{self.state.value()}"

    h = keyed(_CoMap(Latest()))
    h.process_element1(7)
    h.process_element2("7")
    h.process_element2("8")
    assert [v for v, _ in h.output] == ["7:7", "8:None"]

    class Split(CoFlatMapFunction):
        def flat_map1(self, value: Any) -> Any:
            yield from range(value)

        def flat_map2(self, value: Any) -> Any:
            return [value, value]

    h = keyed(_CoFlatMap(Split()))
    h.process_element1(3, 9)
    h.process_element2("x", 10)
    assert h.output == [(0, 9), (1, 9), (2, 9), ("x", 10), ("x", 10)]


def test_a_java_named_co_process_function_runs() -> None:
    class JavaNamed(KeyedCoProcessFunction):
        def processElement1(self, value: Any, ctx: Any) -> Any:  # noqa: N802
            ctx.timerService().registerEventTimeTimer(5)
            return [f"one:{value}"]

        def processElement2(self, value: Any, ctx: Any) -> Any:  # noqa: N802
            return [f"two:{value}"]

        def onTimer(self, timestamp: int, ctx: Any) -> Any:  # noqa: N802
            return [f"timer:{ctx.getCurrentKey()}"]

    h = keyed(JavaNamed())
    h.process_element1(1, 1)
    h.process_element2("1", 1)
    h.process_watermark1(5)
    h.process_watermark2(5)
    assert [v for v, _ in h.output] == ["one:1", "two:1", "timer:1", "WM"]
