"""User code on a stream, as a user runs it: classes defined in ``__main__`` survive snapshots and
a restart, rich functions open once per subtask and close, and flinkwin unpickles nothing it did
not write itself (input columns, state under another key).

The ``__main__`` scenarios run ``main_module_driver.py`` as its own driver process (a script:
its classes are ``__main__``'s, which the Python workers cannot import), twice on the same
checkpoints, both queries in each driver run; each run is several micro-batches (one JSON file
each). A third driver run stops a window stage's and a graph stage's queries and fails another
graph stage's, and measures when their workers closed every opened function."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import BinaryType, StructField, StructType

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.functions import KeyedProcessFunction, ProcessAllWindowFunction
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.spark import MemorySink, stops
from flinkwin.spark.schema import PICKLED_METADATA, is_pickled
from flinkwin.spark.stops import signal_executors, write_marker
from flinkwin.spark.subtasks import SubtaskRegistry, current_run, reused_worker, stop_directory
from flinkwin.types import Types
from flinkwin.watermark import WatermarkStrategy

DRIVER = Path(__file__).with_name("main_module_driver.py")
ROOT = Path(__file__).resolve().parents[2]

# runs its own Spark processes for a long while: `make test` runs it beside the rest
pytestmark = pytest.mark.beside


def _write_files(directory: Path, first: int, last: int) -> None:
    """Files ``first..last-1``, read in that order: file i holds users a and b at
    ``i*10 s + j s`` (j = 0..3), values ``10*i + j``."""
    directory.mkdir(exist_ok=True)
    for i in range(first, last):
        path = directory / f"{i:03d}.json"
        path.write_text("".join(
            json.dumps({"user": "ab"[j % 2], "ts": i * 10_000 + j * 1000, "v": i * 10 + j}) + "\n"
            for j in range(4)
        ))
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def _run_driver(work: Path, *extra: str, queries: str = "aggregate,evicting") -> str:
    """One driver run of ``queries`` to the end of their input; its output."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               PYTHONPATH=str(ROOT))  # flinkwin only: the driver's classes stay __main__'s
    (work / "log").mkdir(exist_ok=True)
    (work / "out").mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, str(DRIVER), "--input", str(work / "in"), "--checkpoint",
         str(work / "ck"), "--output", str(work / "out"), "--log", str(work / "log"),
         "--query", queries, *extra],
        env=env, capture_output=True, text=True, timeout=900, cwd=work,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-6000:]
    return proc.stdout


def _batches(stdout: str, queries: set[str]) -> dict[str, int]:
    """Each query's number of micro-batches, as the driver printed them."""
    found = dict(re.findall(r"BATCHES (\w+) (\d+)", stdout))
    assert set(found) == queries, stdout[-2000:]
    return {name: int(n) for name, n in found.items()}


def _outputs(work: Path, query: str) -> list[Any]:
    return sorted(json.loads(line)
                  for line in (work / "out" / f"{query}.txt").read_text().splitlines())


def _calls(log: Path, event: str) -> dict[str, int]:
    """{"<worker pid>-<subtask>": number of ``event`` calls}."""
    return {
        p.name[len(event) + 1:]: len(p.read_text().splitlines())
        for p in log.iterdir() if p.name.startswith(f"{event}-")
    }


@pytest.fixture(scope="module")
def main_module_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Both ``__main__`` queries, run by one driver over files 0-2, then restarted from their
    checkpoints by a second driver (subtasks closed after 1 s idle) over files 0-4."""
    work = tmp_path_factory.mktemp("main-module")
    _write_files(work / "in", 0, 3)
    batches = _batches(_run_driver(work), {"aggregate", "evicting"})
    first = {q: _outputs(work, q) for q in ("aggregate", "evicting")}
    (work / "log").rename(work / "log-first")
    _write_files(work / "in", 3, 5)
    _run_driver(work, "--idle-close", "1", "--wait-for-close")
    return {"work": work, "batches": batches, "first": first,
            "second": {q: _outputs(work, q) for q in ("aggregate", "evicting")}}


@pytest.mark.slow
def test_main_module_accumulators_survive_snapshots_and_a_restart_and_open_once(
    main_module_runs: dict[str, Any],
) -> None:
    work = main_module_runs["work"]
    assert main_module_runs["batches"]["aggregate"] >= 3
    # windows [0, 10 s) and [10 s, 20 s) fired; [20 s, 30 s) holds Acc objects in the state
    assert main_module_runs["first"]["aggregate"] == [
        ["a", 0, 2, 2], ["a", 10_000, 22, 2], ["b", 0, 4, 2], ["b", 10_000, 24, 2],
    ]
    opened = _calls(work / "log-first" / "aggregate", "open")
    # once per subtask (key group) in each worker process, over all the batches; no close
    # yet (the stage is closed after 60 s idle)
    assert opened and set(opened.values()) == {1}
    assert {key.split("-")[1] for key in opened} <= {"5", "11"}  # the key groups of a and b

    # [20 s, 30 s) was accumulated by the first run and fired by the restarted one
    assert main_module_runs["second"]["aggregate"] == [
        ["a", 0, 2, 2], ["a", 10_000, 22, 2], ["a", 20_000, 42, 2], ["a", 30_000, 62, 2],
        ["b", 0, 4, 2], ["b", 10_000, 24, 2], ["b", 20_000, 44, 2], ["b", 30_000, 64, 2],
    ]
    # every open subtask was closed once the stage was idle
    log = work / "log" / "aggregate"
    assert _calls(log, "open") == _calls(log, "close")


@pytest.mark.slow
def test_main_module_elements_and_evictor_survive_a_restart(
    main_module_runs: dict[str, Any],
) -> None:
    # each window's Click elements (a __main__ dataclass) were in the state across the restart
    assert main_module_runs["second"]["evicting"] == [
        [user, i * 10_000, [10 * i + first, 10 * i + first + 2]]
        for user, first in (("a", 0), ("b", 1)) for i in range(4)
    ]


@pytest.fixture(scope="module")
def stopped_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A window stage (``aggregate``) and a graph stage (``process``), each run over files 0-2
    with a processing-time trigger and stopped, and a graph stage and a window stage that fail
    in their third file (``failing``, ``failing_window``), by one driver whose workers close
    idle stages after 60 s only."""
    work = tmp_path_factory.mktemp("main-module-stopped")
    _write_files(work / "in", 0, 3)
    queries = ("aggregate", "process", "failing", "failing_window")
    stdout = _run_driver(work, "--stop", queries=",".join(queries))
    closed = {name: float(s) for name, s in re.findall(r"CLOSED (\w+) (-?[\d.]+)", stdout)}
    return {"work": work, "stdout": stdout, "closed": closed,
            "batches": _batches(stdout, set(queries))}


@pytest.mark.slow
@pytest.mark.extended  # its own driver (~50 s): make test-extended (and CI) runs it
def test_a_graph_stage_opens_its_process_function_once_per_subtask_across_micro_batches(
    stopped_runs: dict[str, Any],
) -> None:
    work = stopped_runs["work"]
    # the process function holds no state: its key group's state is removed after every batch
    # and each batch builds the graph's operators again
    assert stopped_runs["batches"]["process"] >= 3
    assert len(_outputs(work, "process")) == 12
    opened = _calls(work / "log" / "process", "open")
    assert opened and set(opened.values()) == {1}


@pytest.mark.slow
def test_close_runs_within_seconds_of_a_stopped_query_for_window_and_graph_stages(
    stopped_runs: dict[str, Any],
) -> None:
    # "CLOSED q s": every opened subtask closed s seconds after query.stop() returned (the
    # workers would close idle stages after 60 s only); the window stage has two key groups
    assert len(_calls(stopped_runs["work"] / "log" / "aggregate", "open")) >= 2
    for query in ("aggregate", "process"):
        log = stopped_runs["work"] / "log" / query
        opened = _calls(log, "open")
        assert opened and _calls(log, "close") == opened, query
        assert 0 <= stopped_runs["closed"][query] <= 5, stopped_runs["stdout"][-2000:]


@pytest.mark.slow
def test_close_runs_within_seconds_of_a_failed_query(stopped_runs: dict[str, Any]) -> None:
    # "CLOSED q s": every opened subtask closed s seconds after awaitTermination() raised
    for query in ("failing", "failing_window"):
        assert f"FAILED {query} StreamingQueryException" in stopped_runs["stdout"]
        log = stopped_runs["work"] / "log" / query
        opened = _calls(log, "open")
        assert opened and _calls(log, "close") == opened, query
        assert 0 <= stopped_runs["closed"][query] <= 5, stopped_runs["stdout"][-2000:]


# ------------------------------------------------------------------------ trust boundary
class WritesMarker:
    """Unpickling this writes a file: what a malicious pickle in an input table would do."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (Path.write_text, (Path(self.path), "pwned"))


class Sizes(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        yield [len(e.value) for e in elements]


def test_an_input_column_marked_pickled_is_bytes_and_never_unpickled(
    spark: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "marker"
    evil = pickle.dumps(WritesMarker(str(marker)))
    schema = StructType([StructField("value", BinaryType(), True, metadata=PICKLED_METADATA)])
    spark.createDataFrame([(evil,)], schema).write.parquet(str(tmp_path / "table"))
    table = spark.read.parquet(str(tmp_path / "table"))
    assert is_pickled(table.schema)  # the metadata survives the file: it cannot be trusted

    stream = DataStream(table)
    assert [bytes(r.value) for r in stream.execute_and_collect()] == [evil]
    assert stream.map(lambda r: len(r.value), Types.INT()).execute_and_collect() == [len(evil)]
    assert stream.count_window_all(1).process(Sizes()).execute_and_collect() == [[len(evil)]]
    streamed: list[Any] = []
    source = spark.readStream.schema(table.schema).parquet(str(tmp_path / "table"))
    assert is_pickled(source.schema)
    query = DataStream(source).add_sink(lambda value, _context: streamed.append(value))
    assert query is not None
    query.processAllAvailable()
    query.stop()
    assert [bytes(r.value) for r in streamed] == [evil]
    assert not marker.exists()
    with pytest.raises(ValueError, match="never unpickles bytes it did not write"):
        DataStream(table, type_info=Types.PICKLED_BYTE_ARRAY())


def test_a_restart_under_another_state_key_is_refused(spark: Any, tmp_path: Path) -> None:
    _write_files(tmp_path / "in", 0, 2)
    clicks = spark.readStream.schema("user string, ts long, v long") \
        .option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))

    def start(name: str) -> Any:
        return (
            DataStream(clicks)
            .assign_timestamps_and_watermarks(
                WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts"))
            .key_by(lambda r: r.user)
            .window(TumblingEventTimeWindows.of(Time.seconds(10)))
            .reduce(lambda a, b: a if a.v > b.v else b)
            .start(MemorySink(name), checkpoint_location=str(tmp_path / "ck"),
                   trigger={"availableNow": True})
        )

    try:
        spark.conf.set("spark.flinkwin.state.secret", "the first state key of this test")
        start("fw_key_first").awaitTermination()
        _write_files(tmp_path / "in", 2, 3)
        spark.conf.set("spark.flinkwin.state.secret", "another state key, not the first")
        with pytest.raises(Exception, match="HMAC-SHA256 check .*spark.flinkwin.state.secret"):
            start("fw_key_second").awaitTermination()
    finally:
        spark.conf.unset("spark.flinkwin.state.secret")


# ---------------------------------------------------------------------- worker subtasks
class Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    def open(self, runtime_context: Any) -> None:
        self.events.append("open")

    def close(self) -> None:
        self.events.append("close")


def _opened(function: Any) -> Subtask:
    subtask = Subtask(function, None, TaskInfo())
    subtask.open(None, [function])  # type: ignore[arg-type]
    return subtask


def test_a_worker_closes_the_subtasks_of_an_idle_stage_but_not_of_a_running_one() -> None:
    registry = SubtaskRegistry()
    idle, running = Recorder(), Recorder()
    registry.get("idle", 0, lambda: _opened(idle), idle_close_s=0.2)
    with registry.running("running", idle_close_s=0.2):
        registry.get("running", 0, lambda: _opened(running), idle_close_s=0.2)
        time.sleep(1.0)  # the watcher thread checks every 0.05 s
        assert idle.events == ["open", "close"] and running.events == ["open"]
    time.sleep(1.0)
    assert running.events == ["open", "close"]
    # a later call opens a new subtask, as a restarted Flink task does
    again = registry.get("idle", 0, lambda: _opened(Recorder()), idle_close_s=0.2)
    assert again.opened and not again.closed


def test_a_worker_closes_the_subtasks_of_stages_beyond_the_most_recent() -> None:
    registry = SubtaskRegistry(max_stages=2)
    functions = [Recorder() for _ in range(3)]
    for i, function in enumerate(functions):
        registry.get(f"stage-{i}", 0, lambda f=function: _opened(f), idle_close_s=3600)
    assert [f.events for f in functions] == [["open", "close"], ["open"], ["open"]]
    registry.close_all()
    assert [f.events for f in functions] == [["open", "close"]] * 3


RUN_A, RUN_B = str(uuid.uuid4()), str(uuid.uuid4())


def _until(condition: Any, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_worker_closes_the_subtasks_of_a_query_run_when_its_stop_marker_appears(
    tmp_path: Path,
) -> None:
    registry = SubtaskRegistry(stops=str(tmp_path))
    stopped, busy, other = Recorder(), Recorder(), Recorder()
    registry.get(f"s/{RUN_A}", 0, lambda: _opened(stopped), idle_close_s=3600, run=RUN_A)
    registry.get(f"t/{RUN_B}", 0, lambda: _opened(other), idle_close_s=3600, run=RUN_B)
    with registry.running(f"u/{RUN_A}", idle_close_s=3600, run=RUN_A):
        registry.get(f"u/{RUN_A}", 0, lambda: _opened(busy), idle_close_s=3600, run=RUN_A)
        write_marker(RUN_A, str(tmp_path))
        assert _until(lambda: stopped.events == ["open", "close"], 3.0)
        assert busy.events == ["open"]  # never while a call of the stage runs
    assert _until(lambda: busy.events == ["open", "close"], 3.0)
    assert other.events == ["open"]  # another run goes on
    registry.close_all()


def test_a_stop_marker_is_named_by_a_run_id_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_marker("../../etc/x", str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_the_stop_job_writes_the_marker_where_the_workers_look(spark: Any) -> None:
    run = str(uuid.uuid4())
    signal_executors(spark.sparkContext, run)
    assert (Path(stop_directory()) / run).exists()


SCRIPT_ENDING_AFTER_ITS_QUERY = """
import json, sys
from pathlib import Path
from pyspark.sql import SparkSession
from flinkwin import Duration, Time, TumblingEventTimeWindows, WatermarkStrategy
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink

work = Path(sys.argv[1])
(work / "in").mkdir()
(work / "in" / "a.json").write_text(json.dumps({"k": "a", "ts": 1000, "v": 1}) + "\\n")
spark = SparkSession.builder.master("local[1]").getOrCreate()
df = spark.readStream.schema("k string, ts long, v long").json(str(work / "in"))
strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0))
stream = DataStream(df).assign_timestamps_and_watermarks(strategy.with_timestamp_assigner("ts"))
result = stream.key_by("k").window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")
query = result.start(main=MemorySink("ending"), checkpoint_location=str(work / "ck"),
                     trigger={"availableNow": True})
query.awaitTermination()
print("ENDED")
"""


def test_a_script_ending_right_after_its_query_exits_without_a_listener_error(
    tmp_path: Path,
) -> None:
    """A user script that ends right after its query (no ``spark.stop()``) exits cleanly: the
    stop listener is removed at exit once Spark's listener bus has delivered the query's end,
    instead of Spark calling it after Python's callback server is gone (an ERROR with a
    py4j stack trace at every such exit)."""
    script = tmp_path / "ending.py"
    script.write_text(SCRIPT_ENDING_AFTER_ITS_QUERY)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(script), str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "ENDED" in proc.stdout
    assert "threw an exception" not in proc.stderr, proc.stderr[-4000:]
    assert "Py4JNetworkException" not in proc.stderr, proc.stderr[-4000:]


def test_the_stop_listener_reads_spark_events_and_signals_only_runs_with_a_flinkwin_stage(
    spark: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The listener reads Spark's JVM events itself (not PySpark's converted ones): on a
    cluster master, the run whose progress carries flinkwin's observed metrics gets the
    executor job when it stops, another query's run does not."""
    from pyspark.sql import functions as F

    signalled: list[str] = []
    monkeypatch.setattr(stops, "_signal", lambda sc, run: signalled.append(run))
    listener = stops.StopListener(spark.sparkContext, local=False)
    jlistener = stops._add_listener(spark.streams, listener)
    queries = []
    try:
        for name in ("flinkwin", "users_metrics"):
            rate = spark.readStream.format("rate").option("rowsPerSecond", 5).load()
            query = (rate.observe(name, F.count(F.lit(1)).alias("n")).writeStream
                     .format("noop").trigger(processingTime="0.2 seconds").start())
            queries.append(query)
        for query in queries:
            deadline = time.monotonic() + 60
            while query.lastProgress is None and time.monotonic() < deadline:
                time.sleep(0.2)
        ours, theirs = (str(q.runId) for q in queries)
        deadline = time.monotonic() + 30
        while ours not in listener.flinkwin_runs and time.monotonic() < deadline:
            time.sleep(0.2)
        assert listener.flinkwin_runs == {ours}
        for query in queries:
            query.stop()
        # each run's marker is written by its termination event, before the job is decided
        markers = [Path(stop_directory()) / run for run in (ours, theirs)]
        deadline = time.monotonic() + 30
        while not all(m.exists() for m in markers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert all(m.exists() for m in markers)
        while not signalled and time.monotonic() < deadline:  # (the job runs on a thread)
            time.sleep(0.2)
        assert signalled == [ours]
    finally:
        for query in queries:
            query.stop()
        spark.streams._jsqm.removeListener(jlistener)


class Lifecycle(KeyedProcessFunction):
    """Records open and close as files ``<event>-<pid>-<subtask>`` in ``log``."""

    def __init__(self, log: str) -> None:
        self.log = log
        self.name = ""

    def open(self, runtime_context: Any) -> None:
        self.name = f"{os.getpid()}-{runtime_context.get_index_of_this_subtask()}"
        with open(os.path.join(self.log, f"open-{self.name}"), "a") as f:
            f.write("open\n")

    def close(self) -> None:
        with open(os.path.join(self.log, f"close-{self.name}"), "a") as f:
            f.write("close\n")

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield f"{value.user}:{value.v}"


def test_a_graph_stage_on_a_static_input_closes_its_functions_at_the_end_of_the_job(
    spark: Any, tmp_path: Path,
) -> None:
    df = spark.createDataFrame([("a", 1), ("b", 2), ("a", 3)], "user string, v long")
    out = DataStream(df).key_by("user").process(
        Lifecycle(str(tmp_path)), output_type=Types.STRING()
    ).execute_and_collect()
    assert sorted(out) == ["a:1", "a:3", "b:2"]
    opened = _calls(tmp_path, "open")
    assert opened and _calls(tmp_path, "close") == opened


def test_outside_a_spark_task_the_process_counts_as_reused_and_runs_no_query() -> None:
    # (the key-group function called directly, as the benchmarks do: subtasks stay open)
    assert reused_worker() and current_run() == ""


def test_a_restarted_query_is_a_new_run_that_opens_again_and_each_run_closes_on_stop(
    spark: Any, tmp_path: Path,
) -> None:
    log = tmp_path / "log"
    log.mkdir()
    _write_files(tmp_path / "in", 0, 2)
    clicks = spark.readStream.schema("user string, ts long, v long") \
        .option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    # one result, started twice on one checkpoint: the same compiled stage, two query runs
    # (event time: a stage that wakes keys in processing time runs a batch on every trigger,
    # and processAllAvailable() would never return)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    result = DataStream(clicks).assign_timestamps_and_watermarks(strategy).key_by("user") \
        .process(Lifecycle(str(log)), output_type=Types.STRING())

    def run(name: str) -> int:
        query = result.start(MemorySink(name), checkpoint_location=str(tmp_path / "ck"),
                             trigger={"processingTime": "0.2 seconds"})
        query.processAllAvailable()
        query.stop()
        # closed within seconds of stop(), though the workers' idle timeout is 30 s
        assert _until(lambda: _calls(log, "close") == _calls(log, "open"), 5.0)
        return sum(_calls(log, "open").values())

    first = run("fw_lifecycle_first")
    assert first >= 1
    _write_files(tmp_path / "in", 2, 3)
    assert run("fw_lifecycle_second") > first  # the new run opened its own subtasks
    rows = spark.sql("select * from fw_lifecycle_second").collect()
    assert sorted(r.value for r in rows) == ["a:20", "a:22", "b:21", "b:23"]
