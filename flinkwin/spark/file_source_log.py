"""Spark's file source, made to replay its micro-batches as planned after a driver crash.

Spark's file source (``spark.readStream`` over a directory) records the files of each batch it
plans in its own log, ``<checkpoint>/sources/<n>/<id>``, *before* the query records that batch
in its offset log, ``<checkpoint>/offsets/<batch>``. A driver killed between the two writes
leaves a source log entry that no batch owns. On restart, Spark plans the next batch from the
offset log and the file source adds the files it finds now on top of that entry, so one batch
reads two batches' worth of files whatever ``maxFilesPerTrigger`` says (seen in flinkwin's crash
test: ``offsets/5`` held ``{"logOffset":6}`` after ``offsets/4``'s ``{"logOffset":4}``).
flinkwin's watermark advances between micro-batches, so two files the uninterrupted run read in
two batches, with a watermark between them, would be read under one watermark: an on-time
firing can move and a window's first element can change.

Before a query starts from a checkpoint, :func:`forget_unplanned_batches` takes such entries
out of the file source's log, so the restarted query plans those files again, one batch at a
time, as the uninterrupted run did. An entry is unplanned when its id is above the
``logOffset`` the latest ``offsets/<batch>`` records for that source (or when there is no offset
log yet). A plain entry is deleted; a compaction entry (``<id>.compact``, which also carries
every earlier batch's files) is rewritten without the files of the unplanned batches.

flinkwin touches only what it can attribute with certainty: the ``n``-th line of offsets in the
offset log belongs to ``sources/<n>`` when the query has exactly as many source folders as
offset lines (a query reading one source twice, or a source without a folder, leaves the logs
as they are), the offset is a file source's ``{"logOffset": k}``, and every unplanned entry
parses as the file source's log. Anything else is left to Spark.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from pyspark.sql import SparkSession

from .checkpoint import CheckpointStore

_log = logging.getLogger("flinkwin")
_VERSION = "v1"
_COMPACT = ".compact"


@dataclass(frozen=True)
class Repair:
    """One change to a file source's log: ``path`` deleted, or rewritten without ``dropped``
    file entries (a compaction entry)."""

    path: str
    deleted: bool
    dropped: int


def before_start(session: SparkSession, location: str | None) -> list[Repair]:
    """At a query's start from the checkpoint ``location``: :func:`forget_unplanned_batches`,
    unless a query of this session is running from that checkpoint (its driver may be between
    the two writes this very moment)."""
    if location is None:
        return []
    store = CheckpointStore(session, location)
    recorded = store.read_spark_file("metadata")
    if recorded is None:
        return []  # a new checkpoint: nothing planned yet
    try:
        query_id = json.loads(recorded.split("\n")[0]).get("id")
    except (ValueError, AttributeError):
        return []
    if any(str(query.id) == query_id for query in session.streams.active):
        return []
    return forget_unplanned_batches(store)


def forget_unplanned_batches(store: CheckpointStore) -> list[Repair]:
    """Take the file sources' unplanned log entries out of the checkpoint at ``store`` (see the
    module docstring); returns what was changed (empty when nothing was to do)."""
    sources = _numbered(store.spark_listing("sources"))
    if not sources:
        return []
    offsets = _latest_offsets(store)
    if offsets is not None and sources != list(range(len(offsets))):
        return []  # the n-th offset cannot be attributed to sources/<n>
    repairs: list[Repair] = []
    for n in sources:
        planned = -1 if offsets is None else _log_offset(offsets[n])
        if planned is not None:
            repairs += _forget_above(store, f"sources/{n}", planned)
    for repair in repairs:
        what = "deleted" if repair.deleted else f"rewritten without {repair.dropped} file(s)"
        _log.warning(
            "flinkwin: the file source's log entry %s was planned by a driver that stopped "
            "before recording the batch; %s so the restarted query reads its files in their "
            "own micro-batch", repair.path, what,
        )
    return repairs


def _numbered(names: list[str]) -> list[int]:
    return sorted(int(name) for name in names if name.isdigit())


def _latest_offsets(store: CheckpointStore) -> list[str] | None:
    """The per-source offset lines of the latest ``offsets/<batch>``, or None when there is none.
    An offset log of a format flinkwin does not know reads as no offsets at all for no source
    (an empty list, which matches no folder count)."""
    batches = _numbered(store.spark_listing("offsets"))
    if not batches:
        return None
    text = store.read_spark_file(f"offsets/{batches[-1]}")
    lines = (text or "").split("\n")
    if len(lines) < 2 or lines[0].strip() != _VERSION:
        return []
    return [line.strip() for line in lines[2:] if line.strip()]


def _log_offset(line: str) -> int | None:
    """``k`` when ``line`` is a file source's offset ``{"logOffset": k}``."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if isinstance(value, dict) and set(value) == {"logOffset"}:
        offset = value["logOffset"]
        if isinstance(offset, int) and not isinstance(offset, bool):
            return offset
    return None


def _entries(text: str | None) -> list[tuple[str, int]] | None:
    """A file source log file's lines with each entry's batch id, or None when the text is not
    a file source's log."""
    if text is None:
        return None
    lines = text.split("\n")
    if lines[0].strip() != _VERSION:
        return None
    entries: list[tuple[str, int]] = []
    for line in lines[1:]:
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            return None
        if not (isinstance(entry, dict) and {"path", "timestamp", "batchId"} <= set(entry)):
            return None
        batch = entry["batchId"]
        if not isinstance(batch, int) or isinstance(batch, bool):
            return None
        entries.append((line, batch))
    return entries


def _forget_above(store: CheckpointStore, folder: str, planned: int) -> list[Repair]:
    ids: dict[int, str] = {}
    for name in store.spark_listing(folder):
        stem = name[: -len(_COMPACT)] if name.endswith(_COMPACT) else name
        if stem.isdigit() and int(stem) > planned:
            ids[int(stem)] = name
    if not ids:
        return []
    contents = {i: _entries(store.read_spark_file(f"{folder}/{name}")) for i, name in ids.items()}
    if any(entries is None for entries in contents.values()):
        return []  # not a file source's log, or one flinkwin does not know: leave it to Spark
    compacted = any(name.endswith(_COMPACT) for name in ids.values())
    repairs: list[Repair] = []
    for i in sorted(ids, reverse=True):
        path = f"{folder}/{ids[i]}"
        entries = contents[i] or []
        if not compacted:
            # no compaction among them: the log simply ends at `planned` again
            store.remove_spark_file(path)
            repairs.append(Repair(path, True, len(entries)))
            continue
        # a compaction entry holds every earlier batch's files, whose own files Spark may
        # have deleted: keep each entry's id, with only the files of planned batches
        kept = [line for line, batch in entries if batch <= planned]
        store.replace_spark_file(path, "\n".join([_VERSION, *kept]))
        repairs.append(Repair(path, False, len(entries) - len(kept)))
    return repairs


__all__ = ["Repair", "before_start", "forget_unplanned_batches"]
