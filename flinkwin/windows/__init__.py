"""Windows: ``Window``, ``TimeWindow``, ``GlobalWindow``."""

from flinkwin.windows.global_window import GlobalWindow
from flinkwin.windows.time_window import TimeWindow
from flinkwin.windows.window import Window

__all__ = ["GlobalWindow", "TimeWindow", "Window"]
