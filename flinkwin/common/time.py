"""PyFlink's ``pyflink.common.time``: ``Time`` and ``Duration``."""

from flinkwin.time import Duration, Time

__all__ = ["Duration", "Time"]
