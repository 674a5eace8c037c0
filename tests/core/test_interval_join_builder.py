"""The ``intervalJoin(...).between(...)`` builders (Flink's ``KeyedStream.IntervalJoin`` and
``IntervalJoined``): the builder cases of Flink's ``IntervalJoinITCase``
(``testFailsWithoutUpperBound``, ``testFailsWithoutLowerBound``,
``testExecutionFailsInProcessingTime``, ``testBoundsAreInclusiveByDefault``) and the spec the
builder hands to the left stream."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from flinkwin import Duration, OutputTag, ProcessJoinFunction, Time
from flinkwin.datastream.interval_join import IntervalJoin, IntervalJoinSpec
from flinkwin.datastream.keyed_stream import KeyedStream
from flinkwin.errors import UnsupportedTimeCharacteristicError
from flinkwin.time import MAX_LONG


class RecordingKeyedStream(KeyedStream):
    """A keyed stream whose ``_interval_join`` returns the spec it is given."""

    def __init__(self) -> None:
        super().__init__(None, ["key"])  # type: ignore[arg-type]

    def _interval_join(self, spec: IntervalJoinSpec) -> IntervalJoinSpec:
        return spec


class CombineToString(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> list[str]:
        return [f"({left[0]},{left[1]}):({right[0]},{right[1]})"]


def streams() -> tuple[RecordingKeyedStream, RecordingKeyedStream]:
    return RecordingKeyedStream(), RecordingKeyedStream()


def test_fails_without_upper_bound() -> None:
    left, right = streams()
    with pytest.raises(TypeError, match="An upper bound needs to be provided"):
        IntervalJoin(left, right).between(Duration.ofMillis(0), None)  # type: ignore[arg-type]


def test_fails_without_lower_bound() -> None:
    left, right = streams()
    with pytest.raises(TypeError, match="A lower bound needs to be provided"):
        IntervalJoin(left, right).between(None, Duration.ofMillis(1))  # type: ignore[arg-type]


def test_execution_fails_in_processing_time() -> None:
    left, right = streams()
    with pytest.raises(
        UnsupportedTimeCharacteristicError,
        match="^Time-bounded stream joins are only supported in event time$",
    ):
        IntervalJoin(left, right).inProcessingTime().between(
            Duration.ofMillis(0), Duration.ofMillis(0)
        )
    # in_event_time() (the default) takes it back
    joined = IntervalJoin(left, right).in_processing_time().in_event_time().between(0, 0)
    assert joined.process(CombineToString()).lower_bound == 0


def _run(spec: IntervalJoinSpec) -> list[str]:
    """The ITCase's two sources ("key", 0..2), timestamps f1, on the spec's operator."""
    op = spec.create_operator(lambda t: t[0], lambda t: t[0])
    for i in range(3):
        op.process_element(("key", i), i, 0)
    for i in range(3):
        op.process_element(("key", i), i, 1)
    op.advance_watermark(MAX_LONG)
    assert op.holds_nothing()
    return sorted(value for value, _ in op.drain_output())


def test_bounds_are_inclusive_by_default() -> None:
    left, right = streams()
    spec = IntervalJoin(left, right).between(Duration.ofMillis(0), Duration.ofMillis(2)) \
        .process(CombineToString())
    assert (spec.lower_bound_inclusive, spec.upper_bound_inclusive) == (True, True)
    assert _run(spec) == [
        "(key,0):(key,0)", "(key,0):(key,1)", "(key,0):(key,2)", "(key,1):(key,1)",
        "(key,1):(key,2)", "(key,2):(key,2)",
    ]


def test_bounds_can_be_exclusive_in_either_spelling() -> None:
    left, right = streams()
    java = IntervalJoin(left, right).between(Duration.ofMillis(0), Duration.ofMillis(2)) \
        .upperBoundExclusive().lowerBoundExclusive().process(CombineToString())
    snake = IntervalJoin(left, right).between(0, 2).upper_bound_exclusive() \
        .lower_bound_exclusive().process(CombineToString())
    for spec in (java, snake):
        assert (spec.lower_bound_inclusive, spec.upper_bound_inclusive) == (False, False)
        assert _run(spec) == ["(key,0):(key,1)", "(key,1):(key,2)"]


def test_the_spec_holds_everything_process_was_given() -> None:
    left, right = streams()
    left_tag, right_tag = OutputTag("left-late"), OutputTag("right-late")
    function = CombineToString()
    spec = IntervalJoin(left, right).between(Time.seconds(-2), Time.seconds(2)) \
        .sideOutputLeftLateData(left_tag).side_output_right_late_data(right_tag) \
        .process(function, output_schema="s STRING")
    assert spec == IntervalJoinSpec(
        right=right, lower_bound=-2000, upper_bound=2000, lower_bound_inclusive=True,
        upper_bound_inclusive=True, left_late_data_output_tag=left_tag,
        right_late_data_output_tag=right_tag, function=function, output_schema="s STRING",
        output_type=None,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.lower_bound = 0  # type: ignore[misc]
    op = spec.create_operator("key", "key")
    assert (op.left_late_data_output_tag, op.right_late_data_output_tag) == (left_tag, right_tag)
    assert (op.lower_bound, op.upper_bound) == (-2000, 2000) and op.function is function
    other = CombineToString()
    assert spec.create_operator("key", "key", other, overflow="error").function is other


def test_lower_bound_above_upper_bound_fails_at_process_as_in_flink() -> None:
    left, right = streams()
    joined = IntervalJoin(left, right).between(2, 1)  # Flink checks when building the operator
    with pytest.raises(ValueError, match="lowerBound <= upperBound must be fulfilled"):
        joined.process(CombineToString())


def test_bad_arguments_are_refused() -> None:
    left, right = streams()
    with pytest.raises(TypeError, match="the right one is a str"):
        IntervalJoin(left, "not a stream")
    joined = IntervalJoin(left, right).between(0, 1)
    with pytest.raises(TypeError, match="sideOutputLeftLateData takes an OutputTag"):
        joined.side_output_left_late_data("late")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sideOutputRightLateData takes an OutputTag"):
        joined.sideOutputRightLateData(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="needs a ProcessJoinFunction"):
        joined.process(None)
    with pytest.raises(TypeError, match="must be a ProcessJoinFunction"):
        joined.process(CombineToString)
    with pytest.raises(ValueError, match="not both"):
        joined.process(CombineToString(), "s STRING", output_schema="s STRING")
    with pytest.raises(TypeError, match="upper bound must be Time"):
        IntervalJoin(left, right).between(0, "1 s")  # type: ignore[arg-type]
