"""``KeyedStream.reduce``/``sum``/``min``/``max``/``min_by``/``max_by`` and the keyed
``map``/``flat_map``/``filter`` without a window: the ``KeyedProcessFunction``s PyFlink builds
them from, run through the keyed process
operator (Flink's ``StreamGroupedReduceOperator`` semantics in STREAMING mode, PyFlink's
end-of-input emission in BATCH mode)."""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin.common import Row, Types
from flinkwin.datastream.functions import MapFunction, ReduceFunction, RuntimeContext
from flinkwin.datastream.keyed_reduce import Accumulate, KeyedTransform, RollingReduce
from flinkwin.datastream.state import ValueStateDescriptor
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.time import MAX_LONG


def rolling(function: Any, elements: list[Any], batch: bool = False) -> list[Any]:
    op = KeyedProcessOperator(RollingReduce(function, batch), lambda x: x[0])
    op.open()
    for value in elements:
        op.process_element(value, None)
    op.advance_watermark(MAX_LONG)
    op.close()
    return [value for value, _ in op.drain_output()]


def test_streaming_reduce_emits_the_keys_running_value_per_element() -> None:
    elements = [("a", 1), ("b", 10), ("a", 2), ("a", 3), ("b", 20)]
    assert rolling(lambda x, y: (x[0], x[1] + y[1]), elements) == [
        ("a", 1), ("b", 10), ("a", 3), ("a", 6), ("b", 30)
    ]


def test_batch_reduce_emits_only_each_keys_final_value_at_the_end_of_input() -> None:
    elements = [("a", 1), ("b", 10), ("a", 2), ("a", 3), ("b", 20)]
    out = rolling(lambda x, y: (x[0], x[1] + y[1]), elements, batch=True)
    assert sorted(out) == [("a", 6), ("b", 30)]


def test_a_rich_reduce_function_is_opened_and_called_with_current_then_new() -> None:
    class Concat(ReduceFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            self.sep = "|"

        def reduce(self, value1: Any, value2: Any) -> Any:
            return value1[0], value1[1] + self.sep + value2[1]

    assert rolling(Concat(), [("k", "x"), ("k", "y"), ("k", "z")]) == [
        ("k", "x"), ("k", "x|y"), ("k", "x|y|z")
    ]


def test_reduce_refuses_what_is_neither_a_reduce_function_nor_callable() -> None:
    with pytest.raises(TypeError, match="ReduceFunction or a callable"):
        RollingReduce(42, False)


def test_sum_min_max_change_only_the_field_and_keep_the_first_elements_others() -> None:
    elements = [("a", 3, "x"), ("a", 1, "y"), ("a", 5, "z")]
    assert rolling(Accumulate(1, "sum"), elements) == [
        ("a", 3, "x"), ("a", 4, "x"), ("a", 9, "x")
    ]
    assert rolling(Accumulate(1, "min"), elements) == [
        ("a", 3, "x"), ("a", 1, "x"), ("a", 1, "x")
    ]
    assert rolling(Accumulate(1, "max"), elements) == [
        ("a", 3, "x"), ("a", 3, "x"), ("a", 5, "x")
    ]


def test_min_by_and_max_by_keep_the_whole_element_and_the_earlier_one_on_ties() -> None:
    elements = [("a", 3, "x"), ("a", 1, "y"), ("a", 1, "z"), ("a", 3, "w")]
    assert rolling(Accumulate(1, "min_by"), elements) == [
        ("a", 3, "x"), ("a", 1, "y"), ("a", 1, "y"), ("a", 1, "y")
    ]
    assert rolling(Accumulate(1, "max_by"), elements) == [
        ("a", 3, "x"), ("a", 3, "x"), ("a", 3, "x"), ("a", 3, "x")
    ]


def test_sum_of_a_named_row_field_builds_a_new_row_of_the_same_fields() -> None:
    rows = [Row(k="a", v=1), Row(k="a", v=2)]
    out = rolling(Accumulate("v", "sum"), rows)
    assert out == [Row(k="a", v=1), Row(k="a", v=3)]
    assert out[1].v == 3 and out[1].k == "a"


def test_sum_of_basic_values_and_a_field_other_than_0_on_them_is_pyflinks_error() -> None:
    assert Accumulate(0, "sum").reduce(2, 5) == 7
    assert Accumulate(0, "max_by").reduce("a", "b") == "b"
    with pytest.raises(TypeError, match="The 1 field selected on a basic type"):
        Accumulate(1, "sum").reduce(2, 5)
    with pytest.raises(TypeError, match="must be of int or str type"):
        Accumulate(1.5, "sum")  # type: ignore[arg-type]


def keyed(function: Any, elements: list[Any]) -> list[Any]:
    op = KeyedProcessOperator(function, lambda x: x[0])
    op.open()
    for value in elements:
        op.process_element(value, None)
    op.close()
    return [value for value, _ in op.drain_output()]


def test_keyed_map_flat_map_and_filter_run_per_element_in_arrival_order() -> None:
    elements = [("a", 1), ("b", 2), ("a", 3)]
    assert keyed(KeyedTransform(lambda v: v[1] * 10, "map"), elements) == [10, 20, 30]
    assert keyed(KeyedTransform(lambda v: [v[0]] * v[1], "flat_map"), elements[:2]) == [
        "a", "b", "b"
    ]
    assert keyed(KeyedTransform(lambda v: v[1] > 1, "filter"), elements) == [("b", 2), ("a", 3)]


def test_a_keyed_rich_map_function_sees_the_current_keys_state() -> None:
    class CountPerKey(MapFunction):
        def open(self, runtime_context: RuntimeContext) -> None:
            self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

        def map(self, value: Any) -> Any:
            n = (self.count.value() or 0) + 1
            self.count.update(n)
            return value[0], n

    out = keyed(KeyedTransform(CountPerKey(), "map"), [("a", 0), ("b", 0), ("a", 0)])
    assert out == [("a", 1), ("b", 1), ("a", 2)]
