"""Ports of Apache Flink's own streaming examples, checked against the outputs Flink's tests
hold for them.

Source: apache/flink, ``flink-examples/flink-examples-streaming`` (``src/main/java/org/apache/
flink/streaming/examples/`` and the tests of ``src/test``: ``StreamingExamplesITCase``,
``TopSpeedWindowingExampleITCase``, ``SessionWindowingITCase``, ``WindowJoinITCase``). Each
program is the Java one written with flinkwin's Java-named API (``keyBy``, ``countWindow``,
``maxBy``...), over the same elements; Flink's data is in ``flink_example_data.py``. Each runs
on a static DataFrame (Flink's bounded input: every window that the end of input closes fires)
and as a streaming query over several micro-batches (files of the same elements, one per
micro-batch): there the watermark stops at the last element's, so the windows still open at the
end of a stream are not fired, as in Flink on an unbounded source.

Adaptations, where Flink's example is not reproducible as written:

- ``SessionWindowing``'s source emits ``Watermark(timestamp - 1)`` after each element, which
  neither PyFlink nor flinkwin can declare; ``forMonotonousTimestamps()`` gives the same
  watermark values (the timestamps ascend), and Flink's expected output does not depend on when
  the watermarks arrive (no element is late).
- ``WindowJoinITCase`` and ``WindowWordCount``'s test only check the lines' shape: the join runs
  in ingestion time (``System.currentTimeMillis()``), the tokenizers in parallel. The join here
  takes each line's first field (the data's time column) as its event time, in 5 ms windows
  (the window of Flink's first ``WindowJoin``); its expected pairs are worked out from Flink's
  semantics in the test. ``countWindow`` counts identical ``(word, 1)`` elements, so its output
  does not depend on their order: worked out in the test too.

Also PyFlink's ``windowing/tumbling_time_window_with_continuous_trigger.py``
(``flink-python/pyflink/examples/datastream``), which ``tests/spark/pyflink_examples`` does not
cover; it has no test of Flink's, its output is worked out from Flink's semantics.

``SideOutputExample`` has no test of Flink's. As written it drops the result of
``text.assignTimestampsAndWatermarks(...)``, so its event-time window gets elements without
timestamps and Flink's job fails; the port fails the same way. Its intended program runs in
ingestion time; here every line gets the timestamp 0 instead (the whole small input in one
5 s window, as it arrives in Flink).

Not ported: ``GroupedProcessingTimeWindowExample`` and ``SocketWindowWordCount`` (processing
time, an endless generator or a socket), ``IncrementalLearningSkeleton`` (``connect``, which
flinkwin refuses), ``IterateExample`` (iterations), and the examples of other APIs or of
connectors (async I/O, broadcast state, Kafka, CEP, DataStream V2).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flink_example_data import (
    CAR_DATA,
    GRADES_INPUT,
    SALARIES_INPUT,
    SESSION_WINDOWING_EXPECTED,
    TOP_CASE_CLASS_SPEEDS,
    TOP_SPEEDS,
    WORD_COUNT_TEXT,
    WORD_COUNTS,
    join_lines,
)
from spark_scenarios import write_batches

from flinkwin import (
    ContinuousEventTimeTrigger,
    DeltaTrigger,
    EventTimeSessionWindows,
    GlobalWindows,
    KeyedProcessFunction,
    KeySelector,
    OutputTag,
    ProcessWindowFunction,
    Time,
    TimeEvictor,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.common.watermark_strategy import TimestampAssigner
from flinkwin.datastream import DataStream, RuntimeExecutionMode, StreamExecutionEnvironment
from flinkwin.spark import MemorySink


@pytest.fixture(autouse=True)
def _session(spark: Any, fresh_env: Any) -> None:
    """The programs run on the shared session, each with a fresh environment."""


def parse_tuple(line: str) -> tuple[str, ...]:
    """A ``(f0,f1,...)`` line of Flink's data (Flink's tuple ``toString``)."""
    return tuple(line[1:-1].split(","))


def stream_of(spark: Any, directory: Path, schema: str, batches: list[list[dict[str, Any]]],
              type_info: Any) -> DataStream:
    """A streaming DataFrame reading ``batches``, one file per micro-batch."""
    write_batches(directory, batches)
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(directory))
    return DataStream(df, type_info=type_info)


#: the streaming programs: name -> ``build(spark, directory)``, the result to run as a query
STREAM_PROGRAMS: dict[str, Callable[[Any, Path], Any]] = {}


def stream_program(build: Callable[[Any, Path], Any]) -> Callable[[Any, Path], Any]:
    STREAM_PROGRAMS[build.__name__] = build
    return build


@pytest.fixture(scope="module")
def streams(spark: Any, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[Callable[[str], list[tuple[Any, ...]]]]:
    """Every program of ``STREAM_PROGRAMS`` started at once as a streaming query (with a
    fresh environment), to the end of its input: independent queries, their micro-batches
    overlap instead of waiting for one another. ``streams(name)`` awaits one and returns its
    outputs in order."""
    base = tmp_path_factory.mktemp("examples")
    started = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(StreamExecutionEnvironment, "_current", None)
        for name, build in STREAM_PROGRAMS.items():
            sink = MemorySink(name)
            query = build(spark, base / name / "in").start(
                main=sink, checkpoint_location=str(base / name / "cp"),
                trigger={"availableNow": True})
            started[name] = (query, sink)

    def outputs(name: str) -> list[tuple[Any, ...]]:
        query, sink = started[name]
        query.awaitTermination()
        return [tuple(r) for b in sorted(sink.batches) for r in sink.batches[b]]

    yield outputs
    for query, _ in started.values():
        query.stop()


def by_key(rows: list[tuple[Any, ...]]) -> dict[Any, list[tuple[Any, ...]]]:
    """Each key's (field 0's) outputs, in output order (Flink's order within a key)."""
    keyed: dict[Any, list[tuple[Any, ...]]] = {}
    for row in rows:
        keyed.setdefault(row[0], []).append(row)
    return keyed


def split(items: list[Any], parts: int) -> list[list[Any]]:
    size = -(-len(items) // parts)
    return [items[i:i + size] for i in range(0, len(items), size)]


# ------------------------------------------------------------------ TopSpeedWindowing

CAR = Types.TUPLE([Types.INT(), Types.INT(), Types.DOUBLE(), Types.LONG()])
CAR_SCHEMA = "f0 int, f1 int, f2 double, f3 long"


def parse_car(line: str) -> tuple[int, int, float, int]:
    """``TopSpeedWindowing.ParseCarData``."""
    car_id, speed, distance, timestamp = parse_tuple(line)
    return int(car_id), int(speed), float(distance), int(timestamp)


class CarTimestamp(TimestampAssigner):
    """``TopSpeedWindowing.CarTimestamp`` (an ``AscendingTimestampExtractor`` of ``f3``)."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[3]


def distance_delta(old: Any, new: Any) -> float:
    """The example's ``DeltaFunction``: ``newDataPoint.f2 - oldDataPoint.f2``."""
    return new[2] - old[2]


def top_speed_windowing(car_data: DataStream) -> Any:
    """``TopSpeedWindowing.main``'s pipeline: every 50 m (``DeltaTrigger``) a car's top speed
    over its last 10 s (``TimeEvictor``)."""
    eviction_sec, trigger_meters = 10, 50.0
    return (car_data
            .assignTimestampsAndWatermarks(
                WatermarkStrategy.forMonotonousTimestamps().withTimestampAssigner(CarTimestamp()))
            .keyBy(lambda value: value[0], key_type=Types.INT())
            .window(GlobalWindows.create())
            .evictor(TimeEvictor.of(Time.seconds(eviction_sec)))
            .trigger(DeltaTrigger.of(trigger_meters, distance_delta, CAR))
            .maxBy(1))


def assert_top_speeds(rows: list[tuple[Any, ...]]) -> None:
    expected = [parse_car(line) for line in TOP_SPEEDS.splitlines()]
    assert sorted(rows) == sorted(expected)
    assert by_key(rows) == by_key(expected)


def test_top_speed_windowing(spark: Any) -> None:
    """Flink: TopSpeedWindowingExampleITCase (``TopSpeedWindowing`` over
    ``TopSpeedWindowingExampleData.CAR_DATA``; expected ``TOP_SPEEDS``, each car's in Flink's
    order): GlobalWindows, DeltaTrigger, TimeEvictor and maxBy on a bounded input."""
    df = spark.createDataFrame([parse_car(line) for line in CAR_DATA.splitlines()], CAR_SCHEMA)
    rows = [tuple(r) for r in top_speed_windowing(DataStream(df, type_info=CAR)).toDF().collect()]
    assert_top_speeds(rows)


#: the Scala example's ``case class CarEvent(carId: Int, speed: Int, distance: Double,
#: time: Long)`` as a DataFrame's columns (its elements Rows)
CAR_EVENT_SCHEMA = "carId int, speed int, distance double, time long"


def test_top_speed_windowing_scala_case_class(spark: Any) -> None:
    """Flink: the Scala ``TopSpeedWindowing`` (``CarEvent`` case class,
    ``assignAscendingTimestamps(_.time)``, ``keyBy(_.carId)``, ``maxBy("speed")``) over
    ``CAR_DATA``, expected ``TopSpeedWindowingExampleData.TOP_CASE_CLASS_SPEEDS``, each car's
    in Flink's order; the elements are Rows with named fields."""
    df = spark.createDataFrame([parse_car(line) for line in CAR_DATA.splitlines()],
                               CAR_EVENT_SCHEMA)
    top_speeds = (DataStream(df)
                  .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps()
                                                 .withTimestampAssigner(lambda c, ts: c.time))
                  .keyBy(lambda c: c.carId, key_type=Types.INT())
                  .window(GlobalWindows.create())
                  .evictor(TimeEvictor.of(Time.seconds(10)))
                  .trigger(DeltaTrigger.of(50.0, lambda old, new: new.distance - old.distance,
                                           Types.PICKLED_BYTE_ARRAY()))
                  .maxBy("speed"))
    rows = [f"CarEvent({r.carId},{r.speed},{r.distance!r},{r.time})"
            for r in top_speeds.toDF().collect()]
    expected = TOP_CASE_CLASS_SPEEDS.splitlines()
    assert sorted(rows) == sorted(expected)
    for car in ("CarEvent(0,", "CarEvent(1,"):
        assert [r for r in rows if r.startswith(car)] == [r for r in expected if r.startswith(car)]


@stream_program
def top_speeds_stream(spark: Any, directory: Path) -> Any:
    cars = [dict(zip(("f0", "f1", "f2", "f3"), parse_car(line)))
            for line in CAR_DATA.splitlines()]
    return top_speed_windowing(stream_of(spark, directory, CAR_SCHEMA, split(cars, 2), CAR))


def test_top_speed_windowing_stream(streams: Any) -> None:
    """Flink: TopSpeedWindowingExampleITCase over a stream of ``CAR_DATA`` in 2 micro-batches:
    the trigger fires on elements only, so the stream gives all of ``TOP_SPEEDS``, each car's
    in Flink's order, the trigger's last element and the evictor's window carried across
    micro-batches."""
    assert_top_speeds(streams("top_speeds_stream"))


# ------------------------------------------------------------------ SessionWindowing

#: ``SessionWindowing.main``'s input: (key, timestamp, count)
SESSION_INPUT = [("a", 1, 1), ("b", 1, 1), ("b", 3, 1), ("b", 5, 1), ("c", 6, 1), ("a", 10, 1),
                 ("c", 11, 1)]
SESSION = Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()])
SESSION_SCHEMA = "f0 string, f1 long, f2 int"


def session_windowing(source: DataStream) -> Any:
    """``SessionWindowing.main``'s pipeline: sessions of 3 ms per key, ``sum(2)``."""
    return (source
            .assignTimestampsAndWatermarks(WatermarkStrategy.forMonotonousTimestamps()
                                           .withTimestampAssigner(lambda value, ts: value[1]))
            .keyBy(lambda value: value[0], key_type=Types.STRING())
            .window(EventTimeSessionWindows.withGap(Time.milliseconds(3)))
            .sum(2))


def expected_sessions() -> list[tuple[Any, ...]]:
    return sorted((k, int(t), int(c)) for k, t, c in
                  map(parse_tuple, SESSION_WINDOWING_EXPECTED.splitlines()))


def test_session_windowing(spark: Any) -> None:
    """Flink: SessionWindowingITCase (``SessionWindowing``, expected
    ``SessionWindowingData.EXPECTED``): event-time session windows, summed, on a bounded
    input."""
    df = spark.createDataFrame(SESSION_INPUT, SESSION_SCHEMA)
    rows = session_windowing(DataStream(df, type_info=SESSION)).toDF().collect()
    assert sorted(tuple(r) for r in rows) == expected_sessions()


@stream_program
def sessions_stream(spark: Any, directory: Path) -> Any:
    rows = [dict(zip(("f0", "f1", "f2"), e)) for e in SESSION_INPUT]
    return session_windowing(stream_of(spark, directory, SESSION_SCHEMA,
                                       [rows[:3], rows[3:5], rows[5:]], SESSION))


def test_session_windowing_stream(streams: Any) -> None:
    """Flink: SessionWindowingITCase over a stream of 3 micro-batches (b's session merges
    across two): the watermark ends at 10 (the last element's 11 - 1), so Flink's sessions
    (a,10) and (c,11), which need 12 and 13, stay open; the others are Flink's."""
    assert sorted(streams("sessions_stream")) == [e for e in expected_sessions() if e[1] < 10]


# ------------------------------------------------------------------ WordCount, WindowWordCount

WORD = Types.TUPLE([Types.STRING(), Types.INT()])


def tokenizer(value: str) -> Iterator[tuple[str, int]]:
    """``WordCount.Tokenizer``: ``value.toLowerCase().split("\\\\W+")``, non-empty tokens."""
    for token in re.split(r"[^a-zA-Z0-9_]+", value.lower()):
        if token:
            yield token, 1


def word_counts() -> dict[str, int]:
    tokens = WORD_COUNTS.split()
    return {tokens[i]: int(tokens[i + 1]) for i in range(0, len(tokens), 2)}


def text_static(spark: Any) -> DataStream:
    """``WordCountData.TEXT`` as a bounded stream of lines."""
    df = spark.createDataFrame([(line,) for line in WORD_COUNT_TEXT.splitlines()], "line string")
    return DataStream(df, type_info=Types.STRING())


def text_stream(spark: Any, directory: Path, parts: int = 2) -> DataStream:
    """``WordCountData.TEXT`` as a stream of lines, ``parts`` micro-batches."""
    lines = [{"line": line} for line in WORD_COUNT_TEXT.splitlines()]
    return stream_of(spark, directory, "line string", split(lines, parts), Types.STRING())


def word_count(text: DataStream) -> Any:
    """``WordCount``'s pipeline: ``flatMap(new Tokenizer()).keyBy(value -> value.f0).sum(1)``."""
    return (text.flatMap(tokenizer, output_type=WORD)
            .keyBy(lambda value: value[0], key_type=Types.STRING())
            .sum(1))


def window_word_count(text: DataStream, window_size: int, slide_size: int) -> Any:
    """``WindowWordCount``'s pipeline: ``countWindow(windowSize, slideSize).sum(1)``."""
    return (text.flatMap(tokenizer, output_type=WORD)
            .keyBy(lambda value: value[0], key_type=Types.STRING())
            .countWindow(window_size, slide_size)
            .sum(1))


def expected_count_windows(size: int, slide: int) -> list[tuple[str, int]]:
    """Flink's ``countWindow(size, slide)`` (GlobalWindows, CountEvictor.of(size),
    CountTrigger.of(slide)) over a word's ``n`` identical ``(word, 1)``: a firing at every
    ``slide``-th element, summing the last ``size`` of them."""
    return sorted((word, min(size, k * slide)) for word, n in word_counts().items()
                  for k in range(1, n // slide + 1))


def test_word_count_text_is_flinks_counts() -> None:
    """The transcribed data agree: ``WordCountData.TEXT`` split by the tokenizer counts to
    ``WordCountData.COUNTS``."""
    words = Counter(w for line in WORD_COUNT_TEXT.splitlines() for w, _ in tokenizer(line))
    assert dict(words) == word_counts()


def test_word_count(spark: Any, fresh_env: Any) -> None:
    """Flink: StreamingExamplesITCase#testWordCount (``WordCount`` with ``--execution-mode
    automatic`` over ``WordCountData.TEXT``, expected ``WordCountData.COUNTS_AS_TUPLES``): a
    bounded input in AUTOMATIC mode runs in BATCH, the rolling sum emitting each word's final
    count only."""
    fresh_env.set_runtime_mode(RuntimeExecutionMode.AUTOMATIC)
    rows = word_count(text_static(spark)).toDF().collect()
    assert sorted(tuple(r) for r in rows) == sorted(word_counts().items())


@stream_program
def word_count_stream(spark: Any, directory: Path) -> Any:
    return word_count(text_stream(spark, directory))


def test_word_count_stream(streams: Any) -> None:
    """Flink: ``WordCount`` in STREAMING mode (``WordCountData.STREAMING_COUNTS_AS_TUPLES``:
    each word's running counts 1..n, in order) over 2 micro-batches."""
    got = by_key(streams("word_count_stream"))
    assert got == {w: [(w, i) for i in range(1, n + 1)] for w, n in word_counts().items()}


def test_window_word_count(spark: Any) -> None:
    """Flink: StreamingExamplesITCase#testWindowWordCount (``WindowWordCount --window 25
    --slide 15`` over ``WordCountData.TEXT``): the three words seen 15 times or more, once
    each."""
    rows = window_word_count(text_static(spark), 25, 15).toDF().collect()
    assert sorted(tuple(r) for r in rows) == expected_count_windows(25, 15)
    assert expected_count_windows(25, 15) == [("der", 15), ("die", 15), ("und", 15)]


@stream_program
def window_word_count_stream(spark: Any, directory: Path) -> Any:
    return window_word_count(text_stream(spark, directory), 10, 5)


def test_window_word_count_stream(streams: Any) -> None:
    """Flink: ``WindowWordCount`` with its defaults (``--window 10 --slide 5``) over
    ``WordCountData.TEXT`` in 2 micro-batches: count windows carried across micro-batches."""
    assert sorted(streams("window_word_count_stream")) == \
        expected_count_windows(10, 5)


# ------------------------------------------------------------------ WindowJoin

GRADE = Types.TUPLE([Types.STRING(), Types.INT()])
JOINED = Types.TUPLE([Types.STRING(), Types.INT(), Types.INT()])
WINDOW_MS = 5


class NameKeySelector(KeySelector):
    """``WindowJoin.NameKeySelector``."""

    def get_key(self, value: Any) -> str:
        return value[0]


def parser(value: str) -> tuple[str, int]:
    """``WindowJoinITCase.Parser``: ``(fields[1], Integer.parseInt(fields[2]))``."""
    fields = value.split(",")
    return fields[1], int(fields[2])


def timed(lines: DataStream) -> DataStream:
    """The ITCase's ``assignTimestampsAndWatermarks(...).map(new Parser())``, the timestamp
    taken from the line's first field instead of the wall clock."""
    return (lines.assignTimestampsAndWatermarks(
        WatermarkStrategy.forMonotonousTimestamps()
        .withTimestampAssigner(lambda line, ts: int(line.split(",")[0])))
        .map(parser, output_type=GRADE))


def run_window_join(grades: DataStream, salaries: DataStream, window_size: int) -> Any:
    """``WindowJoin.runWindowJoin``."""
    return (grades.join(salaries)
            .where(NameKeySelector())
            .equalTo(NameKeySelector())
            .window(TumblingEventTimeWindows.of(Time.milliseconds(window_size)))
            .apply(lambda first, second: (first[0], first[1], second[1]), JOINED))


def expected_join(window_size: int, closed_before: int) -> list[tuple[str, int, int]]:
    """Flink's window join: per window of ``window_size`` ms (those ending by
    ``closed_before``) and name, every grade with every salary."""
    grades = [(int(t), n, int(g)) for t, n, g in (x.split(",") for x in join_lines(GRADES_INPUT))]
    salaries = [(int(t), n, int(s)) for t, n, s in
                (x.split(",") for x in join_lines(SALARIES_INPUT))]
    return sorted((name, grade, salary) for tg, name, grade in grades
                  for ts, other, salary in salaries
                  if name == other and tg // window_size == ts // window_size
                  and (tg // window_size + 1) * window_size <= closed_before)


@pytest.mark.parametrize("window_ms", [WINDOW_MS, 100])
def test_window_join(spark: Any, window_ms: int) -> None:
    """Flink: StreamingExamplesITCase#testWindowJoin / WindowJoinITCase
    (``WindowJoin.runWindowJoin`` over ``WindowJoinData``), event time from the data's first
    field, 5 ms windows and the ITCase's 100 ms (one window: every grade of a name with every
    salary of it); " tom" (with its space) is a key of its own, joining nothing."""
    def lines(data: str) -> DataStream:
        df = spark.createDataFrame([(x,) for x in join_lines(data)], "line string")
        return timed(DataStream(df, type_info=Types.STRING()))

    rows = run_window_join(lines(GRADES_INPUT), lines(SALARIES_INPUT), window_ms) \
        .toDF().collect()
    assert sorted(tuple(r) for r in rows) == expected_join(window_ms, 100)


@stream_program
def window_join_stream(spark: Any, directory: Path) -> Any:
    def lines(name: str, data: str) -> DataStream:
        rows = [{"line": x} for x in join_lines(data)]
        return timed(stream_of(spark, directory / name, "line string", split(rows, 2),
                               Types.STRING()))

    return run_window_join(lines("grades", GRADES_INPUT), lines("salaries", SALARIES_INPUT),
                           WINDOW_MS)


def test_window_join_stream(streams: Any) -> None:
    """Flink: WindowJoinITCase over two streams of 2 micro-batches each: the join's watermark
    is the smaller input's, grades' 13 (its last time 14 - 1), so the windows [0, 5) and
    [5, 10) fire and [10, 15), [15, 20) stay open."""
    assert sorted(streams("window_join_stream")) == \
        expected_join(WINDOW_MS, 10)


# ------------------------------------------------------------------ PyFlink: continuous trigger

#: the PyFlink example's source
HI = [('hi', 1), ('hi', 2), ('hi', 3), ('hi', 4), ('hi', 5), ('hi', 8), ('hi', 9), ('hi', 15)]
HI_TYPE = Types.TUPLE([Types.STRING(), Types.INT()])


class MyTimestampAssigner(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


class CountWindowProcessFunction(ProcessWindowFunction):
    def process(self, key: str, context: ProcessWindowFunction.Context,
                elements: Iterable[tuple]) -> Iterable[tuple]:
        return [(key, context.window().start, context.window().end,
                 len([e for e in elements]))]

    def clear(self, context: ProcessWindowFunction.Context) -> None:
        pass


def continuous_trigger_example(data_stream: DataStream) -> Any:
    """The PyFlink example's pipeline, as written there."""
    watermark_strategy = WatermarkStrategy.for_monotonous_timestamps() \
        .with_timestamp_assigner(MyTimestampAssigner())
    return data_stream.assign_timestamps_and_watermarks(watermark_strategy) \
        .key_by(lambda x: x[0], key_type=Types.STRING()) \
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10))) \
        .trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(5))) \
        .process(CountWindowProcessFunction(),
                 Types.TUPLE([Types.STRING(), Types.INT(), Types.INT(), Types.INT()]))


def test_tumbling_time_window_with_continuous_trigger(fresh_env: Any) -> None:
    """PyFlink: windowing/tumbling_time_window_with_continuous_trigger.py on its
    ``from_collection`` source. The bounded input's only watermark is the end of input's
    (Flink's periodic watermark does not come between these few elements), which fires
    [0, 10)'s timers 5 (its next firing, 9) and 9 (its end) with all 7 elements, twice, and
    [10, 20)'s one timer 19 (firing and end) once."""
    fresh_env.set_parallelism(1)
    data_stream = fresh_env.from_collection(HI, type_info=HI_TYPE)
    assert sorted(continuous_trigger_example(data_stream).execute_and_collect()) == [
        ('hi', 0, 10, 7), ('hi', 0, 10, 7), ('hi', 10, 20, 1)]


@stream_program
def continuous_trigger_stream(spark: Any, directory: Path) -> Any:
    rows = [{"f0": k, "f1": t} for k, t in HI]
    return continuous_trigger_example(stream_of(spark, directory, "f0 string, f1 int",
                                                [rows[:3], rows[3:6], rows[6:]], HI_TYPE))


def test_tumbling_time_window_with_continuous_trigger_stream(streams: Any) -> None:
    """The same program over micro-batches 1-3, 4-8, 9-15: batch 2's watermark 7 fires the
    early timer 5 with the 6 elements before it (the next firing: 9), the watermark 14 after
    the last batch fires 9 with all 7; [10, 20) waits for 19."""
    assert streams("continuous_trigger_stream") == [
        ('hi', 0, 10, 6), ('hi', 0, 10, 7)]


# ------------------------------------------------------------------ SideOutputExample

REJECTED = OutputTag("rejected", Types.STRING())


class SideOutputTokenizer(KeyedProcessFunction):
    """``SideOutputExample.Tokenizer``: words longer than 5 characters to the side output."""

    def process_element(self, value: str, ctx: KeyedProcessFunction.Context
                        ) -> Iterator[tuple[str, int]]:
        for token in re.split(r"[^a-zA-Z0-9_]+", value.lower()):
            if len(token) > 5:
                ctx.output(REJECTED, token)
            elif len(token) > 0:
                yield token, 1


def side_output_example(text: DataStream) -> tuple[Any, Any]:
    """``SideOutputExample.main``'s pipeline after its source: (counts, rejected words)."""
    tokenized = (text.keyBy(lambda value: 0, key_type=Types.INT())
                 .process(SideOutputTokenizer(), output_type=WORD))
    rejected_words = tokenized.getSideOutput(REJECTED) \
        .map(lambda value: "rejected: " + value, output_type=Types.STRING())
    counts = (tokenized.keyBy(lambda value: value[0], key_type=Types.STRING())
              .window(TumblingEventTimeWindows.of(Time.seconds(5)))
              .sum(1))
    return counts, rejected_words


def lines_of_text(env: Any) -> DataStream:
    return env.from_collection(WORD_COUNT_TEXT.splitlines(), type_info=Types.STRING())


def test_side_output_example_as_written_fails_as_flinks(fresh_env: Any) -> None:
    """Flink: ``SideOutputExample`` as written: ``text.assignTimestampsAndWatermarks(...)``'s
    result is dropped, the window's elements have no timestamp and Flink's
    ``TumblingEventTimeWindows`` throws "Record has Long.MIN_VALUE timestamp"."""
    text = lines_of_text(fresh_env)
    text.assignTimestampsAndWatermarks(
        WatermarkStrategy.forMonotonousTimestamps().withTimestampAssigner(lambda v, ts: 0))
    counts, _ = side_output_example(text)
    with pytest.raises(Exception, match="Long.MIN_VALUE timestamp"):
        counts.execute_and_collect()


def test_side_output_example(fresh_env: Any) -> None:
    """Flink: ``SideOutputExample`` as intended (the strategy's stream used), every line at
    time 0, over ``WordCountData.TEXT``: the words of at most 5 characters counted in their
    one window, the longer ones on the side output, prefixed "rejected: "."""
    text = lines_of_text(fresh_env).assignTimestampsAndWatermarks(
        WatermarkStrategy.forMonotonousTimestamps().withTimestampAssigner(lambda v, ts: 0))
    counts, rejected_words = side_output_example(text)
    assert sorted(counts.execute_and_collect()) == sorted(
        (w, n) for w, n in word_counts().items() if len(w) <= 5)
    words = [w for line in WORD_COUNT_TEXT.splitlines() for w, _ in tokenizer(line)]
    assert sorted(rejected_words.execute_and_collect()) == sorted(
        "rejected: " + w for w in words if len(w) > 5)
