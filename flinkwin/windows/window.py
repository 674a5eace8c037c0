"""``Window``: a grouping of elements into a finite bucket with a maximum timestamp."""

from __future__ import annotations

from abc import ABC, abstractmethod


class Window(ABC):
    """Flink's ``Window``: once the watermark passes ``max_timestamp()``, all elements are in."""

    @abstractmethod
    def max_timestamp(self) -> int:
        """The largest timestamp that still belongs to this window."""
