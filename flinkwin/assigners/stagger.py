"""``WindowStagger``: how processing-time tumbling windows offset their start per operator."""

from __future__ import annotations

import random
from enum import Enum


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
