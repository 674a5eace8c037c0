"""Where a runtime knows Flink's watermark only up to "``MIN_LONG`` or at/before the epoch".

A runtime may run operators under ``MIN_LONG`` while Flink's watermark is in fact ``MIN_LONG``
or some value ``<= 0`` it cannot tell apart (Spark's watermark cannot go below 0: see
:mod:`flinkwin.spark.watermarks`). That is exact for everything an operator decides from
elements, windows and timers after the epoch, but not for what user code sees, so for the
duration of such a call (:func:`uncertain_watermark`):

* a read of the watermark by user code (process functions' ``current_watermark()``, a
  ``ProcessWindowFunction``'s context, a user trigger or evictor) that would return
  ``MIN_LONG`` fails (:func:`read_watermark`); a value above ``MIN_LONG`` is exact (an
  operator's own watermark, e.g. a graph source's);
* an event-time timer at or before the epoch, registered then or still pending, fails
  (:func:`check_event_timer`): whether it is due is exactly what the runtime cannot tell.

Both fail with :class:`UncertainWatermarkError`, whose message names the runtime's remedy.
Outside such a call nothing is checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from flinkwin.time import MIN_LONG


class UncertainWatermarkError(RuntimeError):
    """User code needs a watermark (or timer) the runtime cannot tell exactly."""


@dataclass(frozen=True)
class Uncertainty:
    """The watermark is ``MIN_LONG`` or some value ``<= 0``, and what the user can do."""

    #: what to do instead (e.g. the declaration that makes the watermark exact)
    remedy: str


_CURRENT: ContextVar[Uncertainty | None] = ContextVar("flinkwin_uncertain_watermark", default=None)


@contextmanager
def uncertain_watermark(uncertainty: Uncertainty | None) -> Iterator[None]:
    """Run the block under ``uncertainty`` (None: everything is exact)."""
    token = _CURRENT.set(uncertainty)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def read_watermark(value: int) -> int:
    """``value``, an operator's watermark as user code reads it (see module docstring)."""
    if value != MIN_LONG:
        return value
    current = _CURRENT.get()
    if current is not None:
        raise UncertainWatermarkError(
            "user code read the current watermark while it is uncertain: every event time "
            "so far is within the watermark's delay of 1970-01-01T00:00:00Z, so Flink's "
            "watermark is either Long.MIN_VALUE or a time at or before the epoch, which this "
            f"runtime cannot tell apart. {current.remedy}"
        )
    return value


def check_event_timer(time: int) -> None:
    """Refuse an event-time timer at ``time`` the runtime could not fire exactly."""
    if time > 0:
        return
    current = _CURRENT.get()
    if current is not None:
        raise UncertainWatermarkError(
            f"an event-time timer at {time} (at or before 1970-01-01T00:00:00Z) meets an "
            "uncertain watermark (Long.MIN_VALUE or a time at or before the epoch, which this "
            f"runtime cannot tell apart): whether it is due is unknown. {current.remedy}"
        )


__all__ = [
    "UncertainWatermarkError",
    "Uncertainty",
    "check_event_timer",
    "read_watermark",
    "uncertain_watermark",
]
