"""Windows: ``Window``, ``TimeWindow``, ``GlobalWindow``, ``CountWindow`` and their
serializers."""

from flinkwin.windows.count_window import CountWindow
from flinkwin.windows.global_window import GlobalWindow
from flinkwin.windows.serializers import (
    CountWindowSerializer,
    GlobalWindowSerializer,
    TimeWindowSerializer,
    TypeSerializer,
)
from flinkwin.windows.time_window import TimeWindow
from flinkwin.windows.window import Window

__all__ = [
    "CountWindow",
    "CountWindowSerializer",
    "GlobalWindow",
    "GlobalWindowSerializer",
    "TimeWindow",
    "TimeWindowSerializer",
    "TypeSerializer",
    "Window",
]
