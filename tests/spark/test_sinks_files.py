"""FileSink commits each batch once: a replayed batch id adds nothing, also when the first
attempt died before its commit or in the middle of moving its files into place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flinkwin.sinks import FileSink, SinkContext
from flinkwin.sinks.filesystem import HadoopFileSystem


def _sink(spark: Any, path: Path, df: Any, checkpoint: Path | None = None) -> FileSink:
    sink = FileSink(str(path), partition_by=["k"])
    location = None if checkpoint is None else str(checkpoint)
    sink.open(SinkContext(spark, df.schema, "main", location))
    return sink


def _staged(path: Path, batch: int) -> list[Path]:
    return list((path / "_flinkwin").glob(f"*/staging/{batch}"))


def _read(spark: Any, path: Path) -> list[tuple[str, int]]:
    return sorted((r.k, r.v) for r in spark.read.parquet(str(path)).collect())


def test_a_replayed_batch_adds_no_files(spark: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame([("a", 1), ("b", 2)], "k string, v long")
    sink = _sink(spark, tmp_path / "out", df)
    sink.write_batch(df, 0)
    sink.write_batch(df, 0)
    sink.write_batch(df, 1)
    sink.write_batch(df, 1)
    assert _read(spark, tmp_path / "out") == [("a", 1), ("a", 1), ("b", 2), ("b", 2)]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["_flinkwin", "k=a", "k=b"]


def test_batch_ids_are_per_checkpoint(spark: Any, tmp_path: Path) -> None:
    """A restart from the same checkpoint skips its committed batches; a new checkpoint (batch
    ids from 0 again) writes into the same folder without finding the old query's batches."""
    df = spark.createDataFrame([("a", 1)], "k string, v long")
    _sink(spark, tmp_path / "out", df, tmp_path / "ck").write_batch(df, 0)
    _sink(spark, tmp_path / "out", df, tmp_path / "ck").write_batch(df, 0)  # restarted query
    assert _read(spark, tmp_path / "out") == [("a", 1)]
    _sink(spark, tmp_path / "out", df, tmp_path / "ck2").write_batch(df, 0)  # a new query
    assert _read(spark, tmp_path / "out") == [("a", 1), ("a", 1)]


def test_a_batch_that_died_before_its_commit_is_written_afresh(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = spark.createDataFrame([("a", 1), ("b", 2)], "k string, v long")
    sink = _sink(spark, tmp_path / "out", df)

    def crash(*args: Any) -> None:
        raise OSError("driver lost")

    with monkeypatch.context() as patch:
        patch.setattr(HadoopFileSystem, "write_text", crash)
        with pytest.raises(OSError):
            sink.write_batch(df, 0)
    assert len(_staged(tmp_path / "out", 0)) == 1
    sink.write_batch(df, 0)
    assert _read(spark, tmp_path / "out") == [("a", 1), ("b", 2)]


def test_a_batch_that_died_while_moving_its_files_is_finished_on_replay(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = spark.createDataFrame([("a", 1), ("b", 2)], "k string, v long")
    sink = _sink(spark, tmp_path / "out", df)
    real_move = HadoopFileSystem.move
    moved: list[Any] = []

    def move_once(self: HadoopFileSystem, source: Any, target: Any) -> None:
        if moved:
            raise OSError("driver lost")
        moved.append(target)
        real_move(self, source, target)

    with monkeypatch.context() as patch:
        patch.setattr(HadoopFileSystem, "move", move_once)
        with pytest.raises(OSError):
            sink.write_batch(df, 0)
    assert len(_read(spark, tmp_path / "out")) == 1  # one of the two files made it
    other = spark.createDataFrame([("z", 9)], "k string, v long")  # a replay has the same rows;
    sink.write_batch(other, 0)  # whatever it computes, the committed batch is what lands
    assert _read(spark, tmp_path / "out") == [("a", 1), ("b", 2)]
    assert _staged(tmp_path / "out", 0) == []
