"""Connected streams on Spark (``a.connect(b)`` with a co-function), as a Flink user writes the
rules-and-events pattern: a ``KeyedCoProcessFunction`` keeps each key's latest control element
in keyed state and gates the other stream's elements with it, with event-time timers and a
side output, over several micro-batches, restarted, in one task and distributed. Expected
values follow Flink: the operator's watermark is the minimum of its two inputs' (each input's
``max(ts) - delay - 1`` after the files before the batch), a timer fires when it passes it.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import write_batches

from flinkwin import (
    CoMapFunction,
    Duration,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    OneTaskGraphWarning,
    OutputTag,
    Types,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.time import MIN_LONG

CONTROL = "k string, on boolean, ts long"
EVENTS = "k string, v long, ts long"
OUT = Types.ROW_NAMED(["k", "v", "ts"], [Types.STRING(), Types.LONG(), Types.LONG()])
BLOCKED = OutputTag("blocked", OUT)
#: per micro-batch, the file of each input (none in the same batch depend on each other:
#: Flink gives no order between two inputs' elements)
CONTROLS = [[{"k": "a", "on": True, "ts": 1000}], [], [{"k": "a", "on": False, "ts": 5000}], []]
ELEMENTS = [[{"k": "b", "v": 2, "ts": 1600}], [{"k": "a", "v": 3, "ts": 3000}], [],
            [{"k": "a", "v": 5, "ts": 9000}]]


class Gate(KeyedCoProcessFunction):
    """Input 1: the key's switch; input 2: passed on while the switch is on (with a timer a
    second later), else to the side output."""

    def open(self, runtime_context: Any) -> None:
        self.on = runtime_context.get_state(ValueStateDescriptor("on", Types.BOOLEAN()))

    def process_element1(self, value: Any, ctx: Any) -> Any:
        self.on.update(value.on)
        return None

    def process_element2(self, value: Any, ctx: Any) -> Any:
        if self.on.value():
            ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
            yield value.k, value.v, value.ts
        else:
            yield BLOCKED, (value.k, value.v, value.ts)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ctx.get_current_key(), -1, timestamp


def _stream(spark: Any, directory: Path, schema: str) -> DataStream:
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(directory))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)) \
        .with_timestamp_assigner("ts")
    return DataStream(df).assign_timestamps_and_watermarks(strategy)


class PassesOn(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value


def _run(spark: Any, tmp_path: Path, name: str, plan: str, cuts: list[int]
         ) -> tuple[dict[int, list[Any]], dict[int, list[Any]]]:
    """Main and side outputs by micro-batch, over runs restarted at ``cuts``."""
    main: dict[int, list[Any]] = {}
    blocked: dict[int, list[Any]] = {}
    for run, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
        write_batches(tmp_path / "control", CONTROLS[lo:hi], first=lo)
        write_batches(tmp_path / "events", ELEMENTS[lo:hi], first=lo)
        control = _stream(spark, tmp_path / "control", CONTROL)
        events = _stream(spark, tmp_path / "events", EVENTS)
        result = control.connect(events).key_by("k", "k").process(Gate(), OUT)
        if plan == "distributed":  # re-keyed after it: one keyed Spark operator per node
            result = result.key_by(lambda r: r.v).process(PassesOn(), OUT).set_parallelism(2)
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                result.explain()
            assert "distributed : yes" in out.getvalue()
        sinks = MemorySink(f"{name}_main{run}"), MemorySink(f"{name}_blocked{run}")
        query = result.start(main=sinks[0], side_outputs={BLOCKED: sinks[1]},
                             checkpoint_location=str(tmp_path / "cp"),
                             trigger={"availableNow": True})
        query.awaitTermination()
        for sink, into in zip(sinks, (main, blocked)):
            for batch, rows in sink.batches.items():
                if rows:
                    into[batch] = [tuple(r) for r in rows]
    return main, blocked


@pytest.mark.parametrize("plan", ["keyed", "distributed"])
def test_a_keyed_co_process_function_gates_one_stream_by_the_others_state_across_a_restart(
    spark: Any, tmp_path: Path, plan: str
) -> None:
    """a's switch turns on in batch 0: its element in batch 1 passes and sets a timer at
    4000, which fires only once both inputs' watermarks pass it: in the batch after the last
    file (the control's watermark 4999 after its 5000; the events' 8999); b has no switch,
    and a's is off again when its last element comes: both blocked. Restarted after batch 1
    (the state and the pending timer survive), and uninterrupted; in the key groups of the
    co-process function, and distributed with a re-keyed function after it."""
    whole = _run(spark, tmp_path / "whole", f"co_whole_{plan}", plan, [0, 4])
    assert whole == ({1: [("a", 3, 3000)], 4: [("a", -1, 4000)]},
                     {0: [("b", 2, 1600)], 3: [("a", 5, 9000)]})
    # the restart's first run ends with a batch without data: later batch ids move by one
    restarted = _run(spark, tmp_path / "cut", f"co_cut_{plan}", plan, [0, 2, 4])
    assert [_flat(out) for out in restarted] == [_flat(out) for out in whole]


def _flat(by_batch: dict[int, list[Any]]) -> list[Any]:
    return [row for batch in sorted(by_batch) for row in by_batch[batch]]


class Describe(CoMapFunction):
    def map1(self, value: Any) -> Any:
        return f"event {value.k}={value.v}"

    def map2(self, value: Any) -> Any:
        return None if value.name == "skip" else f"name {value.id}:{value.name}"


def test_co_map_on_streams_of_different_types_gives_one_output_per_element(
    spark: Any,
) -> None:
    """Non-keyed ``connect(...).map(CoMapFunction)`` of two streams of different schemas; a
    None result emits nothing, as in PyFlink."""
    events = DataStream(spark.createDataFrame([("a", 1, 0), ("b", 2, 1)], EVENTS))
    names = DataStream(spark.createDataFrame([(7, "x"), (8, "skip")], "id long, name string"))
    result = events.connect(names).map(Describe(), output_type=Types.STRING())
    assert sorted(result.execute_and_collect()) == ["event a=1", "event b=2", "name 7:x"]


def test_a_keyed_co_process_function_on_non_keyed_connected_streams_is_refused(
    spark: Any,
) -> None:
    events = DataStream(spark.createDataFrame([("a", 1, 0)], EVENTS))
    with pytest.raises(TypeError, match="runs on keyed connected streams"):
        events.connect(events).process(Gate(), OUT)


def test_a_non_keyed_co_map_at_parallelism_2_runs_in_one_task_with_a_warning(
    spark: Any, tmp_path: Path
) -> None:
    """Flink runs a non-keyed co-function at any parallelism; flinkwin runs it in one task
    (it holds no keyed state: a parallelism-1 run's results, one of Flink's) and says so,
    instead of refusing the program."""
    write_batches(tmp_path / "events", ELEMENTS)
    write_batches(tmp_path / "names", [[{"id": 7, "name": "x", "ts": 1}],
                                       [{"id": 8, "name": "skip", "ts": 2}]])
    events = _stream(spark, tmp_path / "events", EVENTS)
    names = _stream(spark, tmp_path / "names", "id long, name string, ts long")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = events.connect(names).map(Describe(), output_type=Types.STRING()) \
            .set_parallelism(2)
    [warning] = [w for w in caught if issubclass(w.category, OneTaskGraphWarning)]
    assert "is not keyed: flinkwin runs a non-keyed process or co-process function in one " \
        "task" in str(warning.message)
    sink = MemorySink("co_map_p2")
    query = result.start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                         trigger={"availableNow": True})
    query.awaitTermination()
    assert sorted(r[0] for r in sink.rows()) == [
        "event a=3", "event a=5", "event b=2", "name 7:x"]


class ReportsWatermark(KeyedCoProcessFunction):
    def process_element1(self, value: Any, ctx: Any) -> Any:
        yield value.k, ctx.timer_service().current_watermark(), value.ts

    def process_element2(self, value: Any, ctx: Any) -> Any:
        yield value.k, ctx.timer_service().current_watermark(), value.ts


def _same(row: Any) -> Any:
    return row


@pytest.mark.parametrize("step", ["filter", "map"])
def test_the_distributed_plan_refuses_to_read_a_watermark_it_cannot_tell_from_min_long(
    spark: Any, tmp_path: Path, step: str
) -> None:
    """After a ``filter`` the sources' watermarks are Spark's, which cannot go below 0: after
    an element at 1000 ms with a 3000 ms delay Flink's watermark is -2001, Spark's 0, the same
    as before any data. Reading it fails in the distributed plan as in the one-task plan
    (UncertainWatermarkError naming the declaration that makes it exact); the distributed
    plan read it as Long.MIN_VALUE, a wrong answer without an error. After a ``map`` (every
    element kept) the stage generates both sources' watermarks itself and reads -2001."""
    files = [[{"k": "a", "v": 1, "ts": 1000}], [{"k": "a", "v": 2, "ts": 2000}]]
    write_batches(tmp_path / "first", files)
    write_batches(tmp_path / "second", [[{"k": "b", "v": 3, "ts": 1500}], []])
    streams = [
        DataStream(spark.readStream.schema(EVENTS).option("maxFilesPerTrigger", 1)
                   .json(str(tmp_path / name)))
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(3000))
            .with_timestamp_assigner("ts"))
        for name in ("first", "second")]
    first, second = (s.filter(lambda r: True) if step == "filter" else s.map(_same, OUT)
                     for s in streams)
    result = first.connect(second).key_by("k", "k").process(ReportsWatermark(), OUT) \
        .key_by(lambda r: r.v).process(PassesOn(), OUT).set_parallelism(2)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result.explain()
    assert "distributed : yes" in out.getvalue()
    main = MemorySink(f"co_uncertain_{step}")
    query = result.start(main=main, checkpoint_location=str(tmp_path / "cp"),
                         trigger={"availableNow": True})
    if step == "filter":
        with pytest.raises(Exception, match="UncertainWatermarkError"):
            query.awaitTermination()
        return
    query.awaitTermination()
    assert {b: sorted(tuple(r) for r in rows) for b, rows in main.batches.items() if rows} == {
        0: [("a", MIN_LONG, 1000), ("b", MIN_LONG, 1500)], 1: [("a", -2001, 2000)]}
