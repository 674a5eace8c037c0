"""``WindowOperator``: Flink's window operator (and ``EvictingWindowOperator``), per key.

For each element: assign windows; skip windows that are already late
(``max_timestamp + allowed_lateness <= watermark``, event time only); for merging assigners,
merge the new window into the key's ``MergingWindowSet`` first; add the element to the window's
state (an incremental accumulator, or the element list when a full-window function or an evictor
needs it); ask the trigger; FIRE emits the window function's output with timestamp
``window.max_timestamp()``, PURGE clears the contents; register the cleanup timer at
``max_timestamp + allowed_lateness`` (event time) or ``max_timestamp`` (processing time).
An element that lands in no live window and is late (``timestamp + allowed_lateness <=
watermark``) goes to the late side output if one is set, else is counted as dropped.

Window bounds, timers, lateness and built-in sums use Java long arithmetic on every path, with
``overflow="wrap"`` (Flink's wrap-around, the default) or ``"error"`` (a
:class:`~flinkwin.longs.LongOverflowError` naming the key and window); see :mod:`flinkwin.longs`.

Timers fire in timestamp order (ties in registration order); advancing the watermark to ``t``
fires every event-time timer ``<= t``, including timers registered while firing. At a window's
cleanup time all its state is cleared: contents, trigger state and timers, per-window function
state, and its merging-set entry.

``process_batch`` processes a whole pandas batch; for the common configurations it runs
vectorized (see :mod:`flinkwin.operator.vectorized`) with results identical to the per-element
path.

``WindowOperator`` is one class, Flink's ``WindowOperator`` and its subclass
``EvictingWindowOperator`` together: this module holds its element path, timers and state;
its methods for emitting a fired window (:mod:`~flinkwin.operator.window_emission`) and
merging windows (:mod:`~flinkwin.operator.window_merging`) are defined there. The contexts
(:mod:`~flinkwin.operator.contexts`), firings, lifecycle, runtime context, timer queue, the batch
path (:mod:`~flinkwin.operator.vectorized`, :mod:`~flinkwin.operator.bulk_firing`) and the
snapshot (:mod:`flinkwin.operator.snapshots`) stand apart too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from flinkwin.assigners.base import MergingWindowAssigner, WindowAssigner, default_trigger
from flinkwin.declared_keys import state_key
from flinkwin.errors import (
    MERGING_TRIGGER_MESSAGE,
    OPERATOR_ERRORS,
    IllegalStateError,
    UnsupportedOperationError,
    raise_failure,
    user_function_error,
)
from flinkwin.evictors.base import Evictor
from flinkwin.functions.base import CallableKeySelector, FieldKeySelector, KeySelector
from flinkwin.functions.builtin import BuiltinAggregation
from flinkwin.functions.internal import (
    LIST,
    REDUCING,
    WindowFunctionSpec,
    resolve_window_function,
)
from flinkwin.keys import compares_by_value
from flinkwin.longs import WRAP, LongOverflowError, check_policy, located, to_long
from flinkwin.operator import window_emission, window_merging
from flinkwin.operator.bulk_firing import can_fire_in_bulk, fire_event_timers_in_bulk
from flinkwin.operator.contexts import (
    OperatorAssignerContext,
    OperatorEvictorContext,
    OperatorTriggerContext,
    ProcessContext,
)
from flinkwin.operator.emissions import interleaved
from flinkwin.operator.firings import Firing, FiringTracker
from flinkwin.operator.lifecycle import UserFunctionLifecycle
from flinkwin.operator.merging_window_set import MergingWindowSet
from flinkwin.operator.runtime_context import OperatorRuntimeContext, Subtask, TaskInfo
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.snapshots.window import restore_operator, snapshot_operator
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.operator.watermark_guard import check_event_timer
from flinkwin.output_tag import OutputTag
from flinkwin.record import element_class, to_record
from flinkwin.state.backend import StateTables
from flinkwin.time import MAX_LONG, MIN_LONG, TimeLike, to_millis
from flinkwin.triggers.base import Trigger, TriggerResult


def make_key_selector(key: Any) -> KeySelector | None:
    """None (non-keyed), a field name, a list of field names, a callable or a KeySelector."""
    if key is None or isinstance(key, KeySelector):
        return key
    if isinstance(key, str) or (
        isinstance(key, (list, tuple)) and key and all(isinstance(k, str) for k in key)
    ):
        return FieldKeySelector(key)
    if callable(key):
        return CallableKeySelector(key)
    raise TypeError(f"key must be a field name, a list of field names or a callable, got {key!r}")


class WindowOperator(UserFunctionLifecycle):
    """Flink's ``WindowOperator`` for all keys of one operator instance (see module docstring)."""

    def __init__(
        self,
        assigner: WindowAssigner,
        function: Any,
        key_selector: Any = None,
        trigger: Trigger | None = None,
        evictor: Evictor | None = None,
        allowed_lateness: TimeLike = 0,
        late_output_tag: OutputTag | None = None,
        task_info: TaskInfo | None = None,
        overflow: str = WRAP,
        tuple_elements: bool = False,
        pickled_elements: bool = False,
        atomic_elements: bool = False,
        element_converters: Mapping[str, Callable[[Any], Any]] | None = None,
        state_pickler: StatePickler | None = None,
        subtask: Subtask | None = None,
        key_type: Any = None,
        firing_metadata: bool = False,
        tag_firings: bool = False,
    ) -> None:
        if not isinstance(assigner, WindowAssigner):
            raise TypeError(
                f"window assigner must be a WindowAssigner, got {type(assigner).__name__}"
            )
        if trigger is None:
            trigger = default_trigger(assigner)
        if not isinstance(trigger, Trigger):
            raise TypeError(f"trigger must be a Trigger, got {type(trigger).__name__}")
        if isinstance(assigner, MergingWindowAssigner) and not trigger.can_merge():
            raise UnsupportedOperationError(MERGING_TRIGGER_MESSAGE)
        if evictor is not None and not isinstance(evictor, Evictor):
            raise TypeError(f"evictor must be an Evictor, got {type(evictor).__name__}")
        lateness = to_millis(allowed_lateness, "allowed lateness")
        if lateness < 0:
            raise ValueError("The allowed lateness cannot be negative.")
        if late_output_tag is not None and not isinstance(late_output_tag, OutputTag):
            raise TypeError("late_output_tag must be an OutputTag")

        self.assigner = assigner
        self.trigger = trigger
        self.evictor = evictor
        self.allowed_lateness = lateness
        self.late_output_tag = late_output_tag
        self.key_selector = make_key_selector(key_selector)
        #: Keys compare by value (a declared ``key_type``, column keys) or, from a key selector
        #: without a declared type, by their type too, as PyFlink's pickled keys (flinkwin.keys).
        self.keys_by_value = compares_by_value(self.key_selector, key_type)
        self.key_type = key_type
        self.overflow = check_policy(overflow)
        #: Elements built from frames are tuples (a ``Types.TUPLE`` stream), else Rows.
        self.tuple_elements = bool(tuple_elements)
        #: Frames hold one column of pickled values (a stream without a declared type): the
        #: elements are those values.
        self.pickled_elements = bool(pickled_elements)
        #: Frames hold one column of an atomic type (``Types.STRING()``...): the elements are
        #: its values themselves, as PyFlink hands them.
        self.atomic_elements = bool(atomic_elements)
        #: Per nested column, the function shaping its values as the stream's type does
        #: (tuples/Rows for structs, lists, dicts; see ``flinkwin.spark.nested``).
        self.element_converters = dict(element_converters or {})
        #: Pickles and signs the user objects of snapshots (see flinkwin.operator.snapshots).
        self.state_pickler = state_pickler or StatePickler()
        spec = resolve_window_function(function, evictor is not None)
        if isinstance(spec.reduce_fn, BuiltinAggregation):
            if self.atomic_elements:
                raise TypeError(
                    f"{spec.reduce_fn!r} aggregates a field, but the elements of a stream of an "
                    "atomic type (Types.STRING(), Types.INT()...) are bare values: use "
                    "reduce(lambda a, b: a + b) (or min/max) instead"
                )
            spec = dataclasses.replace(spec, reduce_fn=spec.reduce_fn.with_overflow(overflow))
        self.spec: WindowFunctionSpec = spec
        self.is_merging = isinstance(assigner, MergingWindowAssigner)
        self.is_event_time = assigner.is_event_time()

        self.current_watermark = MIN_LONG
        self.current_processing_time = MIN_LONG
        #: The key being processed: keyed state of the runtime context refers to it.
        self.current_key: Any = None
        #: The subtask whose functions this operator runs (they are opened and closed once per
        #: subtask, not per operator); None: the operator owns its functions' lifecycle.
        self.subtask = subtask
        self.runtime_context = (
            OperatorRuntimeContext(self, task_info or TaskInfo()) if subtask is None
            else subtask.runtime_context(self)
        )
        #: names the operator in a null key's error
        self._key_owner = self.runtime_context.get_task_name()
        self._opened = False
        self.num_late_records_dropped = 0
        #: Window firings that emitted contents (not snapshotted: a per-run counter).
        self.num_windows_fired = 0

        # Keyed state: window contents per (key, state window); trigger and function state.
        self.window_contents: dict[tuple[Any, Any], Any] = {}
        self.partitioned_state = StateTables()
        self.function_state = StateTables()
        self.merging_state: dict[Any, list[tuple[Any, Any]]] = {}
        self.event_timers = TimerQueue()
        self.processing_timers = TimerQueue()

        #: Firing metadata (``context.firing()``; see flinkwin.operator.firings): None when
        #: not asked for. ``tag_firings``: every main output leaves as ``Fired(value, firing)``.
        self.tag_firings = bool(tag_firings)
        self.firings = FiringTracker() if firing_metadata or tag_firings else None
        #: the firing in progress (while the window function runs)
        self.current_firing: Firing | None = None
        #: the window's clock as a firing sees it: the timer's time while event-time timers
        #: fire (None: the current watermark / processing time, see ``_clock``)
        self._timer_clock: int | None = None

        self._output: list[tuple[Any, int]] = []
        self._side_outputs: dict[OutputTag, list[tuple[Any, int]]] = {}
        #: per side-output emission since the last drain: its tag and the main outputs before
        #: it (drain_in_order; the main output's hot paths append to _output alone)
        self._side_marks: list[tuple[OutputTag, int]] = []
        self._bulk_firing = can_fire_in_bulk(self)
        self._trigger_ctx = OperatorTriggerContext(self)
        self._assigner_ctx = OperatorAssignerContext(self)
        self._evictor_ctx = OperatorEvictorContext(self)

    # --------------------------------------------------------------- lifecycle

    def user_functions(self) -> list[Any]:
        """The rich functions this operator runs (reduce/aggregate, window function)."""
        spec = self.spec
        return [f for f in (spec.reduce_fn, spec.agg_fn, spec.window_fn) if f is not None]

    def _rich_functions(self) -> list[Any]:
        """The functions opened and closed: the user functions and a ``KeySelector`` (PyFlink
        opens that too)."""
        selector = self.key_selector
        extra = [selector] if type(selector) not in (FieldKeySelector, CallableKeySelector,
                                                     type(None)) else []
        return self.user_functions() + extra


    # ------------------------------------------------------------------ inputs

    def elements(self, fields: tuple[str, ...], columns: Sequence[list[Any]]) -> list[Any]:
        """The elements of a frame with columns ``fields`` holding ``columns`` (one list of
        values per column): the values themselves for a stream of an atomic type, else rows of
        the stream's element class (tuples or Rows)."""
        converters = self.element_converters
        if self.atomic_elements:
            convert = converters.get(fields[0])
            return list(columns[0]) if convert is None else [convert(v) for v in columns[0]]
        klass = element_class(fields, self.tuple_elements)
        if converters:
            columns = [
                values if f not in converters else [converters[f](v) for v in values]
                for f, values in zip(fields, columns)
            ]
        new = tuple.__new__
        return [new(klass, row) for row in zip(*columns)]

    def key_of(self, record: Any) -> Any:
        """The key ``record``'s state is held under
        (:func:`flinkwin.declared_keys.state_key`: a null key fails as in Flink)."""
        selector = self.key_selector
        if selector is None:
            return None
        if self.atomic_elements and type(selector) is FieldKeySelector:
            # the one column's name keys a stream of bare values by the value
            key = record
        else:
            key = selector.get_key(record)
        return state_key(key, self.keys_by_value, record, self._key_owner, self.key_type)

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """Process one element with event ``timestamp`` (see module docstring); ``None`` means
        the element has no timestamp (``MIN_LONG``, as in Flink). A window operator has one
        input: ``input_index`` is always 0."""
        if not self._opened:
            self.open()
        record = value if self.atomic_elements else to_record(value)
        ts = MIN_LONG if timestamp is None else int(timestamp)
        self._process(record, ts, self.key_of(record))

    def process_batch(
        self, frame: Any, timestamps: Sequence[int] | np.ndarray,
        records: list[Any] | None = None,
    ) -> None:
        """Process the rows of a pandas DataFrame in order, each with its event timestamp
        (``records``: the rows as elements, when the caller has built them).

        Equivalent to calling ``process_element`` for every row; vectorized when the
        configuration allows (built-in assigners and triggers, incremental functions).
        """
        from flinkwin.operator.vectorized import process_frame

        if not self._opened:
            self.open()
        process_frame(self, frame, np.asarray(timestamps, dtype=np.int64), records)

    def advance_watermark(self, watermark: int) -> None:
        """Advance event time; fire every event-time timer ``<= watermark`` in order.
        A watermark that is not greater than the current one is ignored."""
        watermark = int(watermark)
        if watermark <= self.current_watermark:
            return
        if not self._opened:
            self.open()
        self.current_watermark = watermark
        if self._bulk_firing:
            fire_event_timers_in_bulk(self, watermark)
            return
        while (timer := self.event_timers.pop_due(watermark)) is not None:
            self._on_timer(*timer, event_time=True)

    def advance_processing_time(self, time: int) -> None:
        """Set the processing-time clock; fire every processing-time timer ``<= time``."""
        self.current_processing_time = int(time)
        if not self._opened:
            self.open()
        while (timer := self.processing_timers.pop_due(self.current_processing_time)) is not None:
            self._on_timer(*timer, event_time=False)

    def next_event_time_timer(self) -> int | None:
        return self.event_timers.peek_timestamp()

    def next_processing_time_timer(self) -> int | None:
        return self.processing_timers.peek_timestamp()

    # ----------------------------------------------------------------- outputs

    def drain_output(self) -> list[tuple[Any, int]]:
        out, self._output = self._output, []
        if self._side_marks:
            self._side_marks = [(tag, 0) for tag, _ in self._side_marks]
        return out

    def drain_side_output(self, tag: OutputTag) -> list[tuple[Any, int]]:
        self._side_marks = [mark for mark in self._side_marks if mark[0] != tag]
        return self._side_outputs.pop(tag, [])

    def drain_in_order(self) -> list[tuple[OutputTag | None, Any, int | None]]:
        """The main and side outputs since the last drain, in the order they were emitted
        (a ``ProcessWindowFunction``'s ``context.output`` among its results, as in Flink)."""
        out = interleaved(self._output, self._side_outputs, self._side_marks)
        self._output, self._side_outputs, self._side_marks = [], {}, []
        return out

    def state_size(self) -> tuple[int, int]:
        """(keys, windows) held: the distinct keys with window contents, and the (key,
        window) contents."""
        return len({key for key, _ in self.window_contents}), len(self.window_contents)

    def holds_nothing(self) -> bool:
        """True when no window contents, keyed state, merging sets or timers are held."""
        return not (
            self.window_contents
            or (self.firings is not None and self.firings.records)
            or self.partitioned_state.num_entries()
            or self.function_state.num_entries()
            or self.merging_state
            or len(self.event_timers)
            or len(self.processing_timers)
        )

    def drain_side_outputs(self) -> dict[OutputTag, list[tuple[Any, int]]]:
        """Every side output's pending values, by tag (all are cleared)."""
        out, self._side_outputs, self._side_marks = self._side_outputs, {}, []
        return out

    def emit_side(self, tag: OutputTag, value: Any, timestamp: int) -> None:
        self._side_outputs.setdefault(tag, []).append((value, timestamp))
        self._side_marks.append((tag, len(self._output)))

    # ------------------------------------------------------------ the operator

    def cleanup_time(self, window: Any) -> int:
        """``max_timestamp + allowed_lateness`` (event time; ``MAX_LONG`` on overflow) or
        ``max_timestamp`` (processing time)."""
        max_ts = window.max_timestamp()
        if not self.is_event_time:
            return max_ts
        cleanup = max_ts + self.allowed_lateness
        return cleanup if cleanup <= MAX_LONG else MAX_LONG

    def is_window_late(self, window: Any) -> bool:
        return self.is_event_time and self.cleanup_time(window) <= self.current_watermark

    def is_element_late(self, timestamp: int) -> bool:
        """``timestamp + allowed_lateness <= watermark`` (event time), in long arithmetic."""
        if not self.is_event_time:
            return False
        limit = timestamp + self.allowed_lateness
        if limit > MAX_LONG:
            limit = to_long(
                limit, self.overflow,
                f"element timestamp {timestamp} + allowed lateness {self.allowed_lateness}",
            )
        return limit <= self.current_watermark

    def _process(self, record: Any, timestamp: int, key: Any) -> None:
        self.current_key = key
        try:
            windows = self.assigner.assign_windows(record, timestamp, self._assigner_ctx)
        except Exception as exc:
            raise_failure(exc, key, None)
        skipped = True
        if self.is_merging:
            merging = self._merging_window_set(key)
            for window in windows:
                actual = merging.add_window(window, self._merge_function(key))
                if self.is_window_late(actual):
                    merging.retire_window(actual)
                    continue
                skipped = False
                state_window = merging.get_state_window(actual)
                if state_window is None:
                    raise IllegalStateError(f"Window {window} is not in in-flight window set.")
                self._on_element_in_window(record, timestamp, key, actual, state_window)
            self._persist(key, merging)
        else:
            for window in windows:
                if self.is_window_late(window):
                    continue
                skipped = False
                self._on_element_in_window(record, timestamp, key, window, window)
        if skipped and self._element_late(key, timestamp):
            if self.late_output_tag is not None:
                self.emit_side(self.late_output_tag, record, timestamp)
            else:
                self.num_late_records_dropped += 1

    def _element_late(self, key: Any, timestamp: int) -> bool:
        try:
            return self.is_element_late(timestamp)
        except LongOverflowError as exc:
            raise located(exc, key, None) from None

    def _on_element_in_window(
        self, record: Any, timestamp: int, key: Any, window: Any, state_window: Any
    ) -> None:
        try:
            slot = (key, state_window)
            self._add_to_contents(slot, record, timestamp)
            if self.firings is not None:
                self.firings.on_element((key, window), window.max_timestamp(), self._clock())
            ctx = self._trigger_ctx
            ctx.key, ctx.window = key, window
            result = self.trigger.on_element(record, timestamp, window, ctx)
            if result.is_fire():
                contents = self.window_contents.get(slot)
                if contents is None:
                    return
                self._fire(key, window, slot, contents, is_last=False)
            if result.is_purge():
                self.window_contents.pop(slot, None)
            self._register_cleanup_timer(key, window)
        except LongOverflowError as exc:
            raise located(exc, key, state_window) from None
        except OPERATOR_ERRORS:
            raise
        except Exception as exc:
            raise user_function_error(exc, key, window) from exc

    def _add_to_contents(self, slot: tuple[Any, Any], record: Any, timestamp: int) -> None:
        contents = self.window_contents
        spec = self.spec
        if self.evictor is not None:
            contents.setdefault(slot, []).append((record, timestamp))
        elif spec.state_kind == LIST:
            contents.setdefault(slot, []).append(record)
        elif spec.state_kind == REDUCING:
            contents[slot] = spec.reduce(contents[slot], record) if slot in contents else record
        else:
            agg = spec.agg_fn
            acc = contents[slot] if slot in contents else agg.create_accumulator()
            contents[slot] = agg.add(record, acc)

    def _on_timer(self, timestamp: int, key: Any, window: Any, *, event_time: bool) -> None:
        self.current_key = key
        try:
            ctx = self._trigger_ctx
            ctx.key, ctx.window = key, window
            merging: MergingWindowSet | None = None
            if self.is_merging:
                merging = self._merging_window_set(key)
                state_window = merging.get_state_window(window)
                if state_window is None:
                    # A timer for a window that no longer exists (its trigger did not clean up).
                    return
            else:
                state_window = window
            slot = (key, state_window)
            if event_time:
                result = self.trigger.on_event_time(timestamp, window, ctx)
            else:
                result = self.trigger.on_processing_time(timestamp, window, ctx)
            own_clock = event_time == self.is_event_time
            cleanup = own_clock and timestamp == self.cleanup_time(window)
            if result.is_fire():
                contents = self.window_contents.get(slot)
                if contents is not None:
                    self._timer_clock = timestamp if own_clock else None
                    try:
                        self._fire(key, window, slot, contents, is_last=cleanup)
                    finally:
                        self._timer_clock = None
            if result.is_purge():
                self.window_contents.pop(slot, None)
            if cleanup:
                self._clear_all_state(key, window, slot, merging)
            if merging is not None:
                self._persist(key, merging)
        except Exception as exc:
            raise_failure(exc, key, window)

    def _clear_all_state(
        self, key: Any, window: Any, slot: tuple[Any, Any], merging: MergingWindowSet | None
    ) -> None:
        self.current_key = key
        self.window_contents.pop(slot, None)
        if self.firings is not None:
            self.firings.clear((key, window))
        ctx = self._trigger_ctx
        ctx.key, ctx.window = key, window
        self.trigger.clear(window, ctx)
        clear = getattr(self.spec.window_fn, "clear", None)
        if clear is not None and self.spec.window_kind in ("process", "process_all"):
            clear(ProcessContext(self, key, window))
        if merging is not None:
            merging.retire_window(window)
            self._persist(key, merging)

    def _register_cleanup_timer(self, key: Any, window: Any) -> None:
        cleanup = self.cleanup_time(window)
        if cleanup == MAX_LONG:
            return  # no GC timer for "end of time"
        if self.is_event_time:
            check_event_timer(cleanup)
            self.event_timers.register(cleanup, key, window)
        else:
            self.processing_timers.register(cleanup, key, window)

    def _delete_cleanup_timer(self, key: Any, window: Any) -> None:
        cleanup = self.cleanup_time(window)
        if cleanup == MAX_LONG:
            return
        if self.is_event_time:
            self.event_timers.delete(cleanup, key, window)
        else:
            self.processing_timers.delete(cleanup, key, window)

    # merging windows and emitting a fired window: methods of this class, defined in
    # flinkwin.operator.window_merging and flinkwin.operator.window_emission
    _merge_function = window_merging.merge_function
    _merge_contents = window_merging.merge_contents
    _merge_slots = window_merging.merge_slots
    _merging_window_set = window_merging.merging_window_set
    _persist = window_merging.persist
    _fire = window_emission.fire
    _emit_window_contents = window_emission.emit_window_contents
    fire_windows = window_emission.fire_windows
    _fire_one = window_emission.fire_one
    _emit_evicting = window_emission.emit_evicting
    emit_window_values = window_emission.emit_window_values
    _emit_outputs = window_emission.emit_outputs

    def _clock(self) -> int:
        """The window's clock as a firing or an element sees it (see ``docs/firings.md``)."""
        if self._timer_clock is not None:
            return self._timer_clock
        return self.current_watermark if self.is_event_time else self.current_processing_time

    # --------------------------------------------------------------- snapshots

    def snapshot(self) -> bytes:
        """All state (window contents, trigger and function state, timers, merging sets,
        clocks) as compact versioned bytes."""
        return snapshot_operator(self)

    def restore(self, data: bytes) -> None:
        """Replace this operator's state with a snapshot taken by ``snapshot()``."""
        restore_operator(self, data)

    def describe(self) -> dict[str, str]:
        """A summary of the operator's configuration (used by ``explain()``)."""
        return {
            "assigner": repr(self.assigner),
            "trigger": repr(self.trigger),
            "evictor": repr(self.evictor) if self.evictor is not None else "none",
            "state": "list" if self.evictor is not None else self.spec.state_kind,
            "function": self.spec.describe(),
            "allowed_lateness_ms": str(self.allowed_lateness),
            "time": "event time" if self.is_event_time else "processing time",
            "firing metadata": "columns" if self.tag_firings else (
                "context.firing()" if self.firings is not None else "no"
            ),
        }


__all__ = ["TriggerResult", "WindowOperator", "make_key_selector"]
