"""A stream graph's plan, as a stage runs it (:class:`GraphPlan`): its sources
(:class:`SourceSpec`: how a source's rows become elements, its watermark), its nodes in
topological order (:class:`NodeSpec`: an operator, built per key group by an
:class:`OperatorBuilder`, or a stateless step) and the streams the outputs read
(:data:`StreamRef`). :class:`~flinkwin.operator.graph.GraphOperator` runs a plan in one key
group; :mod:`flinkwin.operator.graph_chain` runs it keyed node by keyed node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from flinkwin.operator.element_rows import _records
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.operator.stream_operator import StreamOperator
from flinkwin.output_tag import OutputTag

MAP, FLAT_MAP, FILTER, UNION, OPERATOR = "map", "flat_map", "filter", "union", "operator"

#: A stream of the graph: ``("source", i)``, ``("node", j)`` (node ``j``'s main output) or
#: ``("side", j, tag_id)`` (node ``j``'s side output ``tag_id``).
StreamRef = tuple[Any, ...]


@dataclass(frozen=True)
class SourceSpec:
    """How the stage's rows of one source become its elements."""

    #: the stage's columns holding this source's fields, in field order
    columns: tuple[str, ...]
    #: the fields' names (the element's field names)
    names: tuple[str, ...]
    tuple_elements: bool = False
    pickled_elements: bool = False
    atomic_elements: bool = False
    converters: dict[str, Any] = field(default_factory=dict)
    #: the source's ``forBoundedOutOfOrderness`` delay in ms (None: it has no watermarks, and
    #: its watermark stays ``MIN_LONG`` until the end of input, as in Flink)
    delay_ms: int | None = None
    #: ``withIdleness``: processing time without elements after which the source is idle
    idle_timeout_ms: int | None = None
    #: the source's watermark is the stage's (computed by Spark before a filter or map the
    #: stage does not see)
    stage_watermark: bool = False

    def rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The source's columns of ``frame`` under its fields' names."""
        sub = frame.loc[:, list(self.columns)]
        sub.columns = list(self.names)
        return sub

    def elements(self, frame: pd.DataFrame) -> list[Any]:
        """The elements of ``frame``'s rows (the stage's columns)."""
        return self.records(self.rows(frame))

    def records(self, rows: pd.DataFrame) -> list[Any]:
        """The elements of the source's ``rows`` (as :meth:`rows` gives them)."""
        return _records(rows, self.tuple_elements, self.pickled_elements,
                        self.atomic_elements, self.converters)


@dataclass(frozen=True)
class NodeSpec:
    """One operator or stateless step of the graph.

    ``inputs`` are ``(stream, input_index)`` pairs: every element of ``stream`` reaches this
    node as input ``input_index`` (several streams on one index: a union). ``build(task_info)``
    makes an operator node's :class:`StreamOperator`; ``function`` is a step's callable;
    ``shape`` turns the node's results into the elements the nodes after it see (None: as
    they are)."""

    name: str
    kind: str
    inputs: tuple[tuple[StreamRef, int], ...]
    build: Any = None
    function: Any = None
    rich: Any = None
    shape: Any = None
    #: a two-input operator in Flink's sense (an interval join): each input index is its own
    #: input gate and the two are combined as ``CombinedWatermarkStatus`` does; else every
    #: input is one gate, as after a union (Flink's window join and coGroup are one)
    two_input: bool = False
    #: per side output id read by a node after it: how its values become the elements that
    #: node sees (as ``shape`` for the main output)
    side_shapes: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class GraphPlan:
    """A stream graph as one stage runs it: sources, nodes in topological order, outputs."""

    sources: tuple[SourceSpec, ...]
    nodes: tuple[NodeSpec, ...]
    main: StreamRef
    #: the stage's side outputs: tag -> the graph's stream holding it
    sides: dict[OutputTag, StreamRef] = field(default_factory=dict)
    source_column: str = "_fw_in"
    #: the side outputs that carry late data (late elements of windows, joins, interval
    #: joins), counted in the stage's ``numLateRecordsToSideOutput``
    late_tags: tuple[OutputTag, ...] = ()
    #: the stage sees every row (one key group): each operator's watermark is computed from
    #: the sources it reads; else (several key groups) every operator takes the stage's
    own_watermarks: bool = True
    #: the ids of the stage's side outputs asked for by the query
    #: (``start(side_outputs=...)``): each takes what any node sends under its tag (late data
    #: of every node declaring it, a function's ``ctx.output``), not only the node ``sides``
    #: names
    function_sides: tuple[str, ...] = ()


def upstream_sources(plan: GraphPlan) -> list[set[int]]:
    """Per node, the sources it reads from, directly or through other nodes."""
    found: list[set[int]] = []
    for node in plan.nodes:
        sources: set[int] = set()
        for ref, _ in node.inputs:
            if ref[0] == "source":
                sources.add(int(ref[1]))
            else:
                sources |= found[int(ref[1])]
        found.append(sources)
    return found


def input_gates(plan: GraphPlan) -> list[tuple[tuple[StreamRef, ...], ...]]:
    """Per node, its input gates as Flink's task reads them (none for a stateless step): one
    for all its inputs, or one per input index for a ``two_input`` node; each gate's channels
    are the sources ``("source", i)`` and operators ``("node", k)`` upstream of it through
    unions and stateless steps, which pass watermarks and idleness on as they are."""
    origins: list[tuple[StreamRef, ...]] = []  # per node: the channels its output carries
    gates: list[tuple[tuple[StreamRef, ...], ...]] = []

    def channels(refs: Any) -> tuple[StreamRef, ...]:
        found: dict[StreamRef, None] = {}
        for ref in refs:
            for origin in ((("source", int(ref[1])),) if ref[0] == "source"
                           else origins[int(ref[1])]):
                found[origin] = None
        return tuple(found)

    for j, node in enumerate(plan.nodes):
        if node.kind != OPERATOR:
            origins.append(channels(ref for ref, _ in node.inputs))
            gates.append(())
            continue
        origins.append((("node", j),))
        if node.two_input:
            indexes = sorted({index for _, index in node.inputs})
            gates.append(tuple(
                channels(ref for ref, index in node.inputs if index == i) for i in indexes
            ))
        else:
            gates.append((channels(ref for ref, _ in node.inputs),))
    return gates


class OperatorBuilder(Protocol):
    """An operator node's ``build``: makes a key group's subtask of the node (its own copies of
    the node's functions) and the node's operators, each running a subtask's functions (or,
    without one, its own copies)."""

    def subtask(self, task_info: TaskInfo) -> Subtask: ...

    def __call__(self, task_info: TaskInfo, subtask: Subtask | None = None) -> StreamOperator:
        ...


__all__ = [
    "FILTER",
    "FLAT_MAP",
    "MAP",
    "OPERATOR",
    "UNION",
    "GraphPlan",
    "NodeSpec",
    "OperatorBuilder",
    "SourceSpec",
    "StreamRef",
    "upstream_sources",
]
