"""An object-based :class:`~flinkwin.operator.WindowOperator`'s windows in the frame-based
states' terms: its reduced records as one frame, and its event timers as the frames' timer
numbers (used when a state is built back from its operator equivalent)."""

from __future__ import annotations

from collections.abc import Container
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa

from flinkwin.operator.frames import from_arrow
from flinkwin.time import MAX_LONG
from flinkwin.windows import TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


def records_frame(
    records: list[Any], columns: list[str], field: str, op: WindowOperator,
    slots: list[tuple[Any, Any]], fired: list[bool], cleanups: set[tuple[Any, Any]],
) -> pd.DataFrame | None:
    """The reduced records of an operator's windows (``slots``, in that order) as one frame,
    or None when they have no columnar equivalent: records of another class or fields, a
    non-int aggregated field, a window whose fired state (``fired``) or cleanup timer is not
    the one its clocks imply, values Arrow cannot hold."""
    klass = type(records[0])
    if getattr(klass, "__fields__", None) != tuple(columns) or any(
        type(r) is not klass for r in records
    ):
        return None
    index = columns.index(field)
    if any(type(r[index]) is not int for r in records):
        return None
    if any(
        f != (slot[1].max_timestamp() <= op.current_watermark)
        or (slot not in cleanups and op.cleanup_time(slot[1]) != MAX_LONG)
        for slot, f in zip(slots, fired)
    ):
        return None
    try:
        table = pa.Table.from_arrays(
            [pa.array([r[i] for r in records]) for i in range(len(columns))], names=columns
        )
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    return from_arrow(table)

def window_timers(
    op: WindowOperator, held: Container[tuple[Any, Any]] | None = None,
) -> tuple[dict[tuple[Any, Any], int], set[tuple[Any, Any]]] | None:
    """The event timers of ``op``'s held windows (``held``: the ``(key, TimeWindow)`` slots
    that count as held, else those of ``op.window_contents``): each slot's position among the
    ``max_timestamp`` timers (firing order) and the slots with a cleanup timer; None when a
    timer belongs to no held ``TimeWindow`` or is neither of those two."""
    known = op.window_contents if held is None else held
    seq: dict[tuple[Any, Any], int] = {}
    cleanups: set[tuple[Any, Any]] = set()
    for ts, slots in op.event_timers.buckets():
        for slot in slots:
            window = slot[1]
            if slot not in known or type(window) is not TimeWindow:
                return None
            if ts == window.max_timestamp():
                seq[slot] = len(seq)
            if ts == op.cleanup_time(window):
                cleanups.add(slot)
            elif ts != window.max_timestamp():
                return None
    return seq, cleanups


__all__ = ["records_frame", "window_timers"]
