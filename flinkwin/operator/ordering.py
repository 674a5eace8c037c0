"""Stable orderings of dense integer codes, the sort under every vectorized grouping.

``np.argsort(codes, kind="stable")`` is a merge sort for 32- and 64-bit integers; numpy sorts
16-bit integers stably with a radix sort, several times faster. Codes below ``2**16`` sort in
one radix pass, codes below ``2**32`` in two (low half, then high half: a least-significant-digit
radix sort, stable because each pass is); larger or negative codes use numpy's merge sort.
"""

from __future__ import annotations

import numpy as np

_DIGIT = 1 << 16


def stable_order(codes: np.ndarray, bound: int | None = None) -> np.ndarray:
    """The indices that sort ``codes`` stably: exactly ``np.argsort(codes, kind="stable")``.
    ``bound``, if given, is above every code (saves a pass to find the largest)."""
    codes = np.asarray(codes)
    if len(codes) < 256 or codes.dtype.kind not in "iu":
        return np.argsort(codes, kind="stable")
    if bound is None or codes.dtype.kind == "i":
        if int(codes.min()) < 0:
            return np.argsort(codes, kind="stable")
        bound = int(codes.max()) + 1 if bound is None else bound
    if bound <= _DIGIT:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    if bound <= _DIGIT * _DIGIT:
        low = np.argsort((codes & (_DIGIT - 1)).astype(np.uint16), kind="stable")
        high = np.argsort((codes[low] >> 16).astype(np.uint16), kind="stable")
        return low[high]
    return np.argsort(codes, kind="stable")


__all__ = ["stable_order"]
