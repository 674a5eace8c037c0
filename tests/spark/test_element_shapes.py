"""A stream's elements have one shape on every path, the one its PyFlink type gives them:
tuples for ``Types.TUPLE``, ``Row(f0=..., f1=...)`` for ``Types.ROW`` (PyFlink names a
``RowTypeInfo``'s fields ``f0, f1, ...``), as key selectors, timestamp assigners, ``map``,
``filter``, single-element and reduced windows and ``print()`` see them."""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin import (
    DataStream,
    EventTimeSessionWindows,
    KeySelector,
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
    kind = "tuple" if tuples else "Row"
    shown = {
        "tuple": ["1: tuple:('a', 3)", "3: tuple:('b', 3)", "9: tuple:('a', 9)"],
        "Row": ["1: Row:Row(f0='a', f1=3)", "3: Row:Row(f0='b', f1=3)",
                "9: Row:Row(f0='a', f1=9)"],
    }[kind]
    assert sorted(reduced.execute_and_collect()) == shown

    windows.reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    printed = sorted(capsys.readouterr().out.splitlines())
    assert printed == (["(a,3)", "(a,9)", "(b,3)"] if tuples else
                       ["+I[a, 3]", "+I[a, 9]", "+I[b, 3]"])


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
