"""Where a stream graph's source rows go (:mod:`flinkwin.spark.graph_compiler`): the key
columns that place them in key groups, when the graph's keyed operator allows it."""

from __future__ import annotations

from typing import Any

from flinkwin.operator.graph import OPERATOR, UNION

from .graph import StreamPlan


def partitioning(plan: StreamPlan) -> dict[int, list[str]] | None:
    """Per source, the key columns that place its rows in key groups, when the graph allows
    more than one: ONE keyed operator, reading the sources directly or through unions, keyed
    by columns of the same types on every source (and by the same columns on a source it
    reads twice), with only stateless steps after it. None: one key group."""
    operators = [j for j, n in enumerate(plan.nodes) if n.spec.kind == OPERATOR]
    if len(operators) != 1 or not plan.nodes[operators[0]].keys:
        return None
    j = operators[0]
    keys = plan.nodes[j].keys
    reached: dict[int, list[str]] = {}
    before = set()

    def walk(ref: Any, index: int) -> bool:
        if ref[0] == "source":
            key = keys[index]
            columns = [key] if isinstance(key, str) else key
            if not isinstance(columns, (list, tuple)) or not all(
                isinstance(c, str) for c in columns
            ):
                return False
            previous = reached.setdefault(int(ref[1]), list(columns))
            return previous == list(columns)
        node = plan.nodes[ref[1]]
        if ref[0] != "node" or node.spec.kind != UNION:
            return False
        before.add(int(ref[1]))
        return all(walk(r, index) for r, _ in node.spec.inputs)

    if not all(walk(ref, index) for ref, index in plan.nodes[j].spec.inputs):
        return None
    if len(reached) != len(plan.sources) or any(
        k not in before and k < j for k in range(len(plan.nodes))
    ):
        return None
    return reached if _one_key_type(plan, reached) else None


def fused_partitioning(plan: StreamPlan) -> dict[int, list[str]] | None:
    """Per source, the key columns of the graph's first keyed operator, when it alone reads
    every source, directly, keyed by columns of the same types on each (a source read twice:
    by the same columns), and no source is an output: that operator then takes the rows in
    its own key groups without a sources' step (flinkwin.spark.graph_chained). Else None."""
    operators = [j for j, n in enumerate(plan.nodes) if n.spec.kind == OPERATOR]
    if not operators or not plan.nodes[operators[0]].keys:
        return None
    j = operators[0]
    node = plan.nodes[j]
    for k, other in enumerate(plan.nodes):
        if k != j and any(ref[0] == "source" for ref, _ in other.spec.inputs):
            return None
    if plan.head[0] == "source":
        return None
    reached: dict[int, list[str]] = {}
    for ref, index in node.spec.inputs:
        key = node.keys[index] if index < len(node.keys) else None
        columns = [key] if isinstance(key, str) else key
        if ref[0] != "source" or not isinstance(columns, (list, tuple)) or not all(
            isinstance(c, str) for c in columns
        ):
            return None
        if reached.setdefault(int(ref[1]), list(columns)) != list(columns):
            return None
    if len(reached) != len(plan.sources):
        return None
    return reached if _one_key_type(plan, reached) else None


def _one_key_type(plan: StreamPlan, reached: dict[int, list[str]]) -> bool:
    """Every source's key columns exist and have the same types as every other's."""
    types = None
    for i, columns in reached.items():
        schema = plan.sources[i]._public_df().schema
        if any(c not in schema.fieldNames() for c in columns):
            return False
        mine = [schema[c].dataType.simpleString() for c in columns]
        if types is not None and mine != types:
            return False
        types = mine
    return True


__all__ = ["fused_partitioning", "partitioning"]
