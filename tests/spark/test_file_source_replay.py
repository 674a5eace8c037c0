"""A driver stopped after Spark's file source logged a batch's files but before the query logged
the batch (offsets) must not make the restarted query read two batches' files at once: flinkwin
takes the unplanned entry out of the file source's log at start(), so each file is read in its
own micro-batch, with the watermark between them, exactly as in an uninterrupted run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import watermark, write_batches
from test_spark_streaming import LATE, SCHEMA, ev

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.spark.checkpoint import CheckpointStore
from flinkwin.spark.file_source_log import forget_unplanned_batches

# window [0, 10 s) fires at the start of the batch after file 1 (watermark 15 s); file 2's
# element is then late. Read together with file 1 (under file 0's watermark) it is on time.
FILES = [[ev("a", 1000, 1)], [ev("a", 15000, 2)], [ev("a", 5000, 4)]]


def _run(spark: Any, work: Path, name: str) -> tuple[MemorySink, MemorySink]:
    source = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(work / "in"))
    result = (
        DataStream(source).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE).sum("v")
    )
    main, late = MemorySink(f"fw_replay_{name}_main"), MemorySink(f"fw_replay_{name}_late")
    query = result.start(
        main=main, side_outputs={LATE: late}, checkpoint_location=str(work / "ck"),
        trigger={"availableNow": True}, query_name=f"fw_replay_{name}",
    )
    query.awaitTermination()
    return main, late


def _log_offsets(checkpoint: Path) -> list[int]:
    """The file source's log offset each planned batch ends at."""
    batches = sorted(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    return [json.loads((checkpoint / "offsets" / str(b)).read_text().split("\n")[2])["logOffset"]
            for b in batches]


def _stop_before_offsets_of(checkpoint: Path, batch: int) -> None:
    """The checkpoint as a driver killed after the file source logged ``batch``'s files and
    before the query wrote ``offsets/<batch>``: the offsets, commits and state versions of
    that batch and later ones (a no-data batch) are gone, the file source's log entry stays."""
    for folder in ("offsets", "commits"):
        for path in (checkpoint / folder).iterdir():
            number = path.name.lstrip(".").split(".")[0]
            if number.isdigit() and int(number) >= batch:
                path.unlink()
    for root, _, names in os.walk(checkpoint / "state"):
        for name in names:
            version = name.lstrip(".").split(".")[0]  # state version = batch + 1
            if version.isdigit() and int(version) >= batch + 1:
                os.remove(os.path.join(root, name))
    assert (checkpoint / "sources" / "0" / str(batch)).exists()


def _by_batch(sink: MemorySink) -> list[tuple[int, list[tuple[Any, ...]]]]:
    return [(b, sorted(tuple(r) for r in rows)) for b, rows in sorted(sink.batches.items())]


def test_a_restart_reads_an_unplanned_file_in_its_own_batch_as_the_uninterrupted_run(
    spark: Any, tmp_path: Path
) -> None:
    crashed = tmp_path / "crashed"
    write_batches(crashed / "in", FILES[:2])
    _run(spark, crashed, "first")
    _stop_before_offsets_of(crashed / "ck", 1)
    write_batches(crashed / "in", FILES[2:], first=2)
    main, late = _run(spark, crashed, "restarted")

    assert _log_offsets(crashed / "ck")[:3] == [0, 1, 2]  # one file per batch, as planned
    # the uninterrupted run's batches 1 and 2: [0, 10 s) fires with file 0's element alone at
    # the start of batch 2, and file 2's element is late (read with file 1, it would be summed)
    assert _by_batch(main) == [(1, []), (2, [("a", 1000, 1)])]
    assert _by_batch(late) == [(1, []), (2, [("a", 5000, 4)])]


# ---------------------------------------------------------------- the log files themselves
def _entry(path: str, batch: int) -> str:
    return json.dumps({"path": f"file:///in/{path}", "timestamp": 1000 + batch, "batchId": batch})


def _checkpoint(root: Path, offsets: list[str] | None, logs: dict[str, list[int]]) -> Path:
    """``offsets``: the latest offsets/<n> lines per source (None: no offset log);
    ``logs``: per file name in sources/0, the batch ids of its entries."""
    if offsets is not None:
        (root / "offsets").mkdir(parents=True)
        (root / "offsets" / "3").write_text("\n".join(["v1", '{"batchWatermarkMs":0}', *offsets]))
    folder = root / "sources" / "0"
    folder.mkdir(parents=True)
    for name, batches in logs.items():
        (folder / name).write_text("\n".join(["v1", *(_entry(f"f{b}", b) for b in batches)]))
        (folder / f".{name}.crc").write_bytes(b"crc")
    return folder


def test_an_unplanned_entry_above_the_recorded_log_offset_is_deleted(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path, ['{"logOffset":3}'], {"2": [2], "3": [3], "4": [4]})
    repairs = forget_unplanned_batches(CheckpointStore(None, str(tmp_path)))
    assert [(r.path, r.deleted) for r in repairs] == [("sources/0/4", True)]
    assert sorted(os.listdir(folder)) == [".2.crc", ".3.crc", "2", "3"]


def test_an_unplanned_compaction_keeps_the_planned_batches_files(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path, ['{"logOffset":8}'], {"8": [8], "9.compact": list(range(10))})
    repairs = forget_unplanned_batches(CheckpointStore(None, str(tmp_path)))
    assert [(r.path, r.deleted, r.dropped) for r in repairs] == [("sources/0/9.compact", False, 1)]
    kept = (folder / "9.compact").read_text().split("\n")
    assert kept[0] == "v1"
    assert [json.loads(line)["batchId"] for line in kept[1:]] == list(range(9))
    assert not (folder / ".9.compact.crc").exists()  # a stale checksum would fail Hadoop's read
    assert sorted(p for p in os.listdir(folder) if not p.startswith(".")) == ["8", "9.compact"]


def test_without_an_offset_log_every_entry_is_unplanned(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path, None, {"0": [0]})
    forget_unplanned_batches(CheckpointStore(None, str(tmp_path)))
    assert os.listdir(folder) == []


@pytest.mark.parametrize(
    ("offsets", "logs"),
    [
        (['{"logOffset":4}'], {"3": [3], "4": [4]}),  # nothing unplanned
        (['{"logOffset":3}', '{"logOffset":3}'], {"4": [4]}),  # one source read twice
        (['{"topic":{"0":12}}'], {"4": [4]}),  # not a file source's offset
        (['{"logOffset":3}'], {"4": [4], "5": []}),  # an entry of another shape
    ],
)
def test_logs_flinkwin_cannot_attribute_are_left_to_spark(
    tmp_path: Path, offsets: list[str], logs: dict[str, list[int]]
) -> None:
    folder = _checkpoint(tmp_path, offsets, logs)
    if "5" in logs:
        (folder / "5").write_text('v1\n{"other": 1}')
    before = {name: (folder / name).read_bytes() for name in os.listdir(folder)}
    assert forget_unplanned_batches(CheckpointStore(None, str(tmp_path))) == []
    assert {name: (folder / name).read_bytes() for name in os.listdir(folder)} == before
