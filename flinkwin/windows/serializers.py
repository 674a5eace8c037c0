"""Window serializers as PyFlink declares them (``TypeSerializer[W]`` with ``serialize(element,
stream)`` / ``deserialize(stream)`` over a binary stream), in Flink's binary layout: a
``TimeWindow`` is its start and end as big-endian longs, a ``CountWindow`` its id, a
``GlobalWindow`` one zero byte.

flinkwin's own snapshots do not need them; they exist so that assigners written for PyFlink
(``get_window_serializer()``) and code that serializes windows port unchanged.
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from typing import BinaryIO, Generic, TypeVar

from flinkwin.windows.count_window import CountWindow
from flinkwin.windows.global_window import GlobalWindow
from flinkwin.windows.time_window import TimeWindow

T = TypeVar("T")
_LONG = struct.Struct(">q")
_TWO_LONGS = struct.Struct(">qq")


class TypeSerializer(ABC, Generic[T]):
    """Writes values of one type to, and reads them from, a binary stream."""

    @abstractmethod
    def serialize(self, element: T, stream: BinaryIO) -> None: ...

    @abstractmethod
    def deserialize(self, stream: BinaryIO) -> T: ...

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _read(stream: BinaryIO, size: int, what: str) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise EOFError(f"{what}: expected {size} bytes, got {len(data)}")
    return data


class TimeWindowSerializer(TypeSerializer[TimeWindow]):
    """A ``TimeWindow`` as 16 bytes: start, end."""

    def serialize(self, element: TimeWindow, stream: BinaryIO) -> None:
        stream.write(_TWO_LONGS.pack(element.start, element.end))

    def deserialize(self, stream: BinaryIO) -> TimeWindow:
        start, end = _TWO_LONGS.unpack(_read(stream, 16, "TimeWindow"))
        return TimeWindow(start, end)


class CountWindowSerializer(TypeSerializer[CountWindow]):
    """A ``CountWindow`` as 8 bytes: its id."""

    def serialize(self, element: CountWindow, stream: BinaryIO) -> None:
        stream.write(_LONG.pack(element.id))

    def deserialize(self, stream: BinaryIO) -> CountWindow:
        return CountWindow(_LONG.unpack(_read(stream, 8, "CountWindow"))[0])


class GlobalWindowSerializer(TypeSerializer[GlobalWindow]):
    """The ``GlobalWindow`` as one zero byte."""

    def serialize(self, element: GlobalWindow, stream: BinaryIO) -> None:
        stream.write(b"\x00")

    def deserialize(self, stream: BinaryIO) -> GlobalWindow:
        _read(stream, 1, "GlobalWindow")
        return GlobalWindow.get()
