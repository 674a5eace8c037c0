"""List and dict keys (PyFlink accepts them, comparing with Java's List/Map equals): one key
per equal value, still a list or dict to the user's functions."""

from __future__ import annotations

from typing import Any

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.functions.process import KeyedProcessFunction
from flinkwin.keys import flink_key
from flinkwin.operator import WindowOperator
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.time import MAX_LONG


class Keys(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield ctx.get_current_key()


def test_equal_list_keys_are_one_key_and_stay_lists() -> None:
    assert flink_key([1, [2.0]]) == flink_key([1, [2.0]])
    assert hash(flink_key([1, [2.0]])) == hash(flink_key([1, [2.0]]))
    assert flink_key([1, 2]) != flink_key([2, 1])
    op = KeyedProcessOperator(Keys(), lambda v: [v[0]])
    for value in (("a", 1), ("b", 2), ("a", 3)):
        op.process_element(value, 0)
    keys = [k for k, _ in op.drain_output()]
    assert keys == [["a"], ["b"], ["a"]]
    assert all(type(k) is not tuple and isinstance(k, list) for k in keys)


def test_a_window_keyed_by_a_dict_counts_per_equal_dict() -> None:
    op = WindowOperator(
        TumblingEventTimeWindows.of(Time.milliseconds(10)),
        lambda a, b: (a[0], a[1] + b[1]),
        key_selector=lambda v: {"user": v[0]},
    )
    for value in (("a", 1), ("b", 2), ("a", 3)):
        op.process_element(value, 1)
    op.advance_watermark(MAX_LONG)
    assert sorted(v for v, _ in op.drain_output()) == [("a", 4), ("b", 2)]
