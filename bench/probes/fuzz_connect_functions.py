"""The user functions of bench/probes/fuzz_connect.py, importable by Spark's Python workers.

Every output is a row ``k, v, ts, wm, what``: ``ts`` the output's timestamp (the element's,
or the timer's), ``wm`` the watermark the function saw, ``what`` which call made it (and, for
the state-keeping function, the state). The fuzzer's oracle computes the same rows from a
model of Flink's semantics."""

from __future__ import annotations

from typing import Any

from flinkwin import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    ListStateDescriptor,
    MapStateDescriptor,
    OutputTag,
    ProcessWindowFunction,
    Row,
    Types,
    ValueStateDescriptor,
)

OUT = Types.ROW_NAMED(["k", "v", "ts", "wm", "what"],
                      [Types.STRING(), Types.LONG(), Types.LONG(), Types.LONG(), Types.STRING()])


def out(k: Any, v: int, ts: int, wm: int, what: str) -> Any:
    return Row(k=str(k), v=v, ts=ts, wm=wm, what=what)


def key_k(row: Any) -> str:
    return row.k


def coarse(row: Any) -> str:
    return "ab" if row.k in ("a", "b") else "cdef"


def parity(row: Any) -> int:
    return row.v % 2


class StateCo(KeyedCoProcessFunction):
    """Keeps a total (ValueState), the values (ListState) and a count per input (MapState),
    updated from both inputs; registers a timer ``delays[i]`` after each element, and
    (``running``: at most one element of a key per micro-batch) deletes the key's previous
    timer for every third value; emits each element (with the state, ``running``) and, on a
    timer, the state. Side outputs: ``ctx.output`` and ``yield (tag, value)``."""

    def __init__(self, delays: tuple[int, int], running: bool, side: OutputTag,
                 yielded: OutputTag) -> None:
        self.delays, self.running, self.side, self.yielded = delays, running, side, yielded

    def open(self, runtime_context: Any) -> None:
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))
        self.items = runtime_context.get_list_state(ListStateDescriptor("items", Types.LONG()))
        self.per = runtime_context.get_map_state(
            MapStateDescriptor("per", Types.STRING(), Types.LONG()))
        self.last = runtime_context.get_state(ValueStateDescriptor("last", Types.LONG()))

    def _element(self, value: Any, ctx: Any, i: int) -> Any:
        ts, key = ctx.timestamp(), ctx.get_current_key()
        wm = ctx.timer_service().current_watermark()
        total = (self.total.value() or 0) + value.v
        self.total.update(total)
        self.items.add(value.v)
        name = f"in{i}"
        self.per.put(name, (self.per.get(name) or 0) + 1)
        timer = ts + self.delays[i - 1]
        ctx.timer_service().register_event_time_timer(timer)
        what = f"e{i}"
        if self.running:
            last = self.last.value()
            if last is not None and value.v % 3 == 0 and last != timer:
                ctx.timer_service().delete_event_time_timer(last)
                what += f" del {last}"
            self.last.update(timer)
            what += f" total={total} n={len(list(self.items.get()))}"
        if value.v % 4 == 0:
            ctx.output(self.side, out(key, value.v, ts, wm, f"s{i}"))
        if value.v % 5 == 0:
            yield self.yielded, out(key, value.v, ts, wm, f"y{i}")
        yield out(key, value.v, ts, wm, what)

    def process_element1(self, value: Any, ctx: Any) -> Any:
        return self._element(value, ctx, 1)

    def process_element2(self, value: Any, ctx: Any) -> Any:
        return self._element(value, ctx, 2)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        key, wm = ctx.get_current_key(), ctx.timer_service().current_watermark()
        items = sorted(self.items.get() or [])
        per = sorted(self.per.items())
        yield out(key, self.total.value() or 0, timestamp, wm, f"t items={items} per={per}")
        if timestamp % 2 == 0:
            ctx.output(self.side, out(key, -1, timestamp, wm, "st"))
        if timestamp % 3 == 0:
            ctx.timer_service().register_event_time_timer(timestamp + 500)
        if timestamp % 5 == 0:
            self.total.clear()


class PlainCo(CoProcessFunction):
    """Non-keyed: each element with its input, timestamp and watermark; side outputs."""

    def __init__(self, side: OutputTag, yielded: OutputTag) -> None:
        self.side, self.yielded = side, yielded

    def _element(self, value: Any, ctx: Any, i: int) -> Any:
        ts, wm = ctx.timestamp(), ctx.timer_service().current_watermark()
        if value.v % 4 == 0:
            ctx.output(self.side, out(value.k, value.v, ts, wm, f"s{i}"))
        if value.v % 5 == 0:
            yield self.yielded, out(value.k, value.v, ts, wm, f"y{i}")
        yield out(value.k, value.v * 10 + i, ts, wm, f"n{i}")

    def process_element1(self, value: Any, ctx: Any) -> Any:
        return self._element(value, ctx, 1)

    def process_element2(self, value: Any, ctx: Any) -> Any:
        return self._element(value, ctx, 2)


class Map(CoMapFunction):
    def map1(self, value: Any) -> Any:
        return out(value.k, value.v * 10 + 1, value.ts, 0, "m1")

    def map2(self, value: Any) -> Any:
        return None if value.v % 3 == 0 else out(value.k, value.v * 10 + 2, value.ts, 0, "m2")


class FlatMap(CoFlatMapFunction):
    def flat_map1(self, value: Any) -> Any:
        for j in range(value.v % 3):
            yield out(value.k, value.v * 10 + j, value.ts, 0, "f1")

    def flat_map2(self, value: Any) -> Any:
        yield out(value.k, value.v, value.ts, 0, "f2")
        if value.v % 2 == 0:
            yield out(value.k, -value.v, value.ts, 0, "f2b")


class PassesOn(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value


class WinSum(ProcessWindowFunction):
    """The key, 100 * the sum of v + the count, and the window's max timestamp."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        items = list(elements)
        yield out(key, sum(r.v for r in items) * 100 + len(items),
                  context.window().max_timestamp(), 0, "w")
