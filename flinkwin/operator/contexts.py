"""The context objects the window operator hands to triggers, evictors, assigners and
``ProcessWindowFunction``s. They are re-pointed at a (key, window) before each call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flinkwin.assigners.base import WindowAssignerContext
from flinkwin.errors import IllegalStateError, UnsupportedOperationError
from flinkwin.evictors.base import EvictorContext
from flinkwin.functions.base import WindowContext
from flinkwin.functions.runtime_context import RuntimeContext
from flinkwin.metrics import MetricGroup
from flinkwin.operator.firings import Firing
from flinkwin.operator.watermark_guard import check_event_timer, read_watermark
from flinkwin.state.backend import VOID_NAMESPACE, KeyedStateStore
from flinkwin.state.descriptors import StateDescriptor
from flinkwin.triggers.base import OnMergeContext, Trigger

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


class OperatorAssignerContext(WindowAssignerContext):
    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        self.overflow = op.overflow

    def get_current_processing_time(self) -> int:
        return self._op.current_processing_time

    def get_runtime_context(self) -> RuntimeContext:
        return self._op.runtime_context


class OperatorTriggerContext(OnMergeContext):
    """Flink's ``WindowOperator.Context``: timers and partitioned state for one (key, window)."""

    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        self.overflow = op.overflow  # the long-overflow policy (see flinkwin.longs)
        self.key: Any = None
        self.window: Any = None
        self.merged_windows: list[Any] | None = None
        self._user_trigger = not _builtin(op.trigger)

    def get_current_processing_time(self) -> int:
        return self._op.current_processing_time

    def get_current_watermark(self) -> int:
        # a built-in trigger compares it with times of its windows only (see watermark_guard)
        watermark = self._op.current_watermark
        return read_watermark(watermark) if self._user_trigger else watermark

    def get_metric_group(self) -> MetricGroup:
        """The operator's metric group, the one its functions' runtime context gives (as
        PyFlink's ``TriggerContext.get_metric_group``)."""
        return self._op.runtime_context.get_metrics_group()

    def register_processing_time_timer(self, time: int) -> None:
        self._op.processing_timers.register(time, self.key, self.window)

    def register_event_time_timer(self, time: int) -> None:
        check_event_timer(time)
        self._op.event_timers.register(time, self.key, self.window)

    def delete_processing_time_timer(self, time: int) -> None:
        self._op.processing_timers.delete(time, self.key, self.window)

    def delete_event_time_timer(self, time: int) -> None:
        self._op.event_timers.delete(time, self.key, self.window)

    def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any:
        return self._op.partitioned_state.handle(state_descriptor, self.key, self.window)

    def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None:
        if self.merged_windows:
            self._op.partitioned_state.merge_namespaces(
                state_descriptor, self.key, self.window, self.merged_windows
            )


class OperatorEvictorContext(EvictorContext):
    def __init__(self, op: WindowOperator) -> None:
        self._op = op
        self.overflow = op.overflow  # the long-overflow policy (see flinkwin.longs)

    def get_current_processing_time(self) -> int:
        return self._op.current_processing_time

    def get_current_watermark(self) -> int:
        return read_watermark(self._op.current_watermark)

    def get_metric_group(self) -> MetricGroup:
        """The operator's metric group (see ``OperatorTriggerContext.get_metric_group``)."""
        return self._op.runtime_context.get_metrics_group()


def _builtin(trigger: Trigger) -> bool:
    """``trigger`` is one of flinkwin's own (a ``PurgingTrigger`` of one included)."""
    while hasattr(trigger, "nested_trigger"):
        trigger = trigger.nested_trigger
    return type(trigger).__module__.startswith("flinkwin.triggers.")


class MergingWindowStateStore:
    """Per-window state under a merging assigner: refused, as in Flink (merged windows would
    silently lose it)."""

    def _refuse(self, *args: Any) -> Any:
        raise UnsupportedOperationError(
            "Per-window state is not allowed when using merging windows."
        )

    get_state = get_list_state = get_reducing_state = _refuse
    get_aggregating_state = get_map_state = _refuse
    getState = getListState = getReducingState = _refuse  # noqa: N815
    getAggregatingState = getMapState = _refuse  # noqa: N815


class ProcessContext(WindowContext):
    """What a ``ProcessWindowFunction`` sees: the window, the clocks, per-window and global state,
    and side outputs."""

    def __init__(self, op: WindowOperator, key: Any, window: Any) -> None:
        self._op = op
        self._key = key
        self._window = window

    def window(self) -> Any:
        return self._window

    def current_processing_time(self) -> int:
        return self._op.current_processing_time

    def current_watermark(self) -> int:
        return read_watermark(self._op.current_watermark)

    def window_state(self) -> KeyedStateStore | MergingWindowStateStore:
        if self._op.is_merging:
            return MergingWindowStateStore()
        return KeyedStateStore(self._op.function_state, self._key, ("window", self._window))

    def global_state(self) -> KeyedStateStore:
        return KeyedStateStore(self._op.function_state, self._key, VOID_NAMESPACE)

    def output(self, output_tag: Any, value: Any) -> None:
        self._op.emit_side(output_tag, value, self._window.max_timestamp())

    def firing(self) -> Firing:
        op = self._op
        if op.firings is None:
            raise IllegalStateError(
                "context.firing() needs firing metadata: build the window's result with "
                "with_firing=True (WindowOperator(..., firing_metadata=True) in the core API)"
            )
        if op.current_firing is None:
            raise IllegalStateError(
                "context.firing() is only available in process(), while a window fires"
            )
        return op.current_firing

