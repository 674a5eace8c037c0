"""``WindowAssigner`` and ``MergingWindowAssigner``: which windows an element belongs to."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from flinkwin.windows import Window

if TYPE_CHECKING:
    from flinkwin.triggers.base import Trigger

W = TypeVar("W", bound=Window)


class WindowAssignerContext(ABC):
    """Gives assigners the current processing time (for processing-time windows)."""

    @abstractmethod
    def get_current_processing_time(self) -> int:
        """The operator's current processing time in milliseconds."""

    def get_runtime_context(self) -> Any:
        return None


class WindowAssigner(ABC, Generic[W]):
    """Assigns zero or more windows to each element.

    Subclass it and implement ``assign_windows``, ``get_default_trigger`` and ``is_event_time``
    (seed 001's ``ThirtySecondsWindows`` is five lines). Elements with the same key and window form
    a pane; each pane has its own trigger.
    """

    @abstractmethod
    def assign_windows(
        self, element: Any, timestamp: int, context: WindowAssignerContext
    ) -> Collection[W]:
        """The windows ``element`` (with event ``timestamp``) belongs to."""

    @abstractmethod
    def get_default_trigger(self, env: Any = None) -> Trigger:
        """The trigger used when the pipeline sets none."""

    @abstractmethod
    def is_event_time(self) -> bool:
        """True if windows are based on event time (then lateness and cleanup use the watermark)."""

    def get_window_serializer(self, *args: Any) -> None:
        """Windows are serialised generically; kept for PyFlink source compatibility."""
        return None


class MergeCallback(ABC, Generic[W]):
    """Receives the merges a ``MergingWindowAssigner`` decides on."""

    @abstractmethod
    def merge(self, to_be_merged: Iterable[W], merge_result: W) -> None:
        """``to_be_merged`` windows become ``merge_result``."""


class MergingWindowAssigner(WindowAssigner[W]):
    """A ``WindowAssigner`` whose windows can merge (sessions)."""

    @abstractmethod
    def merge_windows(self, windows: Iterable[W], callback: MergeCallback[W]) -> None:
        """Decide which of ``windows`` merge; report each merge through ``callback``."""


# PyFlink spells these ``WindowAssigner.WindowAssignerContext`` and
# ``MergingWindowAssigner.MergeCallback``.
setattr(WindowAssigner, "WindowAssignerContext", WindowAssignerContext)  # noqa: B010
setattr(MergingWindowAssigner, "MergeCallback", MergeCallback)  # noqa: B010
