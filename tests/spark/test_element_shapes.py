"""A stream's elements have one shape on every path, the one its PyFlink type gives them:
tuples for ``Types.TUPLE``, ``Row(f0=..., f1=...)`` for ``Types.ROW`` (PyFlink names a
``RowTypeInfo``'s fields ``f0, f1, ...``), the values themselves for an atomic type
(``Types.STRING()``, ``Types.INT()``...), as key selectors, timestamp assigners, ``map``,
``filter``, single-element and reduced windows and ``print()`` see them."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from typing import Any

import pytest

from flinkwin import (
    DataStream,
    EventTimeSessionWindows,
    KeySelector,
    OutputTag,
    ProcessWindowFunction,
    Time,
    TimestampAssigner,
    Types,
    WatermarkStrategy,
)

DATA = [("a", 1), ("a", 2), ("b", 3), ("a", 9)]


def _shape(value: Any) -> str:
    return f"{type(value).__name__}:{value}"


class Checked(KeySelector):
    """Keys by the first field, refusing any element not shaped as ``expected``."""

    def __init__(self, tuples: bool) -> None:
        self.tuples = tuples

    def get_key(self, value: Any) -> Any:
        if str(value).startswith("(") != self.tuples:
            raise AssertionError(f"key selector got {value!r}")
        return value[0]


class SecondField(TimestampAssigner):
    def __init__(self, tuples: bool) -> None:
        self.tuples = tuples

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        if str(value).startswith("(") != self.tuples:
            raise AssertionError(f"timestamp assigner got {value!r}")
        return int(value[1])


class Show(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield f"{context.window().start}: " + ", ".join(_shape(e) for e in elements)


@pytest.mark.parametrize(
    ("type_info", "tuples", "first"),
    [
        (Types.TUPLE([Types.STRING(), Types.INT()]), True, "tuple:('a', 1)"),
        (Types.ROW([Types.STRING(), Types.INT()]), False, "Row:Row(f0='a', f1=1)"),
    ],
    ids=["tuple", "row"],
)
def test_elements_take_the_shape_of_the_stream_type(
    spark: Any, capsys: Any, type_info: Any, tuples: bool, first: str
) -> None:
    df = spark.createDataFrame(DATA, "f0 string, f1 int")
    stream = DataStream(df, type_info=type_info)
    mapped = stream.filter(lambda e: str(e).startswith("(") == tuples).map(
        _shape, output_type=Types.STRING()
    )
    assert mapped.execute_and_collect()[0] == first

    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        SecondField(tuples)
    )
    windows = (
        stream.assign_timestamps_and_watermarks(strategy)
        .key_by(Checked(tuples), key_type=Types.STRING())
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(2)))
    )
    reduced = windows.reduce(
        lambda a, b: (a[0], a[1] + b[1]), window_function=Show(), output_type=Types.STRING()
    )
    # the window function gets the tuple the reduce returned, as in PyFlink, and a window of
    # one element that element
    one = "3: tuple:('b', 3)" if tuples else "3: Row:Row(f0='b', f1=3)"
    shown = ["1: tuple:('a', 3)", one, "9: " + first.replace("1)", "9)")]
    assert sorted(reduced.execute_and_collect()) == shown

    windows.reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    printed = sorted(capsys.readouterr().out.splitlines())
    # a tuple prints as Java's Tuple2.toString; PyFlink prints a Row-typed stream's rows
    # itself, joining the fields' Python str with ","
    assert printed == (["(a,3)", "(a,9)", "(b,3)"] if tuples else
                       ["+I[a,3]", "+I[a,9]", "+I[b,3]"])


class Labelled(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for e in elements:
            yield key, context.window().start, e[1]


class FirstOfList(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1][0])


def test_values_without_a_declared_type_travel_pickled(spark: Any, capsys: Any) -> None:
    """PyFlink lets map/flat_map and window functions omit ``output_type``: the values travel
    pickled, and every downstream function, window, sink and print() gets them back as they
    were returned (here lists inside tuples, which no column type was declared for)."""
    df = spark.createDataFrame(DATA, "f0 string, f1 int")
    stream = DataStream(df, type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    values = (
        stream.map(lambda e: (e[0], [e[1]]))
        .flat_map(lambda p: [p, p] if p[0] == "b" else [p])
        .filter(lambda p: p[1][0] != 9)
    )
    assert sorted(values.execute_and_collect()) == [
        ("a", [1]), ("a", [2]), ("b", [3]), ("b", [3])
    ]
    windows = (
        values.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FirstOfList())
        )
        .key_by(lambda p: p[0])
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(2)))
    )
    reduced = windows.reduce(lambda a, b: (a[0], a[1] + b[1]))
    assert sorted(reduced.execute_and_collect()) == [("a", [1, 2]), ("b", [3, 3])]
    reduced.print()
    assert sorted(capsys.readouterr().out.splitlines()) == ["('a', [1, 2])", "('b', [3, 3])"]
    windows.process(Labelled()).print()
    assert sorted(capsys.readouterr().out.splitlines()) == [
        "('a', 1, [1])", "('a', 1, [2])", "('b', 3, [3])", "('b', 3, [3])"
    ]


def test_streaming_full_window_functions_get_tuples_from_columnar_element_lists(
    spark: Any, tmp_path: Any
) -> None:
    """A streaming stage keeps a ProcessWindowFunction's elements in columnar lists; the
    elements it hands over (on firing, on a late re-firing, in the late side output) still
    take the stream's PyFlink shape."""
    from spark_scenarios import run_stream, write_batches

    from flinkwin import OutputTag, TumblingEventTimeWindows

    late = OutputTag("late")
    batches = [
        [{"f0": "a", "f1": 1}, {"f0": "a", "f1": 3}, {"f0": "b", "f1": 4}],
        [{"f0": "a", "f1": 25}],
        [{"f0": "a", "f1": 2}, {"f0": "b", "f1": 1}],
        [{"f0": "a", "f1": 60}],
        [{"f0": "a", "f1": 5}],
    ]
    write_batches(tmp_path / "in", batches)

    def pipeline(stream: Any) -> Any:
        return (
            stream.assign_timestamps_and_watermarks(
                WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                    SecondField(True)
                )
            )
            .key_by("f0")
            .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
            .allowed_lateness(Time.milliseconds(20))
            .side_output_late_data(late)
            .process(Show(), output_type=Types.STRING())
        )

    from flinkwin import DataStream as Stream

    source = spark.readStream.schema("f0 string, f1 long").json(str(tmp_path / "in"))
    tuples = Types.TUPLE([Types.STRING(), Types.LONG()])
    stage = pipeline(Stream(source, type_info=tuples))._stage([late])
    assert "columnar element lists" in stage.summary["window state"]
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", "f0 string, f1 long", pipeline,
        side_tags=[late], type_info=tuples,
    )
    main = [next(iter(r.values())) for b in sorted(run.main) for r in run.main[b]]
    assert sorted(main) == sorted([
        "0: tuple:('a', 1), tuple:('a', 3)", "0: tuple:('b', 4)",
        "0: tuple:('a', 1), tuple:('a', 3), tuple:('a', 2)", "0: tuple:('b', 4), tuple:('b', 1)",
        "20: tuple:('a', 25)",
    ])
    assert [r for b in run.sides["late"].values() for r in b] == [{"f0": "a", "f1": 5}]


LINES = [("to be or not to be",), ("that is the question",), ("to be",)]


class WordTime(TimestampAssigner):
    """Event time: the word's length (milliseconds); refuses anything but a bare string."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        if type(value) is not str:
            raise AssertionError(f"timestamp assigner got {value!r}")
        return len(value)


class Words(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield f"{key}@{context.window().start}: " + ",".join(_shape(e) for e in elements)


def test_pyflink_word_count_over_a_string_stream(spark: Any, capsys: Any) -> None:
    """PyFlink's word-count shape: a ``Types.STRING()`` stream hands each line itself to
    flat_map, whose ``Types.STRING()`` outputs reach map as bare words."""
    from flinkwin import TumblingEventTimeWindows

    lines = DataStream(spark.createDataFrame(LINES, "line string"), type_info=Types.STRING())
    words = lines.flat_map(lambda line: line.split(), output_type=Types.STRING())
    counts = (
        words.map(lambda w: (w, 1), output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                _Const()
            )
        )
        .key_by(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]),
                output_type=Types.TUPLE([Types.STRING(), Types.INT()]))
    )
    assert sorted(counts.execute_and_collect()) == [
        ("be", 3), ("is", 1), ("not", 1), ("or", 1), ("question", 1), ("that", 1),
        ("the", 1), ("to", 3),
    ]
    counts.print()
    assert sorted(capsys.readouterr().out.splitlines()) == [
        "(be,3)", "(is,1)", "(not,1)", "(or,1)", "(question,1)", "(that,1)", "(the,1)", "(to,3)",
    ]
    assert words.execute_and_collect() == "to be or not to be that is the question to be".split()
    words.filter(lambda w: w.startswith("q")).print()
    assert capsys.readouterr().out == "question\n"


class Itself(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        if type(value) is not int:
            raise AssertionError(f"timestamp assigner got {value!r}")
        return value


class _Const(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return 1


def test_atomic_streams_hand_bare_values_to_every_function(spark: Any, capsys: Any) -> None:
    """Key selectors, timestamp assigners, reduce inputs, window functions' elements and late
    data of a ``Types.STRING()`` stream are the strings themselves; an ``Types.INT()`` stream's
    reduce adds the ints."""
    from flinkwin import TumblingEventTimeWindows

    words = DataStream(
        spark.createDataFrame([("to",), ("be",), ("or",), ("not",), ("a",)], "w string"),
        type_info=Types.STRING(),
    ).map(str.upper, output_type=Types.STRING())
    keyed = (
        words.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(WordTime())
        )
        .key_by(lambda w: w[0] if type(w) is str else repr(w), key_type=Types.STRING())
        .window(TumblingEventTimeWindows.of(Time.milliseconds(2)))
    )
    assert sorted(keyed.process(Words(), output_type=Types.STRING()).execute_and_collect()) == [
        "A@0: str:A", "B@2: str:BE", "N@2: str:NOT", "O@2: str:OR", "T@2: str:TO",
    ]
    reduced = keyed.reduce(lambda a, b: a + b if type(a) is str else repr((a, b)))
    assert sorted(reduced.execute_and_collect()) == ["A", "BE", "NOT", "OR", "TO"]
    reduced.print()
    assert sorted(capsys.readouterr().out.splitlines()) == ["A", "BE", "NOT", "OR", "TO"]

    # the column name of a one-column atomic stream keys by the value (flinkwin's fast path)
    by_column = (
        DataStream(spark.createDataFrame([("bb",), ("cc",), ("a",), ("bb",)], "w string"),
                   type_info=Types.STRING())
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(WordTime())
        )
        .key_by("w")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(2)))
        .process(Words(), output_type=Types.STRING())
    )
    assert sorted(by_column.execute_and_collect()) == [
        "a@0: str:a", "bb@2: str:bb,str:bb", "cc@2: str:cc"
    ]

    numbers = DataStream(spark.createDataFrame([(1,), (2,), (3,)], "n int"),
                         type_info=Types.INT())
    assert numbers.key_by(lambda n: n % 2).count_window(2).reduce(
        lambda a, b: a + b
    ).execute_and_collect() == [4]
    all_numbers = numbers.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Itself())
    ).window_all(TumblingEventTimeWindows.of(Time.milliseconds(10)))
    assert all_numbers.reduce(lambda a, b: a + b).execute_and_collect() == [6]
    all_numbers.reduce(lambda a, b: a + b).print()
    assert capsys.readouterr().out == "6\n"
    with pytest.raises(TypeError, match="bare values"):
        all_numbers.sum("n").execute_and_collect()
    with pytest.raises(ValueError, match="exactly one column"):
        DataStream(spark.createDataFrame(DATA, "f0 string, f1 int"), type_info=Types.STRING())


NESTED = [("a", (1, 2), [1, 2], {"x": 1}), ("a", (3, 4), [3], {}), ("b", (5, 6), None, None)]
NESTED_SCHEMA = "f0 string, f1 struct<f0:int,f1:int>, f2 array<int>, f3 map<string,int>"


class NestedTime(TimestampAssigner):
    """Event time: the nested tuple's first field (fails on a dict, as PyFlink code would)."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1][0])


class Nested(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for e in elements:
            yield f"{key}: {e!r} {type(e[1]).__name__} {type(e[2]).__name__} {type(e[3]).__name__}"


def _describe(e: Any) -> str:
    return f"{e!r} {type(e[1]).__name__} {type(e[2]).__name__} {type(e[3]).__name__}"


def test_nested_values_take_the_shape_of_the_stream_type(spark: Any, capsys: Any) -> None:
    """A struct inside an element is a tuple where its PyFlink type is ``Types.TUPLE`` and a
    Row otherwise (``Types.ROW``, or a DataFrame without a declared type, as a PySpark Row
    holds it), an array a list of Python values, a map a dict: in key selectors, timestamp
    assigners, maps, window functions, reduce outputs and print(). (Spark's Arrow conversion
    gives dicts and numpy arrays, which PyFlink code indexing ``value[1][0]`` fails on.)"""
    df = spark.createDataFrame(NESTED, NESTED_SCHEMA)
    tuples = Types.TUPLE([
        Types.STRING(), Types.TUPLE([Types.INT(), Types.INT()]), Types.LIST(Types.INT()),
        Types.MAP(Types.STRING(), Types.INT()),
    ])
    stream = DataStream(df, type_info=tuples)
    assert stream.map(_describe, output_type=Types.STRING()).execute_and_collect() == [
        "('a', (1, 2), [1, 2], {'x': 1}) tuple list dict",
        "('a', (3, 4), [3], {}) tuple list dict",
        "('b', (5, 6), None, None) tuple NoneType NoneType",
    ]
    windows = (
        stream.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(NestedTime())
        )
        .key_by(lambda e: e[1][1] % 2, key_type=Types.INT())  # a key from the nested tuple
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(10)))
    )
    assert sorted(windows.process(Nested(), output_type=Types.STRING()).execute_and_collect()) == [
        "0: ('a', (1, 2), [1, 2], {'x': 1}) tuple list dict",
        "0: ('a', (3, 4), [3], {}) tuple list dict",
        "0: ('b', (5, 6), None, None) tuple NoneType NoneType",
    ]
    summed = windows.reduce(lambda a, b: (a[0], (a[1][0] + b[1][0], a[1][1] + b[1][1]), [], {}))
    summed.print()
    assert capsys.readouterr().out.splitlines() == ["(a,(9,12),[],{})"]

    rows = DataStream(spark.createDataFrame(NESTED[:1], NESTED_SCHEMA.replace("f1 ", "s ")))
    (described,) = rows.map(
        lambda e: f"{e!r} {type(e.s).__name__} {e.s.f1}", output_type=Types.STRING()
    ).execute_and_collect()
    assert described == "Row(f0='a', s=Row(f0=1, f1=2), f2=[1, 2], f3={'x': 1}) Row 2"


def test_streaming_windows_get_nested_values_in_the_stream_shape(
    spark: Any, tmp_path: Any
) -> None:
    """The streaming stage converts its input with PySpark's own Arrow conversion; nested
    values still reach the window function as tuples, lists and dicts, and the late side
    output writes them back unchanged."""
    from spark_scenarios import run_stream, write_batches

    from flinkwin import OutputTag, TumblingEventTimeWindows

    late = OutputTag("late")
    rows = [{"f0": k, "f1": {"f0": s[0], "f1": s[1]}, "f2": a, "f3": m} for k, s, a, m in NESTED]
    write_batches(tmp_path / "in", [rows[:2], [rows[2]], [dict(rows[0], f1={"f0": 0, "f1": 7})]])
    tuples = Types.TUPLE([
        Types.STRING(), Types.TUPLE([Types.INT(), Types.INT()]), Types.LIST(Types.INT()),
        Types.MAP(Types.STRING(), Types.INT()),
    ])

    def pipeline(stream: Any) -> Any:
        return (
            stream.assign_timestamps_and_watermarks(
                WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                    NestedTime()
                )
            )
            .key_by("f0")
            .window(TumblingEventTimeWindows.of(Time.milliseconds(4)))
            .side_output_late_data(late)
            .process(Nested(), output_type=Types.STRING())
        )

    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", NESTED_SCHEMA, pipeline, side_tags=[late],
        type_info=tuples,
    )
    main = sorted(next(iter(r.values())) for b in run.main for r in run.main[b])
    assert main == [  # b's window [4, 8) is still open at the end
        "a: ('a', (1, 2), [1, 2], {'x': 1}) tuple list dict",
        "a: ('a', (3, 4), [3], {}) tuple list dict",
    ]
    (late_row,) = [r for b in run.sides["late"].values() for r in b]
    assert (late_row["f0"], tuple(late_row["f1"]), list(late_row["f2"])) == ("a", (0, 7), [1, 2])


# ------------------------------------------------------------ every declared type's shape
WORDS = [("hello", 1), ("world", 2), ("hello", 3), ("x", 25)]
WORD_TYPE = Types.TUPLE([Types.STRING(), Types.LONG()])


class WordAt(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


class WordCounts(ProcessWindowFunction):
    """Returns one dict per window, as a PyFlink window function does for Types.MAP."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        counts: dict[str, int] = {}
        for word, _ in elements:
            counts[word] = counts.get(word, 0) + 1
        yield counts


def _words(stream: Any) -> Any:
    return (
        stream.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(WordAt())
        )
        .key_by(lambda e: e[0], key_type=Types.STRING())
    )


MAP_TYPE = Types.MAP(Types.STRING(), Types.INT())


def test_window_function_returning_dicts_under_a_map_output_type(spark: Any, capsys: Any) -> None:
    """``output_type=Types.MAP(...)`` takes each returned dict as the map (it failed with
    "missing field(s) ['value'], unexpected field(s) ['hello']"); downstream functions get
    dicts, print() writes Java's HashMap.toString."""
    from flinkwin import TumblingEventTimeWindows

    stream = DataStream(spark.createDataFrame(WORDS, "w string, t long"), type_info=WORD_TYPE)
    counts = _words(stream).window(TumblingEventTimeWindows.of(Time.milliseconds(10))).process(
        WordCounts(), output_type=MAP_TYPE
    )
    assert counts.get_type() == MAP_TYPE
    assert sorted(counts.execute_and_collect(), key=str) == [{"hello": 2}, {"world": 1}, {"x": 1}]
    shown = counts.map(lambda m: f"{type(m).__name__} {sorted(m.items())}",
                       output_type=Types.STRING())
    assert sorted(shown.execute_and_collect()) == [
        "dict [('hello', 2)]", "dict [('world', 1)]", "dict [('x', 1)]"
    ]
    counts.filter(lambda m: "hello" in m).print()
    assert capsys.readouterr().out == "{hello=2}\n"


MAPS = [({"k": 1, "j": 2},), ({"j": 3},), (None,)]


class HasK(KeySelector):
    def get_key(self, value: Any) -> Any:
        if value is not None and not isinstance(value, dict):
            raise AssertionError(f"key selector got {value!r}")
        return value is not None and "k" in value


def test_map_elements_are_dicts_in_filters_and_key_selectors(spark: Any, capsys: Any) -> None:
    """A ``Types.MAP`` stream hands each element over as a dict: ``'k' in element`` tests the
    keys (it tested a Row's values)."""
    from flinkwin import GlobalWindows
    from flinkwin.triggers import CountTrigger

    stream = DataStream(spark.createDataFrame(MAPS, "m map<string,int>"), type_info=MAP_TYPE)
    assert stream.filter(lambda e: e is not None and "k" in e).execute_and_collect() == [
        {"k": 1, "j": 2}
    ]
    merged = (
        stream.key_by(HasK(), key_type=Types.BOOLEAN())
        .window(GlobalWindows.create()).trigger(CountTrigger.of(1))
        .reduce(lambda a, b: {**(a or {}), **(b or {})})
    )
    assert merged.get_type() == MAP_TYPE
    # every element fires its key's window: the null map merges into {'j': 3}
    assert sorted(merged.execute_and_collect(), key=str) == [
        {"k": 1, "j": 2}, {"j": 3}, {"j": 3}
    ]
    stream.print()
    assert capsys.readouterr().out.splitlines() == ["{j=2, k=1}", "{j=3}", "null"]


class Identity(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield from elements


FAMILIES = [
    # (PyFlink type, DataFrame column, value, what functions see, what print() writes)
    (Types.STRING(), "string", "a", "str:a", "a"),
    (Types.LONG(), "bigint", 2**62, f"int:{2**62}", str(2**62)),
    (Types.DOUBLE(), "double", 1e7, "float:10000000.0", "1.0E7"),
    (Types.BOOLEAN(), "boolean", True, "bool:True", "true"),
    (Types.BIG_INT(), "decimal(38,0)", decimal.Decimal(12), "int:12", "12"),
    (Types.SQL_DATE(), "date", datetime.date(2024, 1, 2), "date:2024-01-02", "2024-01-02"),
    (Types.PRIMITIVE_ARRAY(Types.BYTE()), "binary", bytearray(b"\x01\xff"),
     "bytes:b'\\x01\\xff'", "[1, -1]"),
    (Types.MAP(Types.STRING(), Types.LONG()), "map<string,bigint>", {"a": 1, "b": 2},
     "dict:{'a': 1, 'b': 2}", "{a=1, b=2}"),
    (Types.LIST(Types.STRING()), "array<string>", ["x", None], "list:['x', None]",
     "[x, null]"),
    (Types.BASIC_ARRAY(Types.INT()), "array<int>", [1, 2], "list:[1, 2]", "[1, 2]"),
    (Types.PRIMITIVE_ARRAY(Types.DOUBLE()), "array<double>", [0.5], "list:[0.5]", "[0.5]"),
    (Types.OBJECT_ARRAY(Types.ROW([Types.INT()])), "array<struct<f0:int>>", [(1,)],
     "list:[Row(f0=1)]", "[+I[1]]"),
    (Types.TUPLE([Types.STRING(), Types.MAP(Types.STRING(), Types.INT())]),
     "struct<f0:string,f1:map<string,int>>", ("a", {"k": 1}), "tuple:('a', {'k': 1})",
     "(a,{k=1})"),
    (Types.ROW([Types.STRING(), Types.LIST(Types.INT())]), "struct<f0:string,f1:array<int>>",
     ("a", [1]), "Row:Row(f0='a', f1=[1])", "+I[a,[1]]"),
    (Types.ROW_NAMED(["name", "m"], [Types.STRING(), Types.MAP(Types.STRING(), Types.INT())]),
     "struct<name:string,m:map<string,int>>", ("a", {"k": 1}),
     "Row:Row(name='a', m={'k': 1})", "+I[a,{'k': 1}]"),
]


@pytest.mark.parametrize(
    ("info", "ddl", "value", "seen", "printed"), FAMILIES,
    ids=[f[0].name.lower() + ("" if f[0].name != "PRIMITIVE_ARRAY" else f"-{f[1]}")
         for f in FAMILIES],
)
def test_every_type_family_keeps_its_shape_as_element_and_output(
    spark: Any, capsys: Any, info: Any, ddl: str, value: Any, seen: str, printed: str
) -> None:
    """Each PyFlink type as a stream's element (a one-column DataFrame for a whole-value type,
    a row's columns for a row type), as a map's and a window function's output type, through
    execute_and_collect(), add_sink and print()."""
    from pyspark.sql.types import StructType

    from flinkwin import GlobalWindows
    from flinkwin.triggers import CountTrigger

    record = info.name in ("TUPLE", "ROW", "ROW_NAMED")
    schema = StructType.fromDDL(ddl if record else f"value {ddl}")
    if record:
        schema = StructType.fromDDL(ddl[len("struct<"):-1].replace(":", " "))
    data = [tuple(value) if record else (value,)]
    stream = DataStream(spark.createDataFrame(data, schema), type_info=info)
    described = stream.map(lambda e: f"{type(e).__name__}:{e}", output_type=Types.STRING())
    assert described.execute_and_collect() == [seen]

    same = stream.map(lambda e: e, output_type=info)  # the value back through an output type
    windowed = (
        same.key_by(lambda e: 0).window(GlobalWindows.create()).trigger(CountTrigger.of(1))
        .process(Identity(), output_type=info)
    )
    assert same.map(
        lambda e: f"{type(e).__name__}:{e}", output_type=Types.STRING()
    ).execute_and_collect() == [seen]
    sunk: list[Any] = []
    windowed.add_sink(lambda v, _context: sunk.append(f"{type(v).__name__}:{v}"))
    assert sunk == [seen]
    for result in (same, windowed):
        result.print()
        assert capsys.readouterr().out == printed + "\n"


@dataclasses.dataclass
class WordCount:
    word: str
    count: int


UNTYPED = OutputTag("counts")
PICKLED = OutputTag("pickled", Types.PICKLED_BYTE_ARRAY())


class CountObjects(ProcessWindowFunction):
    """Emits a dataclass and a string per window (no output type: both travel pickled) and
    dataclasses to two side outputs, one without a type and one PICKLED_BYTE_ARRAY."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        n = len(list(elements))
        context.output(UNTYPED, WordCount(key, n))
        context.output(PICKLED, {key, n})
        yield WordCount(key, n)
        yield f"{key}@{context.window().start}"


def _count_objects(stream: Any) -> Any:
    from flinkwin import TumblingEventTimeWindows

    return _words(stream).window(TumblingEventTimeWindows.of(Time.milliseconds(10))).process(
        CountObjects()
    )


OBJECT_LINES = ["WordCount(word='hello', count=2)", "WordCount(word='world', count=1)",
                "WordCount(word='x', count=1)", "hello@0", "world@0", "x@20"]


def test_dataclass_and_string_outputs_print_and_side_output_as_pyflink(
    spark: Any, capsys: Any
) -> None:
    """Outputs without a type keep the objects a window function emits: print() writes their
    Python str (PyFlink's ``_align_output_type``), execute_and_collect() and side outputs
    return the objects themselves."""
    result = _count_objects(
        DataStream(spark.createDataFrame(WORDS, "w string, t long"), type_info=WORD_TYPE)
    )
    result.print()
    assert sorted(capsys.readouterr().out.splitlines()) == OBJECT_LINES
    collected = result.execute_and_collect()
    assert sorted(collected, key=str) == sorted(
        [WordCount("hello", 2), WordCount("world", 1), WordCount("x", 1), "hello@0", "world@0",
         "x@20"], key=str
    )
    sunk: list[Any] = []
    result.add_sink(lambda value, _context: sunk.append(value))
    assert sorted(sunk, key=str) == sorted(collected, key=str)
    side = result.get_side_output(UNTYPED)
    assert sorted(side.execute_and_collect(), key=str) == [
        WordCount("hello", 2), WordCount("world", 1), WordCount("x", 1)
    ]
    side.print("late")
    assert sorted(capsys.readouterr().out.splitlines()) == [
        f"late> {line}" for line in OBJECT_LINES[:3]
    ]
    pairs = result.get_side_output(PICKLED).execute_and_collect()
    assert all(type(p) is set for p in pairs)
    assert sorted(sorted(map(str, p)) for p in pairs) == [
        ["1", "world"], ["1", "x"], ["2", "hello"]
    ]


def test_streaming_outputs_keep_their_shape(spark: Any, tmp_path: Any, capsys: Any) -> None:
    """The same shapes on a stream read in several micro-batches: dicts under Types.MAP,
    dataclasses and strings printed with str(), side outputs carrying the objects; a Spark
    sink for the objects is refused (it would get pickle bytes)."""
    from spark_scenarios import run_stream, write_batches

    from flinkwin import TumblingEventTimeWindows
    from flinkwin.errors import PickledElementsError

    batches = [[{"w": w, "t": t} for w, t in WORDS[:2]], [{"w": w, "t": t} for w, t in WORDS[2:]]]
    write_batches(tmp_path / "in", batches)

    def counts(stream: Any) -> Any:
        return _words(stream).window(TumblingEventTimeWindows.of(Time.milliseconds(10))).process(
            WordCounts(), output_type=MAP_TYPE
        )

    run = run_stream(spark, tmp_path / "in", tmp_path / "ck1", "w string, t long", counts,
                     type_info=WORD_TYPE)
    assert sorted((r["value"] for b in run.main.values() for r in b), key=str) == [
        {"hello": 2}, {"world": 1}
    ]  # x's window [20, 30) is still open at the end

    with pytest.raises(PickledElementsError, match="Declare output_type="):
        run_stream(spark, tmp_path / "in", tmp_path / "ck2", "w string, t long",
                   _count_objects, side_tags=[UNTYPED], type_info=WORD_TYPE)

    source = spark.readStream.schema("w string, t long").option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in")
    )
    objects = _count_objects(DataStream(source, type_info=WORD_TYPE))
    for stream, prefix in ((objects, None), (objects.get_side_output(UNTYPED), "side")):
        query = stream.print(prefix)
        assert query is not None
        try:
            query.processAllAvailable()
        finally:
            query.stop()
    assert sorted(capsys.readouterr().out.splitlines()) == [
        "WordCount(word='hello', count=2)", "WordCount(word='world', count=1)", "hello@0",
        "side> WordCount(word='hello', count=2)", "side> WordCount(word='world', count=1)",
        "world@0",
    ]


class SeesTimestamps(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for e in elements:
            yield f"{e.ts}:{'None' if e.t is None else e.t.isoformat()}"


def test_a_null_timestamp_reaches_functions_as_none_as_in_a_pyspark_row(spark: Any) -> None:
    """A null in a timestamp column is None in the element (pandas' ``NaT`` is not None), next
    to time-zone aware values, in a map and in a window's elements."""
    from flinkwin import TumblingEventTimeWindows

    df = spark.createDataFrame(
        [("a", 1, datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)),
         ("a", 2, None), ("a", 3, None)],
        "k string, ts long, t timestamp",
    )
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    stream = DataStream(df).assign_timestamps_and_watermarks(strategy)
    seen = stream.map(lambda e: f"{e.ts}:{e.t is None}", output_type=Types.STRING())
    assert seen.execute_and_collect() == ["1:False", "2:True", "3:True"]
    windowed = stream.key_by("k").window(TumblingEventTimeWindows.of(Time.seconds(1))).process(
        SeesTimestamps(), output_type=Types.STRING())
    assert windowed.execute_and_collect() == [
        "1:2024-01-02T03:04:05+00:00", "2:None", "3:None"]
