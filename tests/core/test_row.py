"""``Row``: elements behave and print as PyFlink's ``pyflink.common.Row`` (the doctests of
``pyflink/common/types.py`` ported), plus flinkwin's documented differences."""

from __future__ import annotations

import pickle

import pytest

import flinkwin
from flinkwin import EventTimeSessionWindows, Record, Row, RowKind, TumblingEventTimeWindows
from flinkwin.common import Row as CommonRow
from flinkwin.errors import UserFunctionError
from flinkwin.record import is_tuple_element, tuple_class
from flinkwin.spark.printing import flink_string
from flinkwin.testing import WindowOperatorHarness


def test_row_from_kwargs_keeps_the_names_in_order_and_prints_like_pyflink():
    """PyFlink 2.x's ``Row(**kwargs)`` keeps the keyword order (1.x sorted the names; the
    docstring still says so)."""
    row = Row(name="Alice", age=11)
    assert repr(row) == "Row(name='Alice', age=11)"
    assert str(row) == "Row(name='Alice', age=11)"
    assert (row["name"], row["age"]) == ("Alice", 11)
    assert (row.name, row.age) == ("Alice", 11)
    assert row[0] == "Alice" and row[-1] == 11
    assert tuple(row) == ("Alice", 11) and row._fields == ["name", "age"]
    assert Row(b=1, a=2).as_dict() == {"b": 1, "a": 2}
    assert list(Row(b=1, a=2).as_dict()) == ["b", "a"]


def test_row_class_names_values():
    person = Row("name", "age")
    assert repr(person) == "<Row('name', 'age')>"
    alice = person("Alice", 11)
    assert repr(alice) == "Row(name='Alice', age=11)"
    with pytest.raises(ValueError, match="expected 2 values"):
        person("Alice")


def test_row_as_dict_and_recursive_as_dict():
    row = Row(key=1, value=Row(name="a", age=2))
    assert row.as_dict() == {"key": 1, "value": Row(age=2, name="a")}
    assert row.as_dict(True) == {"key": 1, "value": {"name": "a", "age": 2}}
    assert row.asDict() == row.as_dict()
    with pytest.raises(TypeError, match="Cannot convert a Row class into dict"):
        Row(1, 2).as_dict()


def test_row_contains_checks_field_names_of_a_named_row_as_pyflink_does():
    """PyFlink 2.x: ``in`` looks for a field name in a named row, a value in one without
    names (and in a Types.TUPLE element, a plain tuple to the user)."""
    row = Row.of(("user", "clicks"), ("alice", 3))
    assert "user" in row and "clicks" in row
    assert "alice" not in row and 3 not in row
    assert "alice" in Row("alice", 3) and "user" not in Row("alice", 3)
    pair = tuple_class(("f0", "f1"))("a", 3)
    assert "a" in pair and "f0" not in pair
    assert "name" in Row(name="Alice", age=11) and "wrong_key" not in Row(name="Alice")


def test_row_get_fields_by_names_and_of_kind():
    row = Row(b=1, a=2)
    assert row.get_fields_by_names(["a", "b"]) == [2, 1]
    assert row.get_fields_by_names(["b", "a"]) == [1, 2]
    assert Row(1, 2).get_fields_by_names(["x", "y"]) == [1, 2]
    with pytest.raises(KeyError, match="not exist"):
        row.get_fields_by_names(["c"])
    assert Row.of_kind(RowKind.INSERT, a=1) == Row(a=1)
    with pytest.raises(TypeError, match="append-only"):
        Row.of_kind(RowKind.DELETE, a=1)
    assert [str(k) for k in RowKind] == ["+I", "-U", "+U", "-D"]


def test_row_unknown_field_raises_key_value_and_attribute_errors():
    row = Row.of(("user",), ("alice",))
    with pytest.raises(AttributeError, match="nope"):
        _ = row.nope
    with pytest.raises(KeyError):
        _ = row["nope"]
    with pytest.raises(ValueError):  # PyFlink's Row raises ValueError here
        _ = row["nope"]


def test_rows_index_by_field_name_position_and_slice():
    """Every kind of index a named row takes, on rows built each way (the generated class's
    lookup): names (also a ``str`` subclass), positions (negative, bool, numpy ints), slices;
    other index types fail as they do on a tuple."""
    import numpy as np

    class Name(str):
        pass

    for row in (Row.of(("user", "clicks"), ("alice", 3)), Row(clicks=3, user="alice"),
                pickle.loads(pickle.dumps(Row.of(("user", "clicks"), ("alice", 3))))):
        named = row if row.__fields__ == ("user", "clicks") else Row.of(
            ("user", "clicks"), (row["user"], row["clicks"])
        )
        assert (named["user"], named["clicks"], named[Name("clicks")]) == ("alice", 3, 3)
        assert (named[0], named[1], named[-1], named[True], named[np.int64(1)]) == (
            "alice", 3, 3, 3, 3
        )
        assert named[0:1] == ("alice",) and named[::-1] == (3, "alice")
        for bad in ("nope", Name("nope")):
            with pytest.raises(KeyError, match="nope"):
                _ = named[bad]
        with pytest.raises(IndexError):
            _ = named[2]
        with pytest.raises(TypeError):
            _ = named[1.0]
    unnamed = Row("alice", 3)
    assert (unnamed[1], unnamed[-2], unnamed[:1]) == (3, "alice", ("alice",))
    with pytest.raises(KeyError):
        _ = unnamed["user"]


def test_field_names_win_over_tuple_methods():
    row = Row.of(("word", "count", "index"), ("a", 3, 7))
    assert row.count == 3 and row.index == 7
    assert Row.replace(row, "count", 4) == ("a", 4, 7)


def test_underscore_field_names_are_attributes_too():
    row = Row.of(("_c0", "_c1"), ("a", 1))  # Spark's CSV column names
    assert (row._c0, row._c1) == ("a", 1)
    with pytest.raises(AttributeError):
        _ = row._c2


def test_row_equality_pyflink_and_flinkwin_leniency():
    row = Row.of(("user", "clicks"), ("alice", 3))
    assert row == Row.of(("user", "clicks"), ("alice", 3))
    assert row != Row.of(("name", "clicks"), ("alice", 3))  # other names: not equal (PyFlink)
    # the same value for each name in another order: equal (PyFlink 2.x)
    assert row == Row.of(("clicks", "user"), (3, "alice"))
    assert Row(a=1, b=2) == Row(b=2, a=1) and Row(a=1, b=2) != Row(b=1, a=2)
    assert Row(1, 2) != Row(2, 1)
    assert row != Row("alice", 3)  # named vs unnamed (PyFlink)
    assert row == ("alice", 3)  # flinkwin: equals the tuple of its values
    assert row == {"user": "alice", "clicks": 3}  # ... and the dict of its fields
    assert row != {"user": "alice"}
    assert row != ("alice", 4)
    assert hash(row) == hash(("alice", 3))


def test_rows_equal_by_name_hash_alike_so_sets_and_dict_keys_see_one_row():
    """Python's rule: equal objects hash alike. Two rows with the same value for each name in
    another order are equal (PyFlink 2.x), so a set, a dict key or a keyed state sees them as
    one; the rows of the order first seen still hash as the plain tuple of their values."""
    first = Row(x=1, y="a")
    other = Row(y="a", x=1)
    assert first == other and hash(first) == hash(other)
    assert len({first, other}) == 1 and {first: 1}[other] == 1
    assert hash(first) == hash((1, "a"))


def test_row_is_immutable_and_insert_only():
    row = Row.of(("user", "clicks"), ("alice", 3))
    with pytest.raises(TypeError, match="immutable"):
        row[0] = "bob"
    with pytest.raises(TypeError, match="immutable"):
        row.user = "bob"
    assert row.replace("clicks", 4) == Row.of(("user", "clicks"), ("alice", 4))
    assert row.get_row_kind() is RowKind.INSERT
    row.set_row_kind(RowKind.INSERT)
    with pytest.raises(TypeError, match="append-only"):
        row.set_row_kind(RowKind.DELETE)


def test_set_field_names_names_an_unnamed_row():
    row = Row("alice", 3)
    row.set_field_names(["user", "clicks"])
    assert row.user == "alice" and repr(row) == "Row(user='alice', clicks=3)"
    with pytest.raises(ValueError, match="1 field names"):
        row.set_field_names(["user"])


def test_row_field_count_must_match_values():
    with pytest.raises(ValueError, match="2 field names but 1 values"):
        Row.of(("a", "b"), (1,))


def test_row_pickles_with_its_names():
    for row in (Row.of(("a", "b"), (1, "x")), Row(1, "x")):
        back = pickle.loads(pickle.dumps(row))
        assert back == row and repr(back) == repr(row)


def test_row_is_exported_as_pyflink_common_does():
    assert CommonRow is Row is flinkwin.Row
    assert Record is Row  # the former name


def test_a_window_function_after_reduce_gets_the_object_the_reduce_returned():
    """PyFlink hands the window function (and the next reduce call) the object the reduce
    function returned: a tuple reduced from Rows stays a tuple; a window of one element
    hands that element, a Row."""
    seen = []

    class Collect(flinkwin.ProcessWindowFunction):
        def process(self, key, context, elements):
            seen.extend((type(e).__name__, repr(e)) for e in elements)
            return []

    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10),
        (lambda a, b: (a[0], a[1] + b[1]), Collect()),
        key_field="k",
    )
    h.process_element({"k": "x", "v": 1}, 1)
    h.process_element({"k": "x", "v": 2}, 2)
    h.process_element({"k": "x", "v": 4}, 3)
    h.process_element({"k": "y", "v": 5}, 3)
    h.process_watermark(9)
    assert sorted(seen) == [("Row", "Row(k='y', v=5)"), ("tuple", "('x', 7)")]


def test_reduce_returning_another_arity_fails_clearly():
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), lambda a, b: (a[0],), key_field="k"
    )
    h.process_element({"k": "x", "v": 1}, 1)
    with pytest.raises(UserFunctionError, match="TypeError: .*returns the type of its inputs"):
        h.process_element({"k": "x", "v": 2}, 2)


def test_tuple_elements_are_tuples_to_the_user_and_keep_field_names():
    """A ``Types.TUPLE`` stream's elements: PyFlink hands Python tuples."""
    element = tuple.__new__(tuple_class(("f0", "f1")), ("a", 3))
    assert repr(element) == "('a', 3)" and str(element) == "('a', 3)"
    assert f"{element}" == "('a', 3)"
    assert element == ("a", 3) and hash(element) == hash(("a", 3))
    assert isinstance(element, tuple) and element[0] == "a" and element[-1] == 3
    assert element.f0 == "a" and element["f1"] == 3  # Java's t.f0, flinkwin's field names
    assert is_tuple_element(element) and not is_tuple_element(Row.of(("f0", "f1"), ("a", 3)))
    assert flink_string(element) == "(a,3)"
    back = pickle.loads(pickle.dumps(element))
    assert type(back) is type(element) and repr(back) == "('a', 3)"


def test_a_tuple_element_hashes_as_its_plain_tuple_after_a_row_of_its_names_in_another_order():
    """A Row of the names ``x1, x0`` made first (``Row(x1=..., x0=...)``) does not change how a
    ``Types.TUPLE`` element of ``x0, x1`` hashes: as the plain tuple it equals, so it finds the
    same dict entry and set member."""
    Row(x1=2, x0=1)
    element = tuple.__new__(tuple_class(("x0", "x1")), (1, 2))
    assert element == (1, 2) and hash(element) == hash((1, 2))
    assert {(1, 2): "found"}[element] == "found" and element in {(1, 2)}


def _seen_by_window_function(assigner, tuple_elements, reduce=None):
    seen = []

    class Collect(flinkwin.ProcessWindowFunction):
        def process(self, key, context, elements):
            seen.extend(str(e) for e in elements)
            return []

    function = Collect() if reduce is None else (reduce, Collect())
    h = WindowOperatorHarness(
        assigner, function, key_field=lambda e: e[0], tuple_elements=tuple_elements
    )
    h.process_elements(
        [{"f0": "a", "f1": 1}, {"f0": "a", "f1": 2}, {"f0": "b", "f1": 3}], [1, 2, 3]
    )
    h.process_watermark(100)
    return sorted(seen)


@pytest.mark.parametrize(
    "assigner",
    [TumblingEventTimeWindows.of(10), EventTimeSessionWindows.with_gap(5)],
    ids=["vectorized", "merging"],
)
def test_window_functions_get_tuples_for_a_tuple_stream_on_every_path(assigner):
    assert _seen_by_window_function(assigner, True) == ["('a', 1)", "('a', 2)", "('b', 3)"]
    # a reduced window (two elements) and a single-element window hand the same type
    reduced = _seen_by_window_function(assigner, True, lambda a, b: (a[0], a[1] + b[1]))
    assert reduced == ["('a', 3)", "('b', 3)"]
    # over Rows, the tuple the reduce returned (PyFlink's), the single element a Row
    rows = _seen_by_window_function(assigner, False, lambda a, b: (a[0], a[1] + b[1]))
    assert rows == ["('a', 3)", "Row(f0='b', f1=3)"]


def _seen_in_atomic_stream(assigner, key_field, reduce=None):
    seen = []

    class Collect(flinkwin.ProcessWindowFunction):
        def process(self, key, context, elements):
            seen.extend(f"{key!r}:{e!r}" for e in elements)
            return []

    function = Collect() if reduce is None else (reduce, Collect())
    h = WindowOperatorHarness(assigner, function, key_field=key_field, atomic_elements=True)
    h.process_elements([{"w": "a"}, {"w": "bb"}, {"w": "a"}], [1, 2, 3])
    h.process_watermark(100)
    return sorted(seen)


@pytest.mark.parametrize(
    "assigner",
    [TumblingEventTimeWindows.of(10), EventTimeSessionWindows.with_gap(5)],
    ids=["vectorized", "merging"],
)
@pytest.mark.parametrize("key_field", ["w", len], ids=["column", "selector"])
def test_an_atomic_stream_hands_bare_values_on_every_path(assigner, key_field):
    """A ``Types.STRING()`` stream's elements are the strings, keyed by its column's name (the
    value) or by a selector of the value; reduce gets and returns values."""
    key = ("'a'", "'bb'") if key_field == "w" else ("1", "2")
    assert _seen_in_atomic_stream(assigner, key_field) == [
        f"{key[0]}:'a'", f"{key[0]}:'a'", f"{key[1]}:'bb'"
    ]
    reduced = _seen_in_atomic_stream(assigner, key_field, lambda a, b: a + b)
    assert reduced == [f"{key[0]}:'aa'", f"{key[1]}:'bb'"]


def test_field_aggregations_are_refused_on_an_atomic_stream():
    from flinkwin.functions.builtin import sum_of

    with pytest.raises(TypeError, match="bare values"):
        WindowOperatorHarness(TumblingEventTimeWindows.of(10), sum_of("w"), atomic_elements=True)


def test_late_elements_of_an_atomic_stream_are_the_values():
    late = flinkwin.OutputTag("late", flinkwin.Types.STRING())
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), lambda a, b: a + b, key_field="w",
        late_output_tag=late, atomic_elements=True,
    )
    h.process_elements([{"w": "a"}, {"w": "a"}], [1, 2])
    h.process_watermark(20)
    h.process_elements([{"w": "b"}], [3])
    assert h.output() == ["aa"] and h.side_output(late) == ["b"]


def test_an_aggregate_function_adds_the_values_of_an_atomic_stream():
    class Lengths(flinkwin.AggregateFunction):
        def create_accumulator(self):
            return 0

        def add(self, value, accumulator):
            return accumulator + len(value)  # a str, not a Row

        def get_result(self, accumulator):
            return accumulator

        def merge(self, a, b):
            return a + b

    h = WindowOperatorHarness(
        EventTimeSessionWindows.with_gap(5), Lengths(), key_field=lambda w: w[0],
        atomic_elements=True,
    )
    h.process_elements([{"w": "ab"}, {"w": "abc"}, {"w": "b"}], [1, 2, 3])
    h.process_watermark(100)
    assert sorted(h.output()) == [1, 5]
