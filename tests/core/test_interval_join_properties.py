"""Property test of the interval join operator against a naive model of Flink's semantics.

The model keeps every buffered element in one list and, for each arriving element, scans it for
the other side's elements of the key in range (no buckets, no bisect, no timer queue): late
elements (``timestamp < watermark``) go to their side's late output, an element leaves the model
when a watermark advance reaches its cleanup time, and the pairs one element produces come in
ascending timestamp order of the buffered side, arrival order within a timestamp (the order the
operator documents). Random scripts mix two keys, both inputs, out-of-order timestamps (some
late), watermarks that do not always advance, every bound combination, and a snapshot/restore
into a fresh operator at a random point, which must not change anything.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import OutputTag, ProcessJoinFunction
from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.time import MIN_LONG

LEFT_LATE, RIGHT_LATE = OutputTag("left-late"), OutputTag("right-late")


class Pairs(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> list[Any]:
        return [(left, right, ctx.get_left_timestamp(), ctx.get_right_timestamp())]


def model(script: list[tuple[Any, ...]], lower: int, upper: int, lower_inc: bool,
          upper_inc: bool) -> tuple[list[Any], list[Any], list[Any], int]:
    low = lower if lower_inc else lower + 1
    high = upper if upper_inc else upper - 1
    buffered: list[tuple[int, str, int, Any, int]] = []  # side, key, ts, value, cleanup
    wm = MIN_LONG
    out: list[Any] = []
    late: list[Any] = [[], []]
    for event in script:
        if event[0] == "wm":
            if event[1] > wm:
                wm = event[1]
                buffered = [b for b in buffered if b[4] > wm]
            continue
        _, side, key, ts, value = event
        if wm != MIN_LONG and ts < wm:
            late[side].append((value, ts))
            continue
        matches = [
            b for b in buffered
            if b[0] != side and b[1] == key
            and (low <= b[2] - ts <= high if side == 0 else low <= ts - b[2] <= high)
        ]
        for b in sorted(matches, key=lambda b: b[2]):  # stable: arrival order per timestamp
            pair = (value, b[3], ts, b[2]) if side == 0 else (b[3], value, b[2], ts)
            out.append((pair, max(pair[2], pair[3])))
        # Flink's cleanup times: left ts + upper (upper > 0), right ts - lower (lower < 0)
        relative_upper = high if side == 0 else -low
        cleanup = ts + relative_upper if relative_upper > 0 else ts
        buffered.append((side, key, ts, value, cleanup))
    return out, late[0], late[1], len(buffered)


@st.composite
def scripts(draw: Any) -> list[tuple[Any, ...]]:
    n = draw(st.integers(1, 40))
    script: list[tuple[Any, ...]] = []
    wm = 0
    for i in range(n):
        if draw(st.integers(0, 4)) == 0:
            wm = max(0, wm + draw(st.integers(-1, 3)))
            script.append(("wm", wm))
        else:
            side = draw(st.integers(0, 1))
            key = draw(st.sampled_from("ab"))
            ts = wm + draw(st.integers(-2, 5))
            script.append(("el", side, key, ts, f"{'LR'[side]}{i}"))
    return script


def run(script: list[tuple[Any, ...]], make: Any, cut: int) -> tuple[Any, ...]:
    op = make()
    out: list[Any] = []
    sides: dict[OutputTag, list[Any]] = {}

    def drain() -> None:
        out.extend(op.drain_output())
        for tag, records in op.drain_side_outputs().items():
            sides.setdefault(tag, []).extend(records)

    for i, event in enumerate(script):
        if i == cut:
            snapshot = op.snapshot()
            op = make()
            op.restore(snapshot)
        if event[0] == "wm":
            op.advance_watermark(event[1])
        else:
            _, side, key, ts, value = event
            op.process_element((key, value), ts, side)
        drain()
    return out, sides.get(LEFT_LATE, []), sides.get(RIGHT_LATE, []), op.state_size()[1]


@settings(max_examples=150, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(
    script=scripts(),
    lower=st.integers(-4, 4),
    width=st.integers(0, 5),
    lower_inc=st.booleans(),
    upper_inc=st.booleans(),
    cut=st.integers(0, 40),
)
def test_the_operator_matches_the_model_and_snapshots_change_nothing(
    script: list[tuple[Any, ...]], lower: int, width: int, lower_inc: bool, upper_inc: bool,
    cut: int,
) -> None:
    upper = lower + width

    def make() -> IntervalJoinOperator:
        return IntervalJoinOperator(
            lower, upper, lower_inc, upper_inc, LEFT_LATE, RIGHT_LATE, Pairs(),
            lambda t: t[0], lambda t: t[0],
        )

    expected_out, left_late, right_late, remaining = model(
        script, lower, upper, lower_inc, upper_inc
    )
    out, op_left_late, op_right_late, op_remaining = run(script, make, cut)
    assert [((lv[1], rv[1], lt, rt), ts) for (lv, rv, lt, rt), ts in out] == expected_out
    assert [(v[1], ts) for v, ts in op_left_late] == left_late
    assert [(v[1], ts) for v, ts in op_right_late] == right_late
    assert op_remaining == remaining
