"""Test harnesses, like Flink's operator test harnesses, for users and for flinkwin's own tests.

``WindowOperatorHarness`` drives a :class:`~flinkwin.operator.WindowOperator` element by
element, watermark by watermark; ``TriggerTestHarness`` drives a single trigger against
explicit windows. Both start, as Flink's harnesses do, with watermark and processing time at
``MIN_LONG``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flinkwin.assigners.base import WindowAssigner
from flinkwin.evictors.base import Evictor
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.operator.window_operator import WindowOperator
from flinkwin.output_tag import OutputTag
from flinkwin.state.backend import StateTables
from flinkwin.state.descriptors import StateDescriptor
from flinkwin.time import MIN_LONG, TimeLike
from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerResult


class WindowOperatorHarness:
    """One window operator plus its collected output.

    ``function`` is anything the fluent API's window functions accept: a ReduceFunction or plain
    callable, an AggregateFunction, a ProcessWindowFunction, a WindowFunction (or their AllWindow
    forms), or a ``(reduce_or_aggregate, window_function)`` pair. ``key_field=None`` means
    non-keyed (windowAll); otherwise a field name, a list of names (tuple key) or a callable.
    ``tuple_elements`` makes the elements of ``process_elements`` tuples (a ``Types.TUPLE``
    stream's shape) instead of Rows; ``atomic_elements`` makes them the values of the batches'
    one column (a stream of an atomic type such as ``Types.STRING()``).
    """

    def __init__(
        self,
        assigner: WindowAssigner,
        function: Any,
        *,
        key_field: Any = None,
        trigger: Trigger | None = None,
        evictor: Evictor | None = None,
        allowed_lateness: TimeLike = 0,
        late_output_tag: OutputTag | None = None,
        tuple_elements: bool = False,
        atomic_elements: bool = False,
        firing_metadata: bool = False,
    ) -> None:
        self._args = (assigner, function)
        self._kwargs = dict(
            key_selector=key_field,
            trigger=trigger,
            evictor=evictor,
            allowed_lateness=allowed_lateness,
            late_output_tag=late_output_tag,
            tuple_elements=tuple_elements,
            atomic_elements=atomic_elements,
            firing_metadata=firing_metadata,
        )
        self.operator = WindowOperator(assigner, function, **self._kwargs)
        self._output: list[tuple[Any, int]] = []
        self._side: dict[OutputTag, list[tuple[Any, int]]] = {}

    def _collect(self) -> None:
        self._output.extend(self.operator.drain_output())
        for tag in list(self.operator._side_outputs):
            self._side.setdefault(tag, []).extend(self.operator.drain_side_output(tag))

    def process_element(self, record: Any, timestamp: int | None = None) -> None:
        """Process one element (a dict, tuple or Row) with event ``timestamp`` (None: the
        element carries no timestamp, e.g. with processing-time windows)."""
        self.operator.process_element(record, timestamp)
        self._collect()

    def process_elements(self, records: Iterable[Any], timestamps: Iterable[int]) -> None:
        """Process many elements as one batch (vectorized where the operator can)."""
        import pandas as pd

        rows = [dict(r) if not hasattr(r, "asDict") else r.asDict() for r in records]
        self.operator.process_batch(pd.DataFrame(rows), list(timestamps))
        self._collect()

    def process_watermark(self, timestamp: int) -> None:
        """Advance the watermark; fires every event-time timer <= ``timestamp``."""
        self.operator.advance_watermark(timestamp)
        self._collect()

    def set_processing_time(self, timestamp: int) -> None:
        """Set the clock; fires every processing-time timer <= ``timestamp``."""
        self.operator.advance_processing_time(timestamp)
        self._collect()

    def output(self) -> list[Any]:
        """Emitted values in emission order."""
        return [value for value, _ in self._output]

    def output_with_timestamps(self) -> list[tuple[Any, int]]:
        """(value, timestamp) pairs in emission order; timestamp = window.max_timestamp()."""
        return list(self._output)

    def side_output(self, tag: OutputTag) -> list[Any]:
        return [value for value, _ in self._side.get(tag, [])]

    def side_output_with_timestamps(self, tag: OutputTag) -> list[tuple[Any, int]]:
        return list(self._side.get(tag, []))

    def clear_output(self) -> None:
        self._output.clear()
        self._side.clear()

    @property
    def num_late_records_dropped(self) -> int:
        return self.operator.num_late_records_dropped

    @property
    def current_watermark(self) -> int:
        return self.operator.current_watermark

    def close(self) -> None:
        """End of input: close the user functions (``close()``)."""
        self.operator.close()

    def snapshot(self) -> bytes:
        return self.operator.snapshot()

    def restore(self, data: bytes) -> None:
        """Restore operator state from ``snapshot()`` bytes (output collected so far is kept)."""
        self.operator.restore(data)

    def num_event_time_timers(self) -> int:
        return len(self.operator.event_timers)

    def num_processing_time_timers(self) -> int:
        return len(self.operator.processing_timers)

    def num_keyed_state_entries(self) -> int:
        """Window contents, trigger/function state and merging-set entries still held."""
        op = self.operator
        return (
            len(op.window_contents)
            + op.partitioned_state.num_entries()
            + op.function_state.num_entries()
            + len(op.merging_state)
        )


class _HarnessTriggerContext(OnMergeContext):
    def __init__(self, harness: TriggerTestHarness, window: Any) -> None:
        self._h = harness
        self._window = window
        self.merged_windows: list[Any] | None = None

    def get_current_processing_time(self) -> int:
        return self._h.current_processing_time

    def get_current_watermark(self) -> int:
        return self._h.current_watermark

    def register_processing_time_timer(self, time: int) -> None:
        self._h.processing_timers.register(time, None, self._window)

    def register_event_time_timer(self, time: int) -> None:
        self._h.event_timers.register(time, None, self._window)

    def delete_processing_time_timer(self, time: int) -> None:
        self._h.processing_timers.delete(time, None, self._window)

    def delete_event_time_timer(self, time: int) -> None:
        self._h.event_timers.delete(time, None, self._window)

    def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any:
        return self._h.state.handle(state_descriptor, None, self._window)

    def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None:
        if self.merged_windows:
            self._h.state.merge_namespaces(
                state_descriptor, None, self._window, self.merged_windows
            )


def _take_due(timers: TimerQueue, time: int) -> list[tuple[int, Any]]:
    due = []
    while (timer := timers.pop_due(time)) is not None:
        due.append((timer[0], timer[2]))
    return due


class TriggerTestHarness:
    """Drives one trigger directly, like Flink's ``TriggerTestHarness`` (a single key)."""

    def __init__(self, trigger: Trigger) -> None:
        self.trigger = trigger
        self.current_watermark = MIN_LONG
        self.current_processing_time = MIN_LONG
        self.state = StateTables()
        self.event_timers = TimerQueue()
        self.processing_timers = TimerQueue()

    def _ctx(self, window: Any) -> _HarnessTriggerContext:
        return _HarnessTriggerContext(self, window)

    def process_element(self, value: Any, timestamp: int, window: Any) -> TriggerResult:
        return self.trigger.on_element(value, timestamp, window, self._ctx(window))

    def advance_watermark(self, time: int) -> list[tuple[Any, TriggerResult]]:
        """Fire the event-time timers <= ``time`` pending now (as Flink's harness: timers the
        trigger registers while firing wait for the next call); return (window, result)."""
        self.current_watermark = time
        due = _take_due(self.event_timers, time)
        return [(w, self.trigger.on_event_time(ts, w, self._ctx(w))) for ts, w in due]

    def advance_processing_time(self, time: int) -> list[tuple[Any, TriggerResult]]:
        """Like ``advance_watermark`` for processing-time timers."""
        self.current_processing_time = time
        due = _take_due(self.processing_timers, time)
        return [(w, self.trigger.on_processing_time(ts, w, self._ctx(w))) for ts, w in due]

    def invoke_on_event_time(self, timestamp: int, window: Any) -> TriggerResult:
        return self.trigger.on_event_time(timestamp, window, self._ctx(window))

    def invoke_on_processing_time(self, timestamp: int, window: Any) -> TriggerResult:
        return self.trigger.on_processing_time(timestamp, window, self._ctx(window))

    def merge_windows(self, target: Any, sources: Iterable[Any]) -> None:
        """Merge ``sources`` into ``target`` as the operator does: on_merge, then clear each
        source."""
        sources = list(sources)
        ctx = self._ctx(target)
        ctx.merged_windows = sources
        self.trigger.on_merge(target, ctx)
        for source in sources:
            self.trigger.clear(source, self._ctx(source))

    def clear_trigger_state(self, window: Any) -> None:
        self.trigger.clear(window, self._ctx(window))

    def num_state_entries(self, window: Any = None) -> int:
        return self.state.num_entries(window, any_namespace=window is None)

    def num_event_time_timers(self, window: Any = None) -> int:
        return self.event_timers.count(namespace=window)

    def num_processing_time_timers(self, window: Any = None) -> int:
        return self.processing_timers.count(namespace=window)


__all__ = ["TriggerTestHarness", "WindowOperatorHarness"]
