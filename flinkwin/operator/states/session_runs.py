"""Array helpers of :class:`~flinkwin.operator.states.sessions.SessionAggregation`: Java long
wrapping, running min/max per run, (key, value) ordering, the value before each position of a
run, columns gathered from old and new rows, and which sessions each element window touches
(binary searches over one int64 per (key, time), or ``merge_asof`` joins where that does not
fit)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

_MASK64 = (1 << 64) - 1


def _wrap(value: int) -> int:
    """A Python int as a Java long (wrapping), as the int64 sums are."""
    value &= _MASK64
    return value - (1 << 64) if value >> 63 else value


def _running(ufunc: np.ufunc, values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Per run of consecutive positions (``first`` starts a run, ``first[0]`` is True), the
    running ``np.maximum`` or ``np.minimum`` of the int64 ``values``: one accumulation over
    the whole array, each run lifted above (max) or below (min) the runs before it."""
    if not len(values):
        return values.copy()
    run = np.cumsum(first) - 1
    runs, low = int(run[-1]) + 1, int(values.min())
    span = int(values.max()) - low + 1
    if runs * span >= 2**62:  # the lifted values would not fit an int64
        grouped = pd.Series(values).groupby(run, sort=False)
        return (grouped.cummax() if ufunc is np.maximum else grouped.cummin()).to_numpy()
    lift = (run if ufunc is np.maximum else runs - 1 - run) * span
    return ufunc.accumulate(values - low + lift) - lift + low


def _by_key(key: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Positions in (``key``, ``value``) order, ties in position order (``np.lexsort``): one
    int64 sort when every (key, value) fits one (keys are codes, >= 0)."""
    if not len(key):
        return np.empty(0, dtype=np.int64)
    low = int(value.min())
    span = int(value.max()) - low + 1
    if (int(key.max()) + 1) * span >= 2**62:
        return np.lexsort((value, key))
    return np.argsort(key * span + (value - low), kind="stable")


def _gather(old: pd.Series, new: pd.Series, source: np.ndarray) -> Any:
    """The values at ``source`` of ``old`` followed by ``new`` (positions), in the dtype a
    ``pd.concat`` of the rows taken from each would have."""
    n_old = len(old)
    a, b = _plain(old), _plain(new)
    if not len(source) or source.max() < n_old:
        return old.array.take(source) if a is None else a[source]
    if source.min() >= n_old:
        return new.array.take(source - n_old) if b is None else b[source - n_old]
    if a is not None and b is not None and a.dtype == b.dtype:
        out = np.empty(len(source), dtype=a.dtype)
        mine = source < n_old
        out[mine] = a[source[mine]]
        out[~mine] = b[source[~mine] - n_old]
        return out
    return pd.concat([old, new], ignore_index=True).array.take(source)


def _plain(column: pd.Series) -> np.ndarray | None:
    """``column``'s numpy array when it is backed by one (else None: an extension array)."""
    values = column._values
    return values if isinstance(values, np.ndarray) else None


def _before(running: np.ndarray, first: np.ndarray, empty: int) -> np.ndarray:
    """Per run of ``running`` (a running min or max per group; ``first`` starts a group), the
    value before each position: ``empty`` at a group's first."""
    out = np.empty_like(running)
    out[1:] = running[:-1]
    out[first] = empty
    return out


def _touching(
    ekey: np.ndarray, estart: np.ndarray, eend: np.ndarray,
    skey: np.ndarray, sstart: np.ndarray, send: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """(element, session) index pairs where an element window overlaps or touches a session of
    its key. A key's sessions are disjoint, so those an element touches are consecutive in
    start order: from the first ending at or after the window's start to the last starting at
    or before its end."""
    empty = np.empty(0, dtype=np.int64)
    if not len(skey) or not len(ekey):
        return empty, empty
    order = _by_key(skey, sstart)
    low = min(int(sstart.min()), int(estart.min()))
    span = max(int(send.max()), int(eend.max())) - low + 1
    if (max(int(skey.max()), int(ekey.max())) + 1) * span < 2**62:
        # one sortable int64 per (key, time): binary searches instead of joins
        keys = skey[order]
        by_start = keys * span + (sstart[order] - low)
        by_end = keys * span + (send[order] - low)
        # queries in (key, start) order: numpy's binary searches run much faster on sorted keys
        query = ekey * span + (estart - low)
        sort = np.argsort(query)
        last = np.empty(len(ekey), dtype=np.int64)
        first = np.empty(len(ekey), dtype=np.int64)
        last[sort] = np.searchsorted(
            by_start, ekey[sort] * span + (eend[sort] - low), side="right"
        ) - 1
        first[sort] = np.searchsorted(by_end, query[sort], side="left")
        first_ok = first < len(order)
        first_ok[first_ok] = keys[first[first_ok]] == ekey[first_ok]
        last_ok = last >= 0
        last_ok[last_ok] = keys[last[last_ok]] == ekey[last_ok]
        p_last = np.where(last_ok, last, np.nan)
        p_first = np.where(first_ok, first, np.nan)
    else:
        p_last, p_first = _touching_joins(
            ekey, estart, eend, skey[order], sstart[order], send[order]
        )
    valid = ~np.isnan(p_last) & ~np.isnan(p_first)
    valid[valid] = p_first[valid] <= p_last[valid]
    elems = np.flatnonzero(valid)
    lo = p_first[elems].astype(np.int64)
    counts = p_last[elems].astype(np.int64) - lo + 1
    pair_elem = np.repeat(elems, counts)
    offsets = np.arange(len(pair_elem)) - np.repeat(np.cumsum(counts) - counts, counts)
    return pair_elem, order[np.repeat(lo, counts) + offsets]


def _touching_joins(
    ekey: np.ndarray, estart: np.ndarray, eend: np.ndarray,
    skey: np.ndarray, sstart: np.ndarray, send: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """For each element window, the (float, NaN for none) positions among the sessions
    (sorted by key and start) of the last session of its key starting at or before its end
    and of the first one ending at or after its start: ``merge_asof`` per key."""
    right = pd.DataFrame({
        "k": skey, "s": sstart, "e": send, "p": np.arange(len(skey), dtype=np.float64),
    })
    left = pd.DataFrame({"k": ekey, "s": eend, "e": estart, "i": np.arange(len(ekey))})
    last = pd.merge_asof(
        left.sort_values("s", kind="stable"), right[["k", "s", "p"]].sort_values("s"),
        on="s", by="k", direction="backward",
    )
    first = pd.merge_asof(
        left.sort_values("e", kind="stable"), right[["k", "e", "p"]].sort_values("e"),
        on="e", by="k", direction="forward",
    )
    p_last = np.full(len(ekey), np.nan)
    p_last[last["i"].to_numpy()] = last["p"].to_numpy()
    p_first = np.full(len(ekey), np.nan)
    p_first[first["i"].to_numpy()] = first["p"].to_numpy()
    return p_last, p_first
