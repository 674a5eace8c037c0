"""The Python workers of a window stage, and of a distributed graph's keyed nodes, skip PySpark's
full collection after each session (flinkwin.spark.daemon)."""

from __future__ import annotations

import gc
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import run_stream, watermark, write_batches

from flinkwin import (
    AggregateFunction,
    KeyedProcessFunction,
    ProcessWindowFunction,
    Time,
    TumblingEventTimeWindows,
    Types,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import daemon


def _daemon_main(name: str) -> types.ModuleType:
    """A stand-in for the ``__main__`` of a forked worker whose daemon ran as ``-m name``."""
    main = types.ModuleType("__main__")
    main.__spec__ = types.SimpleNamespace(name=name)  # type: ignore[assignment]
    main.gc = gc  # type: ignore[attr-defined]
    main.worker = lambda sock, authenticated: 0  # type: ignore[attr-defined]
    return main


@pytest.fixture
def unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(daemon, "_applied", None)


def test_pyspark_daemon_loop_gets_young_generation_collections(
    unchecked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = _daemon_main("pyspark.daemon")
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert daemon.young_collections_only() is True
    assert main.gc is daemon.YOUNG_GC
    assert isinstance(main.gc.collect(), int)  # collects (generations 0 and 1)
    assert daemon.young_collections_only() is True  # once per process


@pytest.mark.parametrize("name", ["custom.daemon", "pytest"])
def test_other_daemon_modules_are_left_alone(
    unchecked: None, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    main = _daemon_main(name)
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert daemon.young_collections_only() is False
    assert main.gc is gc


def test_a_daemon_whose_gc_was_replaced_is_left_alone(
    unchecked: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = _daemon_main("pyspark.daemon")
    theirs = types.SimpleNamespace(collect=lambda: 0)
    main.gc = theirs  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert daemon.young_collections_only() is False
    assert main.gc is theirs


class DaemonCollector(ProcessWindowFunction):
    """Reports, from the worker, which daemon forked it and what its loop collects with."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        main = sys.modules["__main__"]
        spec = getattr(main, "__spec__", None)
        yield (key, getattr(spec, "name", None), getattr(main, "gc", None) is daemon.YOUNG_GC)


def test_window_stage_workers_collect_young_generations_only(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1, 1), ("b", 2, 1)], "k string, ts long, v long")
    result = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(1)))
        .process(DaemonCollector(), output_schema="k string, daemon string, young boolean")
    )
    rows = sorted(result.toDF().collect())
    assert [tuple(r) for r in rows] == [("a", "pyspark.daemon", True),
                                        ("b", "pyspark.daemon", True)]


def test_automatic_collection_is_paused_inside_the_block_and_restored_after() -> None:
    assert gc.isenabled()
    with daemon.automatic_collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_automatic_collection_is_restored_when_the_block_fails() -> None:
    with pytest.raises(ZeroDivisionError), daemon.automatic_collection_paused():
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled_after_the_block() -> None:
    gc.disable()
    try:
        with daemon.automatic_collection_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


class CollectorState(ProcessWindowFunction):
    """Reports, from the worker, whether Python's automatic collection is on."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, gc.isenabled())


def test_key_group_calls_run_without_automatic_collection(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1, 1), ("b", 2, 1)], "k string, ts long, v long")
    result = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(1)))
        .process(CollectorState(), output_schema="k string, collecting boolean")
    )
    assert sorted(tuple(r) for r in result.toDF().collect()) == [("a", False), ("b", False)]


def test_streaming_key_group_calls_run_without_automatic_collection(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", [[{"k": "a", "ts": 1, "v": 1}, {"k": "b", "ts": 2, "v": 1}],
                                    [{"k": "a", "ts": 5000, "v": 1}]])
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "cp", "k string, ts long, v long",
        lambda ds: ds.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(1)))
        .process(CollectorState(), output_schema="k string, collecting boolean"),
    )
    rows = sorted((r["k"], r["collecting"]) for batch in run.main.values() for r in batch)
    assert rows == [("a", False), ("b", False)]


class CountPerKey(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class ReportCollector(KeyedProcessFunction):
    """Keyed by a window's count: reports, from the worker, the daemon that forked it, whether
    its loop collects young generations only, and whether automatic collection is on."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        main = sys.modules["__main__"]
        spec = getattr(main, "__spec__", None)
        yield (value, getattr(spec, "name", None),
               getattr(main, "gc", None) is daemon.YOUNG_GC, gc.isenabled())


def test_distributed_graph_calls_run_like_a_window_stages(spark: Any, tmp_path: Path) -> None:
    """A distributed graph's keyed nodes (each a transformWithStateInPandas operator) run
    without automatic collection, and their workers' daemon collects young generations only,
    as a window stage's (a full collection would walk every key group's state the worker
    keeps, after every task)."""
    write_batches(tmp_path / "in", [[{"k": "a", "ts": 1, "v": 1}, {"k": "b", "ts": 2, "v": 1}],
                                    [{"k": "a", "ts": 5000, "v": 1}]])
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "cp", "k string, ts long, v long",
        lambda ds: ds.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(1)))
        .aggregate(CountPerKey(), output_type=Types.LONG())
        .key_by(lambda n: n, key_type=Types.LONG())
        .process(ReportCollector(),
                 output_type="n long, daemon string, young boolean, collecting boolean")
        .set_parallelism(2),
    )
    rows = sorted((r["n"], r["daemon"], r["young"], r["collecting"])
                  for batch in run.main.values() for r in batch)
    assert rows == [(1, "pyspark.daemon", True, False)] * 2
