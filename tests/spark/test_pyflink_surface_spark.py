"""What a PyFlink window program calls between its source and its sink, on Spark: the
environment's source and defaults, operator names and hints, PyFlink's keyword forms,
``KeyedStream.print()``, full-window functions after ``window_all``, float timestamps and the
runtime context's metric group."""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin.common import Time, Types, WatermarkStrategy
from flinkwin.common.watermark_strategy import TimestampAssigner
from flinkwin.datastream import (
    AggregateFunction,
    OutputTag,
    ProcessWindowFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
)
from flinkwin.datastream.data_stream import DataStream
from flinkwin.datastream.window import TumblingEventTimeWindows
from flinkwin.errors import UnsupportedOperationError
from flinkwin.types import is_pickled_type

PAIRS = Types.TUPLE([Types.STRING(), Types.INT()])


class SecondField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[1]


def stamped(stream: DataStream) -> DataStream:
    return stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(SecondField())
    )


@pytest.fixture
def env(spark: Any, fresh_env: StreamExecutionEnvironment) -> StreamExecutionEnvironment:
    return fresh_env


def test_from_collection_without_type_info_hands_back_the_python_values(
    env: StreamExecutionEnvironment,
) -> None:
    # PyFlink's PICKLED_BYTE_ARRAY: the elements are the collection's objects
    stream = env.from_collection([("a", [1, 2]), ("b", {"x": 3})])
    assert is_pickled_type(stream.get_type())  # PyFlink: PICKLED_BYTE_ARRAY
    assert stream.execute_and_collect() == [("a", [1, 2]), ("b", {"x": 3})]
    words = env.from_collection(["to", "be"], type_info=Types.STRING())
    assert words.map(lambda w: w.upper(), Types.STRING()).execute_and_collect() == ["TO", "BE"]
    typed = env.from_collection([("a", 2**40)], type_info=Types.TUPLE(
        [Types.STRING(), Types.LONG()]))
    assert typed.toDF().collect()[0].asDict() == {"f0": "a", "f1": 2**40}
    with pytest.raises(Exception, match="declared int but got 1.5"):
        env.from_collection([("a", 1.5)], type_info=PAIRS)


def first_per_window(stream: DataStream) -> list[Any]:
    return stamped(stream).key_by(lambda x: x[0], Types.STRING()) \
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))) \
        .reduce(lambda a, b: a, output_type=PAIRS).execute_and_collect()


def test_set_runtime_mode_is_the_mode_of_the_streams_created_afterwards(
    env: StreamExecutionEnvironment,
) -> None:
    data = [("k", 3), ("k", 1)]
    assert first_per_window(env.from_collection(data, PAIRS)) == [("k", 3)]  # arrival order
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    assert first_per_window(env.from_collection(data, PAIRS)) == [("k", 1)]  # event-time order
    df = env.from_collection(data, PAIRS).toDF()
    explicit = DataStream(df, type_info=PAIRS, runtime_mode=RuntimeExecutionMode.STREAMING)
    assert first_per_window(explicit) == [("k", 3)]


def test_set_max_parallelism_is_the_key_groups_of_later_window_stages(
    env: StreamExecutionEnvironment, capsys: Any
) -> None:
    env.set_max_parallelism(7)
    result = stamped(env.from_collection([("k", 1)], PAIRS)).key_by(lambda x: x[0]) \
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))).reduce(lambda a, b: a)
    result.explain()
    assert "key groups : 7" in " ".join(capsys.readouterr().out.split())
    assert result.set_max_parallelism(3) is result
    result.explain()
    assert "key groups : 3" in " ".join(capsys.readouterr().out.split())
    assert result.execute_and_collect() == [("k", 1)]


def test_operator_names_and_hints_return_the_stream_and_name_the_window_stage(
    env: StreamExecutionEnvironment, capsys: Any
) -> None:
    source = env.from_collection([("a", 1), ("a", 4), ("b", 2)], PAIRS)
    assert source.name("source").uid("src-1").set_parallelism(1) is source
    mapped = stamped(source).map(lambda x: (x[0], x[1] * 10), PAIRS)
    for hinted in (mapped.name("times ten"), mapped.set_uid_hash("abc"),
                   mapped.set_description("scales"), mapped.set_max_parallelism(4),
                   mapped.slot_sharing_group("g"), mapped.disable_chaining(),
                   mapped.start_new_chain(), mapped.set_buffer_timeout(10),
                   mapped.force_non_parallel()):
        assert hinted is mapped
    assert mapped.get_name() == "times ten"
    assert mapped.get_execution_environment() is env
    result = mapped.key_by(lambda x: x[0], Types.STRING()) \
        .window(TumblingEventTimeWindows.of(Time.milliseconds(100))) \
        .reduce(lambda a, b: (a[0], a[1] + b[1]), output_type=PAIRS) \
        .name("totals").uid("totals-1")
    result.explain()
    out = " ".join(capsys.readouterr().out.split())
    assert "name : totals" in out and "uid : totals-1" in out
    assert sorted(result.execute_and_collect()) == [("a", 50), ("b", 20)]
    with pytest.raises(ValueError, match="parallelism must be positive"):
        mapped.set_parallelism(0)
    with pytest.raises(UnsupportedOperationError, match=r"sink_to\(\): connectors are"):
        result.sink_to(object())


class CountSum(AggregateFunction):
    def create_accumulator(self) -> Any:
        return 0, 0

    def add(self, value: Any, accumulator: Any) -> Any:
        return accumulator[0] + 1, accumulator[1] + value[1]

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, a: Any, b: Any) -> Any:
        return a[0] + b[0], a[1] + b[1]


class WithKey(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        count, total = next(iter(elements))
        return [(key, context.window().start, count, total)]


def test_pyflinks_keyword_forms_work(env: StreamExecutionEnvironment) -> None:
    late = OutputTag("late", PAIRS)
    out = Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT(), Types.INT()])
    data = [("a", 1), ("a", 2), ("b", 15), ("a", 30), ("a", 3)]
    keyed = stamped(env.from_collection(data, type_info=PAIRS)) \
        .map(func=lambda x: x, output_type=PAIRS) \
        .key_by(key_selector=lambda x: x[0], key_type=Types.STRING())
    windowed = keyed.window(window_assigner=TumblingEventTimeWindows.of(Time.milliseconds(10))) \
        .allowed_lateness(time_ms=0).side_output_late_data(output_tag=late)
    aggregated = windowed.aggregate(aggregate_function=CountSum(), window_function=WithKey(),
                                    accumulator_type=Types.TUPLE([Types.INT(), Types.INT()]),
                                    output_type=out)
    assert sorted(aggregated.execute_and_collect()) == [
        ("a", 0, 3, 6), ("a", 30, 1, 30), ("b", 10, 1, 15)]
    reduced = keyed.window(TumblingEventTimeWindows.of(Time.milliseconds(10))).reduce(
        reduce_function=lambda a, b: (a[0], a[1] + b[1]), window_function=None,
        output_type=PAIRS)
    assert sorted(reduced.execute_and_collect()) == [("a", 6), ("a", 30), ("b", 15)]
    processed = keyed.window(TumblingEventTimeWindows.of(Time.milliseconds(100))).process(
        process_window_function=Totals(), output_type=PAIRS)
    assert sorted(processed.execute_and_collect()) == [("a", 36), ("b", 15)]
    everything = stamped(env.from_collection(data, type_info=PAIRS)).window_all(
        window_assigner=TumblingEventTimeWindows.of(Time.milliseconds(100)))
    assert everything.reduce(lambda a, b: ("all", a[1] + b[1]),
                             output_type=PAIRS).execute_and_collect() == [("all", 51)]
    seen: list[Any] = []

    class Collect:
        def invoke(self, value: Any, context: Any) -> None:
            seen.append(value)

    keyed.add_sink(sink_func=Collect())
    assert sorted(seen) == sorted(data)


class Totals(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        return [(key, sum(e[1] for e in elements))]


def test_a_keyed_stream_prints_its_elements(env: StreamExecutionEnvironment, capsys: Any) -> None:
    env.from_collection([("a", 1), ("b", 2)], PAIRS).key_by(lambda x: x[0]).print("keyed")
    assert sorted(capsys.readouterr().out.splitlines()) == ["keyed> (a,1)", "keyed> (b,2)"]


class CountAll(ProcessWindowFunction):
    """Written for window_all with PyFlink's ``from pyflink.datastream import
    ProcessWindowFunction``: PyFlink calls ``process(context, elements)`` there."""

    def process(self, context: Any, elements: Any) -> Any:  # type: ignore[override]
        return [(context.window().start, len(list(elements)))]


def test_window_all_process_calls_any_process_window_function_as_pyflink_does(
    env: StreamExecutionEnvironment,
) -> None:
    stream = stamped(env.from_collection([("a", 1), ("b", 2), ("a", 12)], PAIRS))
    result = stream.window_all(TumblingEventTimeWindows.of(Time.milliseconds(10))).process(
        CountAll(), Types.TUPLE([Types.LONG(), Types.INT()]))
    assert sorted(result.execute_and_collect()) == [(0, 2), (10, 1)]
    with pytest.raises(TypeError, match=r"PyFlink calls process\(key, context, elements\)"):
        stream.key_by(lambda x: x[0]).window(
            TumblingEventTimeWindows.of(Time.milliseconds(10))).process(CountAll())


class FractionalTime(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> float:
        return value[1] / 10  # 99 -> 9.9 ms, truncated to 9 as PyFlink's LONG coder does


def test_timestamps_returned_as_floats_are_truncated_as_in_pyflink(
    env: StreamExecutionEnvironment,
) -> None:
    stream = env.from_collection([("a", 99), ("a", 100), ("a", 101)], PAIRS)
    result = stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FractionalTime())
    ).key_by(lambda x: x[0]).window(TumblingEventTimeWindows.of(Time.milliseconds(10))) \
        .process(WindowStart(), Types.TUPLE([Types.LONG(), Types.INT()]))
    assert sorted(result.execute_and_collect()) == [(0, 1), (10, 2)]


class WindowStart(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        return [(context.window().start, len(list(elements)))]


class Counted(ProcessWindowFunction):
    """Counts the windows it fires with its runtime context's metric group."""

    def open(self, runtime_context: Any) -> None:
        self.fired = runtime_context.get_metrics_group().add_group("windows").counter("fired")

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        self.fired.inc()
        group = self.get_runtime_context().get_metrics_group()
        return [(context.window().start, group.get_metrics()["windows.fired"])]


def test_the_runtime_contexts_metric_group_counts(env: StreamExecutionEnvironment) -> None:
    stream = stamped(env.from_collection([("a", 1), ("a", 11), ("a", 21)], PAIRS))
    result = stream.key_by(lambda x: x[0]).window(
        TumblingEventTimeWindows.of(Time.milliseconds(10))).process(
        Counted(), Types.TUPLE([Types.LONG(), Types.INT()]))
    assert sorted(result.execute_and_collect()) == [(0, 1), (10, 2), (20, 3)]


def test_a_name_neither_the_stream_nor_its_data_frame_has_is_named_with_close_matches(
    env: StreamExecutionEnvironment,
) -> None:
    """A stream hands unknown names to its DataFrame (``stream.columns``); a name neither has
    fails naming the stream and the stream's close names, not Spark's DataFrame error."""
    stream = env.from_collection([("a", 1)], type_info=PAIRS)
    assert stream.columns == ["f0", "f1"]
    with pytest.raises(AttributeError, match=r"'DataStream' object has no attribute "
                       r"'key_bi'.*Did you mean key_by\?"):
        stream.key_bi(lambda v: v[0])
    with pytest.raises(AttributeError, match="neither the stream nor its DataFrame"):
        stream.no_such_thing  # noqa: B018
