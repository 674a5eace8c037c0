"""A stream graph run keyed operator by keyed operator, each in its own key groups.

:class:`~flinkwin.operator.graph.GraphOperator` runs a whole graph in one place (one key group,
Flink parallelism 1). Here each **keyed operator node** of the graph runs in key groups of its
own (its elements placed by its own key, :func:`key_group_of`), as Flink runs each keyed
operator with the stream's parallelism, and a re-keying between two operators is a shuffle.
A runtime holds, per micro-batch:

* one :class:`ChainStep` for the sources (``node=None``): the rows, in arrival order, through
  the stateless steps reading them (``map``, ``filter``, ``flat_map``, ``union``);
* per keyed node and key group, a :class:`ChainStep` running that node's operator and the
  stateless steps after it (Flink's operator chaining), called once per micro-batch with every
  element sent to it (:meth:`ChainStep.run`), in topological order of the nodes.

Every element a step emits is an :class:`Emission`: to a keyed node's input (with the key
group that node holds its key in), or to the graph's main or a side output.

**Flink's order, exactly.** Every operator of the graph sees the same watermark ``W`` per
micro-batch (the runtime's; this holds for graphs whose every keyed node reads ALL of the
graph's sources, where Flink's per-operator watermark is the minimum over all of them). Flink
delivers an upstream operator's firing to the next operator *before* that operator advances
its own watermark, and an element reaches it after. So every emission carries a **phase**:

* ``BEFORE`` (0): emitted while the emitting operator advanced its watermark (window firings,
  event-time timers) or processed ``BEFORE`` elements; the receiver processes it at its
  previous watermark and processing time;
* ``BETWEEN`` (1): emitted while advancing processing time or processing ``BETWEEN``
  elements; processed after the receiver's watermark advance, before its processing-time one;
* ``ELEMENT`` (2): the sources' elements and all they cause (late firings included);
  processed after both advances.

:meth:`ChainStep.run` does: the ``BEFORE`` elements at the previous clocks, advance the
watermark, the ``BETWEEN`` elements, advance processing time, the ``ELEMENT`` elements (the
order of :class:`GraphOperator`'s ``advance_watermark``, ``advance_processing_time`` and
``process_batch``). Within a phase, the elements from one emitting key group keep their
emission order (Flink orders elements per channel only); the runtime sorts a key group's
input by :attr:`Emission.order`.

**Clocks.** A step's previous watermark is its operator's (``current_watermark``, kept in its
snapshot). A runtime must call every key group that holds a clock whenever the watermark
advances (a timer at ``current_watermark + 1``), so the clock is exact when the next elements
arrive. A key group called for the first time has no clock; every emission carries its
emitter's previous clocks (:attr:`Emission.previous`), and the receiver takes the greatest it
is given: the ``BEFORE`` elements that need them are emitted by a key group with exact clocks.
"""

from __future__ import annotations

import datetime
import decimal
import fractions
import functools
import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from flinkwin.keys import PickledKey, plain_key
from flinkwin.operator.graph import (
    OPERATOR,
    GraphOperator,
    GraphPlan,
    StreamRef,
    upstream_sources,
)
from flinkwin.operator.graph_subtask import GraphSubtask
from flinkwin.operator.keyed_process_operator import ProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.output_tag import OutputTag
from flinkwin.time import MAX_LONG, MIN_LONG

BEFORE, BETWEEN, ELEMENT = 0, 1, 2
#: the emitting node of the sources' step in :attr:`Emission.order`
SOURCES = -1


class Emission(NamedTuple):
    """One element a step emitted: to input ``input_index`` of keyed node ``node`` (whose key group
    ``key_group`` holds its key), or (``node`` None) to the graph's main output (``tag``
    None) or side output ``tag``."""

    node: int | None
    input_index: int
    key_group: int
    tag: OutputTag | None
    value: Any
    timestamp: int | None
    phase: int
    #: (emitting node, its key group, emission number): a receiver's order within a phase
    order: tuple[int, int, int]
    #: the emitter's watermark and processing time before this micro-batch's advance
    previous: tuple[int, int]


def canonical_key(key: Any) -> bytes:
    """Bytes equal for keys that compare equal (flinkwin.keys' identities), the same in every
    process (no salted ``hash``): numbers by their numeric hash (``1``, ``1.0`` and
    ``Decimal(1)`` agree, as their ``==`` does), strings, bytes and times by value, tuples
    element by element. A key of another type counts by its type alone (every such key of one
    type in one key group: exact, less parallel)."""
    if key is None:
        return b"0"
    if isinstance(key, PickledKey):  # its type is part of it (numpy scalars as Python's)
        value = plain_key(key.value)
        return b"P" + type(value).__qualname__.encode() + b":" + canonical_key(value)
    if isinstance(key, np.generic):
        key = key.item()
    if isinstance(key, str):
        return b"S" + key.encode("utf-8", "surrogatepass")
    if isinstance(key, (bytes, bytearray)):
        return b"B" + bytes(key)
    if isinstance(key, tuple):
        parts = [canonical_key(k) for k in key]
        return b"T" + b"".join(len(p).to_bytes(4, "big") + p for p in parts)
    if isinstance(key, (int, float, decimal.Decimal, fractions.Fraction)):
        if isinstance(key, (float, decimal.Decimal)) and math.isnan(key):
            return b"Nnan"
        return b"N" + str(hash(key)).encode()
    if isinstance(key, datetime.datetime):
        if key.tzinfo is not None and key.utcoffset() is not None:
            key = key.astimezone(datetime.timezone.utc)
            return b"Z" + key.replace(tzinfo=None).isoformat().encode()
        return b"D" + key.isoformat().encode()
    if isinstance(key, (datetime.date, datetime.time)):
        return b"d" + type(key).__name__.encode() + key.isoformat().encode()
    if isinstance(key, datetime.timedelta):
        return b"t" + str(key // datetime.timedelta(microseconds=1)).encode()
    return b"O" + type(key).__module__.encode() + b"." + type(key).__qualname__.encode()


def key_group_of(key: Any, key_groups: int) -> int:
    """The key group (``0 .. key_groups - 1``) holding ``key`` (a key as the operators hold
    it), the same in every process. Remembered for the keys whose equality implies equal
    :func:`canonical_key` bytes (a ``str``, an ``int``, an untyped key of an ``int``), which
    a graph's firings repeat (every window result of one window end, say)."""
    kind = type(key)
    if kind is str or kind is int or (kind is PickledKey and type(key.value) is int):
        return _remembered_group(key, key_groups)
    return _key_group(key, key_groups)


def _key_group(key: Any, key_groups: int) -> int:
    digest = hashlib.blake2b(canonical_key(key), digest_size=8).digest()
    return int.from_bytes(digest, "big") % key_groups


_remembered_group = functools.lru_cache(maxsize=1 << 16)(_key_group)


def input_key(op: Any, value: Any, index: int) -> Any:
    """The key operator ``op`` holds an element of its input ``index`` under."""
    select = getattr(op, "input_key", None)
    return select(value, index) if select is not None else op.key_of(value)


class ChainStep(GraphOperator):
    """One key group of keyed node ``node`` of ``plan`` (``node`` None: the sources' step):
    its operator and the stateless steps after it, emitting :class:`Emission` s (see module
    docstring). ``key_groups``: how many key groups each keyed node has."""

    def __init__(
        self, plan: GraphPlan, node: int | None, task_info: TaskInfo, key_groups: int,
        subtask: GraphSubtask | None = None,
    ) -> None:
        if node is not None and plan.nodes[node].kind != OPERATOR:
            raise ValueError(f"node {node} ({plan.nodes[node].name}) is not an operator")
        own = frozenset() if node is None else frozenset((node,))
        super().__init__(replace(plan, own_watermarks=False), task_info, subtask, own)
        self.node = node
        self.key_groups = key_groups
        self._phase = ELEMENT
        self._previous = (MIN_LONG, MIN_LONG)
        self._emitted: list[Emission] = []
        self._keying: dict[int, Any] = {}

    # ------------------------------------------------------------------ running
    def run(
        self, elements: Iterable[Emission], watermark: int, processing_time: int
    ) -> list[Emission]:
        """One micro-batch of this key group: ``elements`` (sent to this node; any order, they
        are sorted by phase and :attr:`Emission.order`), the batch's ``watermark`` and
        ``processing_time``; returns what it emitted (module docstring)."""
        if self.node is None:
            raise ValueError("the sources' step runs process_sources")
        self.open()
        ordered = sorted(elements, key=lambda e: (e.phase, e.order))
        if any(e.node != self.node for e in ordered):
            raise ValueError(f"elements for another node reached node {self.node}")
        watermark_before = max([self.current_watermark, *(e.previous[0] for e in ordered)])
        time_before = max([self.current_processing_time, *(e.previous[1] for e in ordered)])
        self._previous = (watermark_before, time_before)
        self._phase = BEFORE
        if watermark_before > self.current_watermark:  # first call: the emitter's clock
            self.advance_watermark(watermark_before)
        if time_before > self.current_processing_time:
            self.advance_processing_time(time_before)
        phases = {p: [e for e in ordered if e.phase == p] for p in (BEFORE, BETWEEN, ELEMENT)}
        self._deliver_all(phases[BEFORE])
        self.advance_watermark(watermark)
        self._phase = BETWEEN
        self._deliver_all(phases[BETWEEN])
        if processing_time > self.current_processing_time:
            self.advance_processing_time(processing_time)
        self._phase = ELEMENT
        self._deliver_all(phases[ELEMENT])
        return self.drain_emissions()

    def run_sources(
        self, rows: tuple[pd.DataFrame, np.ndarray] | None, watermark: int, processing_time: int
    ) -> list[Emission]:
        """One micro-batch of a key group of a keyed node that alone reads the sources, whose
        rows a runtime placed in this node's key groups itself (by the node's key columns):
        the watermark and processing time advance, then ``rows`` (the stage's rows of this key
        group in arrival order and their timestamps, None: none) as :class:`GraphOperator`
        takes them (a window reading a source takes its quiet rows in one batch)."""
        if self.node is None:
            raise ValueError("the sources' step runs process_sources")
        self.open()
        self._previous = (self.current_watermark, self.current_processing_time)
        self._phase = BEFORE
        self.advance_watermark(watermark)
        self._phase = BETWEEN
        if processing_time > self.current_processing_time:
            self.advance_processing_time(processing_time)
        self._phase = ELEMENT
        if rows is not None:
            self.process_batch(*rows)
        return self.drain_emissions()

    def run_sources_to_end(
        self, rows: tuple[pd.DataFrame, np.ndarray] | None, processing_time: int
    ) -> list[Emission]:
        """Static input: :meth:`run_sources`'s key group's one call, to the end of input."""
        if self.node is None:
            raise ValueError("the sources' step runs process_sources")
        self.open()
        self._phase = ELEMENT
        if processing_time > self.current_processing_time:
            self.advance_processing_time(processing_time)
        if rows is not None:
            self.process_batch(*rows)
        self.advance_watermark(MAX_LONG)  # (processing-time timers: see run_to_end)
        return self.drain_emissions()

    def run_to_end(self, elements: Iterable[Emission], processing_time: int) -> list[Emission]:
        """Static input: this key group's one call. Processing time ``processing_time``, then
        every element sent to it in its emitters' order (on a bounded input each emitter sends
        all it emits in one call, its end-of-input firings last), then the end of input: the
        watermark ``MAX_LONG``, as a Flink job on a bounded input in STREAMING mode (its
        pending processing-time timers never fire: Flink quiesces the processing-time service
        at the end of input)."""
        if self.node is None:
            raise ValueError("the sources' step runs process_sources")
        self.open()
        self._phase = ELEMENT
        if processing_time > self.current_processing_time:
            self.advance_processing_time(processing_time)
        ordered = sorted(elements, key=lambda e: e.order)
        if any(e.node != self.node for e in ordered):
            raise ValueError(f"elements for another node reached node {self.node}")
        self._deliver_all(ordered)
        self.advance_watermark(MAX_LONG)
        return self.drain_emissions()

    def process_sources(
        self, frame: pd.DataFrame, timestamps: Sequence[int] | np.ndarray
    ) -> list[Emission]:
        """The sources' step: the batch's rows in arrival order through the stateless steps
        reading them, as ``ELEMENT`` emissions."""
        if self.node is not None:
            raise ValueError("process_sources runs on the sources' step (node=None)")
        self._phase = ELEMENT
        self.process_batch(frame, timestamps)
        return self.drain_emissions()

    # ------------------------------------------------------------- own clocks
    def sources_watermark(self, now: int) -> int:
        """This key group's node's watermark at processing time ``now``, from the sources'
        greatest timestamps and last elements this key group was told of
        (:meth:`see_source_maxima`): the operators up to it through their valves, as a
        one-task graph computes them (``MIN_LONG`` until each source has a timestamp; an
        idle source left out, ``withIdleness``). Every key group is told the same clocks, so
        each computes the same watermarks. The valves first see the clocks at the processing
        time they were told at, when their sources had elements (active), then at ``now``,
        as a one-task graph advances before its processing time: a watermark that reached a
        valve only through idle channels would be ignored there (StatusWatermarkValve)."""
        assert self.node is not None
        told = self.current_processing_time
        if MIN_LONG < told < now:
            self._through_keyed_valves(told)
        return self._through_keyed_valves(now)

    def _through_keyed_valves(self, now: int) -> int:
        """This key group's node's watermark at processing time ``now``, feeding the valves of
        every keyed operator up to it."""
        assert self.node is not None
        clocks = self._source_clocks(now)
        for j in keyed_nodes(self.plan):
            target, idle = self._through_valves(j, clocks)
            if j == self.node:
                return target
            self._node_watermarks[j] = max(target, self._node_watermarks[j])
            clocks[("node", j)] = (self._node_watermarks[j], idle)
        raise ValueError(f"node {self.node} is not a keyed operator of the graph")

    def clocks_moved(self) -> bool:
        """A source's greatest timestamp is known: the key group keeps its state for it."""
        return any(top != MIN_LONG for top in self.source_max)

    def _deliver_all(self, elements: list[Emission]) -> None:
        assert self.node is not None
        for e in elements:
            self._deliver(self.node, e.input_index, e.value, e.timestamp)

    def drain_emissions(self) -> list[Emission]:
        out, self._emitted = self._emitted, []
        return out

    # ------------------------------------------------------------------ routing
    def _push(
        self, ref: StreamRef, value: Any, timestamp: int | None, skip: tuple[int, ...] = ()
    ) -> None:
        if ref == self._main:
            self._emit_to(None, 0, 0, None, value, timestamp)
        tag = self._side_tag(ref)
        if tag is not None:
            self._emit_to(None, 0, 0, tag, value, timestamp)
        for j, index in self._consumers.get(ref, ()):
            if j in skip:
                continue
            if self.operators[j] is None and self.plan.nodes[j].kind == OPERATOR:
                key = input_key(self._keyed(j), value, index)
                self._emit_to(j, index, key_group_of(key, self.key_groups), None, value,
                              timestamp)
            else:
                self._deliver(j, index, value, timestamp)

    def _emit_to(self, node: int | None, index: int, key_group: int, tag: OutputTag | None,
                 value: Any, timestamp: int | None) -> None:
        origin = SOURCES if self.node is None else self.node
        order = (origin, self.task_info.index_of_this_subtask, len(self._emitted))
        self._emitted.append(Emission(node, index, key_group, tag, value, timestamp,
                                      self._phase, order, self._previous))

    def _keyed(self, j: int) -> Any:
        """An operator of node ``j``, for its keys only (never opened)."""
        op = self._keying.get(j)
        if op is None:
            op = self._keying[j] = self.plan.nodes[j].build(self.task_info)
        return op


def single_task_reason(plan: GraphPlan) -> str | None:
    """Why ``plan`` cannot run keyed node by keyed node with :class:`ChainStep` (None: it
    can): each rule names a case where one watermark per micro-batch for every operator, or
    key groups per operator, would not give Flink's results."""
    if not any(node.kind == OPERATOR for node in plan.nodes):
        return "the graph has no keyed operator"
    for i, source in enumerate(plan.sources):
        if source.idle_timeout_ms is not None and any(
                s.stage_watermark for s in plan.sources) and len(plan.sources) > 1:
            return (f"source {i} uses with_idleness and a source's watermark is computed "
                    "before a filter or flat_map: telling an idle input apart needs the "
                    "sources' own clocks")
        if source.delay_ms is None and not source.stage_watermark:
            return (f"source {i} has no watermarks: the operators reading it stay at "
                    "Long.MIN_VALUE while the others advance")
    every = set(range(len(plan.sources)))
    reads = upstream_sources(plan)
    for j in keyed_nodes(plan):
        node = plan.nodes[j]
        if reads[j] != every:
            return (f"{node.name} reads sources {sorted(reads[j])} of {len(every)}: its own "
                    "watermark is not the one of all the graph's sources")
        reason = non_parallel_reason(plan, j)
        if reason is not None:
            return reason
    return None


#: why a non-keyed process function runs in one task (Flink runs it at any parallelism)
NON_KEYED_PROCESS = (
    "flinkwin runs a non-keyed process or co-process function in one task, where Flink may "
    "run several instances of it; it holds no keyed state, so the results are those of a "
    "parallelism-1 run, one of the runs Flink may give"
)


#: why a ``window_all`` runs in one task (Flink refuses a parallelism above 1 for it)
PARALLELISM_ONE_ONLY = "it runs with parallelism 1, as in Flink"


def non_parallel_reason(plan: GraphPlan, only: int | None = None) -> str | None:
    """The operator of ``plan`` (or node ``only``) that runs at parallelism 1 only, if any:
    ``window_all`` (Flink refuses ``setParallelism(n > 1)`` on it), or a non-keyed
    ``process``/co-process function (:data:`NON_KEYED_PROCESS`)."""
    info = TaskInfo("check", 0, 1, 1)
    for j in keyed_nodes(plan) if only is None else (only,):
        node = plan.nodes[j]
        op = node.build(info)
        keyed = getattr(op, "input_key", None) is not None or getattr(
            op, "key_selector", None) is not None
        if not keyed:
            if isinstance(op, ProcessOperator):
                return f"{node.name} is not keyed: {NON_KEYED_PROCESS}"
            return f"{node.name} is not keyed: {PARALLELISM_ONE_ONLY}"
    return None


def keyed_nodes(plan: GraphPlan) -> tuple[int, ...]:
    """The graph's operator nodes, in topological order."""
    return tuple(j for j, n in enumerate(plan.nodes) if n.kind == OPERATOR)


__all__ = [
    "BEFORE",
    "BETWEEN",
    "ELEMENT",
    "NON_KEYED_PROCESS",
    "PARALLELISM_ONE_ONLY",
    "SOURCES",
    "ChainStep",
    "Emission",
    "canonical_key",
    "input_key",
    "key_group_of",
    "keyed_nodes",
    "single_task_reason",
]
