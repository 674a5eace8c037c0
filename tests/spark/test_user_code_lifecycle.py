"""User code on a stream, as a user runs it: classes defined in ``__main__`` survive snapshots and
a restart, rich functions open once per subtask and close, and flinkwin unpickles nothing it did
not write itself (input columns, state under another key).

The ``__main__`` scenarios run ``main_module_driver.py`` as its own driver process (a script:
its classes are ``__main__``'s, which the Python workers cannot import), twice on the same
checkpoints, both queries in each driver run; each run is several micro-batches (one JSON file
each)."""

from __future__ import annotations

import json
import os
import pickle
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql.types import BinaryType, StructField, StructType

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.functions import ProcessAllWindowFunction
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.spark import MemorySink
from flinkwin.spark.schema import PICKLED_METADATA, is_pickled
from flinkwin.spark.subtasks import SubtaskRegistry
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


def _run_driver(work: Path, *extra: str) -> dict[str, int]:
    """One driver run of both queries to the end of their input; each one's micro-batches."""
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               PYTHONPATH=str(ROOT))  # flinkwin only: the driver's classes stay __main__'s
    (work / "log").mkdir(exist_ok=True)
    (work / "out").mkdir(exist_ok=True)
    proc = subprocess.run(
        [sys.executable, str(DRIVER), "--input", str(work / "in"), "--checkpoint",
         str(work / "ck"), "--output", str(work / "out"), "--log", str(work / "log"),
         "--query", "aggregate,evicting", *extra],
        env=env, capture_output=True, text=True, timeout=900, cwd=work,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-6000:]
    found = dict(re.findall(r"BATCHES (\w+) (\d+)", proc.stdout))
    assert set(found) == {"aggregate", "evicting"}, proc.stdout[-2000:]
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
    batches = _run_driver(work)
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
    opened = _calls(work / "log-first", "open")
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
    assert _calls(work / "log", "open") == _calls(work / "log", "close")


@pytest.mark.slow
def test_main_module_elements_and_evictor_survive_a_restart(
    main_module_runs: dict[str, Any],
) -> None:
    # each window's Click elements (a __main__ dataclass) were in the state across the restart
    assert main_module_runs["second"]["evicting"] == [
        [user, i * 10_000, [10 * i + first, 10 * i + first + 2]]
        for user, first in (("a", 0), ("b", 1)) for i in range(4)
    ]


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
