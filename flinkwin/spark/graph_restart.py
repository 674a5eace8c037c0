"""Restart safety of a graph stage: its graph recorded in the checkpoint and compared on restart.

A graph stage writes ``pipeline.json`` as a window stage does (:mod:`flinkwin.spark.restart`),
with ``"stage": "graph"`` and this fingerprint::

    "fingerprint": {
      "sources": [{"schema": "...", "elements": "row", "watermark": {...}}, ...],
      "nodes": [{"kind": "stateless step", "wiring": [...]},
                {"kind": "operator",
                 "operator": {"type": "window", "assigner": {...}, ..., "key_type": null},
                 "keys": [...], "input_types": [...], "wiring": [...]}, ...],
      "times_before_1970": false
    }

The rule is Flink's for a program without ``uid``\\ s (flinkwin records ``uid`` but its state
belongs to the checkpoint, see ``docs/operations.md``): a graph's state is matched to its
operators by their position in the graph, as Flink's generated operator ids derive from the
position in the topology, so **adding, removing or rewiring a node** (a stateless step too, it
moves the operators after it) is refused, naming the nodes. Per stateful operator, what its
state holds and means must stay (Flink: "it is not possible to change the data type of the
state of an operator"): the window's assigner, trigger, evictor, allowed lateness, late-data
tag and its function's kind (:func:`flinkwin.spark.restart.function_kind`: a user function's
class may change, a built-in aggregation may not), an interval join's bounds, the keys (column
names, or the key selector's class or function and its declared type: Flink's "don't change the
key") and the types of its inputs (Flink's internal operator state holds the input type). The
sources' schemas and watermark settings are kept as a window stage keeps its input's.

A source's watermark recorded as Spark's (``from_upstream``: taken before a ``map`` by a
flinkwin up to 0d0fe0d) restarts as the stage's own, which this flinkwin generates there.

Accepted, as Flink keeps the state: the code of stateless steps (``map``, ``filter``,
``flat_map``: their functions are not recorded, nor their output type unless an operator reads
it), the code of user functions (process, window and join functions, reduce and aggregate
functions), the parallelism within the key groups, the sinks and the side outputs written.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

from flinkwin.operator.graph import OPERATOR, SourceSpec, StreamRef

from .checkpoint import CheckpointStore
from .graph import PlanNode, StreamPlan, StreamType
from .graph_nodes import IntervalJoinBuilder, ProcessBuilder, TaggedInputs, WindowNodeBuilder
from .restart import (
    DOCUMENT,
    IncompatibleRestartError,
    check_recorded,
    describe,
    differences,
    document_header,
    function_kind,
)


def graph_fingerprint(
    plan: StreamPlan, sources: Sequence[SourceSpec], times_before_1970: bool
) -> dict[str, Any]:
    """What the state of ``plan``'s stage depends on (see module docstring), as the JSON value
    the checkpoint records (tuples as lists), so that it compares equal to its record."""
    fingerprint = {
        "sources": [_source(stream, spec) for stream, spec in zip(plan.sources, sources)],
        "nodes": [_node(plan, node) for node in plan.nodes],
        "times_before_1970": times_before_1970,
    }
    return dict(json.loads(json.dumps(fingerprint, default=repr)))


def _source(stream: Any, spec: SourceSpec) -> dict[str, Any]:
    strategy = stream._watermark
    return {
        "schema": stream._public_df().schema.simpleString(),
        "elements": _elements(spec.tuple_elements, spec.pickled_elements, spec.atomic_elements),
        "watermark": {
            "out_of_orderness_ms": spec.delay_ms,
            "idle_timeout_ms": spec.idle_timeout_ms,
            "from_upstream": spec.stage_watermark,
            "timestamp_column": (
                None if strategy is None else describe(getattr(strategy, "timestamp_column", None))
            ),
        },
    }


def _elements(tuples: bool, pickled: bool, atomic: bool) -> str:
    return "pickled" if pickled else "atomic" if atomic else "tuple" if tuples else "row"


def _type(stream: StreamType) -> dict[str, Any]:
    return {
        "schema": stream.schema.simpleString(),
        "elements": _elements(stream.tuples, stream.pickled, stream.atomic),
    }


def _wiring(inputs: tuple[tuple[StreamRef, int], ...]) -> list[Any]:
    """A node's inputs as plain values: which stream (a source, a node's output or side output
    by its tag's id) reaches which input."""
    return [[[getattr(part, "tag_id", part) for part in ref], index] for ref, index in inputs]


def _node(plan: StreamPlan, node: PlanNode) -> dict[str, Any]:
    spec = node.spec
    wiring = _wiring(spec.inputs)
    if spec.kind != OPERATOR:  # map, flat_map, filter, union: no state
        return {"kind": "stateless step", "wiring": wiring}
    return {
        "kind": "operator",
        "operator": _operator(spec.build),
        "keys": [describe(k) for k in node.keys],
        "input_types": [_type(plan.type_of(ref)) for ref, _ in spec.inputs],
        "wiring": wiring,
    }


def _operator(build: Any) -> dict[str, Any]:
    """What an operator node's state holds and means (not its functions' code)."""
    if isinstance(build, (WindowNodeBuilder, TaggedInputs)):
        from flinkwin.assigners.base import default_trigger

        spec = build.spec
        return {
            "type": "window" if isinstance(build, WindowNodeBuilder) else spec.task_name,
            "assigner": describe(spec.assigner),
            "trigger": describe(
                spec.trigger if spec.trigger is not None else default_trigger(spec.assigner)
            ),
            "evictor": describe(spec.evictor),
            "function": function_kind(spec.function, spec.evictor is not None),
            "allowed_lateness_ms": spec.allowed_lateness_ms,
            "late_tag": None if spec.late_tag is None else spec.late_tag.tag_id,
            "key_type": describe(spec.key_type),
        }
    if isinstance(build, IntervalJoinBuilder):
        s = build.spec
        return {
            "type": "interval join",
            "bounds_ms": [s.lower_bound, s.upper_bound],
            "inclusive": [s.lower_bound_inclusive, s.upper_bound_inclusive],
            "late_tags": [None if t is None else t.tag_id for t in (
                s.left_late_data_output_tag, s.right_late_data_output_tag)],
            "key_type": describe(build.key_type),
        }
    if isinstance(build, ProcessBuilder):
        return {
            "type": "keyed process" if build.key is not None else "process",
            "key_type": describe(build.key_type),
        }
    return {"type": type(build).__name__}


def changes(recorded: Any, current: dict[str, Any], names: Sequence[str]) -> list[str]:
    """Each change between two graph fingerprints, naming the node (``names``: the current
    nodes' names) and the property."""
    if not isinstance(recorded, dict):
        return [f"fingerprint: {recorded!r} is not a graph's"]
    found: list[str] = []
    recorded = {**recorded, "sources": _upgraded_sources(recorded.get("sources"),
                                                         current["sources"])}
    for part in ("sources", "nodes"):
        old, new = recorded.get(part), current[part]
        if not isinstance(old, list):
            found.append(f"fingerprint.{part}: missing from the recorded document")
        elif len(old) != len(new):
            found.append(_added_or_removed(part, old, new, names))
        else:
            for j, (before, now) in enumerate(zip(old, new)):
                label = f" {names[j]}" if part == "nodes" else ""
                found += differences(before, now, f"fingerprint.{part}[{j}]{label}")
    rest = {k: v for k, v in current.items() if k not in ("sources", "nodes")}
    found += differences({k: v for k, v in recorded.items() if k in rest}, rest, "fingerprint")
    return found


def _upgraded_sources(old: Any, new: list[Any]) -> Any:
    """``old`` (the recorded sources) with each watermark that a flinkwin up to 0d0fe0d took
    from Spark before a ``map`` (``from_upstream``, no bound recorded) read as the stage's own
    that this one generates there (:mod:`flinkwin.spark.carried_time`): the same watermark,
    now kept in the stage's state."""
    if not isinstance(old, list) or len(old) != len(new):
        return old
    upgraded = []
    for before, now in zip(old, new):
        was, is_now = _watermark(before), _watermark(now)
        if (was.get("from_upstream") is True and was.get("out_of_orderness_ms") is None
                and is_now.get("from_upstream") is False):
            moved = {"from_upstream": False,
                     "out_of_orderness_ms": is_now.get("out_of_orderness_ms")}
            before = {**before, "watermark": {**was, **moved}}
        upgraded.append(before)
    return upgraded


def _watermark(source: Any) -> dict[str, Any]:
    watermark = source.get("watermark") if isinstance(source, dict) else None
    return watermark if isinstance(watermark, dict) else {}


def _added_or_removed(part: str, old: list[Any], new: list[Any], names: Sequence[str]) -> str:
    """The nodes (or sources) added and removed: the longest common sequence of the two
    lists, compared without their wiring (which moves with every node inserted before)."""
    def signature(item: Any) -> str:
        if isinstance(item, dict):
            item = {k: v for k, v in item.items() if k != "wiring"}
        return json.dumps(item, sort_keys=True, default=repr)

    matcher = difflib.SequenceMatcher(
        a=[signature(o) for o in old], b=[signature(n) for n in new], autojunk=False
    )
    added, removed = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed += [f"{part}[{i}] ({_what(old[i])})" for i in range(i1, i2)]
        for j in range(j1, j2):
            name = f" {names[j]}" if part == "nodes" else ""
            added.append(f"{part}[{j}]{name} ({_what(new[j])})")
    listing = "; ".join(
        [f"added {', '.join(added)}"] * bool(added)
        + [f"removed {', '.join(removed)}"] * bool(removed)
    )
    return (f"fingerprint.{part}: {len(old)} -> {len(new)} ({listing}); a graph's state "
            "belongs to its operators by their position in the graph")


def _what(item: Any) -> str:
    if not isinstance(item, dict):
        return repr(item)
    operator = item.get("operator")
    if isinstance(operator, dict):
        return str(operator.get("type"))
    return str(item.get("kind") or item.get("schema"))


def document(
    plan: StreamPlan, key_groups: int, fingerprint: dict[str, Any], kind: str = "graph"
) -> dict[str, Any]:
    """The ``pipeline.json`` document of a graph stage of ``kind`` (``graph``: one stateful
    stage for the whole graph; ``distributed graph``: flinkwin.spark.graph_chained)."""
    return {
        **document_header(kind, key_groups, fingerprint),
        "nodes": [node.spec.name for node in plan.nodes],  # informational
    }


_PLANS = {
    "graph": "the one-task plan (one applyInPandasWithState stage for the whole graph)",
    "distributed graph": "the distributed plan (every keyed operator in its own key groups, "
    "transformWithStateInPandas on RocksDB)",
}


def prepare_graph_restart(
    store: CheckpointStore, plan: StreamPlan, key_groups: int, fingerprint: dict[str, Any],
    kind: str = "graph",
) -> None:
    """Record the graph in a new checkpoint, or check it against the recorded one: raises
    :class:`flinkwin.spark.restart.IncompatibleRestartError` naming every change, first of all
    a checkpoint written by the other graph plan (their Spark operators and state stores
    differ: Spark cannot continue one with the other)."""
    recorded = store.read_json(DOCUMENT)
    written = recorded.get("stage") if isinstance(recorded, dict) else None
    if written in _PLANS and written != kind:
        raise IncompatibleRestartError(store.location, [
            f"stage: {written!r} -> {kind!r}: the checkpoint was written by {_PLANS[written]}, "
            f"this program runs {_PLANS[kind]}; Spark cannot continue one plan's state with "
            "the other's. Start from a new checkpoint location"
            + (", or run the one-task plan: no set_parallelism(n) with n > 1 on the graph's "
               "result nor on the environment" if written == "graph" else
               ", or, when explain() gives no other reason for one task, run the distributed "
               "plan again: set_parallelism(n) with n > 1 on the graph's result or on the "
               "environment")
        ])
    before = recorded.get("key_groups") if isinstance(recorded, dict) else None
    if written == kind == "graph" and before != key_groups and 1 in (before, key_groups):
        raise IncompatibleRestartError(store.location, [
            f"key_groups: {before} -> {key_groups}: the checkpoint was written with the graph "
            + ("in one key group (one task)" if before == 1 else f"in {before} key groups")
            + ", this program runs it "
            + ("in one key group" if key_groups == 1 else f"in {key_groups} key groups")
            + "; Spark cannot move its state between them. Start from a new checkpoint "
            "location, or run it as the checkpoint was written"
            + (": a graph with with_idleness runs in one key group unless set_parallelism(n) "
               "with n > 1 is set on its result or on the environment" if any(
                   getattr(s._watermark, "idle_timeout_ms", None) is not None
                   for s in plan.sources) else "")
        ])
    names = [node.spec.name for node in plan.nodes]
    check_recorded(store, document(plan, key_groups, fingerprint, kind),
                   lambda recorded, current: changes(recorded, current, names))


__all__ = ["changes", "document", "graph_fingerprint", "prepare_graph_restart"]
