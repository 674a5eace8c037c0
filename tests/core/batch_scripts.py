"""Random scripts of keyed batches for the columnar-state property tests (columnar
aggregation, sessions, element lists): each batch is a list of ``(key, ts, v)`` elements
followed by a watermark step."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from hypothesis import strategies as st


def batches(max_ts: int = 60, max_elements: int = 12) -> Any:
    """1-8 batches of up to ``max_elements`` elements of keys a/b/c, timestamps 0..max_ts,
    values -5..9, each with a watermark step of 0..25."""
    return st.lists(
        st.tuples(
            st.lists(
                st.tuples(
                    st.sampled_from(["a", "b", "c"]), st.integers(0, max_ts), st.integers(-5, 9)
                ),
                max_size=max_elements,
            ),
            st.integers(0, 25),  # watermark step after the batch
        ),
        min_size=1,
        max_size=8,
    )


def batch_frame(
    elements: list[Any], sort: bool = False, tags: bool = False
) -> tuple[pd.DataFrame, np.ndarray]:
    """The batch as the runtime hands it over (columns k, ts, v; in arrival order, as in
    Flink's STREAMING mode, or sorted stably by time when ``sort``, as in BATCH mode), and its
    timestamps; ``tags`` adds a column telling the elements apart."""
    columns: dict[str, Any] = {
        "k": [k for k, _, _ in elements], "ts": [t for _, t, _ in elements],
        "v": np.array([v for _, _, v in elements], dtype=np.int64),
    }
    if tags:
        columns["tag"] = [f"e{i}" for i in range(len(elements))]
    frame = pd.DataFrame(columns)
    if sort:
        order = np.argsort(frame["ts"].to_numpy(), kind="stable")
        frame = frame.iloc[order].reset_index(drop=True)
    return frame, frame["ts"].to_numpy(dtype=np.int64)
