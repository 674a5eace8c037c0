"""The window operator's batch path (flinkwin.operator.vectorized) against its
element-by-element path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.operator import WindowOperator


def test_a_window_function_gets_the_key_of_the_shaped_element() -> None:
    """A key column with an element converter (a nested, pickled or BIG_INT column): the
    batch path hands the window function the key of the converted element, as the
    element-by-element path does, not the column's raw value."""
    from flinkwin import ProcessWindowFunction
    from flinkwin.operator.vectorized import op_records

    class KeyAndElements(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            yield (key, [tuple(e) for e in elements])

    frame = pd.DataFrame({"k": ["a", "b", "a"], "v": np.arange(3, dtype=np.int64)})
    ts = np.array([1, 2, 3], dtype=np.int64)
    outputs = []
    for by_batch in (True, False):
        op = WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), KeyAndElements(),
                            key_selector="k", element_converters={"k": str.upper})
        if by_batch:
            op.process_batch(frame, ts)
        else:
            for record, t in zip(op_records(op, frame), ts.tolist()):
                op.process_element(record, t)
        op.advance_watermark(100)
        outputs.append([v for v, _ in op.drain_output()])
    assert outputs[0] == outputs[1] == [("A", [("A", 0), ("A", 2)]), ("B", [("B", 1)])]
