"""Window join and co-group on the window operator (``flinkwin.operator.cogroup``) and their
builders (``JoinedStreams``/``CoGroupedStreams``): merging, triggers, evictors, lateness, late
side output, keys, function lifecycle and validation."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from flinkwin import (
    CountTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    KeySelector,
    OutputTag,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Types,
    ValueStateDescriptor,
)
from flinkwin.datastream.cogrouped_streams import CoGroupedStreams
from flinkwin.datastream.joined_streams import JoinedStreams
from flinkwin.errors import UnsupportedOperationError, UserFunctionError
from flinkwin.evictors import CountEvictor, Evictor
from flinkwin.functions import CoGroupFunction, FlatJoinFunction, JoinFunction
from flinkwin.operator import WindowOperator
from flinkwin.operator.cogroup import (
    CoGroupWindowFunction,
    TaggedUnion,
    UnionKeySelector,
    WindowJoinSpec,
    build_operator,
)
from flinkwin.triggers import Trigger, TriggerResult
from flinkwin.windows import GlobalWindow, TimeWindow


class FakeStream:
    """Stands in for a DataStream: a schema for column keys (read without running the
    stream), a declared type, and ``_window_join`` handing the finished spec back."""

    def __init__(self, schema: StructType | None = None, type_info: Any = None) -> None:
        self._columns = schema
        self._type_info = type_info

    def _schema(self) -> StructType:
        assert self._columns is not None, "column keys read the schema"
        return self._columns

    def get_type(self) -> Any:
        return self._type_info

    def _window_join(self, spec: WindowJoinSpec) -> WindowJoinSpec:
        return spec


def key0(t: Any) -> Any:
    return t[0]


def cogroup_lists(first: list[Any], second: list[Any]) -> list[Any]:
    return [(list(first), list(second))]


def cogroup(assigner: Any = None, **options: Any) -> Any:
    builder = (
        CoGroupedStreams(FakeStream(), FakeStream())
        .where(key0)
        .equal_to(key0)
        .window(assigner or TumblingEventTimeWindows.of(Time.milliseconds(10)))
    )
    for name, value in options.items():
        builder = getattr(builder, name)(value)
    return builder


def one(t: Any) -> TaggedUnion:
    return TaggedUnion.one(t)


def two(t: Any) -> TaggedUnion:
    return TaggedUnion.two(t)


# --------------------------------------------------------------------- TaggedUnion


def test_tagged_union_sides_equality_and_repr() -> None:
    a = TaggedUnion.one(("k", 1))
    assert a.is_one() and not a.is_two() and a.isOne()
    assert a.get_one() == ("k", 1) and a.get_two() is None and a.getOne() == ("k", 1)
    b = TaggedUnion.two(("k", 1))
    assert b.is_two() and b.get_two() == ("k", 1) and b.get_one() is None
    assert a == TaggedUnion.one(("k", 1)) and a != b
    assert hash(a) == hash(TaggedUnion.one(("k", 1)))
    assert repr(a) == "TaggedUnion.one(('k', 1))"
    assert repr(b) == "TaggedUnion.two(('k', 1))"
    none_two = TaggedUnion.two(None)
    assert none_two.is_two() and not none_two.is_one()


def test_union_key_selector_picks_each_inputs_key() -> None:
    selector = UnionKeySelector(key0, lambda t: t[1])
    assert selector.get_key(one(("a", "b"))) == "a"
    assert selector.get_key(two(("a", "b"))) == "b"
    with pytest.raises(TypeError, match="TaggedUnion"):
        selector.get_key(("a", "b"))


# ------------------------------------------------------------------- key equality


def test_keys_of_both_inputs_meet_by_java_equality() -> None:
    """NaN keys meet (Double.equals), 0.0 and -0.0 do not."""
    spec = cogroup().apply(cogroup_lists)
    op = build_operator(spec)
    nan = float("nan")
    op.process_element(one((nan, "l")), 1)
    op.process_element(two((float("nan"), "r")), 2)
    op.process_element(one((0.0, "l")), 3)
    op.process_element(two((-0.0, "r")), 4)
    op.advance_watermark(9)
    outputs = [v for v, _ in op.drain_output()]
    assert len(outputs) == 3
    assert outputs[0][0][0][1] == "l" and outputs[0][1][0][1] == "r"  # the NaNs together
    assert ([(0.0, "l")], []) in outputs and ([], [(-0.0, "r")]) in outputs


def test_field_name_keys_on_rows() -> None:
    first = FakeStream(schema(user=StringType(), v=LongType()))
    second = FakeStream(schema(name=StringType()))
    spec = (
        JoinedStreams(first, second).where("user").equal_to("name")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .apply(lambda a, b: (a["user"], a["v"], b["name"]))
    )
    op = build_operator(spec)
    op.process_element(one({"user": "u1", "v": 1}), 1)
    op.process_element(two({"name": "u1"}), 2)
    op.process_element(two({"name": "u2"}), 3)
    op.advance_watermark(9)
    assert op.drain_output() == [(("u1", 1, "u1"), 9)]


def test_field_name_key_of_an_atomic_stream_is_the_element() -> None:
    strings = FakeStream(schema(value=StringType()), Types.STRING())
    spec = (
        JoinedStreams(strings, strings).where("value").equal_to("value")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .apply(lambda a, b: a + b)
    )
    op = build_operator(spec)
    op.process_element(one("a1"), 1)
    op.process_element(two("a1"), 1)
    op.process_element(two("a2"), 1)
    op.advance_watermark(9)
    assert op.drain_output() == [("a1a1", 9)]


# ------------------------------------------------------------------- join kinds


def test_flat_join_emits_every_output_of_every_pair() -> None:
    class Expand(FlatJoinFunction):
        def join(self, first: Any, second: Any) -> Any:
            for i in range(second[1]):
                yield (first[1], i)

    spec = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))).apply(Expand())
    )
    assert spec.kind == "flat_join"
    op = build_operator(spec)
    for element in (one(("k", "x")), one(("k", "y")), two(("k", 2)), two(("k", 0))):
        op.process_element(element, 5)
    op.advance_watermark(9)
    assert [v for v, _ in op.drain_output()] == [("x", 0), ("x", 1), ("y", 0), ("y", 1)]


def test_generator_callable_is_a_flat_join_and_plain_callable_a_join() -> None:
    def pairs(a: Any, b: Any) -> Any:
        yield a[1]
        yield b[1]

    window = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
    )
    assert window.apply(pairs).kind == "flat_join"
    assert window.apply(lambda a, b: [a, b]).kind == "join"
    op = build_operator(window.apply(lambda a, b: [a[1], b[1]]))
    op.process_element(one(("k", 1)), 1)
    op.process_element(two(("k", 2)), 1)
    op.advance_watermark(9)
    assert op.drain_output() == [([1, 2], 9)]  # one value per pair: the list itself


def test_join_function_that_yields_is_refused() -> None:
    class Yields(JoinFunction):
        def join(self, first: Any, second: Any) -> Any:
            yield first

    window = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
    )
    with pytest.raises(TypeError, match="FlatJoinFunction"):
        window.apply(Yields())


def test_co_group_with_java_method_name_and_one_sided_windows() -> None:
    class Counts(CoGroupFunction):
        def coGroup(self, first: Any, second: Any) -> Any:  # noqa: N802
            yield (len(first), len(second))

    op = build_operator(cogroup().apply(Counts()))
    op.process_element(one(("a", 1)), 1)
    op.process_element(one(("a", 2)), 2)
    op.process_element(two(("b", 1)), 3)
    op.advance_watermark(9)
    assert op.drain_output() == [((2, 0), 9), ((0, 1), 9)]


def test_co_group_returning_no_iterable_fails_naming_the_function() -> None:
    class Bad(CoGroupFunction):
        def co_group(self, first: Any, second: Any) -> Any:
            return len(first)

    op = build_operator(cogroup().apply(Bad()))
    op.process_element(one(("a", 1)), 1)
    with pytest.raises(UserFunctionError, match=r"Bad\.co_group must return an iterable"):
        op.advance_watermark(9)


def test_join_errors_are_user_function_errors_with_key_and_window() -> None:
    def fails(a: Any, b: Any) -> Any:
        raise ZeroDivisionError("boom")

    spec = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))).apply(fails)
    )
    op = build_operator(spec)
    op.process_element(one(("k", 1)), 1)
    op.process_element(two(("k", 1)), 1)
    with pytest.raises(UserFunctionError, match="boom") as info:
        op.advance_watermark(9)
    assert "'k'" in str(info.value)


# ------------------------------------------------------ windows, triggers, evictors


def test_sessions_merge_across_both_inputs() -> None:
    """Elements of the two inputs extend one session; an element of the first input bridges
    two sessions holding the second input's elements."""
    spec = cogroup(EventTimeSessionWindows.withGap(Time.milliseconds(3))).apply(cogroup_lists)
    op = build_operator(spec)
    op.process_element(two(("k", "r0")), 0)     # session [0, 3)
    op.process_element(two(("k", "r6")), 6)     # session [6, 9)
    op.process_element(one(("k", "l3")), 3)     # [3, 6) bridges both: [0, 9)
    op.process_element(one(("j", "other")), 4)  # another key
    op.advance_watermark(7)
    assert op.drain_output() == [(([("j", "other")], []), 6)]  # k's session is [0, 9) now
    op.advance_watermark(8)
    [((first, second), timestamp)] = op.drain_output()
    assert (first, timestamp) == ([("k", "l3")], 8)
    # the merged windows' elements follow Flink's merge of list state (the surviving state
    # window's first), not arrival order
    assert sorted(second) == [("k", "r0"), ("k", "r6")]


def test_sessions_merged_window_fires_once_with_all_elements() -> None:
    spec = cogroup(EventTimeSessionWindows.withGap(Time.milliseconds(3))).apply(cogroup_lists)
    op = build_operator(spec)
    op.process_element(one(("k", 1)), 1)
    op.process_element(two(("k", 2)), 2)
    op.process_element(one(("k", 4)), 4)
    op.process_element(two(("k", 20)), 20)
    op.advance_watermark(100)
    assert op.drain_output() == [
        (([("k", 1), ("k", 4)], [("k", 2)]), 6),
        (([], [("k", 20)]), 22),
    ]


class RecordingCountTrigger(Trigger):
    """Fires every second element of a window (no purge) and records what it saw."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.count: dict[Any, int] = {}

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        self.seen.append(element)
        n = self.count.get(window, 0) + 1
        self.count[window] = n
        return TriggerResult.FIRE if n % 2 == 0 else TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE


def test_trigger_sees_tagged_elements_of_both_inputs() -> None:
    trigger = RecordingCountTrigger()
    spec = cogroup(GlobalWindows.create(), trigger=trigger).apply(cogroup_lists)
    assert spec.trigger is trigger
    op = build_operator(spec)
    assert op.trigger is trigger
    op.process_element(one(("k", 1)), 1)
    op.process_element(two(("k", 2)), 2)
    op.process_element(two(("k", 3)), 3)
    op.process_element(one(("k", 4)), 4)
    assert trigger.seen == [one(("k", 1)), two(("k", 2)), two(("k", 3)), one(("k", 4))]
    assert op.drain_output() == [
        (([("k", 1)], [("k", 2)]), GlobalWindow.get().max_timestamp()),
        (([("k", 1), ("k", 4)], [("k", 2), ("k", 3)]), GlobalWindow.get().max_timestamp()),
    ]


def test_count_trigger_counts_elements_of_both_inputs() -> None:
    spec = cogroup(GlobalWindows.create(), trigger=CountTrigger.of(3)).apply(cogroup_lists)
    op = build_operator(spec)
    op.process_element(one(("k", 1)), 1)
    op.process_element(two(("k", 2)), 2)
    assert op.drain_output() == []
    op.process_element(two(("k", 3)), 3)
    assert [v for v, _ in op.drain_output()] == [([("k", 1)], [("k", 2), ("k", 3)])]


class DropSecondInput(Evictor):
    """Evicts the second input's elements before the function (sees ``TaggedUnion``s)."""

    def evict_before(self, elements: list[Any], size: int, window: Any, ctx: Any) -> None:
        elements[:] = [e for e in elements if e.value.is_one()]

    def evict_after(self, elements: list[Any], size: int, window: Any, ctx: Any) -> None:
        return None


def test_evictor_sees_tagged_elements() -> None:
    evictor = DropSecondInput()
    spec = cogroup(evictor=evictor).apply(cogroup_lists)
    assert spec.evictor is evictor
    op = build_operator(spec)
    op.process_element(one(("k", 1)), 1)
    op.process_element(two(("k", 2)), 2)
    op.advance_watermark(9)
    assert op.drain_output() == [(([("k", 1)], []), 9)]


def test_count_evictor_keeps_the_last_elements_of_either_input() -> None:
    spec = cogroup(evictor=CountEvictor.of(2)).apply(cogroup_lists)
    op = build_operator(spec)
    for element, ts in ((one(("k", 1)), 1), (two(("k", 2)), 2), (one(("k", 3)), 3)):
        op.process_element(element, ts)
    op.advance_watermark(9)
    assert op.drain_output() == [(([("k", 3)], [("k", 2)]), 9)]


# ------------------------------------------------------- lateness and side output


def test_late_element_within_allowed_lateness_fires_the_join_again() -> None:
    spec = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
        .allowed_lateness(Time.milliseconds(5))
        .apply(lambda a, b: (a[1], b[1]))
    )
    op = build_operator(spec)
    op.process_element(one(("k", "l0")), 0)
    op.process_element(two(("k", "r1")), 1)
    op.advance_watermark(2)
    assert op.drain_output() == [(("l0", "r1"), 2)]
    op.process_element(two(("k", "r2")), 2)  # late, within the lateness: fires again
    assert op.drain_output() == [(("l0", "r1"), 2), (("l0", "r2"), 2)]
    op.process_element(one(("k", "l1")), 1)  # late, left side: fires again with all pairs
    assert op.drain_output() == [
        (("l0", "r1"), 2), (("l0", "r2"), 2), (("l1", "r1"), 2), (("l1", "r2"), 2),
    ]
    op.advance_watermark(7)  # cleanup at max_timestamp 2 + lateness 5
    assert op.drain_output() == [] and op.holds_nothing()
    op.process_element(one(("k", "too late")), 2)
    assert op.drain_output() == [] and op.num_late_records_dropped == 1


def test_late_data_of_both_inputs_goes_to_the_side_output_as_tagged_unions() -> None:
    late = OutputTag("late")
    spec = cogroup(side_output_late_data=late).apply(cogroup_lists)
    assert spec.late_tag is late
    op = build_operator(spec)
    op.process_element(one(("k", 1)), 1)
    op.advance_watermark(9)
    assert op.drain_output() == [(([("k", 1)], []), 9)]
    op.process_element(one(("k", 2)), 2)
    op.process_element(two(("j", 3)), 3)
    op.process_element(two(("j", 12)), 12)  # not late
    assert op.drain_side_output(late) == [(one(("k", 2)), 2), (two(("j", 3)), 3)]
    assert op.num_late_records_dropped == 0
    op.advance_watermark(19)
    assert op.drain_output() == [(([], [("j", 12)]), 19)]


def test_late_data_without_side_output_is_dropped_and_counted() -> None:
    op = build_operator(cogroup().apply(cogroup_lists))
    op.advance_watermark(9)
    op.process_element(one(("k", 2)), 2)
    op.process_element(two(("k", 3)), 3)
    assert op.num_late_records_dropped == 2 and op.drain_output() == []


# ---------------------------------------------------------- state and lifecycle


class CountingJoin(JoinFunction):
    """Counts its opens/closes and, in keyed state, the pairs joined per key."""

    def __init__(self) -> None:
        self.opened = 0
        self.closed = 0

    def open(self, runtime_context: Any) -> None:
        self.opened += 1
        self.pairs = runtime_context.get_state(ValueStateDescriptor("pairs", Types.LONG()))

    def close(self) -> None:
        self.closed += 1

    def join(self, first: Any, second: Any) -> Any:
        n = (self.pairs.value() or 0) + 1
        self.pairs.update(n)
        assert self.get_runtime_context() is not None
        return (first[0], n)


class OpenedKeySelector(KeySelector):
    def __init__(self) -> None:
        self.opened = 0
        self.closed = 0

    def open(self, runtime_context: Any) -> None:
        self.opened += 1

    def close(self) -> None:
        self.closed += 1

    def get_key(self, value: Any) -> Any:
        return value[0]


def test_join_function_and_key_selectors_are_opened_once_and_keyed_state_is_per_key() -> None:
    join = CountingJoin()
    selector = OpenedKeySelector()
    spec = (
        JoinedStreams(FakeStream(), FakeStream()).where(selector).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))).apply(join)
    )
    op = build_operator(spec)
    for key in ("a", "b"):
        op.process_element(one((key, 1)), 1)
        op.process_element(two((key, 1)), 1)
        op.process_element(two((key, 2)), 1)
    op.process_element(one(("a", 3)), 11)
    op.process_element(two(("a", 3)), 11)
    op.advance_watermark(100)
    assert [v for v, _ in op.drain_output()] == [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("a", 3)]
    assert join.opened == 1 and selector.opened == 1
    op.close()
    assert join.closed == 1 and selector.closed == 1


def test_snapshot_and_restore_mid_window_keep_both_inputs() -> None:
    spec = cogroup(allowed_lateness=Time.milliseconds(5)).apply(cogroup_lists)
    op = build_operator(spec)
    op.process_element(one(("k", 1)), 1)
    op.process_element(two(("k", 2)), 2)
    snapshot = op.snapshot()
    restored = build_operator(spec)
    restored.restore(snapshot)
    restored.process_element(two(("k", 3)), 3)
    restored.advance_watermark(9)
    assert restored.drain_output() == [(([("k", 1)], [("k", 2), ("k", 3)]), 9)]


def test_window_function_describes_the_user_function() -> None:
    spec = cogroup().apply(cogroup_lists)
    assert isinstance(spec.window_function, CoGroupWindowFunction)
    assert spec.function is cogroup_lists and spec.kind == "cogroup"
    assert repr(spec.window_function) == "CoGroupWindowFunction(cogroup=cogroup_lists)"
    window = TimeWindow(0, 10)
    assert list(spec.window_function.apply("k", window, [two(("k", 1)), one(("k", 2))])) == [
        ([("k", 2)], [("k", 1)])
    ]


# ------------------------------------------------------------------- the builders


def test_builders_are_immutable() -> None:
    window = cogroup()
    with_trigger = window.trigger(EventTimeTrigger.create())
    assert window.apply(cogroup_lists).trigger is None
    assert isinstance(with_trigger.apply(cogroup_lists).trigger, EventTimeTrigger)
    assert window.allowed_lateness(7).allowed_lateness_ms == 7
    assert window.allowed_lateness_ms == 0


def test_spec_carries_everything_given() -> None:
    late = OutputTag("late")
    evictor = CountEvictor.of(3)
    trigger = CountTrigger.of(2)
    assigner = TumblingEventTimeWindows.of(Time.milliseconds(10))
    first, second = FakeStream(), FakeStream()
    function = lambda a, b: (a, b)  # noqa: E731
    spec = (
        JoinedStreams(first, second).where(key0, Types.STRING()).equal_to(key0)
        .window(assigner).trigger(trigger).evictor(evictor).allowedLateness(4)
        .sideOutputLateData(late).apply(function, output_schema="a string")
    )
    assert (spec.first, spec.second, spec.first_key, spec.second_key) == (
        first, second, key0, key0
    )
    assert (spec.assigner, spec.trigger, spec.evictor) == (assigner, trigger, evictor)
    assert (spec.allowed_lateness_ms, spec.late_tag, spec.kind) == (4, late, "join")
    assert spec.function is function and spec.window_function.user_function is function
    assert (spec.output_schema, spec.output_type, spec.key_type) == (
        "a string", None, Types.STRING()
    )
    op = build_operator(spec)
    assert (op.trigger, op.evictor, op.late_output_tag, op.allowed_lateness) == (
        trigger, evictor, late, 4
    )


def schema(**columns: Any) -> StructType:
    return StructType([StructField(name, dtype) for name, dtype in columns.items()])


def test_column_keys_of_different_types_are_refused_with_flinks_message() -> None:
    first = FakeStream(schema(k=StringType()))
    second = FakeStream(schema(k=LongType()))
    with pytest.raises(ValueError, match=(
        r"The keys for the two inputs are not equal: first key = string , second key = bigint"
    )):
        JoinedStreams(first, second).where("k").equal_to("k")
    JoinedStreams(first, first).where("k").equal_to("k")  # same types: fine


def test_multi_column_keys_compare_all_types() -> None:
    first = FakeStream(schema(a=StringType(), b=LongType()))
    second = FakeStream(schema(x=StringType(), y=StringType()))
    with pytest.raises(ValueError, match=r"first key = \(string, bigint\) , second key = "):
        CoGroupedStreams(first, second).where(["a", "b"]).equal_to(["x", "y"])
    CoGroupedStreams(first, first).where(["a", "b"]).equal_to(["a", "b"])


def test_declared_key_types_must_match() -> None:
    streams = JoinedStreams(FakeStream(), FakeStream())
    with pytest.raises(ValueError, match="The keys for the two inputs are not equal"):
        streams.where(key0, Types.STRING()).equal_to(key0, Types.LONG())
    streams.where(key0, Types.STRING()).equal_to(key0, Types.STRING())
    streams.where(key0, Types.STRING()).equal_to(key0)  # unknown: not compared


def test_declared_key_type_is_compared_with_a_column_key() -> None:
    first = FakeStream(schema(k=StringType()))
    with pytest.raises(ValueError, match="first key = string , second key = Types.LONG"):
        JoinedStreams(first, FakeStream()).where("k").equal_to(key0, Types.LONG())
    JoinedStreams(first, FakeStream()).where("k").equal_to(key0, Types.STRING())


def test_key_selector_validation() -> None:
    first = FakeStream(schema(k=StringType()))
    streams = JoinedStreams(first, first)
    with pytest.raises(ValueError, match=r"where\(\) column\(s\) \['nope'\] not in the first"):
        streams.where("nope")
    with pytest.raises(ValueError, match=r"equal_to\(\) column\(s\) \['x'\] not in the second"):
        streams.where("k").equal_to("x")
    with pytest.raises(TypeError, match="key_type is for a key selector"):
        streams.where("k", Types.STRING())
    with pytest.raises(TypeError, match="key_type must be PyFlink type information"):
        streams.where(key0, "string")
    with pytest.raises(TypeError, match="takes a column name"):
        streams.where(42)
    with pytest.raises(TypeError, match="key selector, got None"):
        streams.where(None)
    with pytest.raises(TypeError, match="two input streams"):
        JoinedStreams(first, None)


def test_window_options_validation() -> None:
    equal = CoGroupedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
    with pytest.raises(TypeError, match="window\\(\\) takes a WindowAssigner"):
        equal.window("tumbling")
    sessions = equal.window(EventTimeSessionWindows.with_gap(Time.milliseconds(3)))
    with pytest.raises(UnsupportedOperationError, match="merging"):
        sessions.trigger(RecordingCountTrigger())
    window = equal.window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
    with pytest.raises(ValueError, match="The allowed lateness cannot be negative."):
        window.allowed_lateness(-1)
    with pytest.raises(TypeError, match="takes a Trigger"):
        window.trigger(lambda: None)
    with pytest.raises(TypeError, match="takes an Evictor"):
        window.evictor(3)
    with pytest.raises(TypeError, match="OutputTag"):
        window.side_output_late_data("late")
    with pytest.raises(ValueError, match="output_schema or output_type, not both"):
        window.apply(cogroup_lists, output_schema="a string", output_type=Types.STRING())


def test_apply_refuses_the_other_operations_function() -> None:
    class Co(CoGroupFunction):
        def co_group(self, first: Any, second: Any) -> Any:
            return []

    class Join(JoinFunction):
        def join(self, first: Any, second: Any) -> Any:
            return first

    joined = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
    )
    with pytest.raises(TypeError, match="a CoGroupFunction \\(that goes to co_group"):
        joined.apply(Co())
    with pytest.raises(TypeError, match="takes a JoinFunction"):
        joined.apply(42)
    co = cogroup()
    with pytest.raises(TypeError, match="a join function \\(that goes to join"):
        co.apply(Join())
    with pytest.raises(TypeError, match="takes a CoGroupFunction"):
        co.apply(Join)  # a class, not an instance


def test_copied_and_pickled_window_functions_call_their_own_user_function() -> None:
    """The runtime gives each subtask its own copy of the functions (deepcopy, or pickling to
    the workers): a copy's joins run on the copy's user function, opened by the copy."""
    join = CountingJoin()
    spec = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))).apply(join)
    )
    for copied in (copy.deepcopy(spec.window_function),
                   pickle.loads(pickle.dumps(spec.window_function))):
        op = WindowOperator(
            spec.assigner, copied, key_selector=UnionKeySelector(key0, key0)
        )
        op.process_element(one(("a", 1)), 1)
        op.process_element(two(("a", 1)), 1)
        op.advance_watermark(9)
        assert op.drain_output() == [(("a", 1), 9)]
        own = copied.user_function
        assert own is not join and own.opened == 1 and copied.function.function is own
    assert join.opened == 0


def test_output_type_is_apply_second_argument_as_javas_result_type() -> None:
    window = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
    )
    spec = window.apply(lambda a, b: a, Types.STRING())
    assert (spec.output_type, spec.output_schema) == (Types.STRING(), None)
    spec = cogroup().apply(cogroup_lists, output_schema="a string")
    assert (spec.output_type, spec.output_schema) == (None, "a string")


def test_processing_time_windows_join_on_the_clock() -> None:
    spec = (
        JoinedStreams(FakeStream(), FakeStream()).where(key0).equal_to(key0)
        .window(TumblingProcessingTimeWindows.of(Time.milliseconds(10)))
        .apply(lambda a, b: (a[1], b[1]))
    )
    op = build_operator(spec)
    op.advance_processing_time(3)
    op.process_element(one(("k", "l")), None)
    op.process_element(two(("k", "r")), None)
    op.advance_processing_time(12)
    op.process_element(two(("k", "next window")), None)
    op.advance_processing_time(20)
    assert op.drain_output() == [(("l", "r"), 9)]
    assert op.holds_nothing()
