"""Port of Flink's ``AllWindowTranslationTest``: what ``window_all(...)`` and its window
functions translate to, what the builder refuses, and what the operator emits.

Source: apache/flink, flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/
operators/windowing/AllWindowTranslationTest.java (the JUnit 5 version with ``Duration``s).

The translation rules, the parts not expressible here and the documented difference for
``testReduceWithRichReducerFails``/``testAggregateWithRichFunctionFails`` (flinkwin, as PyFlink,
has only rich functions, and opens the window's reduce or aggregate function) are those of
``test_window_translation_flink.py``; see its docstring. The non-keyed stream is Flink's: one
window operator over all elements (``key_field=None``, a single key group), keyed in Flink by
a ``NullByteKeySelector`` that has no flinkwin counterpart to assert.
"""

from __future__ import annotations

from typing import Any

import pytest
from window_translation_helpers import (
    ET_TRIGGER,
    LIFECYCLE,
    PT_TRIGGER,
    SLIDING_ENDS,
    SLIDING_ET,
    SLIDING_PT,
    TUMBLING_ET,
    TUMBLING_PT,
    DummyReducer,
    DummyRichAggregationFunction,
    FakeStream,
    NonMergingTrigger,
    RichReducer,
    by_time,
    choices,
    operator_choices,
    process_element_and_ensure_output,
    sliding_event_time,
    sliding_processing_time,
    translate,
    tuple2_source,
)

from flinkwin import (
    AggregateFunction,
    AllWindowFunction,
    CountEvictor,
    CountTrigger,
    EventTimeSessionWindows,
    ProcessAllWindowFunction,
    Time,
    TimeEvictor,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from flinkwin.errors import UnsupportedOperationError
from flinkwin.types import Types

# ---------------------------------------------------------------------------------------------
#  UDFs (Flink's test UDFs)
# ---------------------------------------------------------------------------------------------


class DummyAggregationFunction(AggregateFunction):
    """``Tuple2<String, Integer>`` in, accumulator and result the last ``(f0, f1)``."""

    def create_accumulator(self) -> Any:
        return ("", 0)

    def add(self, value: Any, accumulator: Any) -> Any:
        return (value[0], value[1])

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        return acc_a


class TestAllWindowFunction(AllWindowFunction):
    """``out.collect(new Tuple3<>(in.f0, in.f0, in.f1))`` for every input."""

    __test__ = False  # Flink's name; not a pytest test class

    def apply(self, window: Any, inputs: Any) -> list[Any]:
        return [(value[0], value[0], value[1]) for value in inputs]


class TestProcessAllWindowFunction(ProcessAllWindowFunction):
    """``out.collect(new Tuple3<>(in.f0, in.f0, in.f1))`` for every input."""

    __test__ = False  # Flink's name; not a pytest test class

    def process(self, context: Any, elements: Any) -> list[Any]:
        return [(value[0], value[0], value[1]) for value in elements]


class PassThroughAllWindowFunction(AllWindowFunction):
    """The anonymous ``AllWindowFunction`` collecting every input."""

    def apply(self, window: Any, inputs: Any) -> list[Any]:
        return list(inputs)


class PassThroughProcessAllWindowFunction(ProcessAllWindowFunction):
    """The anonymous ``ProcessAllWindowFunction`` collecting every input."""

    def process(self, context: Any, elements: Any) -> list[Any]:
        return list(elements)


def tumbling_event_time() -> TumblingEventTimeWindows:
    return TumblingEventTimeWindows.of(Time.seconds(1))


def tumbling_processing_time() -> TumblingProcessingTimeWindows:
    return TumblingProcessingTimeWindows.of(Time.seconds(1))


HELLO = ("hello", 1)
HELLO3 = ("hello", "hello", 1)

# ---------------------------------------------------------------------------------------------
#  Rich function tests
# ---------------------------------------------------------------------------------------------


def test_reduce_with_rich_reducer_fails() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithRichReducerFails

    Flink refuses (UnsupportedOperationException); flinkwin builds it and opens the reducer
    (documented: every flinkwin function is rich, as in PyFlink)."""
    LIFECYCLE.clear()
    pipeline = translate(
        lambda: tuple2_source().window_all(sliding_event_time()).reduce(RichReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "reducing")
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert by_time(output) == [(HELLO, end) for end in SLIDING_ENDS]
    assert [call for call, _ in LIFECYCLE] == ["reduce.open", "reduce.close"]


def test_aggregate_with_rich_function_fails() -> None:
    """Flink: AllWindowTranslationTest#testAggregateWithRichFunctionFails

    Flink refuses (UnsupportedOperationException); flinkwin builds it and opens the aggregate
    function (documented: every flinkwin function is rich, as in PyFlink)."""
    LIFECYCLE.clear()
    pipeline = translate(
        lambda: tuple2_source()
        .window_all(sliding_event_time())
        .aggregate(DummyRichAggregationFunction())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "aggregating")
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert by_time(output) == [(HELLO, end) for end in SLIDING_ENDS]
    assert [call for call, _ in LIFECYCLE] == ["aggregate.open", "aggregate.close"]


# ---------------------------------------------------------------------------------------------
#  Merging windows support
# ---------------------------------------------------------------------------------------------


def test_merging_assigner_with_non_merging_trigger_fails() -> None:
    """Flink: AllWindowTranslationTest#testMergingAssignerWithNonMergingTriggerFails"""
    windowed = FakeStream(Types.STRING()).window_all(
        EventTimeSessionWindows.withGap(Time.seconds(5))
    )
    with pytest.raises(
        UnsupportedOperationError,
        match="A merging window assigner cannot be used with a trigger that does not support "
        "merging",
    ):
        windowed.trigger(NonMergingTrigger())


def test_merging_windows_with_evictor() -> None:
    """Flink: AllWindowTranslationTest#testMergingWindowsWithEvictor"""
    pipeline = translate(
        lambda: tuple2_source()
        .window_all(EventTimeSessionWindows.withGap(Time.seconds(5)))
        .evictor(CountEvictor.of(5))
        .process(TestProcessAllWindowFunction())
    )
    assert operator_choices(pipeline) == choices(
        "EventTimeSessionWindows(5000)", ET_TRIGGER, "list", "CountEvictor(5)"
    )
    assert process_element_and_ensure_output(pipeline, HELLO) == [(HELLO3, 4999)]


# ---------------------------------------------------------------------------------------------
#  reduce() translation
# ---------------------------------------------------------------------------------------------


def test_reduce_event_time() -> None:
    """Flink: AllWindowTranslationTest#testReduceEventTime"""
    pipeline = translate(
        lambda: tuple2_source().window_all(sliding_event_time()).reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "reducing")
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


def test_reduce_processing_time() -> None:
    """Flink: AllWindowTranslationTest#testReduceProcessingTime"""
    pipeline = translate(
        lambda: tuple2_source().window_all(sliding_processing_time()).reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_PT, PT_TRIGGER, "reducing")
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


def check_reduce_with_window_function(
    assigner: Any, assigner_name: str, trigger_name: str, window_function: Any
) -> None:
    pipeline = translate(
        lambda: tuple2_source().window_all(assigner).reduce(DummyReducer(), window_function)
    )
    assert operator_choices(pipeline) == choices(assigner_name, trigger_name, "reducing")
    assert process_element_and_ensure_output(pipeline, HELLO) == [(HELLO3, 999)]


def test_reduce_with_window_function_event_time() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithWindowFunctionEventTime"""
    check_reduce_with_window_function(
        tumbling_event_time(), TUMBLING_ET, ET_TRIGGER, TestAllWindowFunction()
    )


def test_reduce_with_window_function_processing_time() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithWindowFunctionProcessingTime"""
    check_reduce_with_window_function(
        tumbling_processing_time(), TUMBLING_PT, PT_TRIGGER, TestAllWindowFunction()
    )


def test_reduce_with_process_window_function_event_time() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithProcessWindowFunctionEventTime"""
    check_reduce_with_window_function(
        tumbling_event_time(), TUMBLING_ET, ET_TRIGGER, TestProcessAllWindowFunction()
    )


def test_reduce_with_process_window_function_processing_time() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithProcessWindowFunctionProcessingTime"""
    check_reduce_with_window_function(
        tumbling_processing_time(), TUMBLING_PT, PT_TRIGGER, TestProcessAllWindowFunction()
    )


def test_reduce_with_evictor_and_process_function() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithEvictorAndProcessFunction"""
    pipeline = translate(
        lambda: tuple2_source()
        .window_all(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .reduce(DummyReducer(), PassThroughProcessAllWindowFunction())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


def test_apply_with_pre_reducer_event_time() -> None:
    """Flink: AllWindowTranslationTest#testApplyWithPreReducerEventTime"""
    check_reduce_with_window_function(
        tumbling_event_time(), TUMBLING_ET, ET_TRIGGER, TestAllWindowFunction()
    )


# ---------------------------------------------------------------------------------------------
#  aggregate() translation
# ---------------------------------------------------------------------------------------------


def test_aggregate_event_time() -> None:
    """Flink: AllWindowTranslationTest#testAggregateEventTime"""
    pipeline = translate(
        lambda: tuple2_source().window_all(sliding_event_time()).aggregate(
            DummyAggregationFunction()
        )
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "aggregating")
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


def test_aggregate_processing_time() -> None:
    """Flink: AllWindowTranslationTest#testAggregateProcessingTime"""
    pipeline = translate(
        lambda: tuple2_source().window_all(sliding_processing_time()).aggregate(
            DummyAggregationFunction()
        )
    )
    assert operator_choices(pipeline) == choices(SLIDING_PT, PT_TRIGGER, "aggregating")
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


def check_aggregate_with_window_function(
    assigner: Any, assigner_name: str, trigger_name: str
) -> None:
    pipeline = translate(
        lambda: tuple2_source().window_all(assigner).aggregate(
            DummyAggregationFunction(), TestAllWindowFunction()
        )
    )
    assert operator_choices(pipeline) == choices(assigner_name, trigger_name, "aggregating")
    assert process_element_and_ensure_output(pipeline, HELLO) == [(HELLO3, 999)]


def test_aggregate_with_window_function_event_time() -> None:
    """Flink: AllWindowTranslationTest#testAggregateWithWindowFunctionEventTime"""
    check_aggregate_with_window_function(tumbling_event_time(), TUMBLING_ET, ET_TRIGGER)


def test_aggregate_with_window_function_processing_time() -> None:
    """Flink: AllWindowTranslationTest#testAggregateWithWindowFunctionProcessingTime"""
    check_aggregate_with_window_function(tumbling_processing_time(), TUMBLING_PT, PT_TRIGGER)


def test_aggregate_with_evictor() -> None:
    """Flink: AllWindowTranslationTest#testAggregateWithEvictor"""
    pipeline = translate(
        lambda: tuple2_source()
        .window_all(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .aggregate(DummyAggregationFunction())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


def test_aggregate_with_evictor_and_process_function() -> None:
    """Flink: AllWindowTranslationTest#testAggregateWithEvictorAndProcessFunction"""
    pipeline = translate(
        lambda: tuple2_source()
        .window_all(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .aggregate(DummyAggregationFunction(), PassThroughProcessAllWindowFunction())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


# ---------------------------------------------------------------------------------------------
#  process() and apply() translation
# ---------------------------------------------------------------------------------------------


def check_full_window(
    assigner: Any, assigner_name: str, trigger_name: str, method: str, function: Any,
    trigger: Any = None, evictor: Any = None, evictor_name: str = "none",
) -> None:
    def build() -> Any:
        windowed = tuple2_source().window_all(assigner)
        if trigger is not None:
            windowed = windowed.trigger(trigger)
        if evictor is not None:
            windowed = windowed.evictor(evictor)
        return getattr(windowed, method)(function)

    pipeline = translate(build)
    assert operator_choices(pipeline) == choices(
        assigner_name, trigger_name, "list", evictor_name
    )
    assert process_element_and_ensure_output(pipeline, HELLO) == [(HELLO, 999)]


def test_process_event_time() -> None:
    """Flink: AllWindowTranslationTest#testProcessEventTime"""
    check_full_window(
        tumbling_event_time(), TUMBLING_ET, ET_TRIGGER, "process",
        PassThroughProcessAllWindowFunction(),
    )


def test_process_processing_time() -> None:
    """Flink: AllWindowTranslationTest#testProcessProcessingTime"""
    check_full_window(
        tumbling_processing_time(), TUMBLING_PT, PT_TRIGGER, "process",
        PassThroughProcessAllWindowFunction(),
    )


def test_process_with_evictor() -> None:
    """Flink: AllWindowTranslationTest#testProcessWithEvictor"""
    check_full_window(
        tumbling_event_time(), TUMBLING_ET, "CountTrigger(1)", "process",
        PassThroughProcessAllWindowFunction(), CountTrigger.of(1),
        TimeEvictor.of(Time.milliseconds(100)), "TimeEvictor(100)",
    )


def test_process_with_custom_trigger() -> None:
    """Flink: AllWindowTranslationTest#testProcessWithCustomTrigger"""
    check_full_window(
        tumbling_event_time(), TUMBLING_ET, "CountTrigger(1)", "process",
        PassThroughProcessAllWindowFunction(), CountTrigger.of(1),
    )


def test_apply_event_time() -> None:
    """Flink: AllWindowTranslationTest#testApplyEventTime"""
    check_full_window(
        tumbling_event_time(), TUMBLING_ET, ET_TRIGGER, "apply", PassThroughAllWindowFunction()
    )


def test_apply_processing_time_time() -> None:
    """Flink: AllWindowTranslationTest#testApplyProcessingTimeTime"""
    check_full_window(
        tumbling_processing_time(), TUMBLING_PT, PT_TRIGGER, "apply",
        PassThroughAllWindowFunction(),
    )


def test_reduce_with_custom_trigger() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithCustomTrigger"""
    pipeline = translate(
        lambda: tuple2_source()
        .window_all(sliding_event_time())
        .trigger(CountTrigger.of(1))
        .reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, "CountTrigger(1)", "reducing")
    # CountTrigger(1) fires each of the ten windows on the element; the watermark fires nothing
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert by_time(output) == [(HELLO, end) for end in SLIDING_ENDS]


def test_apply_with_custom_trigger() -> None:
    """Flink: AllWindowTranslationTest#testApplyWithCustomTrigger"""
    check_full_window(
        tumbling_event_time(), TUMBLING_ET, "CountTrigger(1)", "apply",
        PassThroughAllWindowFunction(), CountTrigger.of(1),
    )


def test_reduce_with_evictor() -> None:
    """Flink: AllWindowTranslationTest#testReduceWithEvictor"""
    pipeline = translate(
        lambda: tuple2_source()
        .window_all(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, HELLO)
    assert output == [(HELLO, end) for end in SLIDING_ENDS]


def test_apply_with_evictor() -> None:
    """Flink: AllWindowTranslationTest#testApplyWithEvictor"""
    check_full_window(
        tumbling_event_time(), TUMBLING_ET, "CountTrigger(1)", "apply",
        PassThroughAllWindowFunction(), CountTrigger.of(1),
        TimeEvictor.of(Time.milliseconds(100)), "TimeEvictor(100)",
    )
