"""The Python workers of a window stage skip PySpark's full collection after each session
(flinkwin.spark.daemon)."""

from __future__ import annotations

import gc
import sys
import types
from typing import Any

import pytest
from spark_scenarios import watermark

from flinkwin import ProcessWindowFunction, Time, TumblingEventTimeWindows
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
