"""Input frames for a graph operator of two sources, in the graph stage's column layout: the
source index in ``_fw_in``, each source's ``k`` and ``v`` in ``_fw_i{i}_0``/``_fw_i{i}_1``
(null in the other source's rows)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from flinkwin.operator.graph import SourceSpec


def source(i: int, delay: int | None = 0, idle_timeout_ms: int | None = None) -> SourceSpec:
    """Source ``i`` of elements ``(k, v)`` with out-of-orderness ``delay`` (None: no
    watermarks)."""
    return SourceSpec((f"_fw_i{i}_0", f"_fw_i{i}_1"), ("k", "v"), delay_ms=delay,
                      idle_timeout_ms=idle_timeout_ms)


def frame(rows: list[tuple[int, Any, int]], dtype: Any = None) -> pd.DataFrame:
    """Rows of ``(source, k, v)``; ``dtype=object`` keeps ints as ints beside the other
    source's nulls."""
    data: dict[str, list[Any]] = {"_fw_in": [], "_fw_i0_0": [], "_fw_i0_1": [],
                                  "_fw_i1_0": [], "_fw_i1_1": []}
    for src, k, v in rows:
        data["_fw_in"].append(src)
        for i in (0, 1):
            data[f"_fw_i{i}_0"].append(k if i == src else None)
            data[f"_fw_i{i}_1"].append(v if i == src else None)
    return pd.DataFrame(data, dtype=dtype)
