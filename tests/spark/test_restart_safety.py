"""Restart safety: the pipeline recorded in the checkpoint (flinkwin/pipeline.json) is checked
at start(); incompatible changes fail naming what changed, compatible ones (sink, Spark
trigger, query name) continue with identical results; a staggered window keeps its offset; the
state of one checkpoint copied into another query is refused."""

from __future__ import annotations

import json
import random
import shutil
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException
from spark_scenarios import watermark, write_batches
from test_spark_streaming import LATE, SCHEMA, TUMBLING_BATCHES, ev

from flinkwin import IncompatibleRestartError, Time, TumblingEventTimeWindows, Types, WindowStagger
from flinkwin.datastream import DataStream
from flinkwin.datastream.window_result_stream import WindowResultStream
from flinkwin.functions import ProcessAllWindowFunction
from flinkwin.spark import MemorySink
from flinkwin.spark.restart import DOCUMENT, STATE_FORMAT, differences, format_changes
from flinkwin.watermark import WatermarkStrategy

MAIN_ROWS = [("a", 1000, 6), ("a", 12000, 4), ("b", 2000, 10), ("c", 4000, 7)]


def _source(spark: Any, path: Path) -> Any:
    path.mkdir(parents=True, exist_ok=True)
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(path))


def _build(
    spark: Any, path: Path, *, size_s: int = 10, lateness_s: int = 0, key_groups: int = 16,
    agg: str = "sum", late: bool = True,
) -> WindowResultStream:
    windowed = (
        DataStream(_source(spark, path), key_groups=key_groups)
        .assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(size_s)))
        .allowedLateness(Time.seconds(lateness_s))
    )
    if late:
        windowed = windowed.sideOutputLateData(LATE)
    return getattr(windowed, agg)("v")


def _first_run(spark: Any, tmp_path: Path) -> tuple[MemorySink, MemorySink]:
    """The first two batches, into memory sinks, under availableNow."""
    write_batches(tmp_path / "in", TUMBLING_BATCHES[:2])
    main, late = MemorySink("fw_restart_main"), MemorySink("fw_restart_late")
    query = _build(spark, tmp_path / "in").start(
        main=main, side_outputs={LATE: late}, checkpoint_location=str(tmp_path / "ck"),
        trigger={"availableNow": True}, query_name="fw_restart_first",
    )
    query.awaitTermination()
    return main, late


def _commits(checkpoint: Path) -> list[str]:
    return sorted(p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit())


@pytest.fixture(scope="module")
def first_run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A checkpoint after the first two batches (the tests using it do not change it)."""
    path = tmp_path_factory.mktemp("restart")
    _first_run(spark, path)
    return path


def test_the_checkpoint_records_the_pipeline(first_run: Path) -> None:
    doc = json.loads((first_run / "ck" / "flinkwin" / DOCUMENT).read_text())
    assert doc["state_format"] == STATE_FORMAT
    assert doc["stage"] == "window"
    assert doc["key_groups"] == 16
    fp = doc["fingerprint"]
    assert fp["assigner"] == {
        "class": "flinkwin.assigners.tumbling.TumblingEventTimeWindows",
        "global_offset": 0, "size": 10000, "window_stagger": "WindowStagger.ALIGNED",
    }
    assert fp["trigger"] == {"class": "flinkwin.triggers.event_time.EventTimeTrigger",
                             "repr": "EventTimeTrigger()"}
    assert fp["function"] == {"state": "reducing", "incremental": "sum('v')",
                              "window_function": None, "with_window": False}
    assert (fp["late_tag"], fp["key_columns"], fp["allowed_lateness_ms"]) == ("late", ["k"], 0)
    assert fp["watermark"] == {
        "out_of_orderness_ms": 2000, "timestamp_column": "ts", "times_before_1970": False,
    }
    assert fp["main_schema"] == fp["late_schema"] == "struct<k:string,ts:bigint,v:bigint>"


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"size_s": 20}, "fingerprint.assigner.size: 10000 -> 20000"),
        ({"lateness_s": 5}, "fingerprint.allowed_lateness_ms: 0 -> 5000"),
        ({"key_groups": 7}, "key_groups: 16 -> 7"),
        ({"agg": "max"}, "fingerprint.function.incremental: \"sum('v')\" -> \"max('v')\""),
        ({"late": False}, "fingerprint.late_tag: 'late' -> None"),
    ],
)
def test_an_incompatible_restart_fails_at_start_naming_the_change(
    spark: Any, first_run: Path, change: dict[str, Any], named: str
) -> None:
    ck = first_run / "ck"
    before = _commits(ck)
    with pytest.raises(IncompatibleRestartError) as failure:
        _build(spark, first_run / "in", **change).start(
            main=MemorySink("fw_restart_bad"), checkpoint_location=str(ck),
            trigger={"availableNow": True},
        )
    assert named in str(failure.value)
    assert str(ck) in str(failure.value)
    assert spark.streams.active == [] and _commits(ck) == before  # no batch ran


def test_a_compatible_restart_continues_with_identical_results(
    spark: Any, tmp_path: Path
) -> None:
    """Another sink, another Spark trigger, another query name, through writeStream."""
    main, late = _first_run(spark, tmp_path)
    write_batches(tmp_path / "in", TUMBLING_BATCHES[2:], first=2)
    query = (
        _build(spark, tmp_path / "in").writeStream.format("parquet")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(processingTime="200 milliseconds").queryName("fw_restart_second")
        .sideOutput(LATE, f"json:{tmp_path / 'late'}")
        .start(str(tmp_path / "out"))
    )

    def written() -> list[tuple[Any, ...]]:
        try:
            rows = spark.read.parquet(str(tmp_path / "out")).collect()
        except AnalysisException:  # nothing written yet
            return []
        return [(r["k"], r["ts"], r["v"]) for r in rows]

    try:
        deadline = time.monotonic() + 120
        while len(written()) < 1 or query.lastProgress is None or (
            query.lastProgress["batchId"] < 4
        ):
            assert time.monotonic() < deadline, "the restarted query did not finish"
            time.sleep(0.5)
    finally:
        query.stop()
    rows = sorted([(r["k"], r["ts"], r["v"]) for r in main.rows()] + written())
    assert rows == MAIN_ROWS  # what one uninterrupted query gives
    late_rows = [r.asDict() for r in late.rows()] + [
        r.asDict() for r in spark.read.json(str(tmp_path / "late"), schema=SCHEMA).collect()
    ]
    assert late_rows == [ev("a", 500, 100)]


def test_a_staggered_window_keeps_its_offset_across_a_restart(
    spark: Any, tmp_path: Path
) -> None:
    def build(seed: int) -> WindowResultStream:
        random.seed(seed)
        return (
            DataStream(_source(spark, tmp_path / "in"))
            .assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
            .window(TumblingEventTimeWindows.of(Time.seconds(10), Time.milliseconds(0),
                                                WindowStagger.RANDOM))
            .sideOutputLateData(LATE).sum("v", with_window=True)
        )

    late: list[Any] = []

    def run(result: WindowResultStream) -> list[Any]:
        sink, late_sink = MemorySink("fw_stagger"), MemorySink("fw_stagger_late")
        result.start(main=sink, side_outputs={LATE: late_sink},
                     checkpoint_location=str(tmp_path / "ck"),
                     trigger={"availableNow": True}).awaitTermination()
        late.extend(r.asDict() for r in late_sink.rows())
        return sink.rows()

    write_batches(tmp_path / "in", TUMBLING_BATCHES[:2])
    first = build(1)
    offset = first._pipeline.assigner.stagger_offset
    rows = run(first)
    recorded = json.loads((tmp_path / "ck" / "flinkwin" / DOCUMENT).read_text())
    assert recorded["stagger_offset"] == offset

    write_batches(tmp_path / "in", TUMBLING_BATCHES[2:], first=2)
    second = build(2)
    assert second._pipeline.assigner.stagger_offset != offset  # drawn anew when built...
    rows += run(second)  # ...but the restart uses the checkpoint's offset
    assert rows, "windows fired"
    starts = {int(r["window_start"].timestamp() * 1000) for r in rows}
    assert {s % 10_000 for s in starts} == {offset}
    # every element lands in the window the recorded offset gives it: sums per window agree
    expected: dict[tuple[str, int], int] = {}
    for batch in TUMBLING_BATCHES:
        for e in batch:
            if e in late:
                continue
            start = e["ts"] - (e["ts"] - offset) % 10_000
            expected[(e["k"], start)] = expected.get((e["k"], start), 0) + e["v"]
    for r in rows:
        assert r["v"] == expected[(r["k"], int(r["window_start"].timestamp() * 1000))]


def test_differences_name_each_changed_item() -> None:
    recorded = {"a": {"size": 1, "gone": 2}, "b": [1, 2], "old": 1}
    current = {"a": {"size": 3}, "b": [1, 2], "new": 5}
    assert differences(recorded, current, "fp") == [
        "fp.a.size: 1 -> 3", "fp.a.gone: 2 -> (absent)", "fp.old: 1 -> (absent)",
    ]


def test_state_format_lists_every_state_form_and_accepts_every_readable_format() -> None:
    """Every form of key-group state records the snapshot format it writes; a checkpoint
    written before a form existed recorded fewer, and one written by an earlier flinkwin
    recorded earlier formats: restarts are refused only for a format this flinkwin does not
    read, naming it."""
    from flinkwin.operator import states
    from flinkwin.operator.snapshots import formats

    assert set(STATE_FORMAT) == {"operator", *states.FORMATS, "graph", "keyed-process",
                                 "interval-join"}
    assert set(states.FORMATS) == set(states.DESCRIPTIONS) - {states.OBJECT}
    assert all(STATE_FORMAT[kind] == fmt for kind, fmt in states.FORMATS.items())
    assert STATE_FORMAT["operator"] == formats.written(formats.OBJECT) == "4"
    older = {"operator": "2", "columnar": STATE_FORMAT["columnar"]}
    assert format_changes(older) == []
    assert format_changes({**STATE_FORMAT, "operator": "3"}) == []
    assert format_changes(STATE_FORMAT) == []
    assert format_changes({**STATE_FORMAT, "sessions": "sessions-9", "operator": "1"}) == [
        "state_format.operator: '1' is a format this flinkwin does not read (it reads '2', "
        "'3', '4'): the checkpoint was written by a later flinkwin, or one older than every format "
        "listed",
        "state_format.sessions: 'sessions-9' is a format this flinkwin does not read (it reads "
        "'sessions-1'): the checkpoint was written by a later flinkwin, or one older than "
        "every format listed",
    ]


def test_a_checkpoint_of_an_unreadable_format_is_refused_at_start_naming_it(
    spark: Any, first_run: Path
) -> None:
    """A pipeline.json recording a format this flinkwin does not read (a later flinkwin's)
    fails the start before any batch; one recording an earlier readable format restarts and
    records this flinkwin's formats, so the earlier flinkwin refuses it from then on."""
    copy = first_run.parent / "later-format"
    shutil.copytree(first_run, copy)
    ck = copy / "ck"
    document = ck / "flinkwin" / DOCUMENT
    recorded = json.loads(document.read_text())
    document.write_text(json.dumps({**recorded, "state_format": {
        **recorded["state_format"], "columnar": "columnar-7"}}))
    before = _commits(ck)
    with pytest.raises(IncompatibleRestartError, match=(
            r"state_format.columnar: 'columnar-7' is a format this flinkwin does not read")):
        _build(spark, copy / "in").start(main=MemorySink("fw_restart_later"),
                                         checkpoint_location=str(ck),
                                         trigger={"availableNow": True})
    assert _commits(ck) == before
    document.write_text(json.dumps({**recorded, "state_format": {"operator": "2"}}))
    _build(spark, copy / "in").start(main=MemorySink("fw_restart_earlier"),
                                     checkpoint_location=str(ck),
                                     trigger={"availableNow": True}).awaitTermination()
    assert json.loads(document.read_text())["state_format"] == STATE_FORMAT


class _Values(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        yield ",".join(map(str, sorted(elements)))


def test_state_copied_into_another_querys_checkpoint_is_refused_and_the_original_restarts(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key group's stored state is bound to its checkpoint (Spark's query id, which a restart
    from the same checkpoint keeps): the checkpoint copied under another query id, what
    replaying one pipeline's signed state into another amounts to, is refused before the state
    is decoded. The pipeline keeps pickled values in columnar element lists (``map`` without an
    output type, then ``window_all(...).process``), the form that was restored unsigned."""
    path = tmp_path / "in"
    write_batches(path, [[ev("a", 1000, 1), ev("b", 2000, 2)]])

    def run(checkpoint: Path, name: str) -> list[Any]:
        stream = DataStream(_source(spark, path)).assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts"))
        result = stream.map(lambda r: r.v).window_all(
            TumblingEventTimeWindows.of(Time.seconds(10))).process(_Values(), Types.STRING())
        result.explain()
        assert "columnar element lists" in capsys.readouterr().out
        result.start(MemorySink(name), checkpoint_location=str(checkpoint),
                     trigger={"availableNow": True}).awaitTermination()
        return [r[0] for r in spark.table(name).collect()]

    spark.conf.set("spark.flinkwin.state.secret", "the state key of the replay test")
    try:
        assert run(tmp_path / "ck", "fw_replay_first") == []  # the window is still open
        copy = tmp_path / "copy"
        shutil.copytree(tmp_path / "ck", copy)
        metadata = json.loads((copy / "metadata").read_text())
        (copy / "metadata").write_text(json.dumps({**metadata, "id": str(uuid.uuid4())}))
        (copy / ".metadata.crc").unlink(missing_ok=True)  # as whoever rewrites the file would
        write_batches(path, [[ev("c", 15000, 3)]], first=1)
        with pytest.raises(Exception, match=(
            r"(?s)HMAC-SHA256 check of the stored state failed .*spark.flinkwin.state.secret"
            r".*another checkpoint, stage or key group")):
            run(copy, "fw_replay_copy")
        assert run(tmp_path / "ck", "fw_replay_original") == ["1,2"]
    finally:
        spark.conf.unset("spark.flinkwin.state.secret")
