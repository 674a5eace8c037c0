"""The environment's ``set_parallelism(n)`` (Flink's ``parallelism.default``) on Spark: a window
chain built afterwards runs in ``n`` state partitions (a restart keeps the checkpoint's, Spark's
rule); a re-keying graph with ``n > 1`` runs distributed, batch by batch as the one-task plan
(``env.set_parallelism(1)``, today's graph default); a graph a rule keeps in one task runs
there with a warning and ``explain()`` naming the rule, where its result's own
``set_parallelism(2)`` is refused."""

from __future__ import annotations

import contextlib
import io
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hot_items_driver import CountAgg
from spark_scenarios import write_batches
from test_distributed_graphs import (
    EXPECTED,
    FILES,
    SCHEMA,
    WithEnd,
    hot_items,
    non_empty,
    rows,
    run_scenarios,
)

import flinkwin
from flinkwin import (
    Duration,
    OneTaskGraphWarning,
    ProcessAllWindowFunction,
    Row,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.spark.pipeline import PipelineError
from flinkwin.spark.restart import IncompatibleRestartError


def explained(result: Any) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result.explain()
    return out.getvalue()


def parallelism_line(result: Any) -> str:
    """The ``parallelism`` line of flinkwin's part of ``explain()`` ("" when none)."""
    for line in explained(result).splitlines():
        key, _, value = line.partition(" : ")
        if key.strip() == "parallelism":
            return value
    return ""


def strategy(idle: bool = False) -> WatermarkStrategy:
    s = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)) \
        .with_timestamp_assigner("ts")
    return s.with_idleness(Duration.of_seconds(5)) if idle else s


def counts(df: Any, idle: bool = False) -> Any:
    """The sliding count per item of HotItems: a window chain."""
    return (DataStream(df).assign_timestamps_and_watermarks(strategy(idle)).key_by("item")
            .window(SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10)))
            .aggregate(CountAgg(), WithEnd(), output_type="item string, window_end long, n long"))


def run_counts(spark: Any, root: Path, files: list[Any], first: int, sink: MemorySink) -> Any:
    write_batches(root / "in", [rows(f) for f in files], first=first)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(root / "in"))
    query = counts(df).start(main=sink, checkpoint_location=str(root / "ck"),
                             trigger={"availableNow": True})
    query.awaitTermination()
    return query.lastProgress


def test_a_window_chain_runs_in_the_environments_parallelism_and_a_restart_keeps_it(
    spark: Any, fresh_env: Any, tmp_path: Path,
) -> None:
    fresh_env.set_parallelism(3)
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path))
    assert parallelism_line(counts(df)) == "3 (the environment's)"
    sink = MemorySink("fw_env_par_counts")
    progress = run_counts(spark, tmp_path, FILES[:2], 0, sink)
    [operator] = progress["stateOperators"]
    assert (operator["numShufflePartitions"], operator["numStateStoreInstances"]) == (3, 3)
    # the result's own set_parallelism overrides the environment's
    assert parallelism_line(counts(df).set_parallelism(2)) == "2"
    # a restart under another environment parallelism keeps the checkpoint's 3 partitions
    fresh_env.set_parallelism(1)
    progress = run_counts(spark, tmp_path, FILES[2:], 2, sink)
    [operator] = progress["stateOperators"]
    assert (operator["numShufflePartitions"], operator["numStateStoreInstances"]) == (3, 3)
    # late elements dropped (no allowed lateness): a@5000 for [-10 s, 10 s), a@8000, a@2000
    assert Counter(tuple(r) for r in sink.rows()) == Counter([
        ("a", 10000, 2), ("a", 20000, 4), ("a", 30000, 1), ("a", 40000, 1), ("a", 50000, 2),
        ("a", 60000, 1), ("b", 10000, 1), ("b", 20000, 2), ("b", 30000, 1), ("b", 40000, 1),
        ("b", 50000, 1), ("c", 30000, 1), ("c", 40000, 1), ("d", 50000, 1), ("d", 60000, 1),
    ])


def test_the_environments_parallelism_is_capped_by_the_key_groups_and_follows_from_collection(
    spark: Any, fresh_env: Any,
) -> None:
    fresh_env.set_parallelism(32)
    stream = fresh_env.from_collection([("a", 1000)], Types.TUPLE([Types.STRING(), Types.LONG()]))
    windowed = (stream.assign_timestamps_and_watermarks(strategy().with_timestamp_assigner(
        _ts)).key_by(lambda e: e[0], key_type=Types.STRING())
        .window(SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10))).reduce(_first))
    assert parallelism_line(windowed).startswith(
        "16 (the environment's 32, capped by the 16 key groups")


def _ts(element: Any, _: int) -> int:
    return int(element[1])


def _first(a: Any, _b: Any) -> Any:
    return a


@pytest.fixture(scope="module")
def env_plans(spark: Any, tmp_path_factory: Any) -> dict[str, Any]:
    """HotItems without a result-level set_parallelism, under env.set_parallelism(2) and (1)."""
    from flinkwin.datastream import StreamExecutionEnvironment

    root = tmp_path_factory.mktemp("env_parallelism")
    plans: dict[str, Any] = {"root": root}
    before = StreamExecutionEnvironment._current
    try:
        for n in (2, 1):
            StreamExecutionEnvironment._current = None
            StreamExecutionEnvironment.get_execution_environment().set_parallelism(n)
            # one plan per call: the environment is read as the graph is built
            # under root/<n>/in and root/<n>/ck
            plans[n] = run_scenarios(spark, root, {str(n): (True, False)})[str(n)]
    finally:
        StreamExecutionEnvironment._current = before
    return plans


def test_a_rekeying_graph_under_the_environments_parallelism_runs_distributed(
    env_plans: dict[str, Any],
) -> None:
    main, late, progress = env_plans[2]
    one_main, one_late, one_progress = env_plans[1]
    assert non_empty(main) == non_empty(one_main)
    assert non_empty(late) == non_empty(one_late)
    assert sum(main.values(), Counter()) == EXPECTED
    operators = progress[-1]["stateOperators"]
    assert [op["operatorName"] for op in operators] == ["transformWithStateInPandasExec"] * 2
    assert [op["numShufflePartitions"] for op in operators] == [2, 2]
    # env.set_parallelism(1): one task, as a graph's default
    assert [op["operatorName"] for op in one_progress[-1]["stateOperators"]] == [
        "applyInPandasWithState"]


def test_a_restart_after_the_environments_parallelism_changed_follows_the_checkpoints_plan(
    spark: Any, fresh_env: Any, env_plans: dict[str, Any],
) -> None:
    """As a change of the result's set_parallelism: a one-task checkpoint continues on the
    one-task plan (with the warning naming why); a distributed one cannot continue in one
    task, refused naming both ways out."""
    root = env_plans["root"]
    fresh_env.set_parallelism(1)
    df = spark.readStream.schema(SCHEMA).json(str(root / "2" / "in"))
    with pytest.raises(IncompatibleRestartError, match=r"written by the distributed plan.*"
                       r"set_parallelism\(n\) with n > 1 on the graph's result or on the "
                       r"environment"):
        hot_items(df, one_task=True).start(
            main=MemorySink("fw_env_refused"), checkpoint_location=str(root / "2" / "ck"),
            trigger={"availableNow": True})
    fresh_env.set_parallelism(2)
    write_batches(root / "1" / "in", [rows([("f", 90000)])], first=len(FILES))
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(root / "1" / "in"))
    main = MemorySink("fw_env_continued")
    with pytest.warns(OneTaskGraphWarning, match="checkpoint was written by the one-task plan"):
        query = hot_items(df, one_task=True).start(
            main=main, checkpoint_location=str(root / "1" / "ck"),
            trigger={"availableNow": True})
    query.awaitTermination()
    assert len(query.lastProgress["stateOperators"]) == 1
    assert Counter(r[0] for r in main.rows()) == Counter(["70000: e=1", "80000: e=1"])


class TopOfAll(ProcessAllWindowFunction):
    """TopN over all items at once: a windowAll's ``"<end>: item=n ..."``, largest first."""

    def process(self, context: Any, elements: Any) -> Any:
        ranked = sorted(((e.item, e.n) for e in elements), key=lambda t: (-t[1], t[0]))
        yield f"{context.window().end}: " + " ".join(f"{k}={n}" for k, n in ranked[:2])


def test_a_graph_a_rule_keeps_in_one_task_runs_there_under_the_environments_parallelism(
    spark: Any, fresh_env: Any, tmp_path: Path,
) -> None:
    """A windowAll (not keyed: parallelism 1, as in Flink): the environment's default does not
    fail the program (a warning, once, and explain() name the rule); the result's own
    set_parallelism(2) is still refused."""
    fresh_env.set_parallelism(2)
    write_batches(tmp_path / "in", [rows(f) for f in FILES[:3]])
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in"))
    graph = counts(df).window_all(TumblingEventTimeWindows.of(Time.seconds(10))).process(
        TopOfAll(), Types.STRING())
    rule = "is not keyed: it runs with parallelism 1, as in Flink"
    assert rule in explained(graph)
    main = MemorySink("fw_env_all")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph.toDF()
        query = graph.start(main=main, checkpoint_location=str(tmp_path / "ck"),
                            trigger={"availableNow": True})
    query.awaitTermination()
    one_task = [w for w in caught if issubclass(w.category, OneTaskGraphWarning)]
    assert len(one_task) == 1
    assert "environment's parallelism is 2" in str(one_task[0].message)
    assert rule in str(one_task[0].message)
    assert one_task[0].filename == __file__  # it points at the user's line
    [operator] = query.lastProgress["stateOperators"]
    assert operator["operatorName"] == "applyInPandasWithState"
    assert Counter(r[0] for r in main.rows()) == Counter([
        "10000: a=2 b=1", "20000: a=4 b=2", "30000: a=1 b=1"])
    with pytest.raises(PipelineError, match=r"setParallelism\(2\): this stream graph runs in "
                       r"one task \(.*is not keyed"):
        graph.set_parallelism(2)


def test_a_static_graph_under_the_environments_parallelism_runs_in_one_task_with_a_warning(
    spark: Any, fresh_env: Any,
) -> None:
    fresh_env.set_parallelism(2)
    df = spark.createDataFrame([(k, t) for f in FILES for k, t in f], SCHEMA)
    graph = hot_items(df, one_task=True)
    with pytest.warns(OneTaskGraphWarning, match="runs in one task: static input"):
        got = Counter(graph.execute_and_collect())
    # one bounded input: every element on time, each window fires once at the end of input
    assert got["20000: a=6 b=2"] == 1 and "distributed : no: static input" in explained(graph)


def test_filtering_flinkwins_one_task_graph_warning_as_an_error_stops_the_run(
    spark: Any, fresh_env: Any,
) -> None:
    """Users filter warnings by class: ``flinkwin.OneTaskGraphWarning`` is the class a graph
    kept in one task warns with, so the filter turns it into an error raised at the run."""
    fresh_env.set_parallelism(2)
    df = spark.createDataFrame([(k, t) for f in FILES for k, t in f], SCHEMA)
    graph = hot_items(df, one_task=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=flinkwin.OneTaskGraphWarning)
        with pytest.raises(flinkwin.OneTaskGraphWarning, match="runs in one task: static input"):
            graph.execute_and_collect()


def test_a_column_keyed_join_of_a_one_task_graph_warns_once_at_the_line_that_runs_it(
    spark: Any, fresh_env: Any,
) -> None:
    """``where("item")`` reads the input graph's columns: not a run of that graph (which runs
    only inside the join's). The join's graph, kept in one task by its static input, warns
    once, at the user's line that runs it."""
    fresh_env.set_parallelism(2)
    df = spark.createDataFrame([(k, t) for f in FILES for k, t in f], SCHEMA)
    per_minute = (
        counts(df).key_by("item").window(TumblingEventTimeWindows.of(Time.seconds(60)))
        .reduce(lambda a, b: Row(item=a.item, window_end=b.window_end, n=a.n + b.n))
    )
    other = DataStream(spark.createDataFrame([("a", 30000), ("b", 30000)], SCHEMA)) \
        .assign_timestamps_and_watermarks(strategy())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        joined = (
            per_minute.join(other).where("item").equal_to("item")
            .window(TumblingEventTimeWindows.of(Time.seconds(60)))
            .apply(lambda first, second: f"{first.item}:{first.n}", Types.STRING())
        )
        line = sys._getframe().f_lineno + 1
        got = sorted(joined.execute_and_collect())
    # a: 8 elements, b: 3, each in two sliding windows ending within the first minute
    assert got == ["a:16", "b:6"]
    one_task = [w for w in caught if issubclass(w.category, OneTaskGraphWarning)]
    assert [(w.filename, w.lineno) for w in one_task] == [(__file__, line)]
    assert "runs in one task: static input" in str(one_task[0].message)

