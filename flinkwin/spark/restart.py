"""Restart safety: what a checkpoint was written by, checked when a query starts from it.

At ``start()`` flinkwin writes the document ``pipeline.json`` into the query's checkpoint
(``<checkpoint>/flinkwin/pipeline.json``, see :mod:`flinkwin.spark.checkpoint`) the first time,
and compares it on every later start from the same checkpoint::

    {
      "document": 1,
      "flinkwin_version": "0.1.0",            # informational
      "state_format": {"operator": "2", "columnar": "columnar-1", "panes": "panes-1", ...},
      "key_groups": 16,
      "fingerprint": {"assigner": {...}, "trigger": {...}, "evictor": null,
                      "function": {...}, "allowed_lateness_ms": 0, "late_tag": "late",
                      "key_columns": ["user"], "watermark": {...},
                      "input_schema": "...", "main_schema": "...", "late_schema": "..."},
      "stagger_offset": 1234                   # the tumbling assigner's fixed offset, or null
    }

Everything under ``state_format``, ``key_groups`` and ``fingerprint`` must be equal on restart:
these decide how the state already in the checkpoint is read and what it means (see
``docs/operations.md``). A difference fails the start with :class:`IncompatibleRestartError`
naming each changed item, before Spark runs a batch. Sinks, Spark's trigger, the query name,
Spark options and the code inside a user function are not recorded and may change. A
``stagger_offset`` recorded there is reused, so windows keep their boundaries across restarts.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import types
from typing import Any

from pyspark.sql import Column, SparkSession
from pyspark.sql.types import StructType

from flinkwin.assigners.stagger import StaggeredAssigner
from flinkwin.functions.builtin import BuiltinAggregation
from flinkwin.functions.internal import resolve_window_function
from flinkwin.operator.snapshot import FORMAT_VERSION as OPERATOR_FORMAT
from flinkwin.operator.states import FORMATS
from flinkwin.output_tag import OutputTag

from .checkpoint import CheckpointStore
from .compiler import CompiledStage, WindowPipeline

#: The document's name inside ``<checkpoint>/flinkwin/``.
DOCUMENT = "pipeline.json"
#: The formats of the state flinkwin writes into Spark's state store, per state kind (a
#: document written before a kind existed lacks its entry, which is then not compared).
STATE_FORMAT = {"operator": OPERATOR_FORMAT, **FORMATS}
_DOCUMENT_VERSION = 1
_MAX_DEPTH = 6


class IncompatibleRestartError(RuntimeError):
    """A query was started from a checkpoint written by an incompatible pipeline."""

    def __init__(self, location: str, changes: list[str]) -> None:
        self.location = location
        self.changes = changes
        listing = "\n".join(f"  - {c}" for c in changes)
        super().__init__(
            f"cannot restart from checkpoint {location!r}: the pipeline changed in a way the "
            f"state in the checkpoint cannot follow:\n{listing}\n"
            "Start the changed pipeline from a new checkpoint location, or restore the original "
            "settings (see docs/operations.md for what may change between restarts)."
        )


# ------------------------------------------------------------------------ fingerprint
def describe(value: Any, depth: int = 0) -> Any:
    """A JSON value describing ``value`` by its class and public attributes (recursively),
    stable across processes: no memory addresses, no private (``_``) attributes."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, (list, tuple)):
        return [describe(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {str(k): describe(v, depth + 1) for k, v in sorted(value.items(), key=str)}
    if isinstance(value, OutputTag):
        return {"output_tag": value.tag_id}
    if isinstance(value, StructType):
        return value.simpleString()
    if isinstance(value, Column):
        return str(value)
    if isinstance(value, BuiltinAggregation):
        return repr(value)
    if isinstance(value, functools.partial):
        return {"partial": _qualified(value.func), "args": describe(value.args, depth + 1)}
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType,
                          types.MethodType)):
        return _qualified(value)
    described: dict[str, Any] = {"class": _qualified(type(value))}
    if depth >= _MAX_DEPTH:
        return described
    attributes = dict(getattr(value, "__dict__", {}))
    for name in getattr(type(value), "__slots__", ()):
        if hasattr(value, name):
            attributes[name] = getattr(value, name)
    for name in sorted(attributes):
        if not name.startswith("_"):
            described[name] = describe(attributes[name], depth + 1)
    if not attributes:
        text = repr(value)  # e.g. datetime.timedelta, Decimal: the value itself
        if " at 0x" not in text:
            described["repr"] = text
    return described


def _qualified(obj: Any) -> str:
    module = getattr(obj, "__module__", None) or "?"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj)
    return f"{module}.{name}"


def _function(pipeline: WindowPipeline) -> dict[str, Any]:
    """The window function's kind: what its state holds, not the code it runs."""
    spec = resolve_window_function(pipeline.function, pipeline.evictor is not None)
    incremental = spec.reduce_fn if spec.reduce_fn is not None else spec.agg_fn
    if incremental is None or isinstance(incremental, BuiltinAggregation):
        named = describe(incremental)
    else:
        # a user function's class may change (fix a bug and restart, as in Flink): the state
        # holds its reduced values or accumulators, which the replacement must accept
        named = "user reduce function" if spec.reduce_fn is not None else "user aggregate function"
    return {
        "state": spec.state_kind,
        "incremental": named,
        "window_function": spec.window_kind,
        "with_window": pipeline.with_window,
    }


def fingerprint(pipeline: WindowPipeline, stage: CompiledStage) -> dict[str, Any]:
    """What a checkpoint's state depends on (see module docstring)."""
    strategy = pipeline.watermark
    return {
        "assigner": describe(pipeline.assigner),
        "trigger": describe(pipeline.effective_trigger),
        "evictor": describe(pipeline.evictor),
        "function": _function(pipeline),
        "allowed_lateness_ms": pipeline.allowed_lateness_ms,
        "late_tag": None if pipeline.late_tag is None else pipeline.late_tag.tag_id,
        "key_columns": pipeline.key_columns,
        "watermark": None if strategy is None else {
            "out_of_orderness_ms": strategy.out_of_orderness_ms,
            "timestamp_column": describe(strategy.timestamp_column),
            # how Spark's watermark in the checkpoint is shifted (flinkwin.spark.watermarks)
            "times_before_1970": pipeline.times_before_1970,
        },
        "input_schema": pipeline.df.schema.simpleString(),
        "main_schema": stage.main().schema.simpleString(),
        "late_schema": (
            None if pipeline.late_tag is None else pipeline.df.schema.simpleString()
        ),
    }


def document(pipeline: WindowPipeline, stage: CompiledStage) -> dict[str, Any]:
    """The ``pipeline.json`` document of ``pipeline`` compiled as ``stage``."""
    from flinkwin import __version__

    assigner = pipeline.assigner
    return {
        "document": _DOCUMENT_VERSION,
        "flinkwin_version": __version__,
        "written": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "state_format": dict(STATE_FORMAT),
        "key_groups": pipeline.key_groups,
        "fingerprint": fingerprint(pipeline, stage),
        "stagger_offset": (
            assigner.stagger_offset if isinstance(assigner, StaggeredAssigner) else None
        ),
    }


def differences(recorded: Any, current: Any, path: str) -> list[str]:
    """Each item that differs between two JSON values, as ``path: recorded -> current``. An
    item the recorded document does not have (written by an older flinkwin) is not compared."""
    if isinstance(recorded, dict) and isinstance(current, dict):
        found = []
        for key in current:
            if key in recorded:
                found += differences(recorded[key], current[key], f"{path}.{key}")
        found += [f"{path}.{key}: {recorded[key]!r} -> (absent)"
                  for key in recorded if key not in current]
        return found
    if recorded != current:
        return [f"{path}: {_short(recorded)} -> {_short(current)}"]
    return []


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


# ------------------------------------------------------------------------- at start()
def checkpoint_location(
    session: SparkSession, explicit: str | None, query_name: str | None
) -> str | None:
    """The checkpoint Spark will use: ``explicit``, else ``<spark.sql.streaming.
    checkpointLocation>/<query name>`` (Spark's rule); None when Spark uses a throw-away one."""
    if explicit:
        return explicit
    root = session.conf.get("spark.sql.streaming.checkpointLocation", None)
    if root and query_name:
        return f"{root.rstrip('/')}/{query_name}"
    return None


_SHIFT_ITEM = "fingerprint.watermark.times_before_1970:"
_SHIFT_HINT = (
    "Spark's watermark in the checkpoint is shifted for times before 1970 only with "
    "DataStream(df, times_before_1970=True); declare it as the checkpoint was written"
)


def _shifted_before(recorded: dict[str, Any]) -> None:
    """A document written before ``times_before_1970`` existed: its stream's watermark was
    always shifted, as the declaration shifts it now."""
    fingerprint = recorded.get("fingerprint")
    watermark = fingerprint.get("watermark") if isinstance(fingerprint, dict) else None
    if isinstance(watermark, dict):
        watermark.setdefault("times_before_1970", True)


def prepare_restart(
    store: CheckpointStore, pipeline: WindowPipeline, stage: CompiledStage
) -> WindowPipeline:
    """Record ``pipeline`` in a new checkpoint, or check it against the recorded one.

    Returns the pipeline to run: ``pipeline`` itself, or a copy using the stagger offset the
    checkpoint recorded. Raises :class:`IncompatibleRestartError` naming every change."""
    recorded = store.read_json(DOCUMENT)
    current = document(pipeline, stage)
    if recorded is None:
        store.write_json(DOCUMENT, current)
        return pipeline
    _shifted_before(recorded)
    changes: list[str] = []
    for item in ("state_format", "key_groups", "fingerprint"):
        if item not in recorded:
            changes.append(f"{item}: missing from the recorded {DOCUMENT}")
        else:
            changes += differences(recorded[item], current[item], item)
    changes = [
        f"{c} ({_SHIFT_HINT})" if c.startswith(_SHIFT_ITEM) else c for c in changes
    ]
    if changes:
        raise IncompatibleRestartError(store.location, changes)
    offset = recorded.get("stagger_offset")
    assigner = pipeline.assigner
    if (
        isinstance(offset, int) and isinstance(assigner, StaggeredAssigner)
        and offset != assigner.stagger_offset
    ):
        return dataclasses.replace(pipeline, assigner=assigner.with_stagger_offset(offset))
    return pipeline


__all__ = [
    "DOCUMENT",
    "STATE_FORMAT",
    "IncompatibleRestartError",
    "checkpoint_location",
    "describe",
    "differences",
    "document",
    "fingerprint",
    "prepare_restart",
]
