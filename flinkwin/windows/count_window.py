"""``CountWindow``: the window of PyFlink's count assigners, named by a running id."""

from __future__ import annotations

from typing import Any

from flinkwin.time import MAX_LONG
from flinkwin.windows.window import Window


class CountWindow(Window):
    """A count window with a unique ``id`` (the n-th window of a key); its max timestamp is
    ``Long.MAX_VALUE``, so it has no cleanup time."""

    __slots__ = ("id",)

    def __init__(self, id: int) -> None:  # noqa: A002 (PyFlink's parameter name)
        self.id = int(id)

    def max_timestamp(self) -> int:
        return MAX_LONG

    maxTimestamp = max_timestamp  # noqa: N815

    def get_id(self) -> int:
        return self.id

    getId = get_id  # noqa: N815

    def __eq__(self, other: object) -> bool:
        return type(other) is CountWindow and other.id == self.id

    def __hash__(self) -> int:
        return hash(("CountWindow", self.id))

    def __lt__(self, other: CountWindow) -> bool:
        return self.id < other.id

    def __repr__(self) -> str:
        return f"CountWindow(id={self.id})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (CountWindow, (self.id,))
