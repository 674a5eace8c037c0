"""flinkwin's files in a checkpoint directory: atomic JSON documents."""

from __future__ import annotations

import os

import pytest

from flinkwin.spark.checkpoint import FOLDER, CheckpointMetadataError, CheckpointStore


def test_missing_document_reads_as_none(tmp_path: object) -> None:
    assert CheckpointStore(None, str(tmp_path)).read_json("pipeline.json") is None


def test_written_document_reads_back_and_leaves_no_temporary_file(tmp_path: object) -> None:
    store = CheckpointStore(None, f"file://{tmp_path}")
    store.write_json("pipeline.json", {"version": 1, "ids": ["a"]})
    store.write_json("pipeline.json", {"version": 2, "ids": ["a", "b"]})
    assert CheckpointStore(None, str(tmp_path)).read_json("pipeline.json") == {
        "version": 2, "ids": ["a", "b"]
    }
    assert os.listdir(os.path.join(str(tmp_path), FOLDER)) == ["pipeline.json"]


def test_corrupt_document_is_a_named_error(tmp_path: object) -> None:
    folder = os.path.join(str(tmp_path), FOLDER)
    os.makedirs(folder)
    with open(os.path.join(folder, "pipeline.json"), "w") as f:
        f.write("{not json")
    with pytest.raises(CheckpointMetadataError, match="pipeline.json"):
        CheckpointStore(None, str(tmp_path)).read_json("pipeline.json")


def test_remote_location_without_a_jvm_is_a_clear_error() -> None:
    with pytest.raises(CheckpointMetadataError, match="no JVM access"):
        CheckpointStore(None, "s3a://bucket/ck").read_json("pipeline.json")
