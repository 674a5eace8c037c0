"""PyFlink's count-window assigners: ``CountTumblingWindowAssigner`` and
``CountSlidingWindowAssigner`` (what PyFlink's ``count_window`` uses).

Each key counts its elements in keyed state reached through
``context.get_runtime_context()`` (so the count survives snapshots); the n-th element (from 0)
goes to ``CountWindow(n // size)`` (tumbling) or to every ``CountWindow(i)`` whose range
``[i * slide, i * slide + size - 1]`` contains n (sliding). The default trigger fires a window
when it holds ``size`` elements, so a window fires once, full; a partial window never fires
(also not at the end of input). PyFlink's default is a non-purging ``CountTrigger(size)``; a
full count window never receives another element, so flinkwin purges it on firing
(``PurgingTrigger.of(CountTrigger.of(size))``): the same results, without keeping every fired
window in state forever.
"""

from __future__ import annotations

from typing import Any

from flinkwin.assigners.base import WindowAssigner, WindowAssignerContext
from flinkwin.state.descriptors import ValueStateDescriptor
from flinkwin.triggers.base import Trigger
from flinkwin.triggers.count import CountTrigger
from flinkwin.triggers.purging import PurgingTrigger
from flinkwin.types import Types
from flinkwin.windows import CountWindow, CountWindowSerializer


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{what} must be a positive int, got {value!r}")
    return value


def _next_count(context: WindowAssignerContext, descriptor: ValueStateDescriptor) -> int:
    """The element's position in its key (from 0); counts it."""
    state = context.get_runtime_context().get_state(descriptor)
    count = state.value()
    current = 0 if count is None else int(count)
    state.update(current + 1)
    return current


class CountTumblingWindowAssigner(WindowAssigner[Any, CountWindow]):
    """Windows of ``window_size`` consecutive elements per key (see module docstring)."""

    def __init__(self, window_size: int) -> None:
        self._window_size = _positive(window_size, "count window size")
        self._count_descriptor = ValueStateDescriptor("tumble-count-assigner", Types.LONG())

    @staticmethod
    def of(window_size: int) -> CountTumblingWindowAssigner:
        return CountTumblingWindowAssigner(window_size)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[CountWindow]:
        return [CountWindow(_next_count(context, self._count_descriptor) // self._window_size)]

    def get_default_trigger(self, env: Any = None) -> Trigger[Any, CountWindow]:
        return PurgingTrigger.of(CountTrigger.of(self._window_size))

    def get_window_serializer(self) -> CountWindowSerializer:
        return CountWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"CountTumblingWindowAssigner({self._window_size})"


class CountSlidingWindowAssigner(WindowAssigner[Any, CountWindow]):
    """Windows of ``window_size`` elements starting every ``window_slide`` elements per key;
    only full windows fire (see module docstring)."""

    def __init__(self, window_size: int, window_slide: int) -> None:
        self._window_size = _positive(window_size, "count window size")
        self._window_slide = _positive(window_slide, "count window slide")
        self._count_descriptor = ValueStateDescriptor("slide-count-assigner", Types.LONG())

    @staticmethod
    def of(window_size: int, window_slide: int) -> CountSlidingWindowAssigner:
        return CountSlidingWindowAssigner(window_size, window_slide)

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[CountWindow]:
        count = _next_count(context, self._count_descriptor)
        size, slide = self._window_size, self._window_slide
        last_id = count // slide
        # every window i with i * slide <= count <= i * slide + size - 1, newest first
        first_id = max(0, (count - size) // slide + 1)
        return [CountWindow(i) for i in range(last_id, first_id - 1, -1)]

    def get_default_trigger(self, env: Any = None) -> Trigger[Any, CountWindow]:
        return PurgingTrigger.of(CountTrigger.of(self._window_size))

    def get_window_serializer(self) -> CountWindowSerializer:
        return CountWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"CountSlidingWindowAssigner({self._window_size}, {self._window_slide})"
