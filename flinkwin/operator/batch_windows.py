"""A batch's windows, vectorized: the tumbling and sliding event-time windows of a batch's
timestamps (:func:`assign_event_windows`), whether their long arithmetic is safe
(:func:`in_safe_band`), and one code per row for a combination of key columns (:func:`_codes`).
Shared by the window operator's batch path and the columnar state forms."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from flinkwin.assigners.tumbling import TumblingEventTimeWindows
from flinkwin.keys import float_codes
from flinkwin.longs import safe_band
from flinkwin.time import java_mod


def in_safe_band(assigner: Any, lateness: int, ts: np.ndarray, extra: int = 0) -> bool:
    """True if no long arithmetic on these timestamps can overflow: window bounds of a
    tumbling/sliding assigner, cleanup times, ``ts + lateness`` (plus ``extra``, e.g. a trigger
    interval). Batches outside it go through the per-element path, the one definition of the
    arithmetic near the long limits (see :mod:`flinkwin.longs`)."""
    if len(ts) == 0:
        return True
    if type(assigner) is TumblingEventTimeWindows:
        size, slide, offset = assigner.size, assigner.size, assigner.global_offset
    else:
        size, slide, offset = assigner.size, assigner.slide, assigner.offset
    low, high = safe_band(2 * (size + slide) + abs(offset) + lateness + extra + 1)
    return low <= int(ts.min()) and int(ts.max()) <= high


def assign_event_windows(assigner: Any, ts: np.ndarray) -> tuple[np.ndarray, ...]:
    """(element index, window start, window end) of every window of each element, in the
    order the assigner lists them, for tumbling and sliding event-time windows."""
    n = len(ts)
    elems = np.arange(n, dtype=np.int64)
    if type(assigner) is TumblingEventTimeWindows:
        size, slide, offset = assigner.size, assigner.size, assigner.global_offset
    else:
        size, slide, offset = assigner.size, assigner.slide, assigner.offset
    offset = java_mod(offset, slide)
    rem = np.fmod(ts - offset, slide)
    last = np.where(rem < 0, ts - (rem + slide), ts - rem)
    if size == slide:
        return elems, last, last + size
    k = -(-size // slide)
    starts = last[:, None] - np.arange(k, dtype=np.int64)[None, :] * slide
    valid = starts > (ts - size)[:, None]
    e = np.broadcast_to(elems[:, None], starts.shape)[valid]
    s = starts[valid]
    return e, s, s + size


def _codes(columns: list[np.ndarray]) -> np.ndarray:
    """One int64 code per row for the combination of ``columns``' values, numbered in order
    of first appearance (nulls are values too; floats compare as Java's ``Double.equals``:
    NaN is one value, ``0.0`` and ``-0.0`` two)."""
    codes: np.ndarray | None = None
    for column in columns:
        column_codes, count = _column_codes(column)
        # (the first column's codes are already numbered in order of first appearance)
        codes = column_codes if codes is None else pd.factorize(codes * count + column_codes)[0]
    assert codes is not None
    return codes.astype(np.int64, copy=False)


def _column_codes(column: np.ndarray) -> tuple[np.ndarray, int]:
    """One code per value of ``column`` in order of first appearance (nulls are a value, see
    ``_codes``), and the number of distinct values."""
    if column.dtype.kind == "f":
        column = float_codes(column)
    codes, uniques = pd.factorize(column)
    if len(codes) and codes.min() < 0:
        # nulls: pandas numbers them as one value only when asked (an extra pass over the values)
        codes, uniques = pd.factorize(column, use_na_sentinel=False)
    return codes, len(uniques)


__all__ = ["assign_event_windows", "in_safe_band"]
