"""A built-in sum over an ``int``, ``short`` or ``byte`` field adds in that type, as Flink's
``SumFunction`` does (``IntSum``; ``ShortSum`` and ``ByteSum`` cast back): per element,
vectorized and in every columnar state form, including a late firing, Flink's Java wrap-around
under ``overflow="wrap"``, a ``LongOverflowError`` naming the key and window under
``overflow="error"``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from flinkwin import (
    ContinuousEventTimeTrigger,
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import sum_of
from flinkwin.longs import ERROR, WRAP, LongOverflowError, wrap
from flinkwin.operator import WindowOperator, states

BILLION2 = 2_000_000_000
#: (batch of (key, timestamp, value), watermark after it): the last element is late for the
#: first windows (within the allowed lateness) and fires them again on arrival
SCRIPT = [
    ([("a", 1, BILLION2), ("b", 2, 5), ("a", 3, BILLION2)], 2),
    ([("a", 4, BILLION2), ("b", 6, BILLION2)], 40),
    ([("a", 5, BILLION2)], 40),
]
FORMS = {
    "tumbling": (TumblingEventTimeWindows.of(20), None),
    "sliding": (SlidingEventTimeWindows.of(12, 4), None),
    "sliding-panes": (SlidingEventTimeWindows.of(20, 5), None),
    "sessions": (EventTimeSessionWindows.with_gap(30), None),
    "continuous": (
        TumblingEventTimeWindows.of(20), ContinuousEventTimeTrigger.of(Time.milliseconds(3))
    ),
}
DTYPES = {32: np.int32, 16: np.int16, 8: np.int8}


def _run(form: str, path: str, overflow: str, bits: int, scale: int = 1) -> list[Any]:
    """The main outputs (key, sum, timestamp) of :data:`SCRIPT` (values divided by ``scale``)
    with the sum over a field of ``bits`` bits, on ``path``: per element, the operator's
    vectorized batches, or the configuration's state form (columnar where it has one)."""
    assigner, trigger = FORMS[form]
    extra = {} if trigger is None else {"trigger": trigger}

    def factory() -> WindowOperator:
        return WindowOperator(
            assigner, sum_of("v").with_bits(bits), key_selector="k", allowed_lateness=100,
            overflow=overflow, **extra,
        )

    kind = states.state_kind(factory(), True) if path == "state" else states.OBJECT
    if path == "state":
        assert kind != states.OBJECT
    state = states.new_state(kind, factory)
    got: list[Any] = []
    for elements, watermark in SCRIPT:
        frame = pd.DataFrame({
            "k": [k for k, _, _ in elements], "ts": [t for _, t, _ in elements],
            "v": np.array([v // scale for _, _, v in elements], dtype=DTYPES.get(bits, np.int64)),
        })
        timestamps = frame["ts"].to_numpy(dtype=np.int64)
        if path == "element":
            for row, t in zip(frame.to_dict("records"), timestamps.tolist()):
                state.process_element({k: int(v) if k != "k" else v for k, v in row.items()}, t)
        else:
            state = states.prepare(state, frame, timestamps, state.current_watermark)
            state.process_batch(frame, timestamps)
        state.advance_watermark(watermark)
        if states.frame_outputs(state):
            out, stamps = state.drain_main_timed()
            if out is not None:
                got += zip(out["k"], out["v"].tolist(), stamps.tolist())
        else:
            got += [(r["k"], r["v"], t) for r, t in state.drain_output()]
        if path == "state":
            state = states.settle(state, kind, factory, ["k", "ts", "v"])
    return got


@pytest.mark.parametrize("path", ["element", "vectorized", "state"])
@pytest.mark.parametrize("form", list(FORMS))
def test_an_int_sum_wraps_at_32_bits_on_every_path(form: str, path: str) -> None:
    longs = _run(form, "element", WRAP, 64)
    assert any(v > 2**31 for _, v, _ in longs)  # the script overflows an int
    assert _run(form, path, WRAP, 32) == [(k, wrap(v, 32), t) for k, v, t in longs]


def test_an_int_sum_wraps_as_javas_int_addition() -> None:
    got = _run("tumbling", "state", WRAP, 32)
    assert got[0] == ("a", 1_705_032_704, 19)  # 3 * 2,000,000,000 in Java int arithmetic
    assert got[-1] == ("a", -589_934_592, 19)  # the late firing: 4 * 2,000,000,000


@pytest.mark.parametrize("bits", [16, 8])
@pytest.mark.parametrize("path", ["element", "vectorized", "state"])
def test_short_and_byte_sums_wrap_at_their_width(path: str, bits: int) -> None:
    scale = BILLION2 // (2 ** (bits - 1) - 1)  # each value near the type's maximum
    longs = _run("tumbling", "element", WRAP, 64, scale)
    assert _run("tumbling", path, WRAP, bits, scale) == [
        (k, wrap(v, bits), t) for k, v, t in longs
    ]


@pytest.mark.parametrize("path", ["element", "vectorized", "state"])
@pytest.mark.parametrize("form", list(FORMS))
def test_an_int_sum_overflow_raises_on_every_path_under_error(form: str, path: str) -> None:
    message = r"key 'a', window TimeWindow.*int overflow: sum of field 'v': 2000000000 \+ "
    with pytest.raises(LongOverflowError, match=message):
        _run(form, path, ERROR, 32)


def test_an_int_sum_within_range_under_error_is_exact() -> None:
    exact = _run("tumbling", "element", ERROR, 64, 4)
    assert _run("tumbling", "state", ERROR, 32, 4) == exact


def test_a_short_sum_overflow_names_the_type_and_its_range() -> None:
    with pytest.raises(LongOverflowError, match=r"short overflow: .* is outside \[-32768, 32767\]"
                       r".*would give -2"):
        _run("tumbling", "element", ERROR, 16, BILLION2 // 32767)
