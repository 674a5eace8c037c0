"""A key group's operator in a Python worker: built from the picklable :class:`OperatorSpec`
(with its own copy of the user functions, or a subtask's), and kept between micro-batches so a
key group the same worker processes again skips ``restore`` (:class:`OperatorCache`,
``OPERATORS``)."""

from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from flinkwin.operator import WindowOperator
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.operator.snapshots import StatePickler
from flinkwin.output_tag import OutputTag


@dataclass
class OperatorSpec:
    """Everything needed to build the core operator in a worker (picklable)."""

    assigner: Any
    function: Any
    key_fields: list[str] | None
    trigger: Any
    evictor: Any
    allowed_lateness_ms: int
    late_tag: OutputTag | None
    key_groups: int = 1
    task_name: str = "Window"
    #: the long-overflow policy (see flinkwin.longs), from spark.sql.ansi.enabled
    overflow: str = "wrap"
    #: the elements are tuples (a ``Types.TUPLE`` input stream), else Rows
    tuple_elements: bool = False
    #: the input is one column of pickled values (no declared type upstream)
    pickled_elements: bool = False
    #: the input is one column of an atomic type (``Types.STRING()``...): elements are values
    atomic_elements: bool = False
    #: per nested input column, the function shaping its values (flinkwin.spark.nested)
    element_converters: dict[str, Any] = field(default_factory=dict)
    #: pickles and signs the user objects of snapshots (see flinkwin.spark.state_key)
    state_pickler: StatePickler = field(default_factory=StatePickler)
    #: the declared key type (None: keys of a key selector compare by type and value)
    key_type: Any = None
    #: main outputs leave tagged with their firing (``with_firing=True``)
    tag_firings: bool = False

    def task_info(self, key_group: int) -> TaskInfo:
        return TaskInfo(
            task_name=self.task_name,
            index_of_this_subtask=key_group,
            number_of_parallel_subtasks=self.key_groups,
            max_number_of_parallel_subtasks=self.key_groups,
        )

    def subtask(self, key_group: int) -> Subtask:
        """A new subtask of key group ``key_group``, with its own copy of the user functions
        (as each Flink subtask deserializes its own), so state handles kept in ``open`` and
        attributes set there stay its own."""
        return Subtask(
            _own_copy(self.function), _own_copy(self.key_fields), self.task_info(key_group)
        )

    def build(self, key_group: int = 0, subtask: Subtask | None = None) -> WindowOperator:
        """An operator of key group ``key_group``: running ``subtask``'s functions (opened and
        closed by the subtask), or with its own copy of them."""
        if subtask is None:
            subtask_functions = (_own_copy(self.function), _own_copy(self.key_fields))
        else:
            subtask_functions = (subtask.function, subtask.key_selector)
        return WindowOperator(
            self.assigner,
            subtask_functions[0],
            key_selector=subtask_functions[1],
            trigger=self.trigger,
            evictor=self.evictor,
            allowed_lateness=self.allowed_lateness_ms,
            late_output_tag=self.late_tag,
            task_info=self.task_info(key_group),
            overflow=self.overflow,
            tuple_elements=self.tuple_elements,
            pickled_elements=self.pickled_elements,
            atomic_elements=self.atomic_elements,
            element_converters=self.element_converters,
            state_pickler=self.state_pickler,
            subtask=subtask,
            key_type=self.key_type,
            tag_firings=self.tag_firings,
        )


def _own_copy(function: Any) -> Any:
    try:
        return copy.deepcopy(function)
    except Exception:  # an uncopyable object (a lock, a client): share it, as before
        return function


@dataclass(frozen=True)
class SubtaskFactory:
    """Builds the operators of one key group, all running ``subtask``'s functions."""

    spec: OperatorSpec
    index: int
    subtask: Subtask

    def __call__(self) -> WindowOperator:
        return self.spec.build(self.index, self.subtask)


class OperatorCache:
    """Operators kept in a Python worker between micro-batches, so a key group processed by
    the same worker again skips ``restore``. An entry is used only if its version equals the
    one in Spark's state (anything else, e.g. a retried batch reading an older state, restores
    from the snapshot); it is removed while in use, so a failed call never leaves a
    half-updated operator behind; and only with the subtask it was built for (a subtask closed
    meanwhile leaves its operators unused). A stage's entries are kept per checkpoint (the
    runtime's ``stage`` names both), so a copy of a checkpoint never continues another's
    operators unchecked. Holds the key groups of the ``max_stages`` most recent stages."""

    def __init__(self, max_stages: int = 4) -> None:
        self.max_stages = max_stages
        self._stages: OrderedDict[str, dict[int, tuple[str, Any, Subtask]]] = OrderedDict()

    def take(self, stage: str, group: int, version: str | None, subtask: Subtask) -> Any:
        entry = self._stages.get(stage, {}).pop(group, None)
        if entry is None or version is None or entry[0] != version or entry[2] is not subtask:
            return None
        return entry[1]

    def put(self, stage: str, group: int, version: str, op: Any, subtask: Subtask) -> None:
        groups = self._stages.setdefault(stage, {})
        self._stages.move_to_end(stage)
        groups[group] = (version, op, subtask)
        while len(self._stages) > self.max_stages:
            self._stages.popitem(last=False)


OPERATORS = OperatorCache()


__all__ = ["OPERATORS", "OperatorCache", "OperatorSpec", "SubtaskFactory"]
