"""``KeyedCoProcessOperator`` and ``CoProcessOperator``: Flink's operators running a
``(Keyed)CoProcessFunction`` on connected streams (see :mod:`flinkwin.functions.co`).

They are the process operators of :mod:`flinkwin.operator.keyed_process_operator` with two
inputs: an element of input 0 calls ``process_element1(value, ctx)``, one of input 1
``process_element2(value, ctx)``. Keyed, each input has its own key selector and the key it
gives is current for the call: both inputs share the keyed state and timers of a key, and a
timer calls ``on_timer`` with its key current, as a ``KeyedProcessOperator``'s does (timer
order, outputs' timestamps, side outputs, snapshots and errors alike). The operator's watermark
is the minimum of its two inputs' (Flink's ``AbstractStreamOperator.processWatermark1/2``): the
graph that runs it computes that minimum over each input's channels and advances the operator.
"""

from __future__ import annotations

from typing import Any

from flinkwin.declared_keys import state_key
from flinkwin.functions.base import CallableKeySelector, FieldKeySelector
from flinkwin.functions.co import KeyedCoProcessFunction
from flinkwin.keys import compares_by_value
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator, ProcessOperator
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.window_operator import make_key_selector
from flinkwin.record import to_record

_METHODS = ("process_element1", "process_element2")
_SIDES = ("first", "second")


def _check_index(input_index: int) -> int:
    if input_index not in (0, 1):
        raise ValueError(f"a co-process operator has inputs 0 and 1, got input {input_index!r}")
    return input_index


class KeyedCoProcessOperator(KeyedProcessOperator):
    """Flink's ``KeyedCoProcessOperator`` for all keys of one operator instance (see module
    docstring). ``key_selectors``: one per input (a field name, a list of field names, a
    ``KeySelector`` or a callable); ``atomic_elements``: per input, whether its elements are
    bare values (a stream of ``Types.STRING()``...), which the one column's name keys by the
    value itself."""

    _KIND = "keyed-co"
    _METHODS = _METHODS
    _FUNCTIONS = "KeyedCoProcessFunction or CoProcessFunction"

    def __init__(
        self,
        function: Any,
        key_selectors: tuple[Any, Any],
        *,
        task_info: TaskInfo | None = None,
        atomic_elements: tuple[bool, bool] = (False, False),
        state_pickler: StatePickler | None = None,
        subtask: Subtask | None = None,
        key_type: Any = None,
    ) -> None:
        first, second = (make_key_selector(s) for s in key_selectors)
        if first is None or second is None:
            raise TypeError("a KeyedCoProcessOperator needs a key selector for each input "
                            "(connect(...).key_by(key_selector1, key_selector2))")
        super().__init__(
            function, first, task_info=task_info or TaskInfo(task_name="KeyedCoProcess"),
            state_pickler=state_pickler, subtask=subtask, key_type=key_type,
        )
        self.key_selectors = (first, second)
        #: keys compare by value, or by their type too (as an interval join's keys)
        self.keys_by_value = (
            compares_by_value(None, key_type) if key_type is not None
            else all(compares_by_value(s, None) for s in self.key_selectors)
        )
        self.atomic_inputs = tuple(bool(a) for a in atomic_elements)

    def _rich_functions(self) -> list[Any]:
        plain = (FieldKeySelector, CallableKeySelector)
        selectors = [s for s in self.key_selectors if type(s) not in plain]
        return [self.function, *dict.fromkeys(selectors)]

    def _record(self, value: Any, input_index: int) -> Any:
        return value if self.atomic_inputs[input_index] else to_record(value)

    def input_key(self, value: Any, input_index: int) -> Any:
        """The key an element of input ``input_index`` is held under (a null key fails as in
        Flink)."""
        return self._key(self._record(value, _check_index(input_index)), input_index)

    def _key(self, record: Any, input_index: int) -> Any:
        selector = self.key_selectors[input_index]
        key = (record if self.atomic_inputs[input_index] and type(selector) is FieldKeySelector
               else selector.get_key(record))
        return state_key(
            key, self.keys_by_value, record,
            f"{self.runtime_context.get_task_name()} ({_SIDES[input_index]} input)",
            self.key_type,
        )

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """``process_element1`` (input 0) or ``process_element2`` (input 1) for ``value`` with
        event ``timestamp`` (None: the element has none), its input's key current."""
        index = _check_index(input_index)
        self._process_record(self._record(value, index), timestamp,
                             lambda record: self._key(record, index), _METHODS[index])

    def describe(self) -> dict[str, str]:
        first, second = self.key_selectors
        return {"function": type(self.function).__name__, "keys": f"{first!r}, {second!r}"}


class CoProcessOperator(ProcessOperator):
    """Flink's ``CoProcessOperator``: a ``CoProcessFunction`` on non-keyed connected streams
    (see module docstring): time can be queried, timers and keyed state are refused."""

    _KIND = "non-keyed-co"
    _METHODS = _METHODS
    _FUNCTIONS = "CoProcessFunction"
    _KEYED_ONLY = (
        KeyedCoProcessFunction,
        "keyed connected streams (connect(...).key_by(key_selector1, key_selector2))",
    )

    def __init__(
        self,
        function: Any,
        *,
        task_info: TaskInfo | None = None,
        atomic_elements: tuple[bool, bool] = (False, False),
        state_pickler: StatePickler | None = None,
        subtask: Subtask | None = None,
    ) -> None:
        super().__init__(function, task_info=task_info or TaskInfo(task_name="CoProcess"),
                         state_pickler=state_pickler, subtask=subtask)
        self.atomic_inputs = tuple(bool(a) for a in atomic_elements)

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """``process_element1`` (input 0) or ``process_element2`` (input 1) for ``value``."""
        index = _check_index(input_index)
        record = value if self.atomic_inputs[index] else to_record(value)
        self._process_record(record, timestamp, _METHODS[index])


__all__ = ["CoProcessOperator", "KeyedCoProcessOperator"]
