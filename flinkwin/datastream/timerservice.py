"""PyFlink's ``pyflink.datastream.timerservice``: ``TimerService``."""

from flinkwin.functions.process import TimerService

__all__ = ["TimerService"]
