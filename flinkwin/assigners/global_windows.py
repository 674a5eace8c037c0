"""``GlobalWindows``: every element goes to the single ``GlobalWindow``."""

from __future__ import annotations

from typing import Any

from flinkwin.assigners.base import WindowAssigner, WindowAssignerContext
from flinkwin.windows import GlobalWindow, GlobalWindowSerializer


class GlobalWindows(WindowAssigner[Any, GlobalWindow]):
    """All elements of a key share one window that never ends on its own.

    Default trigger: ``NeverTrigger`` (so a trigger must be set), or, with
    ``createWithEndOfStreamTrigger()``, a trigger that fires once at the end of input.
    """

    def __init__(self, default_trigger: Any = None) -> None:
        self._default_trigger = default_trigger

    @staticmethod
    def create() -> GlobalWindows:
        return GlobalWindows()

    @staticmethod
    def createWithEndOfStreamTrigger() -> GlobalWindows:  # noqa: N802 (Flink name)
        from flinkwin.triggers.never import EndOfStreamTrigger

        return GlobalWindows(EndOfStreamTrigger())

    create_with_end_of_stream_trigger = createWithEndOfStreamTrigger

    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> list[GlobalWindow]:
        return [GlobalWindow.get()]

    def get_default_trigger(self, env: Any = None) -> Any:
        from flinkwin.triggers.never import NeverTrigger

        return self._default_trigger if self._default_trigger is not None else NeverTrigger()

    def get_window_serializer(self) -> GlobalWindowSerializer:
        return GlobalWindowSerializer()

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "GlobalWindows()"
