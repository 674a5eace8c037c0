"""A stream graph whose source is mapped after its ``WatermarkStrategy``: Flink's
``TimestampsAndWatermarksOperator`` generates that source's watermark before the ``map``, and a
``map`` keeps every element and its timestamp, so the graph generates it from the elements it
reads, as for any source (flinkwin.spark.carried_time). An operator reading only that source
follows its own watermark, not the other sources' (Flink's per-operator watermarks), in the
one-task and the distributed plan, across a restart, without a ``RestartedWatermarksWarning``.

(A ``filter`` or ``flat_map`` there can drop elements, whose timestamps still move Flink's
watermark: Spark's watermark is taken before it, see docs/spark-semantics.md, "What is not like
Flink".)"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import write_batches
from upgrade_programs import SCHEMA, TUMBLING, ev, source

from flinkwin import OneTaskGraphWarning, RestartedWatermarksWarning
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink

#: ``a`` runs ahead; ``b`` stays behind: a window on ``a`` alone fires on ``a``'s watermark.
A = [[ev("a", 1000, 1)], [ev("a", 25000, 2)], [ev("x", 26000, 3)], [ev("a", 41000, 4)],
     [ev("x", 52000, 5)]]
B = [[ev("b", 1000, 10)], [ev("b", 2000, 20)], [ev("b", 3000, 30)], [ev("b", 4000, 40)],
     [ev("b", 5000, 50)]]


def _same(row: Any) -> Any:
    return row


def _program(spark: Any, inputs: Path, mapped: bool) -> DataStream:
    """Per-key sums of ``a`` per 10 s (of ``map(a)`` when ``mapped``), then ``b``'s elements
    beside them: the window reads ``a`` alone (which keeps such a graph in one task)."""
    a, b = source(spark, inputs / "a"), source(spark, inputs / "b")
    if mapped:
        a = a.map(_same, output_type=SCHEMA)
    return a.key_by("k").window(TUMBLING).sum("v").union(b)


def _start(result: DataStream, checkpoint: Path, name: str) -> tuple[Any, MemorySink]:
    main = MemorySink(name)
    query = result.start(main=main, checkpoint_location=str(checkpoint),
                         trigger={"availableNow": True})
    return query, main


def _outputs(started: tuple[Any, MemorySink]) -> dict[int, list[tuple[Any, ...]]]:
    """The query's main output per micro-batch (those with outputs), once it has ended."""
    query, main = started
    query.awaitTermination()
    return {b: sorted(tuple(r) for r in rows) for b, rows in main.batches.items() if rows}


def _run(result: DataStream, checkpoint: Path, name: str) -> dict[int, list[tuple[Any, ...]]]:
    return _outputs(_start(result, checkpoint, name))


def _both(programs: dict[Any, DataStream], tmp_path: Path, name: str
          ) -> dict[Any, dict[int, list[tuple[Any, ...]]]]:
    """The programs (with and without the map...), as concurrent queries of the session."""
    started = {label: _start(program, tmp_path / f"ck_{label}", f"{name}_{label}")
               for label, program in programs.items()}
    return {label: _outputs(run) for label, run in started.items()}


def _window_sums(batches: dict[int, list[tuple[Any, ...]]]) -> dict[int, list[tuple[Any, ...]]]:
    return {b: [r for r in rows if r[0] != "b"] for b, rows in batches.items()
            if any(r[0] != "b" for r in rows)}


def test_a_window_on_a_mapped_source_follows_that_sources_watermark_not_the_slower_ones(
    spark: Any, tmp_path: Path
) -> None:
    """Flink: ``a``'s watermark reaches 23999 with its element at 25000 (batch 1), so the
    window [0, 10 s) of ``a`` fires in the next micro-batch, although ``b`` stays below 5 s; it
    fired only when ``b`` caught up (never, here) while Spark's minimum over both sources was
    the mapped source's watermark. Micro-batch by micro-batch the same as without the map.
    Such a graph runs in one task (the window reads one source of two); asked for
    ``set_parallelism(2)`` it runs there with a warning naming that rule, as Flink runs the
    program at any parallelism."""
    write_batches(tmp_path / "in" / "a", A)
    write_batches(tmp_path / "in" / "b", B)
    with pytest.warns(OneTaskGraphWarning, match=r"setParallelism\(2\) on this stream graph "
                      r".*runs in one task \(Window\(sum\('v'\)\) reads sources \[0\] of 2"):
        scaled = _program(spark, tmp_path / "in", True).set_parallelism(2)
    programs = {m: _program(spark, tmp_path / "in", m) for m in (False, True)}
    runs = _both({**programs, "scaled": scaled}, tmp_path, "fw_mapped")
    assert runs[True] == runs[False] == runs["scaled"]
    assert _window_sums(runs[True]) == {
        2: [("a", 1000, 1)], 4: [("a", 25000, 2), ("x", 26000, 3)], 5: [("a", 41000, 4)],
    }


def test_a_graph_with_a_mapped_source_restarts_on_its_own_clocks_without_a_warning(
    spark: Any, tmp_path: Path
) -> None:
    """Stopped after micro-batch 2 and restarted, the graph gives the uninterrupted run's
    outputs, micro-batch by micro-batch (those with outputs): the stage kept the mapped
    source's clock in its state (Spark's offset log keeps only the query's minimum), so
    nothing warns that clocks were lost."""
    write_batches(tmp_path / "whole" / "a", A)
    write_batches(tmp_path / "whole" / "b", B)
    write_batches(tmp_path / "in" / "a", A[:3])
    write_batches(tmp_path / "in" / "b", B[:3])
    checkpoint = tmp_path / "ck"
    whole = _start(_program(spark, tmp_path / "whole", True), tmp_path / "ck_whole",
                   "fw_mapped_restart_whole")
    first = _run(_program(spark, tmp_path / "in", True), checkpoint, "fw_mapped_restart_0")
    write_batches(tmp_path / "in" / "a", A[3:], first=3)
    write_batches(tmp_path / "in" / "b", B[3:], first=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        second = _run(_program(spark, tmp_path / "in", True), checkpoint,
                      "fw_mapped_restart_1")
    assert not [w for w in caught if w.category is RestartedWatermarksWarning]
    uninterrupted = _outputs(whole)
    # (the first run ends with a micro-batch without data: the restart's ids are one later)
    assert [*first.values(), *second.values()] == list(uninterrupted.values())
    assert _window_sums(uninterrupted) == {
        2: [("a", 1000, 1)], 4: [("a", 25000, 2), ("x", 26000, 3)], 5: [("a", 41000, 4)],
    }


@pytest.mark.parametrize("parallelism", [1, 2], ids=["keyed plan", "distributed"])
def test_a_union_of_a_mapped_and_a_plain_source_gives_the_unmapped_programs_outputs(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """A window over the union of ``map(a)`` and ``b`` (the minimum of both watermarks, as
    before): micro-batch by micro-batch the program without the map's outputs, in the keyed
    plan's key groups and distributed (``set_parallelism(2)``), where the stage keeps both
    sources' clocks itself (heartbeat or clock rows)."""
    b = [[ev("b", 1000, 10)], [ev("b", 24000, 20)], [ev("b", 27000, 30)],
         [ev("b", 42000, 40)], [ev("b", 53000, 50)]]
    write_batches(tmp_path / "in" / "a", A)
    write_batches(tmp_path / "in" / "b", b)

    def program(mapped: bool) -> DataStream:
        a = source(spark, tmp_path / "in" / "a")
        if mapped:
            a = a.map(_same, output_type=SCHEMA)
        sums = a.union(source(spark, tmp_path / "in" / "b")).key_by("k").window(TUMBLING) \
            .sum("v")
        return sums.set_parallelism(parallelism) if parallelism > 1 else sums

    runs = _both({m: program(m) for m in (False, True)}, tmp_path,
                 f"fw_mapped_union_{parallelism}")
    assert runs[True] == runs[False]
    assert runs[True] == {
        2: [("a", 1000, 1), ("b", 1000, 10)],
        4: [("a", 25000, 2), ("b", 24000, 50), ("x", 26000, 3)],
        5: [("a", 41000, 4), ("b", 42000, 40)],
    }
