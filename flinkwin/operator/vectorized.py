"""Batch processing for the window operator (placeholder: per-row)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


def process_frame(op: WindowOperator, frame: Any, timestamps: np.ndarray) -> None:
    columns = list(frame.columns)
    from flinkwin.record import Record

    for values, ts in zip(frame.itertuples(index=False, name=None), timestamps.tolist()):
        record = Record(columns, values)
        op._process(record, ts, op.key_of(record))
