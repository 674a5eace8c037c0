"""One output-type convention, typed answers for Spark, and ``KeyedStream`` as a ``DataStream``.

- Every function that produces elements takes PyFlink's ``output_type=`` and flinkwin's
  ``output_schema=``: one declaration under two names (both at once is an error naming them).
- A stream of pickled values (a function without a declared output type) has no Spark form:
  ``toDF()``, a DataFrame attribute and a Spark sink raise an error naming the operator and
  saying to declare ``output_type``; Python sinks still get the objects.
- A ``KeyedStream`` is a ``DataStream`` of the elements it keys, as in PyFlink.
- A reduce's window function gets the object the reduce returned, as in PyFlink.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from flinkwin import (
    AggregateFunction,
    DataStream,
    EventTimeSessionWindows,
    OutputTag,
    ProcessAllWindowFunction,
    Time,
    TimestampAssigner,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import (
    KeyedProcessFunction,
    KeyedStream,
    ProcessFunction,
    ProcessWindowFunction,
    StreamExecutionEnvironment,
)
from flinkwin.errors import PickledElementsError, UnsupportedOperationError
from flinkwin.functions import CoGroupFunction, ProcessJoinFunction, SinkFunction
from flinkwin.spark import MemorySink

DATA = [("a", 1), ("a", 2), ("b", 3), ("a", 6), ("b", 8), ("b", 9), ("a", 15)]
OUT_DDL = "k string, n long"
OUT_TYPE = Types.ROW_NAMED(["k", "n"], [Types.STRING(), Types.LONG()])


class ByTs(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


def _timed(stream: DataStream) -> DataStream:
    return stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByTs())
    )


@pytest.fixture(scope="module")
def rows(spark: Any) -> DataStream:
    return DataStream(spark.createDataFrame(DATA, "k string, v long"))


class Pair(ProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value[0], value[1]


class KeyedPair(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield ctx.get_current_key(), value[1]


class Count(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield key, len(list(elements))


class CountAll(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        yield "all", len(list(elements))


class CountApply:
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        yield key, len(list(inputs))


class Summing(AggregateFunction):
    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, accumulator: Any) -> Any:
        return accumulator + value[1]

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


class KeyAndResult(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield key, next(iter(elements))


class JoinCount(CoGroupFunction):
    def co_group(self, first: Any, second: Any) -> Any:
        yield first[0][0] if first else second[0][0], len(first) + len(second)


class PairJoin(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield left[0], left[1] + right[1]


def _sessions(stream: DataStream) -> Any:
    return _timed(stream).key_by(lambda e: e[0], key_type=Types.STRING()).window(
        EventTimeSessionWindows.with_gap(Time.milliseconds(2))
    )


#: name -> a builder taking (stream, **declaration) and returning the operator's result
PRODUCERS: dict[str, Callable[..., Any]] = {
    "map": lambda s, **t: s.map(lambda e: (e[0], e[1]), **t),
    "flat_map": lambda s, **t: s.flat_map(lambda e: [(e[0], e[1])], **t),
    "process": lambda s, **t: s.process(Pair(), **t),
    "keyed process": lambda s, **t: s.key_by("k").process(KeyedPair(), **t),
    "keyed map": lambda s, **t: s.key_by("k").map(lambda e: (e[0], e[1]), **t),
    "keyed flat_map": lambda s, **t: s.key_by("k").flat_map(lambda e: [(e[0], e[1])], **t),
    "window reduce + process": lambda s, **t: _sessions(s).reduce(
        lambda a, b: (a[0], a[1] + b[1]), window_function=KeyAndResult(), **t
    ).map(lambda kv: (kv[0], kv[1][1]), output_type=OUT_TYPE),
    "window aggregate": lambda s, **t: _sessions(s).aggregate(
        Summing(), window_function=KeyAndResult(), **t
    ),
    "window process": lambda s, **t: _sessions(s).process(Count(), **t),
    "window apply": lambda s, **t: _sessions(s).apply(CountApply(), **t),
    "window_all process": lambda s, **t: _timed(s).window_all(
        EventTimeSessionWindows.with_gap(Time.milliseconds(2))
    ).process(CountAll(), **t),
    "window join": lambda s, **t: _timed(s).join(_timed(s)).where(lambda e: e[0]).equal_to(
        lambda e: e[0]
    ).window(EventTimeSessionWindows.with_gap(Time.milliseconds(2))).apply(
        lambda a, b: (a[0], a[1] * b[1]), **t
    ),
    "window coGroup": lambda s, **t: _timed(s).co_group(_timed(s)).where(
        lambda e: e[0]
    ).equal_to(lambda e: e[0]).window(
        EventTimeSessionWindows.with_gap(Time.milliseconds(2))
    ).apply(JoinCount(), **t),
    "interval join": lambda s, **t: _timed(s).key_by("k").interval_join(
        _timed(s).key_by("k")
    ).between(Time.milliseconds(0), Time.milliseconds(0)).process(PairJoin(), **t),
}


@pytest.mark.parametrize("name", list(PRODUCERS))
def test_every_function_that_produces_elements_takes_output_type_and_output_schema(
    rows: DataStream, name: str
) -> None:
    build = PRODUCERS[name]
    by_schema = build(rows, output_schema=OUT_DDL)
    by_type = build(rows, output_type=OUT_TYPE)
    assert by_schema.toDF().columns == by_type.toDF().columns == ["k", "n"]
    expected = sorted(tuple(r) for r in by_type.toDF().collect())
    assert expected and sorted(tuple(r) for r in by_schema.toDF().collect()) == expected
    with pytest.raises(ValueError, match="pass output_schema or output_type, not both"):
        build(rows, output_schema=OUT_DDL, output_type=OUT_TYPE)


def test_a_keyed_stream_is_a_data_stream_of_the_elements_it_keys(
    rows: DataStream, capsys: Any
) -> None:
    keyed = rows.key_by("k")
    by_selector = rows.key_by(lambda e: e[0], key_type=Types.STRING())
    for stream in (keyed, by_selector):
        assert isinstance(stream, KeyedStream) and isinstance(stream, DataStream)
        assert sorted(stream.execute_and_collect()) == sorted(rows.execute_and_collect())
        assert stream.toDF().columns == ["k", "v"] and stream.toDF().count() == len(DATA)
        assert stream.get_type() is None and stream.count() == len(DATA)
    keyed.print()
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == len(DATA) and "+I[a, 1]" in printed
    seen: list[Any] = []

    class Collect(SinkFunction):
        def invoke(self, value: Any, context: Any) -> None:
            seen.append(tuple(value))

    keyed.add_sink(Collect())
    assert sorted(seen) == sorted(DATA)
    assert len(keyed.union(rows).execute_and_collect()) == 2 * len(DATA)
    assert _timed(keyed).window_all(EventTimeSessionWindows.with_gap(Time.milliseconds(2))).process(
        CountAll(), output_type=OUT_TYPE
    ).execute_and_collect()[0][0] == "all"
    rekeyed = keyed.key_by("v")
    assert isinstance(rekeyed, KeyedStream) and rekeyed._keys == ["v"]
    # the keyed operations see the key's state: a rolling reduce and a keyed filter
    assert sorted(keyed.reduce(lambda a, b: (a[0], a[1] + b[1])).execute_and_collect()) == [
        ("a", 1), ("a", 3), ("a", 9), ("a", 24), ("b", 3), ("b", 11), ("b", 20)
    ]
    assert sorted(keyed.filter(lambda e: e[1] > 8).execute_and_collect()) == [
        ("a", 15), ("b", 9)
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda k: k.name("x"), "Set name for KeyedStream"),
        (lambda k: k.uid("x"), "Set uid for KeyedStream"),
        (lambda k: k.set_parallelism(2), "Set parallelism for KeyedStream"),
        (lambda k: k.set_max_parallelism(2), "Set max parallelism for KeyedStream"),
        (lambda k: k.slot_sharing_group("g"), "slot sharing group for KeyedStream"),
        (lambda k: k.get_name(), "Get name of KeyedStream"),
    ],
)
def test_a_keyed_stream_refuses_the_operator_hints_pyflink_refuses(
    rows: DataStream, call: Any, message: str
) -> None:
    with pytest.raises(UnsupportedOperationError, match=message):
        call(rows.key_by("k"))


UNTYPED = OutputTag("untyped")


class WithSide(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.output(UNTYPED, {value[0]})
        yield value[0], value[1]


@pytest.mark.parametrize(
    ("build", "operator"),
    [
        (lambda s: s.map(lambda e: e), "map(<lambda>)"),
        (lambda s: s.key_by("k").map(lambda e: e), "map(<lambda>)"),
        (lambda s: s.key_by("k").process(KeyedPair()), "process(KeyedPair)"),
        (lambda s: _sessions(s).process(Count()), "the window's process(Count)"),
        (lambda s: _sessions(s).reduce(lambda a, b: a, window_function=KeyAndResult()),
         "the window's reduce(<lambda>, KeyAndResult)"),
        (lambda s: s.key_by("k").process(WithSide(), output_type=OUT_TYPE).get_side_output(
            UNTYPED
        ), "the side output OutputTag('untyped')"),
        (lambda s: StreamExecutionEnvironment.get_execution_environment().from_collection(
            [{"a"}, {"b"}]
        ), "from_collection()"),
    ],
    ids=["map", "keyed map", "keyed process", "window process", "reduce + window function",
         "side output", "from_collection"],
)
def test_to_df_of_pickled_elements_names_the_operator_and_says_to_declare_an_output_type(
    rows: DataStream, build: Any, operator: str
) -> None:
    stream = build(rows)
    with pytest.raises(PickledElementsError, match="Declare output_type=") as raised:
        stream.toDF()
    assert f"the elements of {operator}" in str(raised.value)
    with pytest.raises(PickledElementsError):
        stream.collect()  # a DataFrame attribute, as toDF() gives it
    # Python sinks still get the objects back as they were emitted
    assert stream.execute_and_collect()


def test_a_spark_sink_of_pickled_elements_is_refused(rows: DataStream, tmp_path: Any) -> None:
    result = _sessions(rows).process(Count())
    with pytest.raises(PickledElementsError, match=r"start\(\): the main output"):
        result.start(main=MemorySink("pickled_main"))
    typed = rows.key_by("k").process(WithSide(), output_type=OUT_TYPE)
    with pytest.raises(PickledElementsError, match="the side output 'untyped'"):
        typed.start(side_outputs={UNTYPED: MemorySink("pickled_side")})


def test_window_all_reduce_process_over_rows_gets_the_tuple_the_reduce_returned(
    rows: DataStream,
) -> None:
    """PyFlink's ``test_window_all_reduce_process`` over a DataFrame without a declared type:
    the window function gets the tuple the reduce function returned (PyFlink hands it the
    object); a window of one element hands that element, a Row of the DataFrame's columns."""

    class MyProcessFunction(ProcessAllWindowFunction):
        def process(self, context: Any, elements: Any) -> Any:
            start, result = context.window().start, next(iter(elements))
            yield f"current window start at {start}, reduce result {result}"

    results = _timed(rows).window_all(
        EventTimeSessionWindows.with_gap(Time.milliseconds(2))
    ).reduce(
        lambda a, b: (a[0], a[1] + b[1]), window_function=MyProcessFunction(),
        output_type=Types.STRING(),
    ).execute_and_collect()
    assert sorted(results) == [
        "current window start at 1, reduce result ('a', 6)",
        "current window start at 15, reduce result Row(k='a', v=15)",
        "current window start at 6, reduce result ('a', 23)",
    ]
