"""Helpers shared by the ports of Flink's ``WindowTranslationTest`` and
``AllWindowTranslationTest``: the public builder (``key_by(...).window(...)...``,
``window_all(...)...``) run without Spark, the window stage it translates to, and Flink's
``processElementAndEnsureOutput``.

``FakeStream`` stands in for a ``DataStream`` (its element type, no DataFrame); its ``key_by``
and ``window_all`` are ``DataStream``'s own. :func:`translate` runs a builder with the last step
(``WindowResultStream``, which compiles the stage for Spark) replaced by one that keeps the
``WindowPipeline`` the builder made: the assigner, trigger, evictor and function pairing it
chose. :func:`harness_of` builds from that pipeline the operator a Spark worker builds
(``flinkwin.spark.operator_spec.OperatorSpec.build``; of its options, those these ports set) in a
test harness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest import mock

from flinkwin import (
    AggregateFunction,
    ReduceFunction,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    Time,
    Trigger,
    TriggerResult,
)
from flinkwin.datastream import windowed_stream
from flinkwin.datastream.data_stream import DataStream
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.spark.pipeline import WindowPipeline
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.types import TypeInformation, Types


class FakeStream:
    """A stream of ``type_info`` elements, as far as the window builder reads one."""

    key_by = DataStream.key_by
    keyBy = DataStream.keyBy  # noqa: N815
    window_all = DataStream.window_all
    windowAll = DataStream.windowAll  # noqa: N815

    _df = None
    _watermark = None
    _key_groups = 128
    _max_parallelism = None
    _runtime_mode = RuntimeExecutionMode.STREAMING
    _times_before_1970 = False
    _plan = None

    def __init__(self, type_info: TypeInformation) -> None:
        self._type_info = type_info

    def _elements_df(self) -> None:
        return None

    def get_type(self) -> TypeInformation:
        return self._type_info


class _Translated:
    """Replaces ``WindowResultStream``: keeps the pipeline instead of compiling it."""

    def __init__(self, pipeline: WindowPipeline, type_info: Any = None) -> None:
        self.pipeline = pipeline


def translate(build: Callable[[], Any]) -> WindowPipeline:
    """The window stage ``build()`` (a public-API program ending in a window function) makes."""
    with mock.patch.object(windowed_stream, "WindowResultStream", _Translated):
        result = build()
    assert isinstance(result, _Translated), f"the builder returned {result!r}"
    return result.pipeline


def harness_of(pipeline: WindowPipeline) -> WindowOperatorHarness:
    """The window operator of ``pipeline`` (as ``OperatorSpec.build`` makes it: assigner,
    function, key, trigger, evictor, lateness, late tag and element shape) in a harness."""
    key = pipeline.key_selector if pipeline.key_selector is not None else pipeline.key_columns
    return WindowOperatorHarness(
        pipeline.assigner,
        pipeline.function,
        key_field=key,
        trigger=pipeline.trigger,
        evictor=pipeline.evictor,
        allowed_lateness=pipeline.allowed_lateness_ms,
        late_output_tag=pipeline.late_tag,
        tuple_elements=pipeline.tuple_elements,
        atomic_elements=pipeline.atomic_elements,
    )


def operator_choices(pipeline: WindowPipeline) -> dict[str, str]:
    """What Flink's test reads off the operator (``getTrigger()``, ``getEvictor()``,
    ``getStateDescriptor()``), as the operator's own summary (``explain()``) states it."""
    summary = harness_of(pipeline).operator.describe()
    return {k: summary[k] for k in ("assigner", "trigger", "evictor", "state")}


def process_element_and_ensure_output(
    pipeline: WindowPipeline, element: Any
) -> list[tuple[Any, int]]:
    """Flink's ``processElementAndEnsureOutput``: processing time 0, watermark MIN_VALUE, the
    element at timestamp 0, then processing time and watermark MAX_VALUE. Flink asserts that
    some record came out; the ports assert the records returned here (value, timestamp), in
    emission order."""
    h = harness_of(pipeline)
    h.set_processing_time(0)
    h.process_watermark(MIN_LONG)
    h.process_element(element, 0)
    h.set_processing_time(MAX_LONG)
    h.process_watermark(MAX_LONG)
    h.close()
    return h.output_with_timestamps()


def sliding_window_ends(size: int, slide: int, timestamp: int = 0) -> list[int]:
    """The ``maxTimestamp()`` of every sliding window holding ``timestamp``, earliest first."""
    last_start = timestamp - timestamp % slide
    starts = range(last_start - size + slide, last_start + 1, slide)
    return [start + size - 1 for start in starts]


# ---------------------------------------------------------------------------------------------
#  What both ports share: Flink's sources, assigners, expected choices and test UDFs
# ---------------------------------------------------------------------------------------------

TUPLE2 = Types.TUPLE([Types.STRING(), Types.INT()])
TUPLE3 = Types.TUPLE([Types.STRING(), Types.STRING(), Types.INT()])
SLIDING_ENDS = sliding_window_ends(1000, 100)  # 99, 199, ..., 999: ten windows hold time 0


def tuple2_source() -> FakeStream:
    """``env.fromData(Tuple2.of("hello", 1), Tuple2.of("hello", 2))``."""
    return FakeStream(TUPLE2)


def tuple3_source() -> FakeStream:
    """``env.fromData(Tuple3.of("hello", "hallo", 1), Tuple3.of("hello", "hallo", 2))``."""
    return FakeStream(TUPLE3)


def key_f0(value: Any) -> Any:
    """Flink's ``TupleKeySelector`` / ``Tuple3KeySelector`` (and ``keyBy(0)``)."""
    return value[0]


def sliding_event_time() -> SlidingEventTimeWindows:
    return SlidingEventTimeWindows.of(Time.seconds(1), Time.milliseconds(100))


def sliding_processing_time() -> SlidingProcessingTimeWindows:
    return SlidingProcessingTimeWindows.of(Time.seconds(1), Time.milliseconds(100))


def by_time(output: list[tuple[Any, int]]) -> list[tuple[Any, int]]:
    """The output ordered by timestamp (a trigger firing on the element emits the sliding
    windows in assignment order, the watermark in timer order; Flink's test checks neither)."""
    return sorted(output, key=lambda entry: entry[1])


class DummyReducer(ReduceFunction):
    def reduce(self, value1: Any, value2: Any) -> Any:
        return value1


class NonMergingTrigger(Trigger):
    """The anonymous trigger of ``testMergingAssignerWithNonMergingTriggerFails``."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return False


#: the lifecycle calls of the rich functions below: (call, the runtime context or None)
LIFECYCLE: list[tuple[str, Any]] = []


class RichReducer(ReduceFunction):
    """``new RichReduceFunction<>() {...}``, recording ``open``/``close``."""

    def open(self, runtime_context: Any) -> None:
        LIFECYCLE.append(("reduce.open", runtime_context))

    def close(self) -> None:
        LIFECYCLE.append(("reduce.close", None))

    def reduce(self, value1: Any, value2: Any) -> Any:
        return (value1[0], value1[1] + value2[1])


class DummyRichAggregationFunction(AggregateFunction):
    """``DummyRichAggregationFunction<T>`` (accumulator: the last value), recording its
    ``open``/``close``."""

    def open(self, runtime_context: Any) -> None:
        LIFECYCLE.append(("aggregate.open", runtime_context))

    def close(self) -> None:
        LIFECYCLE.append(("aggregate.close", None))

    def create_accumulator(self) -> Any:
        return None

    def add(self, value: Any, accumulator: Any) -> Any:
        return value

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        return acc_a


def choices(assigner: str, trigger: str, state: str, evictor: str = "none") -> dict[str, str]:
    return {"assigner": assigner, "trigger": trigger, "evictor": evictor, "state": state}


SLIDING_ET = "SlidingEventTimeWindows(1000, 100)"
SLIDING_PT = "SlidingProcessingTimeWindows(1000, 100)"
TUMBLING_ET = "TumblingEventTimeWindows(1000)"
TUMBLING_PT = "TumblingProcessingTimeWindows(1000)"
ET_TRIGGER = "EventTimeTrigger()"
PT_TRIGGER = "ProcessingTimeTrigger()"
