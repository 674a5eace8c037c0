"""The user functions of bench/probes/fuzz_graphs.py, importable by Spark's Python workers.

Each gives rows ``k, v, ts`` (``ts``: the result's timestamp) whatever the order of the
elements of one batch, so any operator can feed any other and the plans can be compared."""

from __future__ import annotations

from typing import Any

from spark_scenarios import SumCount as SumCount

from flinkwin import (
    CoGroupFunction,
    KeyedProcessFunction,
    OutputTag,
    ProcessJoinFunction,
    ProcessWindowFunction,
    Row,
    Types,
    ValueStateDescriptor,
)


def key_k(row: Any) -> str:
    return row.k


def coarse(row: Any) -> str:
    """A coarser key (re-keying after an operator keyed by ``k``)."""
    return "ab" if row.k[:1] in ("a", "b", "A", "B") else "cd"


def double_v(row: Any) -> Any:
    return Row(k=row.k, v=row.v * 2, ts=row.ts)


def not_div3(row: Any) -> bool:
    return row.v % 3 != 0


class KeyWindowSum(ProcessWindowFunction):
    """The key, 100 * the sum of v + the count (or the pre-aggregated ``(sum, count)``), and
    the window's max timestamp."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        items = list(elements)
        if len(items) == 1 and isinstance(items[0], tuple) and not hasattr(items[0], "v"):
            total, n = items[0]
        else:
            total, n = sum(r.v for r in items), len(items)
        yield Row(k=key, v=total * 100 + n, ts=context.window().max_timestamp())


def join_pair(a: Any, b: Any) -> Any:
    return Row(k=min(a.k, b.k), v=a.v * 1000 + b.v, ts=max(a.ts, b.ts))


class CoSum(CoGroupFunction):
    def co_group(self, first: Any, second: Any) -> Any:
        first, second = list(first), list(second)
        both = first + second
        yield Row(k=min(r.k for r in both), v=sum(r.v for r in first) * 1000
                  + sum(r.v for r in second) * 10 + len(both), ts=max(r.ts for r in both))


class PairJoin(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield Row(k=left.k, v=left.v * 1000 + right.v, ts=ctx.get_timestamp())


class Totals(KeyedProcessFunction):
    """Adds each element's v to its key's total (ValueState) and reports it ``delay`` ms after
    the element's timestamp (an event-time timer); an element at or behind the watermark goes
    to the ``behind`` side output instead (its timer is still set)."""

    def __init__(self, delay: int, behind: OutputTag) -> None:
        self.delay, self.behind = delay, behind

    def open(self, runtime_context: Any) -> None:
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        ts = ctx.timestamp()
        if ts <= ctx.timer_service().current_watermark():
            ctx.output(self.behind, Row(k=value.k, v=value.v, ts=ts))
        else:
            self.total.update((self.total.value() or 0) + value.v)
        ctx.timer_service().register_event_time_timer(ts + self.delay)
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield Row(k=ctx.get_current_key(), v=self.total.value() or 0, ts=timestamp)
