"""Port of Flink's ``WindowTranslationTest``: what ``key_by(...).window(...)`` and its window
functions translate to, what the builder refuses, and what the operator emits.

Source: apache/flink, flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/
operators/windowing/WindowTranslationTest.java (the JUnit 5 version with ``Duration``s, whose
``testApplyWithPreReducer*`` call ``reduce(reducer, windowFunction)``: Flink 2 removed the
deprecated ``apply(ReduceFunction, WindowFunction)``, and PyFlink never had it).

Translation rules
-----------------
* Each test builds Flink's program with flinkwin's public builder (``key_by(selector)
  .window(...).trigger(...).evictor(...).reduce/aggregate/process/apply(...)``) over a
  ``FakeStream`` of Flink's element type (``Tuple2<String, Integer>`` is
  ``Types.TUPLE([STRING, INT])``, elements are Python tuples), without Spark; see
  ``window_translation_helpers.py``. ``keyBy(0)`` becomes the selector ``t[0]``.
* Flink's ``winOperator.getTrigger() instanceof X``, ``getEvictor()`` and
  ``getWindowAssigner()`` become assertions on the operator the stage builds (its
  ``describe()``, which ``explain()`` prints). ``getStateDescriptor() instanceof
  ReducingStateDescriptor / AggregatingStateDescriptor / ListStateDescriptor`` becomes its
  state form ``reducing`` / ``aggregating`` / ``list``: the same choice (pre-aggregated window
  state, or the window's elements), made by the same rule (an evictor always keeps the
  elements).
* Flink's ``processElementAndEnsureOutput`` only asserts that something came out (at least
  three records with the two watermarks). The ports assert every output record and its
  timestamp (``window.maxTimestamp()``).

Not expressible here
--------------------
* ``operator instanceof WindowOperator`` / ``EvictingWindowOperator``: flinkwin has one
  ``WindowOperator`` class; an evictor switches it to the evicting behaviour, asserted through
  ``evictor`` and the ``list`` state.
* ``setOutputType`` / ``OutputTypeConfigurable`` and the ``KeyedOneInputStreamOperatorTestHarness``
  key type: flinkwin's output types are declared on the window function (``output_type=``) and
  checked on Spark, not by the operator.

Where flinkwin differs on purpose
---------------------------------
* testReduceWithRichReducerFails, testAggregateWithRichFunctionFails: Flink refuses a
  ``RichReduceFunction``/``RichAggregateFunction`` because its ``ReducingState``/
  ``AggregatingState`` call the function without ever opening it. flinkwin follows PyFlink,
  where every ``Function`` is rich (has ``open``/``close``, there is no non-rich reduce or
  aggregate function to ask for instead), and opens the window's reduce or aggregate function
  before its first call (docs/api-contract.md, "Every function is a ``flinkwin.Function``
  (rich)"; docs/porting.md, "Rich functions"). The ports assert that documented behaviour: the
  pipeline builds, the function is opened (with the operator's runtime context) and closed,
  and the results are right.
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
    harness_of,
    key_f0,
    operator_choices,
    process_element_and_ensure_output,
    sliding_event_time,
    sliding_processing_time,
    translate,
    tuple2_source,
    tuple3_source,
)

from flinkwin import (
    AggregateFunction,
    CountEvictor,
    CountTrigger,
    EventTimeSessionWindows,
    ProcessWindowFunction,
    Time,
    TimeEvictor,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowFunction,
)
from flinkwin.errors import UnsupportedOperationError
from flinkwin.types import Types

# ---------------------------------------------------------------------------------------------
#  UDFs (Flink's test UDFs)
# ---------------------------------------------------------------------------------------------


class DummyAggregationFunction(AggregateFunction):
    """``Tuple3<String, String, Integer>`` in, accumulator ``(f0, f2)``, result ``f2``."""

    def create_accumulator(self) -> Any:
        return ("", 0)

    def add(self, value: Any, accumulator: Any) -> Any:
        return (value[0], value[2])

    def get_result(self, accumulator: Any) -> Any:
        return accumulator[1]

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        return acc_a


class TestWindowFunction(WindowFunction):
    """``out.collect(in.toString())`` for every input."""

    __test__ = False  # Flink's name; not a pytest test class

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        return [str(value) for value in inputs]


class TestProcessWindowFunction(ProcessWindowFunction):
    """``out.collect(in.toString())`` for every input."""

    __test__ = False  # Flink's name; not a pytest test class

    def process(self, key: Any, context: Any, elements: Any) -> list[Any]:
        return [str(value) for value in elements]


class Tuple3WindowFunction(WindowFunction):
    """The anonymous ``WindowFunction``: ``new Tuple3<>(in.f0, in.f0, in.f1)``."""

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        return [(value[0], value[0], value[1]) for value in inputs]


class Tuple3ProcessWindowFunction(ProcessWindowFunction):
    """The anonymous ``ProcessWindowFunction``: ``new Tuple3<>(in.f0, in.f0, in.f1)``."""

    def process(self, key: Any, context: Any, elements: Any) -> list[Any]:
        return [(value[0], value[0], value[1]) for value in elements]


class PassThroughWindowFunction(WindowFunction):
    """The anonymous ``WindowFunction`` collecting every input."""

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        return list(inputs)


class PassThroughProcessWindowFunction(ProcessWindowFunction):
    """The anonymous ``ProcessWindowFunction`` collecting every input."""

    def process(self, key: Any, context: Any, elements: Any) -> list[Any]:
        return list(elements)


# ---------------------------------------------------------------------------------------------
#  Rich pre-aggregation functions
# ---------------------------------------------------------------------------------------------


def test_reduce_with_rich_reducer_fails() -> None:
    """Flink: WindowTranslationTest#testReduceWithRichReducerFails

    Flink refuses (UnsupportedOperationException); flinkwin builds it and opens the reducer
    (see the module docstring, "Where flinkwin differs on purpose")."""
    LIFECYCLE.clear()
    pipeline = translate(
        lambda: tuple2_source().key_by(key_f0).window(sliding_event_time()).reduce(RichReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "reducing")
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert by_time(output) == [(("hello", 1), end) for end in SLIDING_ENDS]
    assert [call for call, _ in LIFECYCLE] == ["reduce.open", "reduce.close"]
    assert LIFECYCLE[0][1].get_task_name() == "Window"  # opened with the operator's context


def test_aggregate_with_rich_function_fails() -> None:
    """Flink: WindowTranslationTest#testAggregateWithRichFunctionFails

    Flink refuses (UnsupportedOperationException); flinkwin builds it and opens the aggregate
    function (see the module docstring, "Where flinkwin differs on purpose")."""
    LIFECYCLE.clear()
    pipeline = translate(
        lambda: tuple2_source()
        .key_by(key_f0)
        .window(sliding_event_time())
        .aggregate(DummyRichAggregationFunction())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "aggregating")
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert by_time(output) == [(("hello", 1), end) for end in SLIDING_ENDS]
    assert [call for call, _ in LIFECYCLE] == ["aggregate.open", "aggregate.close"]


# ---------------------------------------------------------------------------------------------
#  Merging windows support
# ---------------------------------------------------------------------------------------------


def test_merging_assigner_with_non_merging_trigger_fails() -> None:
    """Flink: WindowTranslationTest#testMergingAssignerWithNonMergingTriggerFails

    Refused by ``trigger()`` itself, as Flink's ``WindowedStream.trigger``."""
    windowed = (
        FakeStream(Types.STRING())
        .key_by(lambda value: value)
        .window(EventTimeSessionWindows.withGap(Time.seconds(5)))
    )
    with pytest.raises(
        UnsupportedOperationError,
        match="A merging window assigner cannot be used with a trigger that does not support "
        "merging",
    ):
        windowed.trigger(NonMergingTrigger())


def test_merging_windows_with_evictor() -> None:
    """Flink: WindowTranslationTest#testMergingWindowsWithEvictor"""
    pipeline = translate(
        lambda: FakeStream(Types.INT())
        .key_by(lambda value: str(value))
        .window(EventTimeSessionWindows.withGap(Time.seconds(5)))
        .evictor(CountEvictor.of(5))
        .process(TestProcessWindowFunction())
    )
    assert operator_choices(pipeline) == choices(
        "EventTimeSessionWindows(5000)", ET_TRIGGER, "list", "CountEvictor(5)"
    )
    assert process_element_and_ensure_output(pipeline, 1) == [("1", 4999)]


# ---------------------------------------------------------------------------------------------
#  reduce() translation
# ---------------------------------------------------------------------------------------------


def test_reduce_event_time() -> None:
    """Flink: WindowTranslationTest#testReduceEventTime"""
    pipeline = translate(
        lambda: tuple2_source().key_by(key_f0).window(sliding_event_time()).reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "reducing")
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", 1), end) for end in SLIDING_ENDS]


def test_reduce_processing_time() -> None:
    """Flink: WindowTranslationTest#testReduceProcessingTime"""
    pipeline = translate(
        lambda: tuple2_source()
        .key_by(key_f0)
        .window(sliding_processing_time())
        .reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_PT, PT_TRIGGER, "reducing")
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", 1), end) for end in SLIDING_ENDS]


def check_reduce_with_window_function(
    assigner: Any, assigner_name: str, trigger_name: str, window_function: Any
) -> None:
    pipeline = translate(
        lambda: tuple2_source().key_by(key_f0).window(assigner).reduce(
            DummyReducer(), window_function
        )
    )
    assert operator_choices(pipeline) == choices(assigner_name, trigger_name, "reducing")
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", "hello", 1), 999)]


def test_reduce_with_window_function_event_time() -> None:
    """Flink: WindowTranslationTest#testReduceWithWindowFunctionEventTime"""
    check_reduce_with_window_function(
        TumblingEventTimeWindows.of(Time.seconds(1)), TUMBLING_ET, ET_TRIGGER,
        Tuple3WindowFunction(),
    )


def test_reduce_with_window_function_processing_time() -> None:
    """Flink: WindowTranslationTest#testReduceWithWindowFunctionProcessingTime"""
    check_reduce_with_window_function(
        TumblingProcessingTimeWindows.of(Time.seconds(1)), TUMBLING_PT, PT_TRIGGER,
        Tuple3WindowFunction(),
    )


def test_reduce_with_proces_window_function_event_time() -> None:
    """Flink: WindowTranslationTest#testReduceWithProcesWindowFunctionEventTime"""
    check_reduce_with_window_function(
        TumblingEventTimeWindows.of(Time.seconds(1)), TUMBLING_ET, ET_TRIGGER,
        Tuple3ProcessWindowFunction(),
    )


def test_reduce_with_process_window_function_processing_time() -> None:
    """Flink: WindowTranslationTest#testReduceWithProcessWindowFunctionProcessingTime"""
    check_reduce_with_window_function(
        TumblingProcessingTimeWindows.of(Time.seconds(1)), TUMBLING_PT, PT_TRIGGER,
        Tuple3ProcessWindowFunction(),
    )


def test_apply_with_pre_reducer_event_time() -> None:
    """Flink: WindowTranslationTest#testApplyWithPreReducerEventTime"""
    check_reduce_with_window_function(
        TumblingEventTimeWindows.of(Time.seconds(1)), TUMBLING_ET, ET_TRIGGER,
        Tuple3WindowFunction(),
    )


def test_apply_with_pre_reducer_and_evictor() -> None:
    """Flink: WindowTranslationTest#testApplyWithPreReducerAndEvictor"""
    pipeline = translate(
        lambda: tuple2_source()
        .key_by(key_f0)
        .window(TumblingEventTimeWindows.of(Time.seconds(1)))
        .evictor(CountEvictor.of(100))
        .reduce(DummyReducer(), Tuple3WindowFunction())
    )
    assert operator_choices(pipeline) == choices(
        TUMBLING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", "hello", 1), 999)]


# ---------------------------------------------------------------------------------------------
#  aggregate() translation
# ---------------------------------------------------------------------------------------------


def test_aggregate_event_time() -> None:
    """Flink: WindowTranslationTest#testAggregateEventTime"""
    pipeline = translate(
        lambda: tuple3_source()
        .key_by(key_f0)
        .window(sliding_event_time())
        .aggregate(DummyAggregationFunction())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, ET_TRIGGER, "aggregating")
    output = process_element_and_ensure_output(pipeline, ("hello", "hallo", 1))
    assert output == [(1, end) for end in SLIDING_ENDS]


def test_aggregate_processing_time() -> None:
    """Flink: WindowTranslationTest#testAggregateProcessingTime"""
    pipeline = translate(
        lambda: tuple3_source()
        .key_by(key_f0)
        .window(sliding_processing_time())
        .aggregate(DummyAggregationFunction())
    )
    assert operator_choices(pipeline) == choices(SLIDING_PT, PT_TRIGGER, "aggregating")
    output = process_element_and_ensure_output(pipeline, ("hello", "hallo", 1))
    assert output == [(1, end) for end in SLIDING_ENDS]


def check_aggregate_with_window_function(
    assigner: Any, assigner_name: str, trigger_name: str, window_function: Any
) -> None:
    pipeline = translate(
        lambda: tuple3_source().key_by(key_f0).window(assigner).aggregate(
            DummyAggregationFunction(), window_function
        )
    )
    assert operator_choices(pipeline) == choices(assigner_name, trigger_name, "aggregating")
    output = process_element_and_ensure_output(pipeline, ("hello", "hallo", 1))
    assert output == [("1", 999)]


def test_aggregate_with_window_function_event_time() -> None:
    """Flink: WindowTranslationTest#testAggregateWithWindowFunctionEventTime"""
    check_aggregate_with_window_function(
        TumblingEventTimeWindows.of(Time.seconds(1)), TUMBLING_ET, ET_TRIGGER,
        TestWindowFunction(),
    )


def test_aggregate_with_window_function_processing_time() -> None:
    """Flink: WindowTranslationTest#testAggregateWithWindowFunctionProcessingTime"""
    check_aggregate_with_window_function(
        TumblingProcessingTimeWindows.of(Time.seconds(1)), TUMBLING_PT, PT_TRIGGER,
        TestWindowFunction(),
    )


def test_aggregate_with_process_window_function_event_time() -> None:
    """Flink: WindowTranslationTest#testAggregateWithProcessWindowFunctionEventTime"""
    check_aggregate_with_window_function(
        TumblingEventTimeWindows.of(Time.seconds(1)), TUMBLING_ET, ET_TRIGGER,
        TestProcessWindowFunction(),
    )


def test_aggregate_with_process_window_function_processing_time() -> None:
    """Flink: WindowTranslationTest#testAggregateWithProcessWindowFunctionProcessingTime"""
    check_aggregate_with_window_function(
        TumblingProcessingTimeWindows.of(Time.seconds(1)), TUMBLING_PT, PT_TRIGGER,
        TestProcessWindowFunction(),
    )


# ---------------------------------------------------------------------------------------------
#  apply() and process() translation
# ---------------------------------------------------------------------------------------------


def check_full_window(
    assigner: Any, assigner_name: str, trigger_name: str, method: str, function: Any
) -> None:
    pipeline = translate(
        lambda: getattr(tuple2_source().key_by(key_f0).window(assigner), method)(function)
    )
    assert operator_choices(pipeline) == choices(assigner_name, trigger_name, "list")
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", 1), 999)]


def test_apply_event_time() -> None:
    """Flink: WindowTranslationTest#testApplyEventTime"""
    check_full_window(
        TumblingEventTimeWindows.of(Time.seconds(1)), TUMBLING_ET, ET_TRIGGER, "apply",
        PassThroughWindowFunction(),
    )


def test_apply_processing_time() -> None:
    """Flink: WindowTranslationTest#testApplyProcessingTime"""
    check_full_window(
        TumblingProcessingTimeWindows.of(Time.seconds(1)), TUMBLING_PT, PT_TRIGGER, "apply",
        PassThroughWindowFunction(),
    )


def test_process_event_time() -> None:
    """Flink: WindowTranslationTest#testProcessEventTime"""
    check_full_window(
        TumblingEventTimeWindows.of(Time.seconds(1)), TUMBLING_ET, ET_TRIGGER, "process",
        PassThroughProcessWindowFunction(),
    )


def test_process_processing_time() -> None:
    """Flink: WindowTranslationTest#testProcessProcessingTime"""
    check_full_window(
        TumblingProcessingTimeWindows.of(Time.seconds(1)), TUMBLING_PT, PT_TRIGGER, "process",
        PassThroughProcessWindowFunction(),
    )


# ---------------------------------------------------------------------------------------------
#  Custom triggers
# ---------------------------------------------------------------------------------------------


def test_reduce_with_custom_trigger() -> None:
    """Flink: WindowTranslationTest#testReduceWithCustomTrigger"""
    pipeline = translate(
        lambda: tuple2_source()
        .key_by(key_f0)
        .window(sliding_event_time())
        .trigger(CountTrigger.of(1))
        .reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(SLIDING_ET, "CountTrigger(1)", "reducing")
    # CountTrigger(1) fires each of the ten windows on the element; the watermark fires nothing
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert by_time(output) == [(("hello", 1), end) for end in SLIDING_ENDS]


def check_full_window_with_count_trigger(method: str, function: Any) -> None:
    pipeline = translate(
        lambda: getattr(
            tuple2_source()
            .key_by(key_f0)
            .window(TumblingEventTimeWindows.of(Time.seconds(1)))
            .trigger(CountTrigger.of(1)),
            method,
        )(function)
    )
    assert operator_choices(pipeline) == choices(TUMBLING_ET, "CountTrigger(1)", "list")
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", 1), 999)]


def test_apply_with_custom_trigger() -> None:
    """Flink: WindowTranslationTest#testApplyWithCustomTrigger"""
    check_full_window_with_count_trigger("apply", PassThroughWindowFunction())


def test_process_with_custom_trigger() -> None:
    """Flink: WindowTranslationTest#testProcessWithCustomTrigger"""
    check_full_window_with_count_trigger("process", PassThroughProcessWindowFunction())


# ---------------------------------------------------------------------------------------------
#  Evictors: the window keeps its elements (Flink's ListStateDescriptor)
# ---------------------------------------------------------------------------------------------


def test_reduce_with_evictor() -> None:
    """Flink: WindowTranslationTest#testReduceWithEvictor"""
    pipeline = translate(
        lambda: tuple2_source()
        .key_by(key_f0)
        .window(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .reduce(DummyReducer())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", 1), end) for end in SLIDING_ENDS]


def test_reduce_with_evictor_and_process_function() -> None:
    """Flink: WindowTranslationTest#testReduceWithEvictorAndProcessFunction"""
    pipeline = translate(
        lambda: tuple2_source()
        .key_by(key_f0)
        .window(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .reduce(DummyReducer(), PassThroughProcessWindowFunction())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", 1), end) for end in SLIDING_ENDS]


def test_aggregate_with_evictor() -> None:
    """Flink: WindowTranslationTest#testAggregateWithEvictor"""
    pipeline = translate(
        lambda: tuple3_source()
        .key_by(key_f0)
        .window(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .aggregate(DummyAggregationFunction())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, ("hello", "hallo", 1))
    assert output == [(1, end) for end in SLIDING_ENDS]


def test_aggregate_with_evictor_and_process_function() -> None:
    """Flink: WindowTranslationTest#testAggregateWithEvictorAndProcessFunction"""
    pipeline = translate(
        lambda: tuple3_source()
        .key_by(key_f0)
        .window(sliding_event_time())
        .evictor(CountEvictor.of(100))
        .aggregate(DummyAggregationFunction(), TestProcessWindowFunction())
    )
    assert operator_choices(pipeline) == choices(
        SLIDING_ET, ET_TRIGGER, "list", "CountEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, ("hello", "hallo", 1))
    assert output == [("1", end) for end in SLIDING_ENDS]


def check_full_window_with_evictor(method: str, function: Any) -> None:
    pipeline = translate(
        lambda: getattr(
            tuple2_source()
            .key_by(key_f0)
            .window(TumblingEventTimeWindows.of(Time.seconds(1)))
            .trigger(CountTrigger.of(1))
            .evictor(TimeEvictor.of(Time.milliseconds(100))),
            method,
        )(function)
    )
    assert operator_choices(pipeline) == choices(
        TUMBLING_ET, "CountTrigger(1)", "list", "TimeEvictor(100)"
    )
    output = process_element_and_ensure_output(pipeline, ("hello", 1))
    assert output == [(("hello", 1), 999)]


def test_apply_with_evictor() -> None:
    """Flink: WindowTranslationTest#testApplyWithEvictor"""
    check_full_window_with_evictor("apply", PassThroughWindowFunction())


def test_process_with_evictor() -> None:
    """Flink: WindowTranslationTest#testProcessWithEvictor"""
    check_full_window_with_evictor("process", PassThroughProcessWindowFunction())


# ---------------------------------------------------------------------------------------------
#  Beyond Flink's test methods: what the builder accepts without a refusal
# ---------------------------------------------------------------------------------------------


def test_allowed_lateness_on_processing_time_windows_is_accepted_and_ignored() -> None:
    """Flink's ``WindowOperatorBuilder.allowedLateness`` refuses only a negative lateness; a
    processing-time window keeps it but is cleaned up at its ``maxTimestamp()``
    (``WindowOperator.cleanupTime``), as an event-time window is at ``maxTimestamp() +
    allowedLateness``."""
    pipeline = translate(
        lambda: tuple2_source()
        .key_by(key_f0)
        .window(TumblingProcessingTimeWindows.of(Time.seconds(1)))
        .allowed_lateness(Time.seconds(10))
        .reduce(DummyReducer())
    )
    assert pipeline.allowed_lateness_ms == 10_000
    h = harness_of(pipeline)
    h.set_processing_time(0)
    h.process_element(("hello", 1))
    h.set_processing_time(999)
    assert h.output_with_timestamps() == [(("hello", 1), 999)]
    assert h.num_keyed_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    h.process_element(("hello", 2))  # still at 999: window [0, 1000) anew, its state cleared
    h.set_processing_time(1999)
    assert h.output_with_timestamps() == [(("hello", 1), 999), (("hello", 2), 999)]


def test_flink_1_apply_with_pre_reducer_points_to_reduce() -> None:
    """Flink 1.x's deprecated ``apply(ReduceFunction, WindowFunction)`` (the older
    ``testApplyWithPreReducer*``), removed in Flink 2 and never in PyFlink, is refused when the
    pipeline is built, with an error naming the method that takes the reducer."""
    windowed = tuple2_source().key_by(key_f0).window(TumblingEventTimeWindows.of(Time.seconds(1)))
    with pytest.raises(TypeError, match=r"apply\(\) takes a WindowFunction.*goes to reduce\(\)"):
        windowed.apply(DummyReducer(), Tuple3WindowFunction())
