"""``GlobalWindow``: the single window every element of ``GlobalWindows`` belongs to."""

from __future__ import annotations

from typing import Any

from flinkwin.time import MAX_LONG
from flinkwin.windows.window import Window


class GlobalWindow(Window):
    """The singleton global window; its max timestamp is ``Long.MAX_VALUE``."""

    _INSTANCE: GlobalWindow | None = None

    def __new__(cls) -> GlobalWindow:
        if cls._INSTANCE is None:
            cls._INSTANCE = super().__new__(cls)
        return cls._INSTANCE

    @staticmethod
    def get() -> GlobalWindow:
        return GlobalWindow()

    def max_timestamp(self) -> int:
        return MAX_LONG

    maxTimestamp = max_timestamp  # noqa: N815

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GlobalWindow)

    def __hash__(self) -> int:
        return 0

    def __lt__(self, other: object) -> bool:
        return False

    def __repr__(self) -> str:
        return "GlobalWindow"

    def __reduce__(self) -> tuple[Any, ...]:
        return (GlobalWindow, ())
