"""``WindowAssigner`` and ``MergingWindowAssigner``: which windows an element belongs to."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeAlias, TypeVar

from flinkwin.java_hooks import JavaNamedHooks

if TYPE_CHECKING:
    from flinkwin.functions.runtime_context import RuntimeContext
    from flinkwin.triggers.base import Trigger
    from flinkwin.windows.serializers import TypeSerializer

T = TypeVar("T")
W = TypeVar("W")


class WindowAssignerContext(ABC):
    """Gives assigners the current processing time, the runtime context (whose keyed state
    is scoped to the key of the element being assigned; PyFlink's count assigners keep their
    counters there) and the operator's long-overflow policy ``overflow`` (see
    :mod:`flinkwin.longs`)."""

    overflow: str = "wrap"

    @abstractmethod
    def get_current_processing_time(self) -> int:
        """The operator's current processing time in milliseconds."""

    def get_runtime_context(self) -> RuntimeContext:
        """The operator's runtime context (keyed state of the current key). The operator's
        context provides it; a hand-written context (in tests) without one raises."""
        raise NotImplementedError(
            f"{type(self).__name__} has no runtime context (count assigners need the window "
            "operator's context)"
        )

    def getCurrentProcessingTime(self) -> int:  # noqa: N802 (Java name)
        return self.get_current_processing_time()


def overflow_of(context: Any) -> str:
    """The long-overflow policy of an assigner context (``"wrap"`` for contexts without one)."""
    return getattr(context, "overflow", "wrap")


class MergeCallback(ABC, Generic[W]):
    """Receives the merges a ``MergingWindowAssigner`` decides on."""

    @abstractmethod
    def merge(self, to_be_merged: Iterable[W], merge_result: W) -> None:
        """``to_be_merged`` windows become ``merge_result``."""


class WindowAssigner(JavaNamedHooks, ABC, Generic[T, W]):
    """Assigns zero or more windows to each element (``WindowAssigner[T, W]``: element type,
    window type, as PyFlink declares it).

    Subclass it and implement ``assign_windows``, ``get_default_trigger`` and ``is_event_time``
    (seed 001's ``ThirtySecondsWindows`` is five lines). Elements with the same key and window form
    a pane; each pane has its own trigger.
    """

    WindowAssignerContext: TypeAlias = WindowAssignerContext
    _java_hooks = {"assignWindows": "assign_windows", "getDefaultTrigger": "get_default_trigger",
                   "isEventTime": "is_event_time", "getWindowSerializer": "get_window_serializer"}

    @abstractmethod
    def assign_windows(
        self, element: T, timestamp: int, context: WindowAssignerContext
    ) -> Collection[W]:
        """The windows ``element`` (with event ``timestamp``) belongs to."""

    @abstractmethod
    def get_default_trigger(self, env: Any) -> Trigger[T, W]:
        """The trigger used when the pipeline sets none (``env`` is PyFlink's execution
        environment argument; flinkwin passes None)."""

    @abstractmethod
    def is_event_time(self) -> bool:
        """True if windows are based on event time (then lateness and cleanup use the watermark)."""

    def get_window_serializer(self) -> TypeSerializer[W] | None:
        """The serializer of this assigner's windows (PyFlink's API). flinkwin's snapshots encode
        windows themselves, so an assigner that does not override this returns None."""
        return None


class MergingWindowAssigner(WindowAssigner[T, W]):
    """A ``WindowAssigner`` whose windows can merge (sessions)."""

    MergeCallback: TypeAlias = MergeCallback
    _java_hooks = {"mergeWindows": "merge_windows"}

    @abstractmethod
    def merge_windows(self, windows: Iterable[W], callback: MergeCallback[W]) -> None:
        """Decide which of ``windows`` merge; report each merge through ``callback``."""


def default_trigger(assigner: WindowAssigner[Any, Any]) -> Trigger[Any, Any]:
    """``assigner``'s default trigger, called as the assigner declares it: PyFlink's
    ``get_default_trigger(env)`` (given None), or a Java-style ``get_default_trigger()``."""
    method = assigner.get_default_trigger
    try:
        parameters = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return method(None)
    takes_env = any(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        for p in parameters
    )
    return method(None) if takes_env else method()  # type: ignore[call-arg]
