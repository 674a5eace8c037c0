"""The held panes of a frame-based key-group state looked up by (key, window start), and its
distinct keys counted, so that a micro-batch costs what it changed, not the state held.

:class:`PaneLookup` maps each held pane's identity to its registration number (``_fw_seq``,
increasing along the panes frame): a batch's panes are matched against the held ones in time
proportional to the batch, where factorizing held and new keys together costs the whole state
every batch. Identities follow ``_codes``' equality exactly: integer and boolean columns by
value, float columns as ``Double.equals`` (``float_codes``: NaN one value, ``0.0`` and ``-0.0``
two), object columns only when every value is a ``str``; a key column of any other kind (or a
frame whose ``_fw_seq`` does not increase) has no lookup, and the state factorizes as before.

A lookup follows one frame object: :meth:`PaneLookup.follow` moves it to the frame derived from
it (rows kept, rows appended); any other new frame leaves it stale, and it is rebuilt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable

import numpy as np
import pandas as pd

from flinkwin.keys import float_codes

_SEQ = "_fw_seq"


def identities(columns: list[np.ndarray]) -> list[Hashable] | None:
    """Each row's identity over ``columns`` (one value for one column, else a tuple), with
    ``_codes``' equality; None when a column's kind has no exact Python identity here."""
    normal = []
    for column in columns:
        kind = column.dtype.kind
        if kind in "iub":
            normal.append(column.tolist())
        elif kind == "f":
            normal.append(float_codes(column).tolist())
        elif kind == "O" and (
            len(column) == 0 or pd.api.types.infer_dtype(column, skipna=False) == "string"
        ):
            normal.append(column.tolist())
        else:
            return None
    if len(normal) == 1:
        return normal[0]
    return list(zip(*normal))


class PaneLookup:
    """The held panes of one frame: (key identity, window start) -> ``_fw_seq``, and each key's
    number of panes. Build with :meth:`of`."""

    def __init__(self, frame: pd.DataFrame, seqs: dict[tuple[Hashable, int], int],
                 keys: Counter[Hashable]) -> None:
        self.frame = frame
        self._seqs = seqs
        self._keys = keys

    @classmethod
    def of(cls, frame: pd.DataFrame, key_fields: list[str], start: str) -> PaneLookup | None:
        """The lookup of ``frame``'s panes, or None (see module docstring)."""
        seq = frame[_SEQ].to_numpy()
        if len(seq) > 1 and not bool((seq[1:] > seq[:-1]).all()):
            return None
        keys = identities([frame[f].to_numpy() for f in key_fields])
        if keys is None:
            return None
        panes = dict(zip(zip(keys, frame[start].tolist()), seq.tolist()))
        return cls(frame, panes, Counter(keys))

    def distinct_keys(self) -> int:
        return len(self._keys)

    def find(self, keys: list[Hashable], starts: np.ndarray) -> np.ndarray:
        """The positions in the frame of the panes (``keys[i]``, ``starts[i]``); -1 where none
        is held."""
        get = self._seqs.get
        seqs = np.fromiter(
            (get(pane, -1) for pane in zip(keys, starts.tolist())), dtype=np.int64,
            count=len(keys),
        )
        found = seqs >= 0
        positions = np.full(len(seqs), -1, dtype=np.int64)
        if found.any():
            positions[found] = np.searchsorted(self.frame[_SEQ].to_numpy(), seqs[found])
        return positions

    def follow(self, frame: pd.DataFrame, kept: np.ndarray | None, key_fields: list[str],
               start: str) -> PaneLookup | None:
        """This lookup for ``frame``: this one's rows where ``kept`` (all when None), then
        appended rows. None when an appended row's key or ``_fw_seq`` has no lookup."""
        old = self.frame
        n_kept = len(old) if kept is None else int(kept.sum())
        if kept is not None and n_kept < len(old):
            gone = old[~kept]
            gone_keys = identities([gone[f].to_numpy() for f in key_fields])
            assert gone_keys is not None  # (they had identities when they came)
            self._remove(gone_keys, gone[start].tolist())
        added = frame.iloc[n_kept:]
        if len(added):
            seq = frame[_SEQ].to_numpy()
            if n_kept and seq[n_kept] <= seq[n_kept - 1] or not bool(
                (seq[n_kept + 1:] > seq[n_kept:-1]).all()
            ):
                return None
            keys = identities([added[f].to_numpy() for f in key_fields])
            if keys is None:
                return None
            self._seqs.update(zip(zip(keys, added[start].tolist()), seq[n_kept:].tolist()))
            self._keys.update(keys)
        self.frame = frame
        return self

    def _remove(self, keys: Iterable[Hashable], starts: list[int]) -> None:
        pop = self._seqs.pop
        for pane in zip(keys, starts):
            pop(pane)
        counts = self._keys
        counts.subtract(keys)
        for key in set(keys):
            if counts[key] <= 0:
                del counts[key]


__all__ = ["PaneLookup", "identities"]
