"""Exact values in the core: state frames keep big integers, NaN and null apart through their
Arrow snapshots; float keys compare as Java's ``Double.equals`` on every path; built-in
aggregations compare as Java's ``compareTo`` (Flink's ``ComparableAggregator``)."""

from __future__ import annotations

import math
import pickle
from typing import Any

import numpy as np
import pandas as pd
import pytest

from flinkwin import CountEvictor, Time, TumblingEventTimeWindows
from flinkwin.functions.builtin import BuiltinAggregation, java_compare
from flinkwin.keys import JavaDouble, flink_key
from flinkwin.operator import WindowOperator
from flinkwin.operator.frames import from_arrow, read_frame, to_arrow, write_frame
from flinkwin.operator.states.columnar import ColumnarAggregation
from flinkwin.record import element_class

BIG = 2**62 + 1
NAN = float("nan")


def _repr(values: list[Any]) -> list[str]:
    return [repr(v) for v in values]


def test_state_frames_keep_big_integers_nan_and_null_apart_through_snapshots() -> None:
    frame = pd.DataFrame({
        "i": np.array([BIG, None, 3], dtype=object),
        "d": np.array([1.5, NAN, None], dtype=object),
        "f": np.array([NAN, -0.0, 2.0]),
        "b": np.array([True, None, False], dtype=object),
    })
    restored, meta = read_frame(write_frame(frame, "fmt", "m", {"x": 1}), "fmt", "m", "x")
    assert restored is not None and meta == {"x": 1}
    assert restored["i"].tolist() == [BIG, None, 3]
    assert _repr(restored["d"].tolist()) == ["1.5", "nan", "None"]
    assert _repr(restored["f"].tolist()) == ["nan", "-0.0", "2.0"]
    assert restored["b"].tolist() == [True, None, False]
    table = to_arrow(frame)
    assert table.column("d").null_count == 1 and table.column("f").null_count == 0
    assert _repr(from_arrow(table)["d"].tolist()) == ["1.5", "nan", "None"]


@pytest.mark.parametrize("values", [(1.0, NAN, 0.5), (NAN, 1.0, 0.5), (0.5, 1.0, NAN)])
def test_builtin_min_max_over_nan_follow_double_compare_to(values: tuple) -> None:
    klass = element_class(("k", "d", "n"), False)
    rows = [tuple.__new__(klass, ("a", v, i)) for i, v in enumerate(values)]

    def fold(kind: str) -> Any:
        agg = BuiltinAggregation(kind, "d")
        acc = rows[0]
        for r in rows[1:]:
            acc = agg.reduce(acc, r)
        return acc

    assert fold("min").d == 0.5 and fold("min").n == 0  # min/max keep the first element
    assert math.isnan(fold("max").d) and fold("max").n == 0
    assert fold("min_by").d == 0.5 and fold("min_by").n == values.index(0.5)
    assert math.isnan(fold("max_by").d)
    assert fold("max_by").n == next(i for i, v in enumerate(values) if v != v)
    assert math.isnan(fold("sum").d)


def test_java_compare_orders_signed_zeros_and_nan_like_double_compare_to() -> None:
    assert java_compare(-0.0, 0.0) == -1 and java_compare(0.0, -0.0) == 1
    assert java_compare(NAN, NAN) == 0 and java_compare(NAN, math.inf) == 1
    assert java_compare(-math.inf, NAN) == -1 and java_compare(2, 1) == 1
    assert java_compare("a", "b") == -1


def test_min_by_and_max_by_keep_the_first_element_on_ties() -> None:
    klass = element_class(("d", "n"), False)
    a, b = tuple.__new__(klass, (1.0, 0)), tuple.__new__(klass, (1.0, 1))
    assert BuiltinAggregation("min_by", "d").reduce(a, b).n == 0
    assert BuiltinAggregation("max_by", "d").reduce(a, b).n == 0


def test_float_keys_follow_double_equals() -> None:
    keys = {flink_key(NAN): 1, flink_key(0.0): 2, flink_key(-0.0): 3}
    assert len(keys) == 3
    assert keys[flink_key(-NAN)] == 1 and keys[flink_key(-0.0)] == 3 and keys[0.0] == 2
    restored = pickle.loads(pickle.dumps(flink_key(NAN)))
    assert type(restored) is JavaDouble and keys[restored] == 1
    assert flink_key(("a", NAN)) == ("a", NAN)
    assert repr(flink_key(-0.0)) == "-0.0" and flink_key("x") == "x"


def _frame(rows: list[tuple[float, int, int]]) -> tuple[pd.DataFrame, np.ndarray]:
    frame = pd.DataFrame({"k": [r[0] for r in rows], "ts": [r[1] for r in rows],
                          "v": np.array([r[2] for r in rows], dtype=np.int64)})
    return frame, frame["ts"].to_numpy(dtype=np.int64)


@pytest.mark.parametrize("path", ["vectorized", "evictor", "columnar"])
def test_nan_keys_are_one_window_across_batches_and_snapshots(path: str) -> None:
    def factory() -> WindowOperator:
        return WindowOperator(
            TumblingEventTimeWindows.of(Time.milliseconds(10)), BuiltinAggregation("sum", "v"),
            key_selector="k", evictor=CountEvictor.of(10) if path == "evictor" else None,
        )

    state: Any = ColumnarAggregation(factory(), factory) if path == "columnar" else factory()
    batches = [[(NAN, 1, 1), (0.0, 1, 4)], [(-NAN, 2, 2), (-0.0, 2, 8)], [(NAN, 3, 16)]]
    for rows in batches:
        state.process_batch(*_frame(rows))
        snapshot = state.snapshot()
        state = ColumnarAggregation(factory(), factory) if path == "columnar" else factory()
        state.restore(snapshot)
    state.advance_watermark(100)
    if path == "columnar":
        out = [tuple(r) for r in state.drain_main().itertuples(index=False)]
    else:
        out = [tuple(v) for v, _ in state.drain_output()]
    assert sorted((repr(k), v) for k, _, v in out) == [("-0.0", 8), ("0.0", 4), ("nan", 19)]


def test_a_float_field_sums_in_single_precision_like_java() -> None:
    klass = element_class(("k", "f"), False)
    rows = [tuple.__new__(klass, ("a", v)) for v in (16777216.0, 1.0, 1.0)]
    single = BuiltinAggregation("sum", "f").with_single_precision()
    acc = rows[0]
    for r in rows[1:]:
        acc = single.reduce(acc, r)
    assert acc.f == 16777216.0  # Java: 16777216f + 1f == 16777216f at every step
    assert BuiltinAggregation("sum", "f").reduce(rows[0], rows[1]).f == 16777217.0  # double


@pytest.mark.parametrize(("make", "kept"), [
    ("max", "\uff5a"), ("min", "\U0001f600"), ("max_by", "\uff5a"), ("min_by", "\U0001f600"),
])
def test_string_fields_compare_as_javas_string_compare_to(make: str, kept: str) -> None:
    """Java's ``String.compareTo`` compares UTF-16 code units: an emoji (a surrogate pair,
    D83D DE00) sorts below U+FF5A, where Python's code points put it above."""
    from flinkwin.functions import builtin
    from flinkwin.testing import WindowOperatorHarness

    assert java_compare("\U0001f600", "\uff5a") == -1 and java_compare("ab", "a") == 1
    assert java_compare("\ud800", "\ud800") == 0  # a lone surrogate compares too
    function = getattr(builtin, f"{make}_of" if make in ("max", "min") else make)("s")
    harness = WindowOperatorHarness(TumblingEventTimeWindows.of(Time.seconds(10)), function,
                                    key_field="k")
    harness.process_element({"k": "a", "ts": 1, "s": "\uff5a"}, 1)
    harness.process_element({"k": "a", "ts": 2, "s": "\U0001f600"}, 2)
    harness.process_watermark(100_000)
    [row] = harness.output()
    assert row["s"] == kept
    if make.endswith("_by"):  # the whole element with the extreme value
        assert row["ts"] == (1 if kept == "\uff5a" else 2)
    else:  # the first element's other fields
        assert row["ts"] == 1
