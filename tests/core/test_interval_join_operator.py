"""The interval join operator beyond Flink's own tests: its documented join order, side outputs
from the function, keyed state, snapshots, argument checks, long arithmetic and the
``StreamOperator`` protocol."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from flinkwin import (
    Duration,
    OutputTag,
    ProcessJoinFunction,
    Row,
    RuntimeContext,
    Time,
    ValueStateDescriptor,
)
from flinkwin.errors import UserFunctionError
from flinkwin.longs import LongOverflowError
from flinkwin.operator import SnapshotAuthenticationError, StatePickler
from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.stream_operator import StreamOperator
from flinkwin.time import MAX_LONG, MIN_LONG


class Pairs(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterator[Any]:
        yield (left, right)


def first(t: tuple[Any, ...]) -> Any:
    return t[0]


def join(
    lower: int = -1, upper: int = 1, function: Any = None, left_late: Any = None, **kwargs: Any
) -> IntervalJoinOperator:
    return IntervalJoinOperator(
        lower, upper, True, True, left_late, None, function or Pairs(), first, first, **kwargs
    )


def values(op: IntervalJoinOperator) -> list[Any]:
    return [value for value, _ in op.drain_output()]


def test_an_element_at_the_watermark_is_not_late() -> None:
    op = join(0, 0)
    op.advance_watermark(5)
    op.process_element(("k", "l5"), 5, 0)
    op.process_element(("k", "r5"), 5, 1)
    assert values(op) == [(("k", "l5"), ("k", "r5"))]
    op.process_element(("k", "r4"), 4, 1)
    assert op.num_late_records_dropped == 1
    assert op.state_size() == (1, 2)


def test_buckets_join_in_ascending_timestamp_order_and_a_bucket_in_arrival_order() -> None:
    op = join(-10, 10)
    for ts, name in ((7, "a"), (3, "b"), (7, "c"), (-2, "d"), (5, "e"), (3, "f")):
        op.process_element(("k", name), ts, 1)
    op.process_element(("k", "L"), 0, 0)
    assert [right[1] for _, right in values(op)] == ["d", "b", "f", "e", "a", "c"]
    # and from the right: the left buckets in ascending order
    for ts, name in ((4, "x"), (-3, "y"), (4, "z")):
        op.process_element(("k", name), ts, 0)
    op.drain_output()
    op.process_element(("k", "R"), 1, 1)
    assert [left[1] for left, _ in values(op)] == ["y", "L", "x", "z"]


def test_function_side_outputs_carry_the_pair_timestamp() -> None:
    tag, other = OutputTag("side"), OutputTag("other")

    class Both(ProcessJoinFunction):
        def process_element(self, left: Any, right: Any, ctx: Any) -> Iterator[Any]:
            ctx.output(other, f"ctx {left[1]}{right[1]}")
            yield (tag, f"yielded {left[1]}{right[1]}")
            yield "main"

    op = join(function=Both())
    op.process_element(("k", "l"), 3, 0)
    op.process_element(("k", "r"), 4, 1)
    assert op.drain_output() == [("main", 4)]
    assert op.drain_side_outputs() == {other: [("ctx lr", 4)], tag: [("yielded lr", 4)]}


def test_context_output_refuses_a_missing_or_wrong_tag() -> None:
    class NoTag(ProcessJoinFunction):
        def __init__(self, tag: Any) -> None:
            self.tag = tag

        def process_element(self, left: Any, right: Any, ctx: Any) -> None:
            ctx.output(self.tag, 1)

    for tag, message in ((None, "OutputTag must not be null"), ("side", "takes an OutputTag")):
        op = join(function=NoTag(tag))
        op.process_element(("k", 1), 1, 0)
        with pytest.raises(UserFunctionError, match=message):
            op.process_element(("k", 1), 1, 1)


def test_state_size_and_holds_nothing_follow_buffers_and_timers() -> None:
    op = join(0, 2)
    assert op.holds_nothing() and op.state_size() == (0, 0)
    op.process_element(("a", 1), 1, 0)
    op.process_element(("a", 1), 1, 0)
    op.process_element(("b", 2), 2, 1)
    assert op.state_size() == (2, 3) and not op.holds_nothing()
    assert op.next_event_time_timer() == 2  # b's right element: ts, as lower is not negative
    op.advance_watermark(2)
    assert op.state_size() == (1, 2)  # the right bucket at 2 is gone, left ones wait until 3
    assert op.next_event_time_timer() == 3
    op.advance_watermark(3)
    assert op.holds_nothing() and op.state_size() == (0, 0)
    assert op.next_event_time_timer() is None and op.next_processing_time_timer() is None


def test_elements_of_one_timestamp_share_a_bucket_and_its_timer() -> None:
    op = join(0, 2)
    for name in "abc":
        op.process_element(("k", name), 1, 0)
    assert len(op.event_timers) == 1
    assert op.left_buffer.timestamps("k") == [1]
    assert op.state_size() == (1, 3)


class CountingJoin(ProcessJoinFunction):
    """Counts the pairs per key in keyed state."""

    def __init__(self) -> None:
        self.opened = 0
        self.closed = 0

    def open(self, runtime_context: RuntimeContext) -> None:
        self.opened += 1
        self.count = runtime_context.get_state(ValueStateDescriptor("count", None))

    def close(self) -> None:
        self.closed += 1

    def process_element(self, left: Any, right: Any, ctx: Any) -> list[Any]:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        return [(left[0], n)]


def test_keyed_state_of_the_function_follows_the_key_of_the_pair() -> None:
    function = CountingJoin()
    op = join(0, 0, function=function)
    for key in ("a", "b", "a", "a", "b"):
        op.process_element((key, 0), 0, 0)
        op.process_element((key, 0), 0, 1)
    # each element joins every element of the other side with its key buffered before it
    assert values(op) == [("a", 1), ("b", 1), *[("a", n) for n in range(2, 10)],
                          ("b", 2), ("b", 3), ("b", 4)]
    op.advance_watermark(1)
    assert not op.holds_nothing()  # the function's keyed state remains
    assert op.state_size() == (0, 0)
    op.close()
    assert (function.opened, function.closed) == (1, 1)
    assert function.get_runtime_context().get_task_name() == "Interval Join"


def test_snapshot_restores_buffers_timers_clocks_and_keyed_state() -> None:
    op = join(0, 0, function=CountingJoin())
    op.process_element(("a", 0), 0, 0)
    op.process_element(("a", 0), 0, 1)
    op.process_element(("a", 5), 5, 0)
    op.advance_watermark(3)
    op.advance_processing_time(1234)
    op.process_element(("a", 2), 2, 1)  # late: dropped
    op.drain_output()
    snapshot = op.snapshot()

    restored = join(0, 0, function=CountingJoin())
    restored.restore(snapshot)
    assert (restored.current_watermark, restored.current_processing_time) == (3, 1234)
    assert restored.num_late_records_dropped == 1
    assert restored.state_size() == op.state_size() == (1, 1)
    restored.process_element(("a", 1), 1, 1)  # still late after the restore
    assert restored.num_late_records_dropped == 2
    restored.process_element(("a", 5), 5, 1)
    assert values(restored) == [("a", 2)]  # the count of key a continues
    assert restored.next_event_time_timer() == 5
    restored.advance_watermark(5)
    assert restored.state_size() == (0, 0) and len(restored.event_timers) == 0


def test_restore_refuses_other_bounds_foreign_bytes_and_other_keys() -> None:
    snapshot = join(-1, 1).snapshot()
    with pytest.raises(ValueError, match=r"bounds \(inclusive\) \[-1, 1\] ms, this join has"):
        join(-1, 2).restore(snapshot)
    exclusive = IntervalJoinOperator(-2, 2, False, False, None, None, Pairs(), first, first)
    exclusive.restore(snapshot)  # the same effective bounds [-1, 1]
    with pytest.raises(ValueError, match="not a flinkwin interval join snapshot"):
        join().restore(b"something else")
    keyed = join(state_pickler=StatePickler(key=b"k" * 32, source="the test key"))
    with pytest.raises(SnapshotAuthenticationError, match="the test key"):
        keyed.restore(snapshot)
    tampered = bytearray(snapshot)
    tampered[-1] ^= 1
    with pytest.raises(SnapshotAuthenticationError):
        join().restore(bytes(tampered))


def test_bounds_take_time_duration_timedelta_and_int_and_are_checked() -> None:
    for lower, upper in ((Time.seconds(-1), Time.seconds(1)),
                         (Duration.ofSeconds(-1), Duration.ofSeconds(1)),
                         (datetime.timedelta(seconds=-1), datetime.timedelta(seconds=1))):
        op = join(lower, upper)  # type: ignore[arg-type]
        assert (op.lower_bound, op.upper_bound) == (-1000, 1000)
    with pytest.raises(ValueError, match=r"lowerBound <= upperBound must be fulfilled"):
        join(2, 1)
    with pytest.raises(TypeError, match="lower bound must be Time"):
        join(None, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not fit a Java long"):
        join(0, MAX_LONG + 1)
    # as in Flink, equal bounds both exclusive are allowed (and join nothing)
    op = IntervalJoinOperator(0, 0, False, False, None, None, Pairs(), first, first)
    assert (op.lower_bound, op.upper_bound) == (1, -1)
    op.process_element(("k", 1), 1, 0)
    op.process_element(("k", 1), 1, 1)
    assert op.drain_output() == []


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError, match="late-data output tag must be an OutputTag"):
        join(left_late="late")
    with pytest.raises(TypeError, match="must be a ProcessJoinFunction"):
        join(function=Pairs)
    with pytest.raises(TypeError, match="must be a ProcessJoinFunction"):
        join(function=lambda left, right, ctx: [left])
    with pytest.raises(TypeError, match="give both key selectors"):
        IntervalJoinOperator(0, 0, True, True, None, None, Pairs(), first, None)
    with pytest.raises(ValueError, match="inputs 0 and 1"):
        join().process_element(("k", 1), 1, 2)
    with pytest.raises(TypeError, match="abstract"):
        ProcessJoinFunction()  # type: ignore[abstract]


def test_a_failing_function_is_reported_with_its_key() -> None:
    class Failing(ProcessJoinFunction):
        def process_element(self, left: Any, right: Any, ctx: Any) -> None:
            raise ZeroDivisionError("boom")

    op = join(function=Failing())
    op.process_element(("k1", 1), 1, 0)
    with pytest.raises(UserFunctionError, match="key 'k1'.*ZeroDivisionError: boom"):
        op.process_element(("k1", 1), 1, 1)

    class NotIterable(ProcessJoinFunction):
        def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
            return "a string"

    op = join(function=NotIterable())
    op.process_element(("k", 1), 1, 0)
    with pytest.raises(UserFunctionError, match="must return an iterable"):
        op.process_element(("k", 1), 1, 1)


def test_dicts_become_rows_keyed_by_field_names() -> None:
    op = IntervalJoinOperator(0, 0, True, True, None, None, Pairs(), "id", ["id"])
    op.process_element({"id": 7, "v": "l"}, 1, 0)
    op.process_element({"id": 7, "v": "r"}, 1, 1)
    op.process_element({"id": 8, "v": "r"}, 1, 1)
    [(left, right)] = values(op)
    assert isinstance(left, Row) and (left["v"], right["v"]) == ("l", "r")


def test_timestamp_arithmetic_wraps_as_java_longs_or_fails_under_error() -> None:
    op = join(0, 5)
    op.process_element(("k", "l"), MAX_LONG - 1, 0)
    # Java: ts + 5 wraps, the range [MAX - 1, MIN + 3] is empty and the cleanup timer wraps
    assert op.next_event_time_timer() == MIN_LONG + 3
    op.process_element(("k", "r"), MAX_LONG, 1)  # [MAX - 5, MAX] holds the left bucket
    assert values(op) == [(("k", "l"), ("k", "r"))]
    op.advance_watermark(MIN_LONG + 3)  # the wrapped timer removes bucket MAX - 1
    assert op.left_buffer.timestamps("k") == []

    strict = join(0, 5, overflow="error")
    with pytest.raises(LongOverflowError):
        strict.process_element(("k", "l"), MAX_LONG - 1, 0)


def test_implements_the_stream_operator_protocol() -> None:
    op = join()
    assert isinstance(op, StreamOperator)
    op.advance_processing_time(10)
    assert op.current_processing_time == 10
    op.advance_watermark(7)
    op.advance_watermark(6)  # not above the current one: ignored
    assert op.current_watermark == 7
    assert op.drain_output() == [] and op.drain_side_outputs() == {}
    assert op.describe()["bounds_ms"] == "[-1, 1] (inclusive)"


def test_a_subtask_opens_its_function_once_across_restored_operators() -> None:
    from flinkwin.operator.runtime_context import Subtask, TaskInfo

    function = CountingJoin()
    subtask = Subtask(function, first, TaskInfo(task_name="Interval Join", index_of_this_subtask=3))
    op = join(0, 0, function=function, subtask=subtask)
    op.process_element(("a", 0), 0, 0)
    op.process_element(("a", 0), 0, 1)
    restored = join(0, 0, function=function, subtask=subtask)
    restored.restore(op.snapshot())
    restored.process_element(("a", 0), 0, 1)
    # the state handle obtained in open() now refers to the restored operator's state
    assert values(restored) == [("a", 2)]
    restored.close()
    assert (function.opened, function.closed) == (1, 1)
    assert function.get_runtime_context().get_index_of_this_subtask() == 3


def test_runs_as_a_node_of_a_stream_graph() -> None:
    from flinkwin.operator.graph import OPERATOR, GraphOperator, GraphPlan, NodeSpec, SourceSpec
    from flinkwin.operator.runtime_context import TaskInfo

    late = OutputTag("left-late")
    node = NodeSpec(
        name="Interval Join", kind=OPERATOR,
        inputs=((("source", 0), 0), (("source", 1), 1)),
        build=lambda info: join(0, 2, left_late=late, task_info=info),
    )
    source = SourceSpec(columns=("k", "v"), names=("k", "v"), stage_watermark=True)
    plan = GraphPlan(sources=(source, source), nodes=(node,), main=("node", 0),
                     sides={late: ("side", 0, late)})
    graph = GraphOperator(plan, TaskInfo(task_name="graph"))
    graph.process_element(("k", "l1"), 1, 0)
    graph.process_element(("k", "r2"), 2, 1)
    graph.advance_watermark(2)
    graph.process_element(("k", "l0"), 0, 0)  # late
    restored = GraphOperator(plan, TaskInfo(task_name="graph"))
    restored.restore(graph.snapshot())
    restored.process_element(("k", "r3"), 3, 1)  # l1 is still buffered until the watermark is 3
    assert graph.drain_output() == [((("k", "l1"), ("k", "r2")), 2)]
    assert graph.drain_side_outputs() == {late: [(("k", "l0"), 0)]}
    assert restored.drain_output() == [((("k", "l1"), ("k", "r3")), 3)]
    restored.advance_watermark(3)  # the cleanup timers of l1 (1 + 2) and r3 (3) fire
    assert restored.holds_nothing()
