"""User classes written with Java's method names (``onTimer``, ``createAccumulator``,
``onElement``...) run as their PyFlink-named equivalents (:mod:`flinkwin.java_hooks`), and a
Java signature with a ``Collector`` is refused when the class is defined."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark import cloudpickle

from flinkwin import (
    AggregateFunction,
    CoGroupFunction,
    CountEvictor,
    EventTimeTrigger,
    FlatMapFunction,
    KeyedProcessFunction,
    KeySelector,
    MergingWindowAssigner,
    Time,
    TimeWindow,
    TumblingEventTimeWindows,
    Types,
    WindowAssigner,
)
from flinkwin.evictors.base import Evictor
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.testing import WindowOperatorHarness
from flinkwin.timestamps import TimestampAssigner
from flinkwin.triggers.base import Trigger, TriggerResult


def _timer_outputs(function: Any) -> list[Any]:
    op = KeyedProcessOperator(function, lambda value: value[0])
    op.open()
    op.process_element(("a", 1), 5)
    op.advance_watermark(100)
    return [value for value, _ in op.drain_output()]


def test_an_on_timer_named_as_in_java_fires_next_to_a_pyflink_process_element() -> None:
    """PyFlink would never call ``onTimer`` here: the timer fired into nothing."""

    class Alarm(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            ctx.timer_service().register_event_time_timer(10)
            yield "seen", value[0]

        def onTimer(self, timestamp: int, ctx: Any) -> Any:  # noqa: N802
            yield "timer", ctx.get_current_key(), timestamp

    assert _timer_outputs(Alarm()) == [("seen", "a"), ("timer", "a", 10)]


def test_a_java_named_hook_survives_pickling_by_value() -> None:
    """A class of ``__main__`` (here: a local class) travels to Spark's workers by value."""

    class Alarm(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            ctx.timer_service().register_event_time_timer(10)
            return None

        def onTimer(self, timestamp: int, ctx: Any) -> Any:  # noqa: N802
            yield "timer", timestamp

    assert _timer_outputs(cloudpickle.loads(cloudpickle.dumps(Alarm()))) == [("timer", 10)]


def test_a_process_function_written_wholly_in_java_names_runs() -> None:
    class Alarm(KeyedProcessFunction):
        def processElement(self, value: Any, ctx: Any) -> Any:  # noqa: N802
            ctx.timerService().registerEventTimeTimer(10)
            return [("seen", value[0])]

        def onTimer(self, timestamp: int, ctx: Any) -> Any:  # noqa: N802
            return [("timer", ctx.getCurrentKey(), timestamp)]

    assert _timer_outputs(Alarm()) == [("seen", "a"), ("timer", "a", 10)]


def test_a_java_collector_argument_is_refused_when_the_class_is_defined() -> None:
    with pytest.raises(TypeError, match=r"onTimer.*Collector.*return or yield"):

        class Alarm(KeyedProcessFunction):  # noqa: F841
            def process_element(self, value: Any, ctx: Any) -> Any:
                return None

            def onTimer(self, timestamp: int, ctx: Any, out: Any) -> None:  # noqa: N802
                out.collect(timestamp)

    with pytest.raises(TypeError, match=r"flatMap.*flat_map"):

        class Split(FlatMapFunction):  # noqa: F841
            def flatMap(self, value: Any, out: Any) -> None:  # noqa: N802
                out.collect(value)


def test_the_pyflink_name_wins_where_a_class_defines_both() -> None:
    class Alarm(KeyedProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            ctx.timer_service().register_event_time_timer(10)
            return None

        def on_timer(self, timestamp: int, ctx: Any) -> Any:
            yield "on_timer", timestamp

        def onTimer(self, label: str) -> str:  # noqa: N802 (the user's own helper)
            return label

    assert _timer_outputs(Alarm()) == [("on_timer", 10)]
    assert Alarm().onTimer("x") == "x"


class JavaSum(AggregateFunction):
    def createAccumulator(self) -> int:  # noqa: N802
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + value["v"]

    def getResult(self, accumulator: int) -> int:  # noqa: N802
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class JavaEventTimeTrigger(Trigger):
    """Flink's ``EventTimeTrigger``, written with Java's names."""

    def onElement(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:  # noqa: N802
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def onEventTime(self, time: int, window: Any, ctx: Any) -> Any:  # noqa: N802
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def onProcessingTime(self, time: int, window: Any, ctx: Any) -> Any:  # noqa: N802
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())


class JavaTumbling(WindowAssigner):
    """Ten-millisecond tumbling windows, with Java's names and a Java-style
    ``getDefaultTrigger()``."""

    def assignWindows(self, element: Any, timestamp: int, context: Any) -> Any:  # noqa: N802
        start = timestamp - timestamp % 10
        return [TimeWindow(start, start + 10)]

    def getDefaultTrigger(self) -> Any:  # noqa: N802
        return EventTimeTrigger.create()

    def isEventTime(self) -> bool:  # noqa: N802
        return True


class KeepLast(Evictor):
    def evictBefore(self, elements: Any, size: int, window: Any, ctx: Any) -> None:  # noqa: N802
        CountEvictor.of(1).evict_before(elements, size, window, ctx)

    def evictAfter(self, elements: Any, size: int, window: Any, ctx: Any) -> None:  # noqa: N802
        return None


def _fire(harness: WindowOperatorHarness) -> list[Any]:
    harness.process_elements([{"k": "a", "v": 1}, {"k": "a", "v": 2}], [1, 3])
    harness.process_watermark(9)
    return harness.output()


def test_an_aggregate_function_with_java_names_aggregates() -> None:
    harness = WindowOperatorHarness(TumblingEventTimeWindows.of(Time.milliseconds(10)),
                                    JavaSum(), key_field="k")
    assert _fire(harness) == [3]


def test_a_trigger_an_assigner_and_an_evictor_with_java_names_fire_as_flinks() -> None:
    def add(a: Any, b: Any) -> Any:
        return {"k": a["k"], "v": a["v"] + b["v"]}

    harness = WindowOperatorHarness(JavaTumbling(), add, key_field="k",
                                    trigger=JavaEventTimeTrigger())
    assert [r["v"] for r in _fire(harness)] == [3]
    evicting = WindowOperatorHarness(JavaTumbling(), JavaSum(), key_field="k",
                                     evictor=KeepLast())
    assert _fire(evicting) == [2]


def test_a_merging_assigner_and_trigger_with_java_names_merge() -> None:
    class Gaps(MergingWindowAssigner):
        def assignWindows(self, element: Any, timestamp: int, context: Any) -> Any:  # noqa: N802
            return [TimeWindow(timestamp, timestamp + 5)]

        def getDefaultTrigger(self, env: Any) -> Any:  # noqa: N802
            return EventTimeTrigger.create()

        def isEventTime(self) -> bool:  # noqa: N802
            return True

        def mergeWindows(self, windows: Any, callback: Any) -> None:  # noqa: N802
            TimeWindow.merge_windows(windows, callback)

    class MergingTrigger(JavaEventTimeTrigger):
        def canMerge(self) -> bool:  # noqa: N802
            return True

        def onMerge(self, window: Any, ctx: Any) -> None:  # noqa: N802
            ctx.register_event_time_timer(window.max_timestamp())

    harness = WindowOperatorHarness(Gaps(), JavaSum(), key_field="k", trigger=MergingTrigger())
    harness.process_elements([{"k": "a", "v": 1}, {"k": "a", "v": 2}], [1, 3])
    harness.process_watermark(20)
    assert harness.output() == [3]


def test_a_key_selector_a_timestamp_assigner_and_a_co_group_with_java_names() -> None:
    class ByK(KeySelector):
        def getKey(self, value: Any) -> Any:  # noqa: N802
            return value["k"]

    class Stamp(TimestampAssigner):
        def extractTimestamp(self, value: Any, record_timestamp: int) -> int:  # noqa: N802
            return value["t"]

    class Count(CoGroupFunction):
        def coGroup(self, first: Any, second: Any) -> Any:  # noqa: N802
            yield len(first), len(second)

    assert ByK().get_key({"k": 7}) == 7
    assert Stamp().extract_timestamp({"t": 5}, 0) == 5
    assert Stamp().extractTimestamp({"t": 5}, 0) == 5
    assert list(Count().co_group([1, 2], [3])) == [(2, 1)]


def test_contexts_answer_to_java_names_in_java_named_functions() -> None:
    """``Context.currentWatermark()``, ``windowState()``, ``globalState()``,
    ``currentProcessingTime()`` of a ``ProcessWindowFunction``; ``getMetricGroup()`` and
    ``getCurrentProcessingTime()`` of a trigger's context; ``StateDescriptor.getName()``."""
    from flinkwin import ProcessWindowFunction, ValueStateDescriptor

    seen = ValueStateDescriptor("seen", Types.LONG())

    class Report(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            count = context.globalState().getState(seen)
            count.update((count.value() or 0) + 1)
            context.windowState().getState(seen).update(1)
            yield (key, context.currentWatermark(), context.currentProcessingTime(),
                   count.value(), seen.getName())

    class Counting(JavaEventTimeTrigger):
        def onElement(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:  # noqa: N802
            ctx.getMetricGroup()
            ctx.getCurrentProcessingTime()
            return super().onElement(element, timestamp, window, ctx)

    harness = WindowOperatorHarness(TumblingEventTimeWindows.of(Time.milliseconds(10)),
                                    Report(), key_field="k", trigger=Counting())
    harness.set_processing_time(7)
    harness.process_elements([{"k": "a", "v": 1}], [1])
    harness.process_watermark(9)
    harness.process_elements([{"k": "a", "v": 1}], [12])
    harness.process_watermark(19)
    assert harness.output() == [("a", 9, 7, 1, "seen"), ("a", 19, 7, 2, "seen")]


def test_a_java_trigger_delegating_to_a_built_in_calls_its_java_names() -> None:
    """A Java trigger wrapping Flink's ``EventTimeTrigger`` calls ``nested.onElement(...)``
    and ``nested.onEventTime(...)``: flinkwin's built-ins answer to those names."""

    class Wrapping(Trigger):
        def __init__(self) -> None:
            self.nested = EventTimeTrigger.create()

        def onElement(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:  # noqa: N802
            return self.nested.onElement(element, timestamp, window, ctx)

        def onEventTime(self, time: int, window: Any, ctx: Any) -> Any:  # noqa: N802
            return self.nested.onEventTime(time, window, ctx)

        def onProcessingTime(self, time: int, window: Any, ctx: Any) -> Any:  # noqa: N802
            return self.nested.onProcessingTime(time, window, ctx)

        def clear(self, window: Any, ctx: Any) -> None:
            self.nested.clear(window, ctx)

    harness = WindowOperatorHarness(TumblingEventTimeWindows.of(Time.milliseconds(10)),
                                    JavaSum(), key_field="k", trigger=Wrapping())
    assert _fire(harness) == [3]
    assert TumblingEventTimeWindows.of(Time.seconds(1)).isEventTime()
    assert EventTimeTrigger.create().canMerge()


def test_a_pyflink_named_method_taking_a_java_collector_is_refused_at_class_definition() -> None:
    """Java's ``process(key, context, elements, out)`` under PyFlink's name: refused when the
    class is defined, not at its first firing in a Spark worker."""
    from flinkwin import ProcessWindowFunction

    with pytest.raises(TypeError, match=r"process.*Collector.*return or yield"):

        class Report(ProcessWindowFunction):  # noqa: F841
            def process(self, key: Any, context: Any, elements: Any, out: Any) -> None:
                out.collect(key)
