"""Restart safety: what a checkpoint was written by, checked when a query starts from it.

At ``start()`` flinkwin writes the document ``pipeline.json`` into the query's checkpoint
(``<checkpoint>/flinkwin/pipeline.json``, see :mod:`flinkwin.spark.checkpoint`) the first time,
and compares it on every later start from the same checkpoint::

    {
      "document": 1,
      "stage": "window",                      # or "graph" (flinkwin.spark.graph_restart)
      "flinkwin_version": "0.1.0",            # informational
      "state_format": {"operator": "4", "columnar": "columnar-1", "panes": "panes-1", ...},
      "key_groups": 16,
      "fingerprint": {"assigner": {...}, "trigger": {...}, "evictor": null,
                      "function": {...}, "allowed_lateness_ms": 0, "late_tag": "late",
                      "key_columns": ["user"], "watermark": {...},
                      "input_schema": "...", "main_schema": "...", "late_schema": "..."},
      "stagger_offset": 1234                   # the tumbling assigner's fixed offset, or null
    }

``stage``, ``key_groups`` and everything under ``fingerprint`` must be equal on restart: they
decide what the state already in the checkpoint means (see ``docs/operations.md``). Every format
under ``state_format`` must be one this flinkwin reads (:func:`flinkwin.operator.snapshots.formats.
readable`: a checkpoint written by an earlier flinkwin restarts under a later one); the
document then records the formats this flinkwin writes, so an earlier flinkwin refuses the
checkpoint rather than meet a format it does not know. A difference fails the start with
:class:`IncompatibleRestartError` naming each changed item, before Spark runs a batch. Sinks,
Spark's trigger, the query name, Spark options and the code inside a user function are not
recorded and may change. A ``stagger_offset`` recorded there is reused, so windows keep their
boundaries across restarts.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import functools
import types
from collections.abc import Callable
from typing import Any

from pyspark.sql import Column, SparkSession
from pyspark.sql.types import StructType

from flinkwin._version import __version__
from flinkwin.assigners.stagger import StaggeredAssigner
from flinkwin.functions.builtin import BuiltinAggregation
from flinkwin.functions.internal import resolve_window_function
from flinkwin.operator.snapshots import formats
from flinkwin.output_tag import OutputTag

from .checkpoint import CheckpointStore
from .pipeline import CompiledStage, WindowPipeline

#: The document's name inside ``<checkpoint>/flinkwin/``.
DOCUMENT = "pipeline.json"
#: The formats of the state flinkwin writes into Spark's state store, per state form (the
#: window operator's is ``operator``; a document written before a form existed lacks it).
STATE_FORMAT = {
    ("operator" if f.form == formats.OBJECT else f.form): f.name
    for f in formats.RELEASED if f.written
}
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


def function_kind(
    function: Any, evicting: bool, with_window: bool = False, with_firing: bool = False
) -> dict[str, Any]:
    """A window function's kind: what its state holds, not the code it runs."""
    spec = resolve_window_function(function, evicting)
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
        "with_window": with_window,
        # the firing records live in the state (snapshot format 4)
        **({"with_firing": True} if with_firing else {}),
    }


def fingerprint(pipeline: WindowPipeline, stage: CompiledStage) -> dict[str, Any]:
    """What a checkpoint's state depends on (see module docstring)."""
    strategy = pipeline.watermark
    return {
        "assigner": describe(pipeline.assigner),
        "trigger": describe(pipeline.effective_trigger),
        "evictor": describe(pipeline.evictor),
        "function": function_kind(
            pipeline.function, pipeline.evictor is not None, pipeline.with_window,
            pipeline.with_firing,
        ),
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
    assigner = pipeline.assigner
    return {
        **document_header("window", pipeline.key_groups, fingerprint(pipeline, stage)),
        "stagger_offset": (
            assigner.stagger_offset if isinstance(assigner, StaggeredAssigner) else None
        ),
    }


def document_header(stage: str, key_groups: int, fingerprint: dict[str, Any]) -> dict[str, Any]:
    """What every stage's ``pipeline.json`` holds: the document's and flinkwin's versions, the
    stage kind (``window`` or ``graph``), the state formats written, key groups, fingerprint."""
    return {
        "document": _DOCUMENT_VERSION,
        "stage": stage,
        "flinkwin_version": __version__,
        "written": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "state_format": dict(STATE_FORMAT),
        "key_groups": key_groups,
        "fingerprint": fingerprint,
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


def format_changes(recorded: Any) -> list[str]:
    """The recorded state formats this flinkwin does not read."""
    if not isinstance(recorded, dict):
        return [f"state_format: {_short(recorded)} is not a set of formats"]
    found = []
    for item, name in recorded.items():
        readable = formats.readable(formats.OBJECT if item == "operator" else item)
        if name not in readable:
            listed = ", ".join(map(repr, readable)) or "none"
            found.append(
                f"state_format.{item}: {_short(name)} is a format this flinkwin does not read "
                f"(it reads {listed}): the checkpoint was written by a later flinkwin, or one "
                "older than every format listed"
            )
    return found


def check_recorded(
    store: CheckpointStore, current: dict[str, Any],
    compare: Callable[[Any, Any], list[str]] | None = None,
) -> dict[str, Any] | None:
    """The document recorded in the checkpoint, checked against ``current`` (fingerprints
    compared by ``compare``, else item by item); None when there was none (``current`` is
    recorded now). Raises :class:`IncompatibleRestartError` naming every change."""
    recorded = store.read_json(DOCUMENT)
    if recorded is None:
        store.write_json(DOCUMENT, current)
        return None
    stage = recorded.get("stage", "window")  # documents before graph stages: window stages
    if stage != current["stage"]:
        raise IncompatibleRestartError(store.location, [
            f"stage: {stage!r} -> {current['stage']!r} (the checkpoint holds the state of a "
            f"{stage} stage, this program is a {current['stage']} stage)"
        ])
    _shifted_before(recorded)
    changes: list[str] = []
    for item in ("state_format", "key_groups", "fingerprint"):
        if item not in recorded:
            changes.append(f"{item}: missing from the recorded {DOCUMENT}")
        elif item == "state_format":
            changes += format_changes(recorded[item])
        elif item == "fingerprint" and compare is not None:
            changes += compare(recorded[item], current[item])
        else:
            changes += differences(recorded[item], current[item], item)
    changes = [
        f"{c} ({_SHIFT_HINT})" if c.startswith(_SHIFT_ITEM) else c for c in changes
    ]
    if changes:
        raise IncompatibleRestartError(store.location, changes)
    if recorded["state_format"] != current["state_format"]:
        # from now on the state holds this flinkwin's formats: an earlier one is refused here
        recorded = {**recorded, "state_format": current["state_format"],
                    "flinkwin_version": current["flinkwin_version"]}
        store.write_json(DOCUMENT, recorded)
    return recorded


def prepare_restart(
    store: CheckpointStore, pipeline: WindowPipeline, stage: CompiledStage
) -> WindowPipeline:
    """Record ``pipeline`` in a new checkpoint, or check it against the recorded one.

    Returns the pipeline to run: ``pipeline`` itself, or a copy using the stagger offset the
    checkpoint recorded. Raises :class:`IncompatibleRestartError` naming every change."""
    recorded = check_recorded(store, document(pipeline, stage))
    if recorded is None:
        return pipeline
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
    "check_recorded",
    "checkpoint_location",
    "describe",
    "differences",
    "document",
    "fingerprint",
    "format_changes",
    "function_kind",
    "prepare_restart",
]
