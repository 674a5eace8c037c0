"""``ProcessFunction`` and ``KeyedProcessFunction`` with PyFlink's Python signatures, their
contexts, the ``TimerService`` and ``TimeDomain``.

- ``process_element(self, value, ctx)`` runs for every element and returns (or yields) its
  outputs: an iterable, or None for none.
- ``on_timer(self, timestamp, ctx)`` runs when a timer registered through
  ``ctx.timer_service()`` fires, with the timer's key current; it returns outputs the same way.
- An output ``(output_tag, value)`` (an :class:`~flinkwin.output_tag.OutputTag` and a value) goes
  to that side output, as in PyFlink; ``ctx.output(output_tag, value)`` (Java's way) does the
  same.

Timers and keyed state (``self.get_runtime_context().get_state(...)``, or a handle kept from
``open``) are scoped to the key of the element or timer being processed, so they need a keyed
stream; a ``ProcessFunction`` on a non-keyed stream can query time but not set timers (Flink's
"Setting timers is only supported on a keyed streams."). The operators that run them are
:class:`~flinkwin.operator.keyed_process_operator.KeyedProcessOperator` and
:class:`~flinkwin.operator.keyed_process_operator.ProcessOperator`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from enum import Enum
from typing import Any, Generic, TypeVar

from flinkwin.functions.base import Function

IN = TypeVar("IN")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")


class TimeDomain(Enum):
    """Whether a firing timer is based on event time or processing time
    (``pyflink.datastream.time_domain.TimeDomain``)."""

    EVENT_TIME = 0
    PROCESSING_TIME = 1


class TimerService(ABC):
    """Querying time and registering timers (``pyflink.datastream.timerservice.TimerService``).

    Timers are scoped to the current key: registering the same (key, timestamp) twice makes one
    timer; deleting a timer that does not exist (or already fired) does nothing."""

    @abstractmethod
    def current_processing_time(self) -> int:
        """The current processing time (milliseconds)."""

    @abstractmethod
    def current_watermark(self) -> int:
        """The current event-time watermark (``Long.MIN_VALUE`` before the first one)."""

    @abstractmethod
    def register_processing_time_timer(self, timestamp: int) -> None:
        """A timer firing when processing time reaches ``timestamp``."""

    @abstractmethod
    def register_event_time_timer(self, timestamp: int) -> None:
        """A timer firing when the watermark reaches ``timestamp``."""

    def delete_processing_time_timer(self, timestamp: int) -> None:
        """Delete the current key's processing-time timer at ``timestamp``, if any."""
        return None

    def delete_event_time_timer(self, timestamp: int) -> None:
        """Delete the current key's event-time timer at ``timestamp``, if any."""
        return None

    def currentProcessingTime(self) -> int:  # noqa: N802 (Java names)
        return self.current_processing_time()

    def currentWatermark(self) -> int:  # noqa: N802
        return self.current_watermark()

    def registerProcessingTimeTimer(self, timestamp: int) -> None:  # noqa: N802
        self.register_processing_time_timer(timestamp)

    def registerEventTimeTimer(self, timestamp: int) -> None:  # noqa: N802
        self.register_event_time_timer(timestamp)

    def deleteProcessingTimeTimer(self, timestamp: int) -> None:  # noqa: N802
        self.delete_processing_time_timer(timestamp)

    def deleteEventTimeTimer(self, timestamp: int) -> None:  # noqa: N802
        self.delete_event_time_timer(timestamp)


class _BaseContext(ABC):
    """What every process-function context offers (PyFlink's, plus Java's ``output``)."""

    @abstractmethod
    def timer_service(self) -> TimerService:
        """The timer service, for querying time and registering timers."""

    @abstractmethod
    def timestamp(self) -> int | None:
        """The timestamp of the element being processed (None when it has none), or of the
        firing timer."""

    @abstractmethod
    def output(self, output_tag: Any, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag`` (Java's ``ctx.output``; yielding
        ``(output_tag, value)`` does the same)."""

    def timerService(self) -> TimerService:  # noqa: N802 (Java names)
        return self.timer_service()


class ProcessFunction(Function, Generic[IN, OUT]):
    """Processes each element of a stream (``pyflink.datastream.functions.ProcessFunction``).

    PyFlink's ``KeyedStream.process`` takes a ``KeyedProcessFunction`` only; the keyed process
    operator also runs a ``ProcessFunction`` keyed (as Java's
    ``KeyedStream.process(ProcessFunction)``), with timers, keyed state and ``on_timer`` (Java's
    ``onTimer``)."""

    _java_hooks = {"processElement": "process_element", "onTimer": "on_timer"}

    class Context(_BaseContext):
        """Information available in ``process_element`` (and ``on_timer``)."""

    class OnTimerContext(Context):
        """Information available in ``on_timer`` (Java's)."""

        @abstractmethod
        def time_domain(self) -> TimeDomain:
            """The time domain of the firing timer."""

        def timeDomain(self) -> TimeDomain:  # noqa: N802 (Java names)
            return self.time_domain()

    @abstractmethod
    def process_element(self, value: IN, ctx: ProcessFunction.Context) -> Iterable[OUT] | None:
        """Process one element; return (or yield) its outputs."""

    def on_timer(self, timestamp: int, ctx: ProcessFunction.OnTimerContext) -> Iterable[OUT] | None:
        """Called when a timer fires (keyed streams only); return (or yield) outputs."""
        return None


class KeyedProcessFunction(Function, Generic[KEY, IN, OUT]):
    """Processes each element of a keyed stream, with timers and keyed state scoped to the
    element's key (``pyflink.datastream.functions.KeyedProcessFunction``)."""

    _java_hooks = {"processElement": "process_element", "onTimer": "on_timer"}

    class Context(_BaseContext):
        """Information available in ``process_element``."""

        @abstractmethod
        def get_current_key(self) -> Any:
            """The key of the element being processed (or of the firing timer)."""

        def getCurrentKey(self) -> Any:  # noqa: N802 (Java names)
            return self.get_current_key()

    class OnTimerContext(Context):
        """Information available in ``on_timer``."""

        @abstractmethod
        def time_domain(self) -> TimeDomain:
            """The time domain of the firing timer."""

        def timeDomain(self) -> TimeDomain:  # noqa: N802 (Java names)
            return self.time_domain()

    @abstractmethod
    def process_element(
        self, value: IN, ctx: KeyedProcessFunction.Context
    ) -> Iterable[OUT] | None:
        """Process one element; return (or yield) its outputs."""

    def on_timer(
        self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext
    ) -> Iterable[OUT] | None:
        """Called when a timer set with ``ctx.timer_service()`` fires; return (or yield)
        outputs."""
        return None


__all__ = ["KeyedProcessFunction", "ProcessFunction", "TimeDomain", "TimerService"]
