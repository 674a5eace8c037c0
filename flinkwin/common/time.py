"""PyFlink's ``pyflink.common.time``: ``Time`` and ``Duration`` (``Instant`` raises an
``ImportError`` saying what to use instead)."""

from typing import Any

from flinkwin.time import Duration, Time
from flinkwin.unsupported import missing


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)

__all__ = ["Duration", "Time"]
