"""``Trigger``: decides when a pane (the elements of one key and window) is evaluated or purged.

A trigger is called for every element added to a pane (``on_element``) and when a timer it
registered fires (``on_event_time`` once the watermark reaches the timer, ``on_processing_time``
once the clock does). Each call returns a :class:`TriggerResult`. Triggers keep no state in
``self``: per-pane state goes through ``ctx.get_partitioned_state(descriptor)``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import Any, Generic, TypeAlias, TypeVar

from flinkwin.java_hooks import JavaNamedHooks
from flinkwin.state.descriptors import StateDescriptor

T = TypeVar("T")
W = TypeVar("W")


class TriggerResult(Enum):
    """What happens to the window after a trigger call.

    CONTINUE: nothing. FIRE: evaluate the window function and emit; keep the contents.
    PURGE: discard the contents without emitting. FIRE_AND_PURGE: emit, then discard.
    A FIRE on a window without contents emits nothing.
    """

    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        return self.value[0]

    def is_purge(self) -> bool:
        return self.value[1]

    isFire = is_fire  # noqa: N815
    isPurge = is_purge  # noqa: N815

    @staticmethod
    def merge(a: TriggerResult, b: TriggerResult) -> TriggerResult:
        fire = a.is_fire() or b.is_fire()
        purge = a.is_purge() or b.is_purge()
        return TriggerResult((fire, purge))


class TriggerContext(ABC):
    """What a trigger may do: read the clocks, (de)register timers, reach per-pane state."""

    @abstractmethod
    def get_current_processing_time(self) -> int: ...

    @abstractmethod
    def get_current_watermark(self) -> int: ...

    @abstractmethod
    def register_processing_time_timer(self, time: int) -> None: ...

    @abstractmethod
    def register_event_time_timer(self, time: int) -> None: ...

    @abstractmethod
    def delete_processing_time_timer(self, time: int) -> None: ...

    @abstractmethod
    def delete_event_time_timer(self, time: int) -> None: ...

    @abstractmethod
    def get_partitioned_state(self, state_descriptor: StateDescriptor) -> Any: ...

    def get_metric_group(self) -> Any:
        return None

    def getCurrentProcessingTime(self) -> int:  # noqa: N802 (Java name)
        return self.get_current_processing_time()

    def getMetricGroup(self) -> Any:  # noqa: N802 (Java name)
        return self.get_metric_group()

    def getCurrentWatermark(self) -> int:  # noqa: N802
        return self.get_current_watermark()

    def registerProcessingTimeTimer(self, time: int) -> None:  # noqa: N802
        self.register_processing_time_timer(time)

    def registerEventTimeTimer(self, time: int) -> None:  # noqa: N802
        self.register_event_time_timer(time)

    def deleteProcessingTimeTimer(self, time: int) -> None:  # noqa: N802
        self.delete_processing_time_timer(time)

    def deleteEventTimeTimer(self, time: int) -> None:  # noqa: N802
        self.delete_event_time_timer(time)

    def getPartitionedState(self, state_descriptor: StateDescriptor) -> Any:  # noqa: N802
        return self.get_partitioned_state(state_descriptor)


class OnMergeContext(TriggerContext):
    """The context of ``on_merge``: can also merge the merged windows' partitioned state."""

    @abstractmethod
    def merge_partitioned_state(self, state_descriptor: StateDescriptor) -> None: ...

    def mergePartitionedState(self, state_descriptor: StateDescriptor) -> None:  # noqa: N802
        self.merge_partitioned_state(state_descriptor)


class Trigger(JavaNamedHooks, ABC, Generic[T, W]):
    """Base class of all triggers, with PyFlink's method names and signatures
    (``Trigger[T, W]``: element type, window type)."""

    TriggerContext: TypeAlias = TriggerContext
    OnMergeContext: TypeAlias = OnMergeContext
    _java_hooks = {"onElement": "on_element", "onProcessingTime": "on_processing_time",
                   "onEventTime": "on_event_time", "canMerge": "can_merge", "onMerge": "on_merge"}

    @abstractmethod
    def on_element(
        self, element: T, timestamp: int, window: W, ctx: TriggerContext
    ) -> TriggerResult:
        """Called for every element added to a pane."""

    @abstractmethod
    def on_processing_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        """Called when a processing-time timer registered by this trigger fires."""

    @abstractmethod
    def on_event_time(self, time: int, window: W, ctx: TriggerContext) -> TriggerResult:
        """Called when an event-time timer registered by this trigger fires."""

    def can_merge(self) -> bool:
        """True if the trigger supports merging windows (then ``on_merge`` must be implemented)."""
        return False

    def on_merge(self, window: W, ctx: OnMergeContext) -> None:
        """Called when windows merged into ``window``; re-register timers, merge state."""
        raise NotImplementedError("This trigger does not support merging.")

    def clear(self, window: W, ctx: TriggerContext) -> None:
        """Remove all timers and state this trigger holds for ``window`` (called at cleanup)."""
        return None

