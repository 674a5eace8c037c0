"""Keys compare as PyFlink compares them (flinkwin.keys), and a null key fails as in Flink.

- A key selector without a declared key type: PyFlink pickles its keys and compares the bytes,
  so ``1``, ``1.0`` and ``True`` are three keys (and stay three across a snapshot); numpy
  scalars count as the Python values they stand for. User code sees each key as returned.
- A declared key type (``Types.DOUBLE()``...) compares by that type's value: ``1`` and ``1.0``
  are one key. Column keys are typed by their column and compare by value.
- A null key (a key selector returning None, a null key column) fails with Flink's
  ``KeyGroupRangeAssignment`` message "Assigned key must not be null!" in every keyed operator,
  naming the operator and the element; a tuple key holding a None is a key.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import enum
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from flinkwin import ProcessJoinFunction, Time, TumblingEventTimeWindows, Types
from flinkwin.datastream.cogrouped_streams import CoGroupedStreams
from flinkwin.datastream.joined_streams import JoinedStreams
from flinkwin.datastream.keyed_reduce import RollingReduce
from flinkwin.errors import KeyTypeError, NullKeyError, UserFunctionError
from flinkwin.functions import CoGroupFunction, JoinFunction
from flinkwin.functions.base import ProcessWindowFunction
from flinkwin.functions.process import KeyedProcessFunction
from flinkwin.keys import NULL_KEY_MESSAGE, PickledKey, pickled_key
from flinkwin.operator import WindowOperator
from flinkwin.operator.cogroup import TaggedUnion, build_operator
from flinkwin.operator.graph import OPERATOR, GraphOperator, GraphPlan, NodeSpec, SourceSpec
from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.record import Row
from flinkwin.time import MAX_LONG

MIXED = [(1, 1), (1.0, 2), (True, 4), (1, 8), (1.0, 16), (True, 32)]


def first(t: Any) -> Any:
    return t[0]


def window(key_type: Any = None, key: Any = first) -> WindowOperator:
    return WindowOperator(
        TumblingEventTimeWindows.of(Time.milliseconds(10)),
        lambda a, b: (a[0], a[1] + b[1]),
        key_selector=key,
        key_type=key_type,
    )


def fired(op: Any) -> list[Any]:
    op.advance_watermark(MAX_LONG)
    return [value for value, _ in op.drain_output()]


def by_type(values: list[Any]) -> list[tuple[str, Any]]:
    return sorted((type(v[0]).__name__, v) for v in values)


# ------------------------------------------------------------------- key identity
def test_one_one_point_oh_and_true_are_three_keys_in_a_window() -> None:
    op = window()
    for value in MIXED:
        op.process_element(value, 1)
    assert by_type(fired(op)) == [
        ("bool", (True, 36)), ("float", (1.0, 18)), ("int", (1, 9))
    ]


def test_three_keys_stay_three_across_a_window_snapshot() -> None:
    op = window()
    for value in MIXED[:3]:
        op.process_element(value, 1)
    restored = window()
    restored.restore(op.snapshot())
    for value in MIXED[3:]:
        restored.process_element(value, 1)
    assert by_type(fired(restored)) == [
        ("bool", (True, 36)), ("float", (1.0, 18)), ("int", (1, 9))
    ]


def test_a_declared_key_type_compares_keys_by_value() -> None:
    op = window(Types.DOUBLE())
    for value in MIXED[:2] + MIXED[3:5]:
        op.process_element(value, 1)
    assert fired(op) == [(1, 27)]


def test_a_declared_key_type_converts_keys_as_pyflink_does() -> None:
    op = WindowOperator(
        TumblingEventTimeWindows.of(Time.milliseconds(10)), KeysSeen(),
        key_selector=lambda v: (v[0], v[1]),
        key_type=Types.TUPLE([Types.STRING(), Types.DOUBLE()]),
    )
    for value in (("a", 1), ("a", 1.0)):
        op.process_element(value, 1)
    assert [(k, type(k[1])) for k in fired(op)] == [(("a", 1.0), float)]
    pickled = window(Types.PICKLED_BYTE_ARRAY())
    for value in MIXED[:3]:
        pickled.process_element(value, 1)
    assert len(fired(pickled)) == 3


def test_column_keys_compare_by_value() -> None:
    op = window(key="k")
    for k, v in ((1, 1), (1.0, 2)):
        op.process_element({"k": k, "v": v}, 1)
    assert [v[1] for v in fired(op)] == [3]


class KeysSeen(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Iterator[Any]:
        yield key


def test_the_window_function_sees_each_key_as_the_selector_returned_it() -> None:
    op = WindowOperator(
        TumblingEventTimeWindows.of(Time.milliseconds(10)), KeysSeen(), key_selector=first
    )
    for value in MIXED[:3]:
        op.process_element(value, 1)
    keys = fired(op)
    assert sorted(type(k).__name__ for k in keys) == ["bool", "float", "int"]
    assert not any(isinstance(k, PickledKey) for k in keys)


def test_a_failing_function_names_the_key_as_the_selector_returned_it() -> None:
    op = KeyedProcessOperator(RollingReduce(lambda a, b: 1 / 0, False), first)
    op.process_element(MIXED[1], 1)
    with pytest.raises(UserFunctionError, match=r"failed on key 1\.0:") as failure:
        op.process_element(MIXED[4], 1)
    assert type(failure.value.key) is float


def test_numpy_scalars_are_the_keys_of_the_python_values_they_stand_for() -> None:
    assert pickled_key(np.int64(1)) == pickled_key(1)
    assert pickled_key(np.float64(1.0)) == pickled_key(1.0)
    assert pickled_key(np.bool_(True)) == pickled_key(True)
    assert pickled_key(np.str_("a")) == "a"
    assert pickled_key((np.int64(1), "a")) == pickled_key((1, "a"))
    op = window()
    for value in ((np.int64(1), 1), (1, 2)):
        op.process_element(value, 1)
    assert [v[1] for v in fired(op)] == [3]


def test_keys_of_other_types_are_told_apart_as_their_pickled_bytes() -> None:
    assert pickled_key(decimal.Decimal("1.0")) != pickled_key(decimal.Decimal("1.00"))
    assert pickled_key(decimal.Decimal("1")) != pickled_key(1)
    assert pickled_key(float("nan")) == pickled_key(float("nan"))
    assert pickled_key(-0.0) != pickled_key(0.0)
    assert pickled_key(("a", 1)) != pickled_key(("a", 1.0))
    assert pickled_key([1]) != pickled_key([True])
    assert pickled_key({"a": 1}) != pickled_key({"a": 1.0})
    # a user's tuple is never the tag flinkwin gives a typed value
    assert pickled_key((("decimal", "1.0"), 2)) != pickled_key((decimal.Decimal("1.0"), 2))
    # strings, and tuples of them, need no tag: they are their own keys
    assert pickled_key("a") == "a" and pickled_key(("a", "b")) == ("a", "b")


class Color(enum.IntEnum):
    RED = 1


def test_a_subclass_or_a_zoned_time_keys_apart_as_its_pickled_bytes() -> None:
    # PyFlink pickles such keys with their type, zone or fold: equal by ==, yet other keys
    utc, plus_one = datetime.timezone.utc, datetime.timezone(datetime.timedelta(hours=1))
    apart = [
        ((1, 2), Row(1, 2)), (("a", "b"), Row(x="a", y="b")),
        (Row(x="a", y="b"), Row(y="b", x="a")), (Color.RED, 1),
        (datetime.datetime(2024, 1, 1, 12, tzinfo=utc),
         datetime.datetime(2024, 1, 1, 13, tzinfo=plus_one)),
        (datetime.datetime(2024, 1, 1, 1), datetime.datetime(2024, 1, 1, 1, fold=1)),
    ]
    for a, b in apart:
        assert a == b and pickled_key(a) != pickled_key(b), (a, b)
        assert pickled_key(a) == pickled_key(copy.deepcopy(a))
    assert pickled_key(Row(x="a", y="b")) == pickled_key(Row(x="a", y="b"))
    assert pickled_key(datetime.datetime(2024, 1, 1, 12, tzinfo=utc)) == pickled_key(
        datetime.datetime(2024, 1, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(0))))


class CurrentKey(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        yield ctx.get_current_key(), value[1]


def keyed_process_graph(key_type: Any = None) -> GraphPlan:
    def build(info: TaskInfo) -> KeyedProcessOperator:
        return KeyedProcessOperator(RollingSum(), first, task_info=info, key_type=key_type)

    nodes = (NodeSpec("process", OPERATOR, ((("source", 0), 0),), build=build),)
    source = SourceSpec(("_fw_i0_0", "_fw_i0_1"), ("k", "v"), tuple_elements=True)
    return GraphPlan((source,), nodes, ("node", 0))


class RollingSum(KeyedProcessFunction):
    """The key's running sum, with the key as ``ctx.get_current_key()`` gives it."""

    def open(self, runtime_context: Any) -> None:
        from flinkwin.datastream.state import ValueStateDescriptor

        self.sum = runtime_context.get_state(ValueStateDescriptor("sum", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        total = (self.sum.value() or 0) + value[1]
        self.sum.update(total)
        yield ctx.get_current_key(), total


def test_one_one_point_oh_and_true_are_three_keys_in_a_graph_stage() -> None:
    info = TaskInfo("Graph", 0, 1, 1)
    graph = GraphOperator(keyed_process_graph(), info)
    for value in MIXED[:3]:
        graph.process_element(value, 1, 0)
    restored = GraphOperator(keyed_process_graph(), info)
    restored.restore(graph.snapshot())
    for value in MIXED[3:]:
        restored.process_element(value, 1, 0)
    out = [v for v, _ in restored.drain_output()]
    assert [(type(k).__name__, k, total) for k, total in out] == [
        ("int", 1, 9), ("float", 1.0, 18), ("bool", True, 36)
    ]


def test_a_declared_key_type_makes_one_key_in_a_graph_stage() -> None:
    graph = GraphOperator(keyed_process_graph(Types.DOUBLE()), TaskInfo("Graph", 0, 1, 1))
    for value in MIXED[:2]:
        graph.process_element(value, 1, 0)
    assert [total for (_, total), _ in graph.drain_output()] == [1, 3]


def test_a_key_its_declared_type_cannot_hold_fails_in_a_graph_stage() -> None:
    graph = GraphOperator(keyed_process_graph(Types.INT()), TaskInfo("Graph", 0, 1, 1))
    with pytest.raises(KeyTypeError, match=r"^Graph: the key selector returned True for "
                       r"element \(True, 4\), which does not match key_type Types.INT\(\)"):
        graph.process_element(MIXED[2], 1, 0)


def test_a_rolling_reduce_keeps_one_one_point_oh_and_true_apart() -> None:
    op = KeyedProcessOperator(RollingReduce(lambda a, b: (a[0], a[1] + b[1]), False), first)
    for value in MIXED:
        op.process_element(value, 1)
    assert [v for v, _ in op.drain_output()][3:] == [(1, 9), (1.0, 18), (True, 36)]


class Pairs(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterator[Any]:
        yield left, right


def interval_join(key_type: Any = None, left: Any = first) -> IntervalJoinOperator:
    return IntervalJoinOperator(
        -1, 1, True, True, None, None, Pairs(), left, first, key_type=key_type
    )


def test_an_interval_join_pairs_keys_of_one_type_only() -> None:
    op = interval_join()
    op.process_element((1, "l"), 1, 0)
    for key in (1.0, True, 1):
        op.process_element((key, "r"), 1, 1)
    assert [v for v, _ in op.drain_output()] == [((1, "l"), (1, "r"))]
    typed = interval_join(Types.DOUBLE())
    typed.process_element((1, "l"), 1, 0)
    typed.process_element((1.0, "r"), 1, 1)
    assert [v for v, _ in typed.drain_output()] == [((1, "l"), (1.0, "r"))]


class Concat(JoinFunction):
    def join(self, first: Any, second: Any) -> Any:
        return first, second


class FakeStream:
    def get_type(self) -> Any:
        return None

    def _window_join(self, spec: Any) -> Any:
        return spec


def window_join(key_type: Any = None) -> WindowOperator:
    spec = (
        JoinedStreams(FakeStream(), FakeStream())
        .where(first, key_type)
        .equal_to(first)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .apply(Concat())
    )
    return build_operator(spec)


def test_a_window_join_pairs_keys_of_one_type_only() -> None:
    op = window_join()
    op.process_element(TaggedUnion.one((1, "l")), 1)
    for key in (1.0, True, 1):
        op.process_element(TaggedUnion.two((key, "r")), 1)
    assert fired(op) == [((1, "l"), (1, "r"))]
    typed = window_join(Types.DOUBLE())
    typed.process_element(TaggedUnion.one((1, "l")), 1)
    typed.process_element(TaggedUnion.two((1.0, "r")), 1)
    assert fired(typed) == [((1, "l"), (1.0, "r"))]


# ---------------------------------------------------------------------- null keys
def null_key(where: str) -> Any:
    """Fails with Flink's message, naming ``where`` (a pattern) and the element."""
    return pytest.raises(
        NullKeyError, match=rf"^{where}: null key for element .*{re.escape(NULL_KEY_MESSAGE)}"
    )


def test_a_null_key_fails_with_flinks_message_in_a_window() -> None:
    op = WindowOperator(
        TumblingEventTimeWindows.of(Time.milliseconds(10)), lambda a, b: a,
        key_selector=first, task_info=TaskInfo("Window(reduce)"),
    )
    with null_key(r"Window\(reduce\)") as failure:
        op.process_element((None, 1), 1)
    assert "(None, 1)" in str(failure.value)
    assert op.state_size() == (0, 0)


def test_a_null_key_fails_with_flinks_message_in_a_keyed_process_function() -> None:
    op = KeyedProcessOperator(CurrentKey(), first, task_info=TaskInfo("KeyedProcess"))
    with null_key("KeyedProcess"):
        op.process_element((None, 1), 1)
    rolling = KeyedProcessOperator(RollingReduce(lambda a, b: a, False), lambda v: None)
    with null_key("KeyedProcess"):
        rolling.process_element(("a", 1), 1)


@pytest.mark.parametrize("side", [0, 1])
def test_a_null_key_fails_with_flinks_message_in_an_interval_join(side: int) -> None:
    op = interval_join()
    name = "left" if side == 0 else "right"
    with null_key(rf"Interval Join \({name} input\)"):
        op.process_element((None, "x"), 1, side)


class Lists(CoGroupFunction):
    def co_group(self, first: Any, second: Any) -> Any:
        return [(list(first), list(second))]


@pytest.mark.parametrize("tag", [TaggedUnion.one, TaggedUnion.two])
@pytest.mark.parametrize("kind", ["join", "cogroup"])
def test_a_null_key_fails_with_flinks_message_in_a_window_join_and_cogroup(
    kind: str, tag: Any
) -> None:
    streams = JoinedStreams if kind == "join" else CoGroupedStreams
    spec = (
        streams(FakeStream(), FakeStream())
        .where(first)
        .equal_to(lambda t: t[1])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .apply(Concat() if kind == "join" else Lists())
    )
    op = build_operator(spec, task_info=TaskInfo("Window Join"))
    element = (None, None)
    with null_key("Window Join") as failure:
        op.process_element(tag(element), 1)
    assert repr(tag(element)) in str(failure.value)


def test_a_null_key_fails_in_a_graph_stage_naming_its_operator() -> None:
    graph = GraphOperator(keyed_process_graph(), TaskInfo("Graph", 0, 1, 1))
    with null_key("Graph"):
        graph.process_element((None, 1), 1, 0)


def test_a_null_in_a_column_key_fails_and_a_tuple_key_holding_none_is_a_key() -> None:
    single = window(key="k")
    with null_key("Window"):
        single.process_element({"k": None, "v": 1}, 1)
    composite = window(key=["k", "j"])
    with null_key("Window"):
        composite.process_element({"k": "a", "j": None, "v": 1}, 1)
    selected = window(key=lambda v: (v[0], None))
    for value in (("a", 1), ("a", 2)):
        selected.process_element(value, 1)
    assert fired(selected) == [("a", 3)]


# ------------------------------------------- snapshots written before keys were typed
def _untyped(op: Any) -> Any:
    """``op`` keying as flinkwin did before keys carried their type (by value): its snapshot
    holds plain numbers as keys, as an earlier flinkwin's checkpoint does."""
    op.keys_by_value = True
    return op


def test_a_window_snapshot_with_untyped_keys_is_found_again() -> None:
    old = _untyped(window())
    old.process_element((1, 1), 1)
    restored = window()
    restored.restore(old.snapshot())
    restored.process_element((1, 2), 2)
    assert fired(restored) == [(1, 3)]  # one window, not a second one beside the restored


def test_a_keyed_process_snapshot_with_untyped_keys_is_found_again() -> None:
    old = _untyped(KeyedProcessOperator(RollingSum(), first))
    old.process_element((7, 1), 1)
    old.drain_output()
    restored = KeyedProcessOperator(RollingSum(), first)
    restored.restore(old.snapshot())
    restored.process_element((7, 2), 2)
    assert [v for v, _ in restored.drain_output()] == [(7, 3)]


def test_an_interval_join_snapshot_with_untyped_keys_is_found_again() -> None:
    old = _untyped(interval_join())
    old.process_element((1, "l"), 1, 0)
    restored = interval_join()
    restored.restore(old.snapshot())
    restored.process_element((1, "r"), 1, 1)
    assert [v for v, _ in restored.drain_output()] == [((1, "l"), (1, "r"))]
