"""The panes of a :class:`~flinkwin.operator.states.panes.PaneAggregation` indexed for range
queries: panes sorted by (key, pane start), which windows hold panes, and a window's aggregate
and first pane (prefix sums for ``sum``, sparse tables for ``min``, ``max`` and the first
pane)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flinkwin.operator.batch_windows import _codes

if TYPE_CHECKING:
    from flinkwin.operator.states.panes import PaneAggregation

_PANE, _FIRST = "_fw_pane", "_fw_first"
_PANE_COLUMNS = (_PANE, _FIRST)
_UFUNCS = {"sum": np.add, "min": np.minimum, "max": np.maximum}


class _PaneIndex:
    """The panes sorted by (key, pane start), with range queries: which windows hold panes,
    and a window's aggregate and first pane.

    ``extra_keys`` are key columns of other rows (queries) coded together with the panes'
    keys; their codes are ``query_codes``."""

    def __init__(
        self, state: PaneAggregation, panes: pd.DataFrame,
        extra_keys: list[np.ndarray] | None = None,
    ) -> None:
        self.state = state
        self.panes = panes
        n = len(panes)
        columns = [panes[f].to_numpy() for f in state.key_fields]
        if extra_keys is not None:
            columns = [np.concatenate([c, e]) for c, e in zip(columns, extra_keys)]
        codes = _codes(columns)
        self.query_codes = codes[n:]
        kc = codes[:n]
        ps = panes[_PANE].to_numpy()
        order = np.lexsort((ps, kc))
        self.order = order
        self.kc = kc[order]
        self.ps = ps[order]
        self.values = panes[state.field].to_numpy()[order].astype(np.int64, copy=False)
        self.first = panes[_FIRST].to_numpy()[order].astype(np.int64, copy=False)
        self.uniq = np.unique(self.ps)
        self.width = len(self.uniq) + 1
        self.comp = self.kc * self.width + np.searchsorted(self.uniq, self.ps)
        self._prefix: np.ndarray | None = None

    def windows(self, s_from: int, s_to: int) -> tuple[np.ndarray, np.ndarray]:
        """(key code, start) of every window with a start in [s_from, s_to] holding a pane,
        ordered by key then start."""
        state = self.state
        first, last = state._window_range(self.ps)
        first = np.maximum(first, state._align(np.int64(s_from) - 1) + state.slide)
        last = np.minimum(last, state._align(np.int64(s_to)))
        ok = first <= last
        kc, first, last = self.kc[ok], first[ok], last[ok]
        if not len(kc):
            return kc, first
        # merge the windows of consecutive panes of a key into disjoint runs of starts (per
        # key, first and last are non-decreasing in pane order)
        new_run = np.ones(len(kc), dtype=bool)
        new_run[1:] = (kc[1:] != kc[:-1]) | (first[1:] > last[:-1])
        heads = np.flatnonzero(new_run)
        run_first = first[heads]
        run_last = np.maximum.reduceat(last, heads)
        counts = (run_last - run_first) // state.slide + 1
        run_of = np.repeat(np.arange(len(heads)), counts)
        within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
            np.cumsum(counts) - counts, counts
        )
        return kc[heads][run_of], run_first[run_of] + within * state.slide

    def _ranges(self, kc: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        base = kc * self.width
        lo = np.searchsorted(self.comp, base + np.searchsorted(self.uniq, starts))
        hi = np.searchsorted(
            self.comp, base + np.searchsorted(self.uniq, starts + self.state.size)
        )
        return lo, hi

    def combine(self, kc: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Aggregate and first pane (sorted position) of each window; each holds a pane."""
        lo, hi = self._ranges(kc, starts)
        return self._reduce(lo, hi), _range_argmin(self.first, lo, hi)

    def lookup(self, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For the windows of ``query_codes`` at ``starts``: whether they hold a pane, their
        aggregate and first pane (zero where they hold none)."""
        lo, hi = self._ranges(self.query_codes, starts)
        found = hi > lo
        agg = np.zeros(len(lo), dtype=np.int64)
        first = np.zeros(len(lo), dtype=np.int64)
        if found.any():
            agg[found] = self._reduce(lo[found], hi[found])
            first[found] = _range_argmin(self.first, lo[found], hi[found])
        return found, agg, first

    def _reduce(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        if self.state.kind == "sum":
            if self._prefix is None:
                self._prefix = np.concatenate(([0], np.cumsum(self.values)))
            return self._prefix[hi] - self._prefix[lo]
        return _range_reduce(_UFUNCS[self.state.kind], self.values, lo, hi)

    def rows(self, positions: np.ndarray, agg: np.ndarray) -> pd.DataFrame:
        """The input columns of the panes at sorted ``positions``, the field set to ``agg``."""
        rows = self.panes.iloc[self.order[positions]].drop(columns=list(_PANE_COLUMNS))
        rows = rows.reset_index(drop=True)
        rows[self.state.field] = agg
        return rows


def _levels(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """floor(log2(hi - lo)) for non-empty ranges."""
    return np.frexp((hi - lo).astype(np.float64))[1].astype(np.int64) - 1


def _range_reduce(ufunc: Any, values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``ufunc`` (idempotent: min or max) over ``values[lo:hi]`` per range, by a sparse table."""
    level = _levels(lo, hi)
    out = np.empty(len(lo), dtype=values.dtype)
    table = values
    for j in range(int(level.max()) + 1 if len(lo) else 0):
        if j:
            half = 1 << (j - 1)
            table = ufunc(table[:-half], table[half:])
        sel = np.flatnonzero(level == j)
        if len(sel):
            out[sel] = ufunc(table[lo[sel]], table[hi[sel] - (1 << j)])
    return out


def _range_argmin(keys: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The position of the smallest (distinct) ``keys[lo:hi]`` per range, by a sparse table."""
    level = _levels(lo, hi)
    out = np.empty(len(lo), dtype=np.int64)
    table = np.arange(len(keys), dtype=np.int64)
    for j in range(int(level.max()) + 1 if len(lo) else 0):
        if j:
            half = 1 << (j - 1)
            a, b = table[:-half], table[half:]
            table = np.where(keys[a] <= keys[b], a, b)
        sel = np.flatnonzero(level == j)
        if len(sel):
            a, b = table[lo[sel]], table[hi[sel] - (1 << j)]
            out[sel] = np.where(keys[a] <= keys[b], a, b)
    return out
