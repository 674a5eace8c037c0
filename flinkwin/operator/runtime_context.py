"""An operator's ``RuntimeContext``: task information and keyed state of the key being
processed, as rich functions (``open(runtime_context)``) and assigners
(``context.get_runtime_context()``) see it.

Keyed state is the operator's per-key state (the same store as a ``ProcessWindowFunction``'s
``context.global_state()``), snapshotted with the operator. A state handle obtained once (in
``open``, as PyFlink programs do) always refers to the key currently being processed.

On Spark, a "subtask" is a key group: ``get_index_of_this_subtask()`` is the key group's number
and the parallelism and max parallelism are the number of key groups. The operators built for one
subtask over its life (one per restore from a snapshot) share one :class:`Subtask`: the user
functions, opened once before the subtask's first element, timer or watermark, their runtime
context (bound to the operator at work) and closed once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from flinkwin.functions.internal import open_function
from flinkwin.functions.runtime_context import RuntimeContext
from flinkwin.metrics import MetricGroup
from flinkwin.state.backend import VOID_NAMESPACE, StateTables
from flinkwin.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)


class KeyedStateOwner(Protocol):
    """An operator whose keyed state a runtime context serves (the window operator, the keyed
    process operator): its state tables and the key being processed."""

    function_state: StateTables
    current_key: Any


@dataclass(frozen=True)
class TaskInfo:
    """What the runtime context reports about the task."""

    task_name: str = "Window"
    index_of_this_subtask: int = 0
    number_of_parallel_subtasks: int = 1
    max_number_of_parallel_subtasks: int = 1
    attempt_number: int = 0
    job_parameters: dict[str, str] = field(default_factory=dict)


class TaskRuntimeContext(RuntimeContext):
    """The runtime context of a function on a non-keyed stream (``map``/``flat_map``/
    ``filter``): task information only; keyed state needs a keyed stream, as in Flink."""

    def __init__(self, info: TaskInfo) -> None:
        self._info = info
        self._metrics: MetricGroup | None = None

    def get_task_name(self) -> str:
        return self._info.task_name

    def get_number_of_parallel_subtasks(self) -> int:
        return self._info.number_of_parallel_subtasks

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._info.max_number_of_parallel_subtasks

    def get_index_of_this_subtask(self) -> int:
        return self._info.index_of_this_subtask

    def get_attempt_number(self) -> int:
        return self._info.attempt_number

    def get_task_name_with_subtasks(self) -> str:
        info = self._info
        return (
            f"{info.task_name} ({info.index_of_this_subtask + 1}/"
            f"{info.number_of_parallel_subtasks})"
        )

    def get_job_parameter(self, key: str, default_value: str) -> str:
        return self._info.job_parameters.get(key, default_value)

    def get_metrics_group(self) -> MetricGroup:
        """This task's metric group (see :mod:`flinkwin.metrics` for where its values go)."""
        if self._metrics is None:
            self._metrics = MetricGroup()
        return self._metrics

    def _no_keyed_state(self, state_descriptor: Any) -> Any:
        raise RuntimeError(
            f"{self._info.task_name}: keyed state ({state_descriptor!r}) is only available on a "
            "keyed stream (Flink: 'Keyed state can only be used on a KeyedStream')"
        )

    get_state = get_list_state = get_map_state = _no_keyed_state
    get_reducing_state = get_aggregating_state = _no_keyed_state


class CurrentKeyState:
    """A keyed state handle that follows the operator's current key: every call is made on the
    state of the key being processed at that moment, in the operator the context is bound to."""

    __slots__ = ("_context", "_descriptor")

    def __init__(self, context: OperatorRuntimeContext, descriptor: StateDescriptor) -> None:
        self._context = context
        self._descriptor = descriptor

    def __getattr__(self, name: str) -> Any:
        op = self._context._op
        handle = op.function_state.handle(self._descriptor, op.current_key, VOID_NAMESPACE)
        return getattr(handle, name)

    # Python looks special methods up on the class, not through __getattr__: PyFlink's
    # MapState is used as a dict (state[k], state[k] = v, del state[k], k in state, for k in
    # state) and its ListState iterated, so these forward to the current key's handle too
    def __getitem__(self, key: Any) -> Any:
        return self.__getattr__("__getitem__")(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.__getattr__("__setitem__")(key, value)

    def __delitem__(self, key: Any) -> None:
        self.__getattr__("__delitem__")(key)

    def __contains__(self, key: Any) -> bool:
        return bool(self.__getattr__("__contains__")(key))

    def __iter__(self) -> Any:
        return self.__getattr__("__iter__")()

    def __repr__(self) -> str:
        return f"CurrentKeyState({self._descriptor!r})"


class OperatorRuntimeContext(TaskRuntimeContext):
    """The runtime context of one window operator (see module docstring): the task
    information of :class:`TaskRuntimeContext` plus keyed state of the current key."""

    def __init__(self, op: KeyedStateOwner, info: TaskInfo) -> None:
        super().__init__(info)
        self._op = op

    def bind(self, op: KeyedStateOwner) -> None:
        """Make ``op`` the operator whose keyed state this context (and every state handle
        obtained from it) refers to."""
        self._op = op

    def _state(self, descriptor: Any, expected: type[StateDescriptor]) -> Any:
        if not isinstance(descriptor, expected):
            raise TypeError(
                f"expected a {expected.__name__}, got {type(descriptor).__name__}"
            )
        return CurrentKeyState(self, descriptor)

    def get_state(self, state_descriptor: Any) -> Any:
        return self._state(state_descriptor, ValueStateDescriptor)

    def get_list_state(self, state_descriptor: Any) -> Any:
        return self._state(state_descriptor, ListStateDescriptor)

    def get_map_state(self, state_descriptor: Any) -> Any:
        return self._state(state_descriptor, MapStateDescriptor)

    def get_reducing_state(self, state_descriptor: Any) -> Any:
        return self._state(state_descriptor, ReducingStateDescriptor)

    def get_aggregating_state(self, state_descriptor: Any) -> Any:
        return self._state(state_descriptor, AggregatingStateDescriptor)


class Subtask:
    """One subtask's user functions and their lifecycle (see module docstring).

    ``function`` and ``key_selector`` are the subtask's own copies, which every operator built
    for it runs; :meth:`open` opens them once, :meth:`close` closes them once (after open)."""

    def __init__(self, function: Any, key_selector: Any, info: TaskInfo) -> None:
        self.function = function
        self.key_selector = key_selector
        self.info = info
        self.context: OperatorRuntimeContext | None = None
        self.opened = False
        self.closed = False
        self._functions: list[Any] = []

    def runtime_context(self, op: KeyedStateOwner) -> OperatorRuntimeContext:
        """The subtask's runtime context, bound to ``op``."""
        if self.context is None:
            self.context = OperatorRuntimeContext(op, self.info)
        self.context.bind(op)
        return self.context

    def open(self, op: KeyedStateOwner, functions: list[Any]) -> None:
        """Bind the context to ``op``; open ``functions`` (``op``'s rich functions, the
        subtask's objects) the first time."""
        self.open_functions(self.runtime_context(op), functions)

    def open_functions(self, context: Any, functions: list[Any]) -> None:
        """Open ``functions`` (the subtask's objects) with ``context`` the first time."""
        if self.opened:
            return
        if self.closed:
            raise RuntimeError(f"{self.info.task_name}: subtask {self.info.index_of_this_subtask}"
                               " was closed; its functions cannot be opened again")
        self.opened = True
        self._functions = list(functions)
        for fn in self._functions:
            open_function(fn, context)

    def close(self) -> None:
        """Close the opened functions (once); every one is closed even if one fails, and the
        first failure is raised."""
        if not self.opened or self.closed:
            self.closed = True
            return
        self.closed = True
        failure: BaseException | None = None
        for fn in self._functions:
            close = getattr(fn, "close", None)
            if callable(close):
                try:
                    close()
                except Exception as exc:  # noqa: BLE001 (raised below, after the others)
                    failure = failure or exc
        if failure is not None:
            raise failure
