"""Restart safety of a graph stage: the graph is recorded in its checkpoint
(flinkwin/pipeline.json, ``"stage": "graph"``) and checked at start(): a change Flink would not
restore (a window's assigner, a key selector, a function's kind, a node added or removed, the
stage's kind) fails naming the node and the property before any batch runs; a change Flink keeps
the state through (a stateless map's code, the sinks, the side outputs written) continues with
the results of an uninterrupted run."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import write_batches
from upgrade_programs import (
    BATCHES,
    BEFORE,
    LATE,
    SCHEMA,
    SECOND,
    TUMBLING,
    _parity,
    source,
)

from flinkwin import (
    Duration,
    IncompatibleRestartError,
    RestartedWatermarksWarning,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.spark.graph_restart import changes
from flinkwin.spark.restart import DOCUMENT

ROW = "k string, ts long, v long"


def _same(row: Any) -> Any:
    return row


def _rebuilt(row: Any) -> Any:
    return {"k": row["k"], "ts": row["ts"], "v": row["v"] * 1}


def _first_letter(row: Any) -> str:
    return str(row["k"])[0]


def _graph(spark: Any, path: Path, *, size_s: int = 20, key: Any = _parity, step: Any = _same,
           extra: bool = False, agg: str = "sum") -> Any:
    """Per-key sums per 10 s, a map, then sums per ``size_s`` keyed by ``key``."""
    stream = source(spark, path).key_by("k").window(TUMBLING).sum("v").map(step, ROW)
    if extra:
        stream = stream.filter(lambda r: r["v"] is not None)
    windowed = (stream.key_by(key, key_type=Types.STRING())
                .window(TumblingEventTimeWindows.of(Time.seconds(size_s)))
                .side_output_late_data(LATE))
    return getattr(windowed, agg)("v")


def _commits(checkpoint: Path) -> list[str]:
    return sorted(p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit())


def _run(result: Any, checkpoint: Path, name: str, late: bool = True) -> list[Any]:
    main = MemorySink(name)
    sides = {LATE: MemorySink(f"{name}_late")} if late else {}
    result.start(main=main, side_outputs=sides, checkpoint_location=str(checkpoint),
                 trigger={"availableNow": True}).awaitTermination()
    return sorted(tuple(r) for r in main.rows())


@pytest.fixture(scope="module")
def first_run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A graph checkpoint after the first input files (the tests using it do not change it)."""
    path = tmp_path_factory.mktemp("graph_restart")
    write_batches(path / "in", BATCHES[:BEFORE])
    assert _run(_graph(spark, path / "in"), path / "ck", "fw_graph_restart_first") == []
    return path


def test_a_graph_checkpoint_records_its_graph(first_run: Path) -> None:
    doc = json.loads((first_run / "ck" / "flinkwin" / DOCUMENT).read_text())
    assert doc["stage"] == "graph" and doc["key_groups"] == 1
    assert doc["nodes"] == ["Window(sum('v'))", "map", "Window(sum('v'))"]
    first, step, second = doc["fingerprint"]["nodes"]
    assert step == {"kind": "stateless step", "wiring": [[["node", 0], 0]]}
    assert first["operator"]["assigner"]["size"] == 10000 and first["keys"] == [["k"]]
    assert second["operator"]["function"]["incremental"] == "sum('v')"
    assert second["keys"] == ["upgrade_programs._parity"]
    assert second["input_types"] == [
        {"schema": "struct<k:string,ts:bigint,v:bigint>", "elements": "row"}
    ]
    assert doc["fingerprint"]["sources"][0]["watermark"]["out_of_orderness_ms"] == 1000


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"size_s": 30},
         "fingerprint.nodes[2] Window(sum('v')).operator.assigner.size: 20000 -> 30000"),
        ({"key": _first_letter},
         "fingerprint.nodes[2] Window(sum('v')).keys: ['upgrade_programs._parity'] -> "
         "['test_graph_restart_safety._first_letter']"),
        ({"agg": "max"},
         "fingerprint.nodes[2] Window(max('v')).operator.function.incremental: \"sum('v')\" -> "
         "\"max('v')\""),
        ({"extra": True},
         "fingerprint.nodes: 3 -> 4 (added nodes[2] filter (stateless step)); a graph's state "
         "belongs to its operators by their position in the graph"),
    ],
)
def test_an_incompatible_graph_restart_fails_at_start_naming_the_node_and_the_change(
    spark: Any, first_run: Path, change: dict[str, Any], named: str
) -> None:
    ck = first_run / "ck"
    before = _commits(ck)
    with pytest.raises(IncompatibleRestartError) as failure:
        _graph(spark, first_run / "in", **change).start(
            main=MemorySink("fw_graph_restart_bad"), checkpoint_location=str(ck),
            trigger={"availableNow": True},
        )
    assert named in str(failure.value)
    assert spark.streams.active == [] and _commits(ck) == before  # no batch ran


def test_a_graph_restart_through_spark_writer_on_to_df_is_checked_too(
    spark: Any, first_run: Path
) -> None:
    """A query started by Spark's own writer on ``toDF()`` gets the same check as ``start()``:
    a changed graph is refused before any batch runs."""
    ck = first_run / "ck"
    before = _commits(ck)
    writer = _graph(spark, first_run / "in", size_s=30).toDF().writeStream.format("noop")
    with pytest.raises(IncompatibleRestartError, match=r"assigner\.size: 20000 -> 30000"):
        writer.option("checkpointLocation", str(ck)).trigger(availableNow=True).start()
    assert spark.streams.active == [] and _commits(ck) == before


def test_a_window_stage_started_from_a_graph_checkpoint_is_refused(
    spark: Any, first_run: Path
) -> None:
    window = source(spark, first_run / "in").key_by("k").window(TUMBLING).sum("v")
    with pytest.raises(IncompatibleRestartError, match=(
            r"stage: 'graph' -> 'window' \(the checkpoint holds the state of a graph stage")):
        window.start(main=MemorySink("fw_graph_restart_window"),
                     checkpoint_location=str(first_run / "ck"), trigger={"availableNow": True})


def test_a_graph_restart_with_another_map_body_and_sinks_continues_with_identical_results(
    spark: Any, tmp_path: Path
) -> None:
    """As in Flink, a stateless step's code, the sinks and the side outputs written may change:
    the windows open at the stop continue (the uninterrupted run gives these two sums of the
    first windows' results per parity)."""
    write_batches(tmp_path / "in", BATCHES[:BEFORE])
    first = _run(_graph(spark, tmp_path / "in"), tmp_path / "ck", "fw_graph_compatible_1")
    write_batches(tmp_path / "in", BATCHES[BEFORE:], first=BEFORE)
    second = _run(_graph(spark, tmp_path / "in", step=_rebuilt), tmp_path / "ck",
                  "fw_graph_compatible_2", late=False)
    assert first + second == [("a", 1000, 30), ("c", 4000, 26)]


def test_changes_name_added_and_removed_nodes_by_position() -> None:
    def node(kind: str, wiring: int) -> dict[str, Any]:
        return {"kind": kind, "wiring": [[["node", wiring], 0]]}

    recorded = {"sources": [], "nodes": [node("operator", 0), node("stateless step", 0),
                                          node("operator", 1)], "times_before_1970": False}
    removed = {**recorded, "nodes": [node("operator", 0), node("operator", 0)]}
    assert changes(recorded, removed, ["Window(sum)", "Window(sum)"]) == [
        "fingerprint.nodes: 3 -> 2 (removed nodes[1] (stateless step)); a graph's state "
        "belongs to its operators by their position in the graph"
    ]
    rewired = {**recorded, "nodes": [node("operator", 0), node("stateless step", 0),
                                     node("operator", 0)], "times_before_1970": True}
    assert changes(recorded, rewired, ["A", "map", "B"]) == [
        "fingerprint.nodes[2] B.wiring: [[['node', 1], 0]] -> [[['node', 0], 0]]",
        "fingerprint.times_before_1970: False -> True",
    ]


def test_changes_read_a_source_watermark_spark_took_before_a_map_as_the_stages_own() -> None:
    """A flinkwin up to 0d0fe0d recorded a mapped source's watermark as Spark's (taken before
    the map, no bound); this one generates it in the stage: not a change. Any other change of
    a source's watermark still is."""
    def source(delay: int | None, upstream: bool) -> dict[str, Any]:
        return {"schema": "struct<k:string>", "elements": "row", "watermark": {
            "out_of_orderness_ms": delay, "idle_timeout_ms": None, "from_upstream": upstream,
            "timestamp_column": "'_fw_rts'"}}

    def graph(*sources: dict[str, Any]) -> dict[str, Any]:
        return {"sources": list(sources), "nodes": [], "times_before_1970": False}

    old = graph(source(None, True), source(1000, False))
    assert changes(old, graph(source(1000, False), source(1000, False)), []) == []
    assert changes(old, graph(source(None, True), source(2000, False)), []) == [
        "fingerprint.sources[1].watermark.out_of_orderness_ms: 1000 -> 2000"]
    assert changes(graph(source(1000, False)), graph(source(None, True)), []) == [
        "fingerprint.sources[0].watermark.out_of_orderness_ms: 1000 -> None",
        "fingerprint.sources[0].watermark.from_upstream: False -> True",
    ]


def _keep(row: Any) -> bool:
    return True


def _key(row: Any) -> str:
    return str(row["k"])


def test_a_restart_on_sparks_watermark_of_several_sources_warns_that_their_clocks_are_lost(
    spark: Any, tmp_path: Path
) -> None:
    """A graph whose source's watermark Spark computes before a filter takes Spark's minimum
    over the sources for it, which a restart resets to its recorded watermark: its restart
    warns (RestartedWatermarksWarning), in the keyed plan (keyed by a column) and in one task
    (keyed by a function: the task keeps the clocks of the sources whose watermark it
    computes, not of this one); the same graph with both sources' watermarks its own keeps
    their clocks in its state and does not."""
    inputs = tmp_path / "in"
    for name, batches in (("a", BATCHES), ("b", SECOND)):
        write_batches(inputs / name, batches[:BEFORE])

    def build(filtered: bool, one_task: bool) -> Any:
        a, b = source(spark, inputs / "a"), source(spark, inputs / "b")
        if filtered:
            a = a.filter(_keep)
        union = a.union(b)
        keyed = union.key_by(_key, key_type=Types.STRING()) if one_task else union.key_by("k")
        return keyed.window(TUMBLING).side_output_late_data(LATE).sum("v")

    for filtered, one_task in ((True, False), (True, True), (False, False)):
        checkpoint = tmp_path / f"cp_{filtered}_{one_task}"
        _run(build(filtered, one_task), checkpoint, f"clocks_{filtered}_{one_task}_0")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _run(build(filtered, one_task), checkpoint, f"clocks_{filtered}_{one_task}_1")
        warned = [w for w in caught if w.category is RestartedWatermarksWarning]
        assert bool(warned) == filtered, (one_task, [str(w.message) for w in caught])


def test_a_graph_with_idleness_restarted_in_other_key_groups_is_refused_naming_the_fix(
    spark: Any, tmp_path: Path
) -> None:
    """A union with with_idleness runs in one key group at a graph's default parallelism (as
    flinkwin ran every such graph before, so their checkpoints restart) and in the stream's
    key groups at set_parallelism(2): a checkpoint of the one restarted as the other is
    refused at start, naming both and the setting that decides; as written, it goes on."""
    inputs = tmp_path / "in"
    for name, batches in (("a", BATCHES), ("b", SECOND)):
        write_batches(inputs / name, batches[:BEFORE])
    idle = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)) \
        .with_timestamp_assigner("ts").with_idleness(Duration.of_seconds(30))

    def build(parallelism: int) -> Any:
        b = DataStream(spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
                       .json(str(inputs / "b"))).assign_timestamps_and_watermarks(idle)
        union = source(spark, inputs / "a").union(b).key_by("k").window(TUMBLING).sum("v")
        return union.set_parallelism(parallelism) if parallelism > 1 else union

    checkpoint = tmp_path / "ck"
    _run(build(1), checkpoint, "idle_kg_0", late=False)
    with pytest.raises(IncompatibleRestartError, match=(
            r"key_groups: 1 -> \d+: the checkpoint was written with the graph in one key "
            r"group \(one task\), this program runs it in \d+ key groups.*a graph with "
            r"with_idleness runs in one key group unless set_parallelism\(n\)")):
        _run(build(2), checkpoint, "idle_kg_1", late=False)
    _run(build(1), checkpoint, "idle_kg_2", late=False)
