"""Bad input in the core: every case raises a clear error (Flink's message where Flink has one)
or behaves as Flink does; see the table in ``docs/reliability.md``."""

from __future__ import annotations

import traceback
from typing import Any

import pytest

from flinkwin import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountEvictor,
    CountTrigger,
    DeltaTrigger,
    EventTimeSessionWindows,
    ProcessingTimeSessionWindows,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from flinkwin.errors import UnsupportedOperationError, UserFunctionError
from flinkwin.functions.builtin import max_of, min_by, sum_of
from flinkwin.testing import WindowOperatorHarness


# ------------------------------------------------------------------ a user function raising
def _poisoned_reduce(a: Any, b: Any) -> Any:
    if b["v"] == 13:
        raise ZeroDivisionError("poisoned element")
    return {"k": a["k"], "v": a["v"] + b["v"]}


def test_a_failing_reduce_names_the_key_and_window_and_keeps_the_traceback() -> None:
    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), _poisoned_reduce, key_field="k")
    h.process_element({"k": "a", "v": 1}, 1)
    with pytest.raises(UserFunctionError) as info:
        h.process_element({"k": "a", "v": 13}, 2)
    error = info.value
    first, *user_traceback = str(error).splitlines()
    assert first == (
        "user function failed on key 'a', window TimeWindow(start=0, end=10): "
        "ZeroDivisionError: poisoned element"
    )
    # the message itself carries the user's frames (Spark shows only the last exception)
    assert user_traceback[0] == "User traceback (most recent call last):"
    assert "in _poisoned_reduce" in user_traceback[1]
    assert not any("flinkwin/operator" in line for line in user_traceback)
    assert error.key == "a" and error.window == TimeWindow(0, 10)
    assert isinstance(error.__cause__, ZeroDivisionError)
    printed = "".join(traceback.format_exception(error))
    assert "_poisoned_reduce" in printed
    assert 'raise ZeroDivisionError("poisoned element")' in printed


def test_a_failing_reduce_in_a_vectorized_batch_names_the_key_and_window() -> None:
    import pandas as pd

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), _poisoned_reduce, key_field="k")
    frame = pd.DataFrame({"k": ["a", "b", "b"], "v": [1, 2, 13]})
    with pytest.raises(UserFunctionError, match=r"key 'b', window TimeWindow\(start=10, end=20\)"):
        h.operator.process_batch(frame, [1, 11, 12])


class _Average(AggregateFunction):
    def create_accumulator(self) -> Any:
        return (0, 0)

    def add(self, value: Any, acc: Any) -> Any:
        return (acc[0] + value["v"], acc[1] + 1)

    def get_result(self, acc: Any) -> Any:
        return acc[0] / acc[1] if acc[0] != 13 else {}["no such key"]

    def merge(self, a: Any, b: Any) -> Any:
        return (a[0] + b[0], a[1] + b[1])


def test_failing_aggregate_process_and_trigger_name_key_and_window() -> None:
    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), _Average(), key_field="k")
    h.process_element({"k": "x", "v": 13}, 5)
    with pytest.raises(UserFunctionError, match=r"key 'x', window .*end=10.*KeyError"):
        h.process_watermark(9)

    class Failing(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            raise ValueError(f"cannot handle {key}")

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Failing(), key_field="k")
    h.process_element({"k": "y", "v": 1}, 25)
    with pytest.raises(UserFunctionError, match=r"key 'y', window .*start=20.*cannot handle y"):
        h.process_watermark(29)

    class Exploding(Trigger):
        def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:
            raise RuntimeError("boom")

        def on_event_time(self, time: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.CONTINUE

        def on_processing_time(self, time: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.CONTINUE

    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), sum_of("v"), key_field="k", trigger=Exploding()
    )
    with pytest.raises(UserFunctionError, match=r"key 'z', window .*RuntimeError: boom"):
        h.process_element({"k": "z", "v": 1}, 3)


def test_operator_state_is_unchanged_by_the_failing_element_so_a_fixed_function_resumes() -> None:
    """What a restart from a checkpoint relies on: the snapshot taken before the poisoned batch
    restored into an operator with a fixed function gives a clean run's results."""
    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), _poisoned_reduce, key_field="k")
    h.process_element({"k": "a", "v": 1}, 1)
    saved = h.snapshot()
    with pytest.raises(UserFunctionError):
        h.process_element({"k": "a", "v": 13}, 2)

    def fixed(a: Any, b: Any) -> Any:
        return {"k": a["k"], "v": a["v"] + b["v"]}

    resumed = WindowOperatorHarness(TumblingEventTimeWindows.of(10), fixed, key_field="k")
    resumed.restore(saved)
    resumed.process_element({"k": "a", "v": 13}, 2)
    resumed.process_watermark(9)
    assert resumed.output() == [{"k": "a", "v": 14}]


# ------------------------------------------------------- invalid assigner/trigger arguments
@pytest.mark.parametrize(
    ("build", "message"),
    [
        # Flink: TumblingEventTimeWindows(size, offset, stagger) constructor
        (lambda: TumblingEventTimeWindows.of(0),
         "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"),
        (lambda: TumblingEventTimeWindows.of(-5),
         "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"),
        (lambda: TumblingEventTimeWindows.of(10, 10),
         "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"),
        (lambda: TumblingProcessingTimeWindows.of(10, -11),
         "TumblingProcessingTimeWindows parameters must satisfy abs(offset) < size"),
        # Flink: SlidingEventTimeWindows(size, slide, offset) constructor
        (lambda: SlidingEventTimeWindows.of(0, 5),
         "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        (lambda: SlidingEventTimeWindows.of(10, 0),
         "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        (lambda: SlidingEventTimeWindows.of(10, 5, 5),
         "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        (lambda: SlidingProcessingTimeWindows.of(10, -1),
         "SlidingProcessingTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        # Flink: EventTimeSessionWindows / ProcessingTimeSessionWindows constructors
        (lambda: EventTimeSessionWindows.withGap(0),
         "EventTimeSessionWindows parameters must satisfy 0 < size"),
        (lambda: ProcessingTimeSessionWindows.withGap(-1),
         "ProcessingTimeSessionWindows parameters must satisfy 0 < size"),
    ],
)
def test_invalid_assigner_arguments_raise_flinks_messages(build: Any, message: str) -> None:
    with pytest.raises(ValueError) as info:
        build()
    assert str(info.value) == message


def test_continuous_trigger_interval_must_be_positive_at_build_time() -> None:
    # Flink accepts the interval and fails at the first element (``timestamp % 0``:
    # ArithmeticException "/ by zero"); flinkwin refuses the trigger when it is built.
    with pytest.raises(ValueError, match="ContinuousEventTimeTrigger interval must be positive"):
        ContinuousEventTimeTrigger.of(0)
    with pytest.raises(
        ValueError, match="ContinuousProcessingTimeTrigger interval must be positive"
    ):
        ContinuousProcessingTimeTrigger.of(-1)


@pytest.mark.parametrize("count", [0, -3, 1])
def test_count_trigger_accepts_any_count_like_flink(count: int) -> None:
    # Flink's CountTrigger.of(long) checks nothing: a count <= 1 fires on every element
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(100), sum_of("v"), key_field="k",
        trigger=CountTrigger.of(count),
    )
    for t, v in ((1, 1), (2, 2), (3, 3)):
        h.process_element({"k": "a", "v": v}, t)
    assert h.output() == [{"k": "a", "v": 1}, {"k": "a", "v": 3}, {"k": "a", "v": 6}]


def test_a_merging_assigner_rejects_a_trigger_that_cannot_merge_with_flinks_message() -> None:
    class NoMerge(Trigger):
        def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.CONTINUE

        def on_event_time(self, time: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.CONTINUE

        def on_processing_time(self, time: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.CONTINUE

    with pytest.raises(UnsupportedOperationError) as info:
        WindowOperatorHarness(
            EventTimeSessionWindows.withGap(10), sum_of("v"), key_field="k", trigger=NoMerge()
        )
    assert str(info.value).startswith(  # Flink's message, then what to add
        "A merging window assigner cannot be used with a trigger that does not support merging."
        " To use it with session windows, give the trigger can_merge() returning True"
    )


def test_count_evictor_accepts_any_count_like_flink() -> None:
    # Flink's CountEvictor.of(long) checks nothing: a count of 0 (or less) evicts everything
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(100), _Counting(), key_field="k", evictor=CountEvictor.of(0)
    )
    h.process_element({"k": "a", "v": 1}, 1)
    h.process_watermark(99)
    assert h.output() == [("a", 0)]


def test_a_delta_trigger_without_a_delta_function_fails_when_built() -> None:
    # Flink accepts null and fails with a NullPointerException at the first element
    with pytest.raises(TypeError, match="delta_function must be callable"):
        DeltaTrigger.of(1.0, None)


class _Counting(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        return [(key, len(list(elements)))]


@pytest.mark.parametrize("aggregation", [sum_of("v"), max_of("v"), min_by("v")])
def test_a_null_value_in_a_builtin_aggregation_fails_naming_key_window_and_row(
    aggregation: Any,
) -> None:
    import pandas as pd

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), aggregation, key_field="k")
    frame = pd.DataFrame({"k": ["a", "a"], "v": pd.Series([1, None], dtype=object)})
    with pytest.raises(
        UserFunctionError,
        match=r"key 'a', window TimeWindow\(start=0, end=10\): ValueError: .*field 'v' is null "
        r"in Row\(k='a', v=None\)",
    ):
        h.operator.process_batch(frame, [1, 2])
