"""``KeyedProcessOperator`` and ``ProcessOperator``: Flink's operators running a
``(Keyed)ProcessFunction`` (see :mod:`flinkwin.functions.process`).

``KeyedProcessOperator``, for every element: make the element's key (its key selector's result)
current, call ``process_element(value, ctx)`` and emit its outputs with the element's timestamp
(none if the element has none; ``ctx.timestamp()`` is then None). The timer service registers
timers of the current key, deduplicated per (key, timestamp); advancing the watermark to ``t``
fires every event-time timer ``<= t`` (in timestamp order, ties in registration order,
including timers registered while firing), advancing processing time fires the
processing-time timers likewise. A timer calls ``on_timer(timestamp, ctx)`` with its key
current; outputs of an event-time timer carry the timer's timestamp, outputs of a
processing-time timer carry none (Flink erases it). Keyed state (the runtime context's
``get_state``... handles) is the current key's, in ``process_element`` and ``on_timer``.

Side outputs (``ctx.output(tag, value)`` or a yielded ``(tag, value)``) carry the element's
timestamp (``Long.MIN_VALUE`` when it has none, as Flink's ``element.getTimestamp()``) or the
timer's, whatever its time domain.

``ProcessOperator`` runs a ``ProcessFunction`` on a non-keyed stream: time can be queried, but
setting or deleting timers raises Flink's ``UnsupportedOperationException`` message and keyed
state is refused. It holds nothing but its clocks.

Errors raised by user code are reported as a :class:`~flinkwin.errors.UserFunctionError`
naming the key. Snapshots (:mod:`flinkwin.operator.snapshots.process`) hold keyed state, timers
and clocks, their user objects (keys, state values) pickled and signed by the operator's
:class:`StatePickler`; the contexts are in :mod:`flinkwin.operator.process_contexts`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flinkwin.declared_keys import state_key
from flinkwin.errors import OPERATOR_ERRORS, user_function_error
from flinkwin.functions.base import CallableKeySelector, FieldKeySelector
from flinkwin.functions.internal import iterate_outputs, open_function
from flinkwin.functions.process import KeyedProcessFunction, TimeDomain
from flinkwin.keys import compares_by_value
from flinkwin.operator.emissions import OrderedEmissions
from flinkwin.operator.lifecycle import UserFunctionLifecycle
from flinkwin.operator.process_contexts import (
    KeyedContext,
    KeyedOnTimerContext,
    KeyedTimerService,
    NonKeyedContext,
)
from flinkwin.operator.runtime_context import (
    OperatorRuntimeContext,
    Subtask,
    TaskInfo,
    TaskRuntimeContext,
)
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.snapshots.process import restore_process_operator, snapshot_process_operator
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.operator.window_operator import make_key_selector
from flinkwin.output_tag import OutputTag
from flinkwin.record import to_record
from flinkwin.state.backend import StateTables
from flinkwin.time import MIN_LONG


def _is_side_output(out: Any) -> bool:
    return type(out) is tuple and len(out) == 2 and isinstance(out[0], OutputTag)


def _check_function(function: Any, methods: tuple[str, ...], kinds: str) -> None:
    if isinstance(function, type):
        raise TypeError(f"pass an instance of {function.__name__}, not the class")
    if not all(callable(getattr(function, m, None)) for m in methods):
        having = " and ".join(f"{m}(value, ctx)" for m in methods)
        raise TypeError(
            f"a process function must be a {kinds} (an object with {having}), got "
            f"{type(function).__name__}"
        )


class _Base(OrderedEmissions):
    """What both operators share: clocks, outputs, the function's lifecycle and emitting."""

    _KIND = ""
    #: the methods the function must have, and what such a function is called in errors
    _METHODS: tuple[str, ...] = ("process_element",)
    _FUNCTIONS = "ProcessFunction or KeyedProcessFunction"
    #: set by each operator (its task name names the operator in errors)
    runtime_context: Any

    def __init__(self, function: Any, state_pickler: StatePickler | None) -> None:
        _check_function(function, self._METHODS, self._FUNCTIONS)
        self.function = function
        #: Pickles and signs the user objects of snapshots (see flinkwin.operator.snapshots).
        self.state_pickler = state_pickler or StatePickler()
        self.current_watermark = MIN_LONG
        self.current_processing_time = MIN_LONG
        #: A process operator drops no element as late (always 0).
        self.num_late_records_dropped = 0
        self._opened = False
        self._reset_emissions()

    def _emit(self, result: Any, where: str, timestamp: int | None, side_timestamp: int) -> None:
        """Emit a user call's outputs: ``(tag, value)`` pairs to side outputs with
        ``side_timestamp``, the others with ``timestamp``."""
        outputs: Iterable[Any] = iterate_outputs(result, where)
        for out in outputs:
            if _is_side_output(out):
                self.emit_side(out[0], out[1], side_timestamp)
            else:
                self.emit_main(out, timestamp)

    def _snapshot(
        self,
        states: list[tuple[str, list[tuple[Any, Any]], list[Any]]],
        event_timers: TimerQueue,
        processing_timers: TimerQueue,
    ) -> bytes:
        meta = {
            "operator": self._KIND,
            "watermark": self.current_watermark,
            "processing_time": self.current_processing_time,
        }
        return snapshot_process_operator(
            self.state_pickler, meta, states, event_timers, processing_timers
        )

    def _restore(self, data: bytes) -> tuple[
        list[tuple[str, tuple[Any, Any], Any]],
        list[tuple[int, tuple[Any, Any]]],
        list[tuple[int, tuple[Any, Any]]],
    ]:
        """Restore the clocks; the states and timers of the snapshot (see
        :func:`restore_process_operator`)."""
        meta, states, event_timers, processing_timers = restore_process_operator(
            self.state_pickler, self._KIND, data, getattr(self, "keys_by_value", True),
            getattr(self, "key_type", None), self.runtime_context.get_task_name(),
        )
        self.current_watermark = meta["watermark"]
        self.current_processing_time = meta["processing_time"]
        return states, event_timers, processing_timers

    def _where(self, method: str) -> str:
        """``Class.method`` of the user call (an adapter of flinkwin's names the user's)."""
        where = getattr(self.function, "_flinkwin_where", None)
        return where(method) if where is not None else f"{type(self.function).__name__}.{method}"

    def _check_input(self, input_index: int) -> None:
        if input_index != 0:
            raise ValueError(
                f"{type(self).__name__} has one input (index 0), got input_index={input_index}"
            )


class KeyedProcessOperator(UserFunctionLifecycle, _Base):
    """Flink's ``KeyedProcessOperator`` for all keys of one operator instance (see module
    docstring). ``function``: a ``KeyedProcessFunction`` (or a ``ProcessFunction``, which runs
    keyed, as on a PyFlink keyed stream); ``key_selector``: a field name, a list of field names,
    a ``KeySelector`` or a callable; ``atomic_elements``: the elements are bare values (a
    stream of ``Types.STRING()``...), which the one column's name keys by the value itself."""

    _KIND = "keyed"

    def __init__(
        self,
        function: Any,
        key_selector: Any,
        *,
        task_info: TaskInfo | None = None,
        atomic_elements: bool = False,
        state_pickler: StatePickler | None = None,
        subtask: Subtask | None = None,
        key_type: Any = None,
    ) -> None:
        super().__init__(function, state_pickler)
        selector = make_key_selector(key_selector)
        if selector is None:
            raise TypeError("a KeyedProcessOperator needs a key selector (key_by(...) first)")
        self.key_selector = selector
        #: keys compare by value, or by their type too (see flinkwin.keys.compares_by_value)
        self.keys_by_value = compares_by_value(selector, key_type)
        self.key_type = key_type
        self.atomic_elements = bool(atomic_elements)
        #: The key being processed: keyed state and timers refer to it.
        self.current_key: Any = None
        self.function_state = StateTables()
        self.event_timers = TimerQueue()
        self.processing_timers = TimerQueue()
        self.subtask = subtask
        self.runtime_context = (
            OperatorRuntimeContext(self, task_info or TaskInfo(task_name="KeyedProcess"))
            if subtask is None else subtask.runtime_context(self)
        )
        timers = KeyedTimerService(self)
        self._context = KeyedContext(self, timers)
        self._timer_context = KeyedOnTimerContext(self, timers)

    # --------------------------------------------------------------- lifecycle

    def _rich_functions(self) -> list[Any]:
        selector = self.key_selector
        plain = type(selector) in (FieldKeySelector, CallableKeySelector)
        return [self.function] if plain else [self.function, selector]


    # ------------------------------------------------------------------ inputs

    def key_of(self, value: Any) -> Any:
        """The key ``value``'s state is held under (a null key fails as in Flink)."""
        if self.atomic_elements and type(self.key_selector) is FieldKeySelector:
            key = value
        else:
            key = self.key_selector.get_key(value)
        return state_key(key, self.keys_by_value, value, self.runtime_context.get_task_name(),
                         self.key_type)

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """Process one element with event ``timestamp`` (None: the element has none)."""
        self._check_input(input_index)
        record = value if self.atomic_elements else to_record(value)
        self._process_record(record, timestamp, self.key_of, "process_element")

    def _process_record(
        self, record: Any, timestamp: int | None, key_of: Any, method: str
    ) -> None:
        """Make ``key_of(record)`` current and call the function's ``method`` with the record
        and the element's context; emit its outputs with the element's timestamp."""
        if not self._opened:
            self.open()
        ts = None if timestamp is None else int(timestamp)
        try:
            key = key_of(record)
        except OPERATOR_ERRORS:
            raise
        except Exception as exc:
            raise user_function_error(exc, None, None) from exc
        self.current_key = key
        ctx = self._context
        ctx.element_timestamp = ts
        ctx.active = True
        try:
            result = getattr(self.function, method)(record, ctx)
            self._emit(result, self._where(method), ts, MIN_LONG if ts is None else ts)
        except OPERATOR_ERRORS:
            raise
        except Exception as exc:
            raise user_function_error(exc, key, None) from exc
        finally:
            ctx.active = False

    def advance_watermark(self, watermark: int) -> None:
        """Advance event time; fire every event-time timer ``<= watermark`` in order. A
        watermark not above the current one is ignored."""
        watermark = int(watermark)
        if watermark <= self.current_watermark:
            return
        if not self._opened:
            self.open()
        self.current_watermark = watermark
        while (timer := self.event_timers.pop_due(watermark)) is not None:
            self._on_timer(timer[0], timer[1], TimeDomain.EVENT_TIME)

    def advance_processing_time(self, time: int) -> None:
        """Set processing time; fire every processing-time timer ``<= time`` in order."""
        self.current_processing_time = int(time)
        if not self._opened:
            self.open()
        while (timer := self.processing_timers.pop_due(self.current_processing_time)) is not None:
            self._on_timer(timer[0], timer[1], TimeDomain.PROCESSING_TIME)

    def _on_timer(self, timestamp: int, key: Any, domain: TimeDomain) -> None:
        on_timer = getattr(self.function, "on_timer", None)
        if on_timer is None:
            return
        self.current_key = key
        ctx = self._timer_context
        ctx.timer_timestamp = timestamp
        ctx.domain = domain
        out_ts = timestamp if domain is TimeDomain.EVENT_TIME else None
        try:
            self._emit(on_timer(timestamp, ctx), self._where("on_timer"), out_ts, timestamp)
        except OPERATOR_ERRORS:
            raise
        except Exception as exc:
            raise user_function_error(exc, key, None) from exc
        finally:
            ctx.domain = None

    def next_event_time_timer(self) -> int | None:
        return self.event_timers.peek_timestamp()

    def next_processing_time_timer(self) -> int | None:
        return self.processing_timers.peek_timestamp()

    # ------------------------------------------------------------------- state

    def _keys_held(self) -> set[Any]:
        keys = {key for table in self.function_state.tables.values() for key, _ in table}
        for queue in (self.event_timers, self.processing_timers):
            keys.update(key for _, key, _ in queue)
        return keys

    def state_size(self) -> tuple[int, int]:
        """(distinct keys with state or timers, state entries + timers)."""
        entries = self.function_state.num_entries()
        return (len(self._keys_held()),
                entries + len(self.event_timers) + len(self.processing_timers))

    def holds_nothing(self) -> bool:
        """True when no keyed state and no timers remain."""
        return not (any(self.function_state.tables.values()) or len(self.event_timers)
                    or len(self.processing_timers))

    def snapshot(self) -> bytes:
        """Keyed state, timers and clocks as bytes ``restore`` takes back."""
        states = [(name, list(table), list(table.values()))
                  for name, table in self.function_state.tables.items()]
        return self._snapshot(states, self.event_timers, self.processing_timers)

    def restore(self, data: bytes) -> None:
        """Replace this operator's state with a ``snapshot()``."""
        states, event_timers, processing_timers = self._restore(data)
        self.function_state = StateTables()
        for name, slot, value in states:
            self.function_state.tables.setdefault(name, {})[slot] = value
        self.event_timers = TimerQueue()
        self.event_timers.restore_buckets(event_timers)
        self.processing_timers = TimerQueue()
        self.processing_timers.restore_buckets(processing_timers)

    def describe(self) -> dict[str, str]:
        """A summary of the operator's configuration (for ``explain()``)."""
        return {"function": type(self.function).__name__, "key": repr(self.key_selector)}


class ProcessOperator(_Base):
    """Flink's ``ProcessOperator``: a ``ProcessFunction`` on a non-keyed stream (see module
    docstring). It opens and closes its function itself, or with a ``subtask``, the subtask
    does (once for all the subtask's operators)."""

    _KIND = "non-keyed"
    #: the function class that needs a key, and where it runs
    _KEYED_ONLY: tuple[type, str] = (
        KeyedProcessFunction, "a keyed stream (key_by(...).process(...))")

    def __init__(
        self,
        function: Any,
        *,
        task_info: TaskInfo | None = None,
        state_pickler: StatePickler | None = None,
        subtask: Subtask | None = None,
    ) -> None:
        keyed_only, where = self._KEYED_ONLY
        if isinstance(function, keyed_only):
            raise TypeError(
                f"{type(function).__name__} is a {keyed_only.__name__}: it runs on {where}"
            )
        super().__init__(function, state_pickler)
        self.subtask = subtask
        self.runtime_context = TaskRuntimeContext(
            subtask.info if subtask is not None else task_info or TaskInfo(task_name="Process")
        )
        self._context = NonKeyedContext(self)

    def open(self) -> None:
        """Open the function once, before its first call."""
        if not self._opened:
            self._opened = True
            if self.subtask is not None:
                self.subtask.open_functions(self.runtime_context, [self.function])
            else:
                open_function(self.function, self.runtime_context)

    def close(self) -> None:
        """Close the function (after ``open``; with a subtask, close the subtask)."""
        if self.subtask is not None:
            self.subtask.close()
        elif self._opened:
            self._opened = False
            close = getattr(self.function, "close", None)
            if callable(close):
                close()

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """Process one element with event ``timestamp`` (None: the element has none)."""
        self._check_input(input_index)
        self._process_record(to_record(value), timestamp, "process_element")

    def _process_record(self, record: Any, timestamp: int | None, method: str) -> None:
        """Call the function's ``method`` with the record and the element's context; emit its
        outputs with the element's timestamp."""
        if not self._opened:
            self.open()
        ts = None if timestamp is None else int(timestamp)
        ctx = self._context
        ctx.element_timestamp = ts
        ctx.active = True
        try:
            result = getattr(self.function, method)(record, ctx)
            self._emit(result, self._where(method), ts, MIN_LONG if ts is None else ts)
        except OPERATOR_ERRORS:
            raise
        except Exception as exc:
            raise user_function_error(exc, None, None) from exc
        finally:
            ctx.active = False

    def advance_watermark(self, watermark: int) -> None:
        """Record the watermark (``ctx.timer_service().current_watermark()``)."""
        if not self._opened:
            self.open()
        self.current_watermark = max(self.current_watermark, int(watermark))

    def advance_processing_time(self, time: int) -> None:
        if not self._opened:
            self.open()
        self.current_processing_time = int(time)

    def next_event_time_timer(self) -> int | None:
        return None

    def next_processing_time_timer(self) -> int | None:
        return None

    def state_size(self) -> tuple[int, int]:
        return 0, 0

    def holds_nothing(self) -> bool:
        return True

    def snapshot(self) -> bytes:
        """The clocks, as bytes ``restore`` takes back."""
        return self._snapshot([], TimerQueue(), TimerQueue())

    def restore(self, data: bytes) -> None:
        self._restore(data)

    def describe(self) -> dict[str, str]:
        return {"function": type(self.function).__name__}


__all__ = ["KeyedProcessOperator", "ProcessOperator"]
