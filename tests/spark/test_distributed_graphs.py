"""Graphs with a re-keying step run distributed (flinkwin.spark.graph_chained): every keyed
operator in its own key groups, a shuffle between them, one query.

HotItems in miniature: a sliding count per item (20 s every 10 s, 15 s allowed lateness, late
data to a side output), then ``key_by(window_end).process(TopN)`` firing at each window's end.
Over micro-batches with late data and a restart mid-scenario the distributed plan (asked for
with ``set_parallelism(2)``) gives, batch by batch, what the one-task plan (a graph's default,
parallelism 1) gives and the hand-computed values;
through ``start()`` and ``toDF().writeStream`` (static input runs in one task); a restart
across plan kinds is refused naming the cause.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hot_items_driver import CountAgg
from spark_scenarios import write_batches

from flinkwin import (
    Duration,
    KeyedProcessFunction,
    ListStateDescriptor,
    OneTaskGraphWarning,
    OutputTag,
    Row,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
    WindowFunction,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.spark.pipeline import PipelineError
from flinkwin.spark.restart import IncompatibleRestartError
from flinkwin.spark.sizing import CHANGELOG_CONF, PROVIDER_CONF

# long streaming scenarios in the shared session: `make test` runs them in its second process,
# beside the rest, so that its two processes end together
pytestmark = pytest.mark.beside

SCHEMA = "item string, ts long"
LATE = OutputTag("late", Types.ROW_NAMED(["item", "ts"], [Types.STRING(), Types.LONG()]))
#: one file per micro-batch; the restart comes after the third
FILES = [
    [("a", 1000), ("b", 2000), ("a", 3000), ("b", 12000)],
    [("a", 5000), ("c", 25000), ("a", 14000)],  # a@5000: late, within the lateness
    [("b", 31000), ("a", 8000)],  # a@8000: [-10 s, 10 s) is gone, [0, 20 s) re-fires
    [("d", 45000), ("a", 33000)],
    [("e", 61000), ("a", 44000), ("a", 2000)],  # a@2000: too late for both its windows
]
RESTART_AFTER = 3


class WithEnd(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        yield Row(item=key, window_end=window.end, n=next(iter(inputs)))


class TopN(KeyedProcessFunction):
    """A window's counts until its end; then ``"<end>: item=n ..."``, largest first."""

    def open(self, runtime_context: Any) -> None:
        self.items = runtime_context.get_list_state(
            ListStateDescriptor("items", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value: Any, ctx: Any) -> None:
        self.items.add((value.item, value.n))
        ctx.timer_service().register_event_time_timer(value.window_end)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        ranked = sorted(self.items.get(), key=lambda t: (-t[1], t[0]))
        self.items.clear()
        yield f"{timestamp}: " + " ".join(f"{k}={n}" for k, n in ranked[:2])


def _item(row: Any) -> str:
    return row.item


def hot_items(df: Any, one_task: bool = False, by_function: bool = False) -> Any:
    """HotItems in miniature; ``by_function``: the count keyed by a function (the rows then
    reach it through the sources' step) rather than by the column (taken directly)."""
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(0)).with_timestamp_assigner("ts")
    stream = DataStream(df).assign_timestamps_and_watermarks(strategy)
    keyed = stream.key_by(_item, key_type=Types.STRING()) if by_function else stream.key_by(
        "item")
    counts = (
        keyed
        .window(SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10)))
        .allowed_lateness(15_000).side_output_late_data(LATE)
        .aggregate(CountAgg(), WithEnd(), output_type="item string, window_end long, n long")
    )
    top = counts.key_by("window_end").process(TopN(), Types.STRING())
    # a graph runs at parallelism 1 (one task) unless asked to scale out, as a Flink job
    return top if one_task else top.set_parallelism(2)


def rows(file: list[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"item": k, "ts": t} for k, t in file]


Outputs = tuple[dict[int, Counter[str]], dict[int, Counter[tuple[Any, ...]]], list[Any]]


def run_scenarios(spark: Any, root: Path, plans: dict[str, tuple[bool, bool]]) -> dict[
        str, Outputs]:
    """FILES through a query per plan (``{name: (one_task, by_function)}``, concurrent queries
    of the one session, each with its own input and checkpoint under ``root/name``), stopped
    and restarted after RESTART_AFTER: per plan, per batch the main and late outputs, and the
    progress of the last batch of each run."""
    sinks = {name: (MemorySink(f"fw_{name}_main"), MemorySink(f"fw_{name}_late"))
             for name in plans}
    progress: dict[str, list[Any]] = {name: [] for name in plans}
    for first, files in ((0, FILES[:RESTART_AFTER]), (RESTART_AFTER, FILES[RESTART_AFTER:])):
        queries = {}
        for name, (one_task, by_function) in plans.items():
            source, checkpoint = root / name / "in", root / name / "ck"
            write_batches(source, [rows(f) for f in files], first=first)
            df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
                str(source))
            main, late = sinks[name]
            queries[name] = hot_items(df, one_task, by_function).start(
                main=main, side_outputs={LATE: late}, checkpoint_location=str(checkpoint),
                trigger={"availableNow": True})
        for name, query in queries.items():
            query.awaitTermination()
            progress[name].append(query.lastProgress)
    return {
        name: ({b: Counter(r[0] for r in batch) for b, batch in main.batches.items()},
               {b: Counter(tuple(r) for r in batch) for b, batch in late.batches.items()},
               progress[name])
        for name, (main, late) in sinks.items()
    }


def non_empty(batches: dict[int, Counter[Any]]) -> dict[int, Counter[Any]]:
    return {b: c for b, c in batches.items() if c}


#: every TopN output (window end: top 2) over the whole scenario, computed by hand: windows of
#: 20 s every 10 s. Watermark 11999 (before file 1): [-10 s, 10 s) fires a=2 b=1; a@5000 is
#: late there, within the lateness: the window re-fires a=3, TopN's list for 10000 holds that
#: alone and its timer (behind the watermark) fires at the next increase (24999), with
#: [0, 20 s): a=4 (1000, 3000, 5000, 14000) b=2. a@8000 (watermark 24999) re-fires [0, 20 s)
#: with a=5. [10 s, 30 s): a@14000 b@12000 c@25000; [20 s, 40 s): c, b@31000, a@33000;
#: a@2000 (watermark 44999) is too late for both its windows: side output; [30 s, 50 s):
#: b, a@33000, d@45000, a@44000; [40 s, 60 s): d, a@44000; the last watermark (60999) leaves
#: the windows of e@61000 open
EXPECTED = Counter([
    "10000: a=2 b=1", "10000: a=3", "20000: a=4 b=2", "20000: a=5", "30000: a=1 b=1",
    "40000: a=1 b=1", "50000: a=2 b=1", "60000: a=1 d=1",
])


@pytest.fixture(scope="module")
def both_plans(spark: Any, tmp_path_factory: Any) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("distributed")
    runs = run_scenarios(spark, root, {"dist": (False, False), "one": (True, False)})
    return {"distributed": runs["dist"], "one_task": runs["one"], "root": root}


def test_hot_items_distributed_equals_the_one_task_plan_batch_by_batch(
    both_plans: dict[str, Any],
) -> None:
    main, late, _ = both_plans["distributed"]
    one_main, one_late, _ = both_plans["one_task"]
    assert non_empty(main) == non_empty(one_main)
    assert non_empty(late) == non_empty(one_late)
    assert sum(main.values(), Counter()) == EXPECTED
    assert sum(late.values(), Counter()) == Counter({("a", 2000): 1})


def test_hot_items_keyed_by_a_function_runs_distributed_through_the_sources_step(
    spark: Any, tmp_path: Path, both_plans: dict[str, Any],
) -> None:
    main, late, progress = run_scenarios(spark, tmp_path, {"dist_fn": (False, True)})[
        "dist_fn"]
    assert non_empty(main) == non_empty(both_plans["one_task"][0])
    assert sum(late.values(), Counter()) == Counter({("a", 2000): 1})
    assert len(progress[-1]["stateOperators"]) == 2


def test_hot_items_distributed_runs_each_keyed_stage_in_several_tasks(
    both_plans: dict[str, Any],
) -> None:
    _, _, progress = both_plans["distributed"]
    operators = progress[-1]["stateOperators"]
    assert [op["operatorName"] for op in operators] == ["transformWithStateInPandasExec"] * 2
    assert [op["numShufflePartitions"] for op in operators] == [2, 2]
    assert [op["numStateStoreInstances"] for op in operators] == [2, 2]
    _, _, one_progress = both_plans["one_task"]
    assert len(one_progress[-1]["stateOperators"]) == 1


def test_the_session_keeps_its_state_store_provider(spark: Any, both_plans: Any) -> None:
    """flinkwin sets RocksDB and its changelog checkpointing for its own query's start only."""
    assert spark.conf.get(PROVIDER_CONF, None) in (None, "")
    assert CHANGELOG_CONF not in spark.conf.getAll


def test_explain_says_whether_the_graph_is_distributed_and_why_not(
    spark: Any, tmp_path: Path
) -> None:
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path))

    def summary(result: Any) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            result.explain()
        return out.getvalue()

    assert "distributed : yes" in summary(hot_items(df))
    text = summary(hot_items(df, one_task=True))
    assert "distributed : no: parallelism 1, a graph's default" in text
    assert "transformWithStateInPandas" not in text
    assert "distributed : no: parallelism 1" in summary(hot_items(df, True).set_parallelism(1))


def test_a_restart_across_plan_kinds_is_refused_naming_the_cause(
    spark: Any, both_plans: dict[str, Any],
) -> None:
    root = both_plans["root"]
    df = spark.readStream.schema(SCHEMA).json(str(root / "dist" / "in"))
    with pytest.raises(IncompatibleRestartError,
                       match="checkpoint was written by the distributed plan"):
        hot_items(df, one_task=True).start(
            main=MemorySink("fw_refused"), checkpoint_location=str(root / "dist" / "ck"),
            trigger={"availableNow": True})
    # Spark's own writer on toDF() cannot change plan: refused, naming the fix
    df = spark.readStream.schema(SCHEMA).json(str(root / "one" / "in"))
    writer = (hot_items(df).toDF().writeStream.format("noop")
              .option("checkpointLocation", str(root / "one" / "ck")))
    with pytest.raises(IncompatibleRestartError,
                       match=r"written by the one-task plan.*no set_parallelism\(n\) with n > 1"):
        writer.trigger(availableNow=True).start()


def test_start_continues_a_one_task_checkpoint_on_the_one_task_plan(
    spark: Any, both_plans: dict[str, Any],
) -> None:
    """A checkpoint of an earlier flinkwin's graph stage keeps its plan under start()."""
    root = both_plans["root"] / "one"
    write_batches(root / "in", [rows([("f", 90000)])], first=len(FILES))
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(root / "in"))
    main = MemorySink("fw_continued")
    query = hot_items(df).start(main=main, checkpoint_location=str(root / "ck"),
                                trigger={"availableNow": True})
    query.awaitTermination()
    assert len(query.lastProgress["stateOperators"]) == 1  # the one-task stage
    assert Counter(r[0] for r in main.rows()) == Counter(["70000: e=1", "80000: e=1"])


def test_hot_items_distributed_through_to_df_write_stream(
    spark: Any, tmp_path: Path, both_plans: dict[str, Any],
) -> None:
    write_batches(tmp_path / "in", [rows(f) for f in FILES])
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in"))
    seen: list[str] = []
    query = (hot_items(df).toDF().writeStream
             .foreachBatch(lambda batch, _: seen.extend(r[0] for r in batch.collect()))
             .option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    # the distributed plan, not the one-task plan compiled before set_parallelism(2)
    assert [op["operatorName"] for op in query.lastProgress["stateOperators"]] == [
        "transformWithStateInPandasExec"] * 2
    assert spark.conf.get(PROVIDER_CONF, None) in (None, "")
    # one run without the restart: the same outputs (the restart changes nothing in Flink)
    assert Counter(seen) == EXPECTED


class Exact(KeyedProcessFunction):
    """Each count on with values a round trip through floats or pandas would bend: a long past
    2^53, a null long, NaN, -0.0 and a null double."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        n = value.n
        for j, x in enumerate([float("nan"), -0.0, None]):
            yield Row(n=n, j=j, big=2**53 + 2 * n + 1, maybe=None if n % 2 else n, x=x)


EXACT_TYPE = Types.ROW_NAMED(
    ["n", "j", "big", "maybe", "x"],
    [Types.LONG(), Types.INT(), Types.LONG(), Types.LONG(), Types.DOUBLE()])


def test_the_distributed_plans_outputs_keep_values_exact(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", [rows(f) for f in FILES])
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in"))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(0)).with_timestamp_assigner("ts")
    counts = (
        DataStream(df).assign_timestamps_and_watermarks(strategy).key_by("item")
        .window(SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10)))
        .aggregate(CountAgg(), WithEnd(), output_type="item string, window_end long, n long")
    )
    exact = counts.key_by("window_end").process(Exact(), EXACT_TYPE).set_parallelism(2)
    main = MemorySink("fw_exact_main")
    query = exact.start(main=main, checkpoint_location=str(tmp_path / "ck"),
                        trigger={"availableNow": True})
    query.awaitTermination()
    assert len(query.lastProgress["stateOperators"]) == 2  # the distributed plan
    got = main.rows()
    assert {r["n"] % 2 for r in got} == {0, 1} and len(got) % 3 == 0
    for r in got:
        n = r["n"]
        assert r["big"] == 2**53 + 2 * n + 1
        assert r["maybe"] == (None if n % 2 else n)
        if r["j"] == 0:
            assert math.isnan(r["x"])
        elif r["j"] == 1:
            assert r["x"] == 0.0 and math.copysign(1.0, r["x"]) == -1.0
        else:
            assert r["x"] is None


class Seen(KeyedProcessFunction):
    """Each element's values as the function sees them: a null boolean must be None."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield Row(item=value.item, flag=value.flag, none=value.flag is None,
                  day=value.day, kind=type(value.day).__name__)


@pytest.mark.parametrize("key", ["column", "function"])
def test_the_distributed_plans_inputs_reach_functions_as_pyspark_rows_hold_them(
    spark: Any, tmp_path: Path, key: str
) -> None:
    """A distributed graph's source rows reach its first operator (taken by its key column,
    or through the sources' step for a key function) with a null boolean as None (it came as
    pandas' NA: `is None` was False, and passed on it failed the batch) and a date as a
    datetime.date, as in a one-task graph."""
    write_batches(tmp_path / "in", [
        [{"item": "a", "ts": 1000, "flag": None, "day": "2024-02-29"},
         {"item": "b", "ts": 2000, "flag": True, "day": None}],
        [{"item": "c", "ts": 30000, "flag": False, "day": "0001-01-01"}],
    ])
    df = spark.readStream.schema("item string, ts long, flag boolean, day date").option(
        "maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(0)).with_timestamp_assigner("ts")
    keyed = DataStream(df).assign_timestamps_and_watermarks(strategy)
    keyed = keyed.key_by("item") if key == "column" else keyed.key_by(_item)
    firsts = keyed.window(TumblingEventTimeWindows.of(Time.seconds(10))).reduce(
        lambda a, b: a)
    seen = firsts.key_by(lambda r: r.ts).process(
        Seen(), "item string, flag boolean, none boolean, day date, kind string"
    ).set_parallelism(2)
    main = MemorySink(f"fw_inputs_{key}")
    query = seen.start(main=main, checkpoint_location=str(tmp_path / "ck"),
                       trigger={"availableNow": True})
    query.awaitTermination()
    assert len(query.lastProgress["stateOperators"]) == 2  # the distributed plan
    assert sorted(tuple(r) for r in main.rows()) == [
        ("a", None, True, datetime.date(2024, 2, 29), "date"),
        ("b", True, False, None, "NoneType"),
    ]


def test_hot_items_on_static_input_runs_in_one_task_at_any_parallelism(spark: Any) -> None:
    # Flink runs a bounded job at the parallelism asked; a parallelism-1 run's results are
    # among its results: the program that runs distributed on a stream runs here too, warned
    df = spark.createDataFrame([(k, t) for f in FILES for k, t in f], SCHEMA)
    with pytest.warns(OneTaskGraphWarning, match=r"setParallelism\(2\) on this stream graph .*"
                      r"runs in one task \(static input"):
        asked = hot_items(df)
    assert Counter(asked.execute_and_collect()) == Counter(
        hot_items(df, one_task=True).execute_and_collect())
    got = Counter(hot_items(df, one_task=True).execute_and_collect())
    # one bounded input: every element on time (no watermark before the end), every window
    # fires once at the end of input
    everything = [(k, t) for f in FILES for k, t in f]
    expected = Counter()
    for end in range(10_000, 80_001, 10_000):
        counts = Counter(k for k, t in everything if end - 20_000 <= t < end)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:2]
        if ranked:
            expected[f"{end}: " + " ".join(f"{k}={n}" for k, n in ranked)] += 1
    assert got == expected


def test_set_parallelism_above_one_is_refused_for_a_graph_that_must_run_in_one_task(
    spark: Any, tmp_path: Path
) -> None:
    """A windowAll is not keyed: it runs with parallelism 1, as in Flink (which refuses a
    parallelism above 1 for it): scaling such a graph out is refused naming that rule, and
    the graph stays on one task. A source with ``with_idleness`` no longer keeps a graph on
    one task (each key group is told which sources had elements)."""
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)) \
        .with_timestamp_assigner("ts").with_idleness(Duration.of_seconds(5))
    counts = (DataStream(df).assign_timestamps_and_watermarks(strategy).key_by("item")
              .window(SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10)))
              .aggregate(CountAgg(), WithEnd(), output_type="item string, window_end long, n long"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        counts.key_by("window_end").process(TopN(), Types.STRING()).set_parallelism(2).explain()
    assert "distributed : yes" in out.getvalue()
    graph = counts.window_all(TumblingEventTimeWindows.of(Time.seconds(10))).reduce(
        lambda a, b: a if a.n >= b.n else b)
    with pytest.raises(PipelineError, match=r"setParallelism\(2\): this stream graph runs in "
                       r"one task \(.* is not keyed"):
        graph.set_parallelism(2)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        graph.explain()
    assert "is not keyed: it runs with parallelism 1, as in Flink" in out.getvalue()


SHIPPED = '''
from flinkwin import KeyedProcessFunction


class Tagged(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield f"{value.window_end}: {value.item}={value.n}"
'''


def test_a_graphs_functions_shipped_with_add_py_file_run_distributed(
    spark: Any, tmp_path: Path
) -> None:
    """A user module shipped with ``addPyFile`` (as on a cluster), not on the workers' path:
    Spark unpickles a transformWithStateInPandas processor on the driver too, in a Python
    process that does not see such modules; the graph's functions load at the first call."""
    import importlib
    import sys

    module = tmp_path / "shipped" / "fw_shipped_tagged.py"
    module.parent.mkdir()
    module.write_text(SHIPPED)
    spark.sparkContext.addPyFile(str(module))
    sys.path.insert(0, str(module.parent))
    try:
        tagged = importlib.import_module("fw_shipped_tagged").Tagged
    finally:
        sys.path.remove(str(module.parent))
    write_batches(tmp_path / "in", [rows(f) for f in FILES])
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(0)).with_timestamp_assigner("ts")
    runs = []  # both plans as concurrent queries
    for parallelism in (2, 1):
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
            str(tmp_path / "in"))
        counts = (DataStream(df).assign_timestamps_and_watermarks(strategy).key_by("item")
                  .window(SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10)))
                  .aggregate(CountAgg(), WithEnd(),
                             output_type="item string, window_end long, n long"))
        graph = counts.key_by("window_end").process(tagged(), Types.STRING())
        sink = MemorySink(f"fw_shipped_{parallelism}")
        runs.append((sink, graph.set_parallelism(parallelism).start(
            main=sink, checkpoint_location=str(tmp_path / f"ck{parallelism}"),
            trigger={"availableNow": True})))
    results = []
    for sink, query in runs:
        query.awaitTermination()
        results.append(Counter(r[0] for r in sink.rows()))
    assert results[0] == results[1] and sum(results[0].values()) > 5
