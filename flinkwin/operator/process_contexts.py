"""The contexts and timer services a ``(Keyed)ProcessFunction`` sees in the process operators
(:mod:`flinkwin.operator.keyed_process_operator`): re-pointed at the element or timer before each
call, valid during it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flinkwin.errors import IllegalStateError, UnsupportedOperationError
from flinkwin.functions.process import (
    KeyedProcessFunction,
    ProcessFunction,
    TimeDomain,
    TimerService,
)
from flinkwin.keys import user_key
from flinkwin.operator.watermark_guard import check_event_timer, read_watermark
from flinkwin.output_tag import OutputTag
from flinkwin.state.backend import VOID_NAMESPACE
from flinkwin.time import MAX_LONG, MIN_LONG

if TYPE_CHECKING:
    from flinkwin.operator.keyed_process_operator import KeyedProcessOperator, ProcessOperator

#: Flink's ``TimerService.UNSUPPORTED_REGISTER_TIMER_MSG``.
UNSUPPORTED_REGISTER_TIMER_MSG = "Setting timers is only supported on a keyed streams."
#: Flink's ``TimerService.UNSUPPORTED_DELETE_TIMER_MSG``.
UNSUPPORTED_DELETE_TIMER_MSG = "Deleting timers is only supported on a keyed streams."


def _timer_time(timestamp: Any) -> int:
    """A timer's timestamp as a Java long, or a clear error."""
    if isinstance(timestamp, bool) or not hasattr(timestamp, "__index__"):
        raise TypeError(
            "a timer's timestamp must be an int (epoch milliseconds), got "
            f"{type(timestamp).__name__}: {timestamp!r}"
        )
    time = int(timestamp)
    if not MIN_LONG <= time <= MAX_LONG:
        raise ValueError(f"a timer's timestamp must be a Java long, got {time}")
    return time


def _check_tag(output_tag: Any) -> OutputTag:
    if output_tag is None:
        raise ValueError("OutputTag must not be null.")
    if not isinstance(output_tag, OutputTag):
        raise TypeError(f"output(tag, value) needs an OutputTag, got {type(output_tag).__name__}")
    return output_tag


class KeyedTimerService(TimerService):
    """Timers of the operator's current key (Flink's ``SimpleTimerService``)."""

    def __init__(self, op: KeyedProcessOperator) -> None:
        self._op = op

    def current_processing_time(self) -> int:
        return self._op.current_processing_time

    def current_watermark(self) -> int:
        return read_watermark(self._op.current_watermark)

    def register_processing_time_timer(self, timestamp: int) -> None:
        self._op.processing_timers.register(
            _timer_time(timestamp), self._op.current_key, VOID_NAMESPACE)

    def register_event_time_timer(self, timestamp: int) -> None:
        check_event_timer(_timer_time(timestamp))
        self._op.event_timers.register(_timer_time(timestamp), self._op.current_key, VOID_NAMESPACE)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        self._op.processing_timers.delete(
            _timer_time(timestamp), self._op.current_key, VOID_NAMESPACE)

    def delete_event_time_timer(self, timestamp: int) -> None:
        self._op.event_timers.delete(_timer_time(timestamp), self._op.current_key, VOID_NAMESPACE)


class KeyedContext(KeyedProcessFunction.Context, ProcessFunction.Context):
    """The context of ``process_element`` on a keyed stream."""

    def __init__(self, op: KeyedProcessOperator, timers: TimerService) -> None:
        self._op = op
        self._timers = timers
        self.active = False
        self.element_timestamp: int | None = None

    def timer_service(self) -> TimerService:
        return self._timers

    def timestamp(self) -> int | None:
        if not self.active:
            raise IllegalStateError("the context is only valid during process_element")
        return self.element_timestamp

    def get_current_key(self) -> Any:
        return user_key(self._op.current_key)

    def output(self, output_tag: Any, value: Any) -> None:
        ts = self.element_timestamp
        self._op.emit_side(_check_tag(output_tag), value, MIN_LONG if ts is None else ts)


class KeyedOnTimerContext(KeyedProcessFunction.OnTimerContext, ProcessFunction.OnTimerContext):
    """The context of ``on_timer``: the firing timer's timestamp, time domain and key."""

    def __init__(self, op: KeyedProcessOperator, timers: TimerService) -> None:
        self._op = op
        self._timers = timers
        self.domain: TimeDomain | None = None
        self.timer_timestamp = MIN_LONG

    def timer_service(self) -> TimerService:
        return self._timers

    def _check(self) -> None:
        if self.domain is None:
            raise IllegalStateError("the timer context is only valid during on_timer")

    def timestamp(self) -> int:
        self._check()
        return self.timer_timestamp

    def time_domain(self) -> TimeDomain:
        self._check()
        assert self.domain is not None
        return self.domain

    def get_current_key(self) -> Any:
        return user_key(self._op.current_key)

    def output(self, output_tag: Any, value: Any) -> None:
        self._op.emit_side(_check_tag(output_tag), value, self.timer_timestamp)


class NonKeyedContext(ProcessFunction.Context, TimerService):
    """The context of ``process_element`` on a non-keyed stream: it is its own timer service,
    which queries time and refuses timers (Flink's ``ProcessOperator.ContextImpl``)."""

    def __init__(self, op: ProcessOperator) -> None:
        self._op = op
        self.active = False
        self.element_timestamp: int | None = None

    def timer_service(self) -> TimerService:
        return self

    def timestamp(self) -> int | None:
        if not self.active:
            raise IllegalStateError("the context is only valid during process_element")
        return self.element_timestamp

    def output(self, output_tag: Any, value: Any) -> None:
        ts = self.element_timestamp
        self._op.emit_side(_check_tag(output_tag), value, MIN_LONG if ts is None else ts)

    def current_processing_time(self) -> int:
        return self._op.current_processing_time

    def current_watermark(self) -> int:
        return read_watermark(self._op.current_watermark)

    def register_processing_time_timer(self, timestamp: int) -> None:
        raise UnsupportedOperationError(UNSUPPORTED_REGISTER_TIMER_MSG)

    def register_event_time_timer(self, timestamp: int) -> None:
        raise UnsupportedOperationError(UNSUPPORTED_REGISTER_TIMER_MSG)

    def delete_processing_time_timer(self, timestamp: int) -> None:
        raise UnsupportedOperationError(UNSUPPORTED_DELETE_TIMER_MSG)

    def delete_event_time_timer(self, timestamp: int) -> None:
        raise UnsupportedOperationError(UNSUPPORTED_DELETE_TIMER_MSG)


__all__ = [
    "UNSUPPORTED_DELETE_TIMER_MSG",
    "UNSUPPORTED_REGISTER_TIMER_MSG",
    "KeyedContext",
    "KeyedOnTimerContext",
    "KeyedTimerService",
    "NonKeyedContext",
]
