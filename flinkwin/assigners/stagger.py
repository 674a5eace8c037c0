"""``WindowStagger``: how tumbling windows offset their start per operator, and the fixed offset
a pipeline carries (:class:`StaggeredAssigner`)."""

from __future__ import annotations

import copy
import random
from enum import Enum
from typing import Any, TypeVar


class WindowStagger(Enum):
    """ALIGNED (no stagger), RANDOM (uniform in [0, size)), NATURAL (first element's offset)."""

    ALIGNED = "ALIGNED"
    RANDOM = "RANDOM"
    NATURAL = "NATURAL"

    def get_stagger_offset(self, current_processing_time: int, size: int) -> int:
        if self is WindowStagger.ALIGNED:
            return 0
        if self is WindowStagger.RANDOM:
            return int(random.random() * size)
        from flinkwin.windows import TimeWindow

        window_start = TimeWindow.get_window_start_with_offset(current_processing_time, 0, size)
        return max(0, current_processing_time - window_start)

    getStaggerOffset = get_stagger_offset  # noqa: N815


S = TypeVar("S", bound="StaggeredAssigner")


class StaggeredAssigner:
    """The stagger offset of a tumbling assigner.

    As in Flink, an assigner whose offset is not fixed draws it from its ``WindowStagger`` at
    its first element (``assign_windows``) and keeps it for its lifetime. The drawn offset is
    part of the object, so it survives pickling; :meth:`with_fixed_stagger` draws it up front
    (flinkwin does so when a pipeline is built, so every Spark task and every micro-batch
    unpickles the same offset) and :meth:`with_stagger_offset` sets a recorded one (a restart
    from a checkpoint reuses the offset recorded there).
    """

    size: int
    window_stagger: WindowStagger
    _stagger_offset: int | None

    @property
    def stagger_offset(self) -> int | None:
        """The stagger offset in milliseconds, or None while not drawn yet."""
        return self._stagger_offset

    def with_stagger_offset(self: S, offset: int) -> S:
        """A copy of this assigner using the stagger ``offset`` (``0 <= offset < size``)."""
        if not isinstance(offset, int) or isinstance(offset, bool) or not 0 <= offset < self.size:
            raise ValueError(
                f"a stagger offset must be an int in [0, {self.size}), got {offset!r}"
            )
        fixed = copy.copy(self)
        fixed._stagger_offset = offset
        return fixed

    def with_fixed_stagger(self: S, current_processing_time: int) -> S:
        """This assigner with its stagger offset drawn now (itself when already drawn)."""
        if self._stagger_offset is not None:
            return self
        return self.with_stagger_offset(
            self.window_stagger.get_stagger_offset(current_processing_time, self.size)
        )

    def _draw_stagger_offset(self, current_processing_time: int) -> int:
        if self._stagger_offset is None:
            self._stagger_offset = self.window_stagger.get_stagger_offset(
                current_processing_time, self.size
            )
        return self._stagger_offset

    withStaggerOffset = with_stagger_offset  # noqa: N815
    withFixedStagger = with_fixed_stagger  # noqa: N815


def fix_stagger(assigner: Any, current_processing_time: int) -> Any:
    """``assigner`` with a fixed stagger offset when it has a stagger, else itself."""
    if isinstance(assigner, StaggeredAssigner):
        return assigner.with_fixed_stagger(current_processing_time)
    return assigner
