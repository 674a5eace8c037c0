"""Process functions on Spark, end to end: ``KeyedStream.process(KeyedProcessFunction)`` with
keyed state, event-time timers, ``ctx.timestamp()`` and side outputs on static input and on a
stream split three ways (same results: Flink's results do not depend on micro-batch
boundaries here), a processing-time timer firing in a later micro-batch,
``DataStream.process(ProcessFunction)``, PyFlink's refusal of other functions, and Flink's
HotItems example (a sliding window's counts feeding a keyed top-N process function) on static
input, over micro-batches, and as a user's script with its classes in ``__main__``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hot_items_driver import RULE, USER_BEHAVIOR, TopNHotItems, hot_items, java_timestamp
from spark_scenarios import write_batches

from flinkwin import (
    Duration,
    KeyedProcessFunction,
    MapFunction,
    OutputTag,
    ProcessFunction,
    TimeDomain,
    Types,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink

SCHEMA = "k string, v long, ts long"
TIMEOUT_MS = 10_000
NEGATIVE = OutputTag("negative", Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()]))
COUNTS = "k string, count long, total long, ts long"


def ev(k: str, v: int, ts: int) -> dict[str, Any]:
    return {"k": k, "v": v, "ts": ts}


def stamped(df: Any) -> DataStream:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(0)).with_timestamp_assigner("ts")
    return DataStream(df).assign_timestamps_and_watermarks(strategy)


def file_stream(spark: Any, directory: Path) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(directory))


def run(result: Any, checkpoint: Path, name: str, sides: tuple[OutputTag, ...] = ()
        ) -> tuple[dict[int, list[Any]], dict[str, dict[int, list[Any]]], list[Any]]:
    """Run to the end of the input under availableNow: each batch's main and side rows, and
    the progress of each batch."""
    main = MemorySink(f"{name}_main")
    side_sinks = {tag: MemorySink(f"{name}_{tag.tag_id}") for tag in sides}
    query = result.start(main=main, side_outputs=side_sinks,
                         checkpoint_location=str(checkpoint), trigger={"availableNow": True})
    query.awaitTermination()
    return (
        {b: [tuple(r) for r in rows] for b, rows in main.batches.items()},
        {t.tag_id: {b: [tuple(r) for r in rows] for b, rows in s.batches.items()}
         for t, s in side_sinks.items()},
        sorted(query.recentProgress, key=lambda p: p["batchId"]),
    )


def flat(batches: dict[int, list[Any]]) -> list[Any]:
    return [r for b in sorted(batches) for r in batches[b]]


# ------------------------------------------------- KeyedProcessFunction with event time
class CountWithTimeoutFunction(KeyedProcessFunction):
    """Flink's ``CountWithTimeoutFunction`` (the ProcessFunction documentation's example, as in
    PyFlink's): per key a count and the last element's timestamp in ``ValueState``; an
    event-time timer ``TIMEOUT_MS`` after each element; the timer of the key's last element
    emits (key, count, sum, timer timestamp) and clears the state. Negative values also go to
    the ``NEGATIVE`` side output with their timestamp."""

    def open(self, runtime_context: Any) -> None:
        self.state = runtime_context.get_state(
            ValueStateDescriptor("my_state", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value: Any, ctx: Any) -> None:
        current = self.state.value() or (0, 0, 0)
        count, total, last = current[0] + 1, current[1] + value.v, ctx.timestamp()
        self.state.update((count, total, last))
        ctx.timer_service().register_event_time_timer(last + TIMEOUT_MS)
        if value.v < 0:
            ctx.output(NEGATIVE, (value.k, value.v, ctx.timestamp()))

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        result = self.state.value()
        if result is not None and timestamp == result[2] + TIMEOUT_MS:
            assert ctx.time_domain() is TimeDomain.EVENT_TIME
            self.state.clear()
            yield ctx.get_current_key(), result[0], result[1], ctx.timestamp()


#: a key's elements come before any timeout of that key: no split of them into micro-batches
#: changes Flink's results (a@2000 is out of order: the last element sets the key's timer)
EVENTS = [
    ev("a", 1, 1000), ev("b", 10, 1500), ev("a", 2, 3000), ev("a", -5, 2000),
    ev("b", -1, 4000), ev("c", 7, 20000), ev("c", 8, 21000), ev("end", 0, 100000),
]
#: a key's timer fires when the watermark passes its last element's timestamp + 10 s
TIMEOUTS = [("a", 3, -2, 12000), ("b", 2, 9, 14000), ("c", 2, 15, 31000)]
NEGATIVES = [("a", -5, 2000), ("b", -1, 4000)]


def counts_with_timeout(stream: DataStream) -> Any:
    return stream.key_by("k").process(CountWithTimeoutFunction(), output_type=COUNTS)


def test_keyed_process_function_with_state_timers_and_side_output_on_static_input(
    spark: Any,
) -> None:
    """The end of a bounded input is the watermark MAX_LONG: every timer fires, "end"'s too."""
    result = counts_with_timeout(stamped(spark.createDataFrame(
        [(e["k"], e["v"], e["ts"]) for e in EVENTS], SCHEMA)))
    assert sorted(tuple(r) for r in result.execute_and_collect()) == sorted(
        [*TIMEOUTS, ("end", 1, 0, 110000)])
    side = result.get_side_output(NEGATIVE)
    assert sorted(tuple(r) for r in side.execute_and_collect()) == NEGATIVES


@pytest.mark.parametrize("split", ["one batch", "per element", "two and the rest"])
def test_keyed_process_function_results_do_not_depend_on_micro_batches(
    spark: Any, tmp_path: Path, split: str
) -> None:
    """The same elements in one micro-batch, one per batch, and two then the rest: the same
    timeouts and side outputs. On the stream the watermark stops at 99999 ("end" - 1): the
    timer of "end" (110000) does not fire, its state stays."""
    batches = {
        "one batch": [EVENTS],
        "per element": [[e] for e in EVENTS],
        "two and the rest": [EVENTS[:2], EVENTS[2:]],
    }[split]
    write_batches(tmp_path / "in", batches)
    result = counts_with_timeout(stamped(file_stream(spark, tmp_path / "in")))
    main, sides, progress = run(result, tmp_path / "cp", "kpf_" + split.replace(" ", "_"),
                                (NEGATIVE,))
    assert sorted(flat(main)) == TIMEOUTS
    assert sorted(flat(sides["negative"])) == NEGATIVES
    # what remains: the state of "end" and its timer
    last = progress[-1]["observedMetrics"]["flinkwin"]
    assert (last["keysInState"], last["windowsInState"]) == (1, 2)
    if split == "per element":
        # each timeout came in the first batch whose watermark passed it: a and b's with
        # watermark 19999 (batch 6, before c@21000), c's with 99999 (batch 8, without data)
        assert {b: sorted(rows) for b, rows in main.items() if rows} == {
            6: TIMEOUTS[:2], 8: TIMEOUTS[2:]}


def test_keyed_process_function_state_and_timers_survive_a_restart(
    spark: Any, tmp_path: Path
) -> None:
    """Two runs of one query on one checkpoint, the first run's files deleted in between: a's
    and b's counts and timers, set in the first run, fire in the second. An element behind
    the watermark is processed as any other (a process function has no lateness); its timer,
    already behind the watermark, fires at the next watermark, as in Flink."""

    def build() -> Any:
        return counts_with_timeout(stamped(file_stream(spark, tmp_path / "in")))

    write_batches(tmp_path / "in", [EVENTS[:2], EVENTS[2:5]])
    first, sides, _ = run(build(), tmp_path / "cp", "kpf_restart_1", (NEGATIVE,))
    assert flat(first) == []  # the watermark is 3999: no timeout yet
    assert sorted(flat(sides["negative"])) == NEGATIVES
    for old in (tmp_path / "in").iterdir():
        old.unlink()
    write_batches(tmp_path / "in", [[EVENTS[5]], [EVENTS[6], ev("a", 100, 500)], [EVENTS[7]]],
                  first=2)
    second, _, progress = run(build(), tmp_path / "cp", "kpf_restart_2", (NEGATIVE,))
    assert [p["numInputRows"] for p in progress] == [1, 2, 1, 0]
    assert {b: sorted(rows) for b, rows in second.items() if rows} == {
        4: TIMEOUTS[:2],                  # watermark 19999, from the first run's state
        5: [("a", 1, 100, 10500)],        # watermark 20999: a@500's timer
        6: TIMEOUTS[2:],                  # watermark 99999
    }


class TimerAtElement(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> None:
        ctx.timer_service().register_event_time_timer(ctx.timestamp())

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield f"{ctx.get_current_key()}@{timestamp}"


def test_an_element_filtered_out_after_the_timestamps_still_advances_the_watermark(
    spark: Any, tmp_path: Path
) -> None:
    """``assign_timestamps_and_watermarks(...).filter(...)``: in Flink the watermark generator
    runs before the filter and sees b@20000, so the watermark reaches 19999 and a's timer at
    1000 fires (in Spark's batch without data after the input)."""
    write_batches(tmp_path / "in", [[ev("a", 1, 1000), ev("b", 2, 20000)]])
    result = (stamped(file_stream(spark, tmp_path / "in")).filter(lambda r: r.k == "a")
              .key_by("k").process(TimerAtElement(), Types.STRING()))
    main, _, _ = run(result, tmp_path / "cp", "kpf_filtered_watermark")
    assert flat(main) == [("a@1000",)]


# ------------------------------------------------------------ processing-time timers
class RemindLater(KeyedProcessFunction):
    """A processing-time timer 1 s after each element; the timer emits the element's key,
    value, and what the contexts said about time."""

    def open(self, runtime_context: Any) -> None:
        self.pending = runtime_context.get_state(
            ValueStateDescriptor("pending", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value: Any, ctx: Any) -> None:
        assert ctx.timestamp() is None  # no timestamps assigned
        now = ctx.timer_service().current_processing_time()
        self.pending.update((value.v, now))
        ctx.timer_service().register_processing_time_timer(now + 1000)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        value, registered_at = self.pending.value()
        self.pending.clear()
        yield (ctx.get_current_key(), value, ctx.time_domain().name,
               ctx.timestamp() - registered_at,
               ctx.timer_service().current_processing_time() >= timestamp)


def test_processing_time_timer_fires_in_a_later_micro_batch(spark: Any, tmp_path: Path) -> None:
    """A stream without watermarks: the timer set while processing the element's batch fires
    in a later batch (Spark runs batches without data for processing-time timeouts)."""
    write_batches(tmp_path / "in", [[ev("a", 1, 0), ev("b", 2, 0)]])
    result = DataStream(file_stream(spark, tmp_path / "in")).key_by("k").process(
        RemindLater(), output_type="k string, v long, domain string, delay long, due boolean")
    sink = MemorySink("kpf_processing_time")
    query = result.start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                         trigger={"processingTime": "500 milliseconds"})
    try:
        deadline = time.monotonic() + 120
        while len(flat(dict(sink.batches))) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        query.stop()
    batches = {b: [tuple(r) for r in rows] for b, rows in sink.batches.items()}
    assert sorted(flat(batches)) == [("a", 1, "PROCESSING_TIME", 1000, True),
                                     ("b", 2, "PROCESSING_TIME", 1000, True)]
    assert not batches.get(0)  # the elements' batch: the timers are not due yet
    assert min(b for b, rows in batches.items() if rows) >= 1


class StampsAndClock(KeyedProcessFunction):
    """Each element's timestamp and the watermark it sees; a processing-time timer 1 s later."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        service = ctx.timer_service()
        service.register_processing_time_timer(service.current_processing_time() + 1000)
        yield f"{value.k}:{ctx.timestamp()}:{service.current_watermark()}"

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield f"timer:{ctx.get_current_key()}"


def test_no_watermarks_on_a_stream_keeps_timestamps_and_processing_time(
    spark: Any, tmp_path: Path
) -> None:
    """PyFlink's ``no_watermarks()`` on an unbounded source (a Kafka job with processing-time
    logic, say): elements keep their timestamps, the watermark stays Long.MIN_VALUE and
    processing-time timers fire; only event-time windows are refused (they would never fire)."""
    from flinkwin import Time, TumblingEventTimeWindows
    from flinkwin.errors import UnsupportedOperationError

    write_batches(tmp_path / "in", [[ev("a", 1, 5_000), ev("b", 2, 7_000)]])
    strategy = WatermarkStrategy.no_watermarks().with_timestamp_assigner("ts")
    stream = DataStream(file_stream(spark, tmp_path / "in")).assign_timestamps_and_watermarks(
        strategy)
    result = stream.key_by("k").process(StampsAndClock(), output_type=Types.STRING())
    sink = MemorySink("kpf_no_watermarks")
    query = result.start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                         trigger={"processingTime": "500 milliseconds"})
    try:
        deadline = time.monotonic() + 300  # returns as soon as the timers fired
        while len(flat(dict(sink.batches))) < 4 and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        query.stop()
    rows = [r[0] for r in flat(dict(sink.batches))]
    minimum = -(2**63)
    assert sorted(rows) == [f"a:5000:{minimum}", f"b:7000:{minimum}", "timer:a", "timer:b"]

    with pytest.raises(UnsupportedOperationError, match="would ever fire"):  # when built
        stream.key_by("k").window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")


class EchoAndRemind(KeyedProcessFunction):
    """Each element at once, and a processing-time timer 1 s later (emitting the key)."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        now = ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(now + 1000)
        yield f"{value.k}:{value.v}"

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield f"timer:{ctx.get_current_key()}"


def _returns_within(call: Any, seconds: float) -> bool:
    """Run ``call`` in a thread: True if it returned within ``seconds`` (a test cannot hang)."""
    import threading

    errors: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as error:  # noqa: BLE001 (re-raised below)
            errors.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if errors:
        raise errors[0]
    return not thread.is_alive()


def test_process_all_available_returns_for_stages_waking_keys_in_processing_time(
    spark: Any, tmp_path: Path
) -> None:
    """Spark runs a micro-batch on every trigger of a stage with processing-time timeouts, so
    its own processAllAvailable() never returns there: flinkwin's query returns once a batch
    planned after the call finds no new input (a graph's KeyedProcessFunction, a processing-time
    window, a Python sink); the timers still fire on later triggers."""
    from flinkwin import Time, TumblingProcessingTimeWindows

    write_batches(tmp_path / "in", [[ev("a", 1, 0), ev("b", 2, 0)], [ev("a", 3, 0)]])
    source = DataStream(file_stream(spark, tmp_path / "in")).key_by("k")
    graph = source.process(EchoAndRemind(), output_type=Types.STRING())
    sink = MemorySink("kpf_all_available")
    query = graph.start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                        trigger={"processingTime": "200 milliseconds"})
    try:
        assert _returns_within(query.processAllAvailable, 180)
        values = [r[0] for r in flat(dict(sink.batches))]
        assert sorted(v for v in values if not v.startswith("timer")) == ["a:1", "a:3", "b:2"]
        write_batches(tmp_path / "in", [[ev("b", 4, 0)]], first=2)
        assert _returns_within(query.processAllAvailable, 180)
        assert "b:4" in [r[0] for r in flat(dict(sink.batches))]
        def timers() -> list[str]:
            return sorted(r[0] for r in flat(dict(sink.batches)) if r[0].startswith("timer"))

        deadline = time.monotonic() + 120  # the timers fire on later triggers, one per element
        while time.monotonic() < deadline and len(timers()) < 4:
            time.sleep(0.5)
        assert timers() == ["timer:a", "timer:a", "timer:b", "timer:b"]
    finally:
        query.stop()

    window = source.window(TumblingProcessingTimeWindows.of(Time.hours(1))).sum("v")
    seen: list[Any] = []
    query = window.map(lambda r: (r.k, r.v), output_type=Types.TUPLE(
        [Types.STRING(), Types.LONG()])).add_sink(lambda value, _ctx: seen.append(value))
    try:
        assert query is not None and _returns_within(query.processAllAvailable, 180)
    finally:
        query.stop()


# ------------------------------------------------------------- DataStream.process
class Annotate(ProcessFunction):
    """A non-keyed process function: each element with its timestamp and the watermark it
    sees, and values above 1 also to a side output."""

    BIG = OutputTag("big", Types.LONG())

    def process_element(self, value: Any, ctx: Any) -> Any:
        if value.v > 1:
            yield Annotate.BIG, value.v
        yield f"{value.k}:{value.v}@{ctx.timestamp()} wm {ctx.timer_service().current_watermark()}"


def test_data_stream_process_function_on_static_input(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1, 1000), ("b", 2, 2000), ("a", 3, 500)], SCHEMA)
    result = stamped(df).process(Annotate(), output_type=Types.STRING())
    # a bounded input's watermark stays at Long.MIN_VALUE while its elements go through
    assert [r for r in result.execute_and_collect()] == [
        f"a:1@1000 wm {-2**63}", f"b:2@2000 wm {-2**63}", f"a:3@500 wm {-2**63}",
    ]
    assert sorted(result.get_side_output(Annotate.BIG).execute_and_collect()) == [2, 3]


def test_keyed_stream_process_requires_a_keyed_process_function(spark: Any) -> None:
    keyed = DataStream(spark.createDataFrame([("a", 1, 0)], SCHEMA)).key_by("k")

    class Identity(MapFunction):
        def map(self, value: Any) -> Any:
            return value

    for func in (Identity(), lambda value, ctx: [value], CountWithTimeoutFunction):
        with pytest.raises(TypeError,
                           match=r"^KeyedProcessFunction is required for KeyedStream\.$"):
            keyed.process(func)
    with pytest.raises(TypeError, match=r"^ProcessFunction is required for DataStream\.$"):
        DataStream(spark.createDataFrame([("a", 1, 0)], SCHEMA)).process(Identity())


# ------------------------------------------------------------------------ HotItems
BASE_S = 1_511_686_800  # 2017-11-26 09:00:00 UTC, in seconds as UserBehavior.csv
MINUTE_MS = 60_000
LAST_VIEW_S = BASE_S + 4 * 3600


def user_behavior() -> list[tuple[int, int, int, str, int]]:
    """2.5 hours of views in timestamp order: item i every i + 1 minutes, item 7 every
    minute between minutes 60 and 110 (it tops the windows of that time), carts and buys of
    item 1 (filtered out), and a last view 4 hours in (on a stream, it advances the watermark
    past every earlier window)."""
    rows = []
    for minute in range(150):
        for item in range(1, 7):
            if (minute + item) % (item + 1) == 0:
                rows.append((minute, item, item % 3, "pv", BASE_S + 60 * minute + item))
        if 60 <= minute < 110:
            rows.append((minute, 7, 1, "pv", BASE_S + 60 * minute + 30))
        if minute % 10 == 0:
            rows.append((minute, 1, 1, "cart" if minute % 20 else "buy", BASE_S + 60 * minute))
    rows.append((0, 1, 1, "pv", LAST_VIEW_S))
    return rows


def top_counts(rows: list[Any], window_end_ms: int, n: int) -> list[int]:
    """Brute force: the view counts of the top ``n`` items of the hour ending at
    ``window_end_ms``."""
    counts: dict[int, int] = {}
    for _, item, _, behavior, ts in rows:
        if behavior == "pv" and window_end_ms - 60 * MINUTE_MS <= ts * 1000 < window_end_ms:
            counts[item] = counts.get(item, 0) + 1
    return sorted(counts.values(), reverse=True)[:n]


def check_hot_items(outputs: list[str], rows: list[Any]) -> None:
    """One output per window holding views, in window order, each the window's top 3."""
    views = sorted(ts * 1000 for _, _, _, b, ts in rows if b == "pv")
    ends = sorted({(ts // (5 * MINUTE_MS) + 1 + i) * 5 * MINUTE_MS for ts in views
                   for i in range(12)})
    assert len(outputs) == len(ends)
    for text, end in zip(outputs, ends):
        lines = text.split("\n")
        assert lines[0] == lines[-3] == RULE and lines[-2:] == ["", ""]
        assert lines[1] == f"时间: {java_timestamp(end)}"
        views = [int(line.split("浏览量=")[1]) for line in lines[2:-3]]
        assert views == top_counts(rows, end, 3), lines[1]


@pytest.fixture(scope="module")
def hot_items_static(spark: Any) -> list[str]:
    """HotItems over user_behavior() as a static DataFrame: what both tests compare with."""
    static = hot_items(DataStream(spark.createDataFrame(user_behavior(), USER_BEHAVIOR)))
    return [r for r in static.execute_and_collect()]


def test_hot_items_over_micro_batches_equals_the_static_run(
    spark: Any, tmp_path: Path, hot_items_static: list[str]
) -> None:
    rows = user_behavior()
    expected = hot_items_static
    check_hot_items(expected, rows)
    hour_of_item_7 = f"时间: {java_timestamp(BASE_S * 1000 + 110 * MINUTE_MS)}"
    assert [text.split("\n")[1:3] for text in expected if hour_of_item_7 in text] == [
        [hour_of_item_7, "No1:  商品ID=7  浏览量=50"]]

    names = ["userId", "itemId", "categoryId", "behavior", "timestamp"]
    quarter = len(rows) // 4
    batches = [[dict(zip(names, r)) for r in rows[i * quarter:(i + 1) * quarter]]
               for i in range(3)] + [[dict(zip(names, r)) for r in rows[3 * quarter:]]]
    write_batches(tmp_path / "in", batches)
    source = spark.readStream.schema(USER_BEHAVIOR).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in"))
    main, _, progress = run(hot_items(DataStream(source)), tmp_path / "cp", "hot_items")
    assert [p["numInputRows"] for p in progress[:4]] == [len(b) for b in batches]
    # the stream's watermark ends at the last view - 1 ms: every window but the last view's
    # was printed, as in the static run
    before_last_view = [text for text in expected
                        if f"时间: {java_timestamp(LAST_VIEW_S * 1000)}" > text.split("\n")[1]]
    assert len(before_last_view) == len(expected) - 12
    assert [r[0] for r in flat(main)] == before_last_view
    # the windows ending up to the first batch's watermark were printed in the second batch
    assert main[0] == [] and main[1]


@pytest.mark.slow
@pytest.mark.beside  # a Spark driver of its own: `make test` runs it beside the rest
def test_hot_items_as_a_users_script_prints_the_top_items(
    tmp_path: Path, hot_items_static: list[str]
) -> None:
    """``python hot_items_driver.py UserBehavior.csv``: every class of the job is the script's
    (``__main__``), the workers cannot import it; ``print()`` prints each window's top 3 as
    the in-process run computes them."""
    rows = user_behavior()
    csv = tmp_path / "UserBehavior.csv"
    csv.write_text("".join(",".join(str(v) for v in r) + "\n" for r in rows))
    expected = hot_items_static
    script = Path(__file__).with_name("hot_items_driver.py")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env.update(PYSPARK_PYTHON=sys.executable, PYTHONPATH=str(root), PYTHONIOENCODING="utf-8")
    done = subprocess.run([sys.executable, str(script), str(csv)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout == "".join(text + "\n" for text in expected)
    assert TopNHotItems.__module__ == "hot_items_driver"
