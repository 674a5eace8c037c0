"""Stable writer ids kept in the query's checkpoint.

A sink that remembers which batch ids it committed must key them by the query: batch ids start
again at 0 with a new checkpoint, and a new query must not find the old one's batches "already
written". Each output's id is drawn once and stored in ``<checkpoint>/flinkwin/sinks.json``
under the output's name, so a restart from the same checkpoint gets the same id back.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from .base import SinkContext

if TYPE_CHECKING:
    from flinkwin.spark.checkpoint import CheckpointStore

#: flinkwin's document in the checkpoint holding each output's writer id.
SINKS_DOCUMENT = "sinks.json"


def new_writer_id() -> str:
    return f"flinkwin-{uuid.uuid4()}"


def recorded_writer_id(context: SinkContext) -> str | None:
    """The id this checkpoint recorded for the output (None: new checkpoint, or none at all)."""
    if context.checkpoint_location is None:
        return None
    document = _store(context).read_json(SINKS_DOCUMENT) or {}
    value = document.get("app_ids", {}).get(context.label)
    return None if value is None else str(value)


def record_writer_id(context: SinkContext, writer_id: str) -> None:
    """Store the output's id in the checkpoint (nothing without a checkpoint location: Spark
    then checkpoints to a temporary folder and every start is a new query)."""
    if context.checkpoint_location is None:
        return
    store = _store(context)
    document = store.read_json(SINKS_DOCUMENT) or {}
    ids = dict(document.get("app_ids", {}))
    ids[context.label] = writer_id
    store.write_json(SINKS_DOCUMENT, {**document, "app_ids": ids})


def writer_id(context: SinkContext) -> str:
    """The output's id for this checkpoint, drawn and recorded on first use."""
    found = recorded_writer_id(context)
    if found is None:
        found = new_writer_id()
        record_writer_id(context, found)
    return found


def _store(context: SinkContext) -> CheckpointStore:
    from flinkwin.spark.checkpoint import CheckpointStore  # flinkwin.spark imports the sinks

    return CheckpointStore(context.session, str(context.checkpoint_location))


__all__ = ["SINKS_DOCUMENT", "new_writer_id", "record_writer_id", "recorded_writer_id",
           "writer_id"]
