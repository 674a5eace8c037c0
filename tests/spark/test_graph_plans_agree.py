"""The two plans of a stream graph agree, batch by batch, and with Flink: each program below runs
over the same files (one per micro-batch) on the one-task plan (a graph's default) and on the
distributed plan (``set_parallelism(2)``), stopped after RESTART_AFTER files and restarted on its
checkpoint; every batch's main and side outputs of the two plans are equal (compared by the
input file they follow), and their totals are the values Flink gives (derived by hand in each
program's comment). A graph whose one keyed operator reads the sources keyed by columns runs
in the stream's key groups under both (the keyed plan); one that cannot be distributed
(ONE_TASK_ONLY) is checked on the one-task plan only. Every plan keeps the sources' greatest
timestamps in its own state, so each gives Flink's outputs across the restart (Spark forgets
them: its offset log records the query's one watermark).

The model (docs/spark-semantics.md): batch *N* reads file *N* of every source; a source's
watermark in batch *N* is ``max(ts of its files before N) - 1`` (no out-of-orderness) and an
operator sees the minimum over the sources it reads (Flink's ``StatusWatermarkValve``); in a
batch the watermark comes first (timers fire, windows fire and their results reach the next
operator before the watermark does), then the elements. Spark runs a batch without data after
the last file when the watermark moved (at the end of the first run too, before the restart).
The functions are insensitive to the order of elements of one batch across sources and across
upstream key groups (the one order a distributed plan does not keep, docs/architecture.md).

Flink's rules used (WindowOperator, EventTimeTrigger, IntervalJoinOperator, the join/coGroup
translation to a windowed coGroup over a TaggedUnion of both inputs):

- a window is late iff ``maxTimestamp + allowedLateness <= watermark``; an element is dropped
  (or side-output) only when every window it belongs to is late;
- ``EventTimeTrigger.onElement`` fires at once when ``maxTimestamp <= watermark``: an element
  within the lateness re-fires its window with all its contents;
- window results carry ``window.maxTimestamp()``;
- interval join: late iff ``ts < watermark``; a pair's timestamp is the larger one; a left
  element's bucket is cleaned at ``ts + upper`` (``upper > 0``), a right one's at
  ``ts - lower`` (``lower < 0``); exclusive bounds are ``lower + 1`` / ``upper - 1``.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import SumCount, write_batches

from flinkwin import (
    AggregateFunction,
    CoGroupFunction,
    Duration,
    KeyedProcessFunction,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
    Row,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.datastream.graph_stream import RestartedWatermarksWarning
from flinkwin.spark import MemorySink
from flinkwin.spark.pipeline import PipelineError

pytestmark = [pytest.mark.beside, pytest.mark.extended]

SCHEMA = "k string, v long, ts long"
RESTART_AFTER = 3
LATE = OutputTag("late")
LATE_2 = OutputTag("late_2")
LEFT_LATE = OutputTag("left_late")
RIGHT_LATE = OutputTag("right_late")
TUMBLING_5S = TumblingEventTimeWindows.of(Time.seconds(5))
TUMBLING_10S = TumblingEventTimeWindows.of(Time.seconds(10))


def ev(k: str, v: int, ts: int) -> dict[str, Any]:
    return {"k": k, "v": v, "ts": ts}


def _k(row: Any) -> str:
    return row.k


Files = dict[str, list[list[dict[str, Any]]]]
Sources = dict[str, DataStream]
Batches = dict[int, Counter[tuple[Any, ...]]]


@dataclass
class Program:
    """A graph over named sources, its input files and the outputs Flink gives (totals)."""

    files: Files
    build: Callable[[Sources], Any]
    expected: Counter[tuple[Any, ...]]
    sides: dict[OutputTag, Counter[tuple[Any, ...]]]


# ----------------------------------------------- (a) tumbling window join keyed by a function
def _join(s: Sources) -> Any:
    return (s["left"].join(s["right"]).where(_k, key_type=Types.STRING())
            .equal_to(_k, key_type=Types.STRING())
            .window(TUMBLING_10S).allowed_lateness(Time.seconds(5))
            .apply(lambda a, b: (a.k, a.v, b.v), output_type="k string, l long, r long"))


#: watermarks per batch: left MIN, 1999, 11999, 11999, 13999, 29999, 29999; right MIN, 3999,
#: 4999, 10999, 12999, 30999, 30999; the join's the minimum: MIN, 1999, 4999, 10999, 12999,
#: 29999. 10999 (the batch without data ending the first run) fires [0, 10 s) (cleanup 14999):
#: a 1,4 x 10; b 2 x 20,40. Left a@9000 (batch 3, 10999) is within the lateness: the window
#: re-fires with every pair (a: 1,4,6 x 10). 29999 fires [10 s, 20 s): a 3 x 30,50 (b: left
#: only, no pair); left a@5000 then is past [0, 10 s)'s cleanup: dropped (a join has no late
#: output)
JOIN = Program(
    files={
        "left": [[ev("a", 1, 1000), ev("b", 2, 2000)], [ev("a", 3, 12000)], [ev("a", 4, 3000)],
                 [ev("b", 5, 14000), ev("a", 6, 9000)], [ev("a", 7, 30000)], [ev("a", 9, 5000)]],
        "right": [[ev("a", 10, 4000)], [ev("b", 20, 5000)], [ev("a", 30, 11000), ev("b", 40, 8000)],
                  [ev("a", 50, 13000)], [ev("b", 60, 31000)], []],
    },
    build=_join,
    expected=Counter([("a", 1, 10), ("a", 4, 10), ("b", 2, 20), ("b", 2, 40),
                      ("a", 1, 10), ("a", 4, 10), ("a", 6, 10), ("a", 3, 30), ("a", 3, 50)]),
    sides={},
)


# ------------------------------------------------------------ (b) coGroup, sliding windows
class Listed(CoGroupFunction):
    def co_group(self, first: Any, second: Any) -> Any:
        key = (list(first) or list(second))[0].k
        yield (key, ",".join(str(r.v) for r in sorted(first, key=lambda r: r.v)),
               ",".join(str(r.v) for r in sorted(second, key=lambda r: r.v)))


def _co_group(s: Sources) -> Any:
    return (s["left"].co_group(s["right"]).where(_k, key_type=Types.STRING())
            .equal_to(_k, key_type=Types.STRING())
            .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
            .apply(Listed(), output_type="k string, left string, right string"))


#: windows of 10 s every 5 s, no lateness. Watermarks: left MIN, 5999, 6999, 6999, 15999,
#: 15999, 39999; right MIN, 2999, 13999, 13999, 20999, 20999, 40999; minimum MIN, 2999, 6999,
#: 6999, 15999, 15999, 39999. 6999 fires [-5 s, 5 s): a 1 | 10; then left a@2000 is late for
#: it but on time in [0, 10 s) (not dropped), right b@4000 likewise. 15999 fires [0, 10 s)
#: (a 1,3,4 | 10; b 2 | 20,40) and [5 s, 15 s) (a 3 | 30; b 2 | 20); left a@12000 then is late
#: for [5 s, 15 s), on time in [10 s, 20 s). 39999 (the batch without data) fires [10 s, 20 s)
#: (a 6 | 30; b 5 | -), [15 s, 25 s) (a - | 50; b 5 | -) and [20 s, 30 s) (a - | 50)
CO_GROUP = Program(
    files={
        "left": [[ev("a", 1, 1000), ev("b", 2, 6000)], [ev("a", 3, 7000)], [ev("a", 4, 2000)],
                 [ev("b", 5, 16000)], [ev("a", 6, 12000)], [ev("a", 7, 40000)]],
        "right": [[ev("a", 10, 3000)], [ev("b", 20, 9000), ev("a", 30, 14000)],
                  [ev("b", 40, 4000)], [ev("a", 50, 21000)], [], [ev("b", 60, 41000)]],
    },
    build=_co_group,
    expected=Counter([
        ("a", "1", "10"),
        ("a", "1,3,4", "10"), ("b", "2", "20,40"), ("a", "3", "30"), ("b", "2", "20"),
        ("a", "6", "30"), ("b", "5", ""), ("a", "", "50"), ("b", "5", ""), ("a", "", "50"),
    ]),
    sides={},
)


# ------------------------------------------------------------------------ (c) interval join
class Values(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield (left.v, right.v, ctx.get_timestamp())


def _interval(exclusive: bool) -> Callable[[Sources], Any]:
    def build(s: Sources) -> Any:
        # keyed by a column inclusive, by a function exclusive: both ways of keying
        left, right = ((s["left"].key_by(_k, key_type=Types.STRING()),
                        s["right"].key_by(_k, key_type=Types.STRING())) if exclusive
                       else (s["left"].key_by("k"), s["right"].key_by("k")))
        joined = left.interval_join(right).between(Time.milliseconds(-1000),
                                                   Time.milliseconds(2000))
        if exclusive:
            joined = joined.lower_bound_exclusive().upper_bound_exclusive()
        return (joined.side_output_left_late_data(LEFT_LATE)
                .side_output_right_late_data(RIGHT_LATE)
                .process(Values(), output_type="l long, r long, ts long"))
    return build


INTERVAL_FILES: Files = {
    "left": [[ev("a", 1, 5000)], [ev("a", 2, 8000), ev("b", 3, 3000)], [ev("a", 4, 4000)],
             [ev("b", 5, 10000)], [ev("a", 6, 9000)], [ev("a", 7, 20000)]],
    "right": [[ev("a", 10, 4500)], [ev("a", 11, 6000)], [ev("a", 12, 7000), ev("b", 13, 2500)],
              [ev("a", 14, 9500)], [ev("b", 15, 11000)], []],
}
#: between(-1 s, +2 s): right in [l - 1000, l + 2000]. Watermarks: left MIN, 4999, 7999, 7999,
#: 9999, 9999, 19999; right MIN, 4499, 5999, 6999, 9499, 10999, 10999; the join's minimum MIN,
#: 4499, 5999, 6999, 9499, 9999, 10999. Batch 0: 1-10 (5000). Batch 1: left b@3000 is late
#: (< 4499); 1-11 (6000). Batch 2 (5999): right a@4500's bucket was cleaned at 5500; left
#: a@4000 late, right b@2500 late; right a@7000 pairs with a@5000 (its edge l + 2000; a@5000's
#: cleanup 7000 is not due) and a@8000 (its edge l - 1000). Batch 3: 2-14 (9500). Batch 4
#: (9499): left a@9000 late; 5-15 (11000). Exclusive bounds (-999, +1999) drop both edges.
INTERVAL = Program(
    files=INTERVAL_FILES,
    build=_interval(exclusive=False),
    expected=Counter([(1, 10, 5000), (1, 11, 6000), (1, 12, 7000), (2, 12, 8000),
                      (2, 14, 9500), (5, 15, 11000)]),
    sides={LEFT_LATE: Counter([("b", 3, 3000), ("a", 4, 4000), ("a", 6, 9000)]),
           RIGHT_LATE: Counter([("b", 13, 2500)])},
)
INTERVAL_EXCLUSIVE = Program(
    files=INTERVAL_FILES,
    build=_interval(exclusive=True),
    expected=Counter([(1, 10, 5000), (1, 11, 6000), (2, 14, 9500), (5, 15, 11000)]),
    sides=INTERVAL.sides,
)


# ------------------------------- (d) union, then a window with lateness and a late output
class KeyStartSumCount(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        total, n = next(iter(elements))
        yield (key, context.window().start, total, n)


def _union(by_column: bool) -> Callable[[Sources], Any]:
    def build(s: Sources) -> Any:
        union = s["a"].union(s["b"])
        keyed = union.key_by("k") if by_column else union.key_by(_k, key_type=Types.STRING())
        return (keyed.window(TUMBLING_5S)
                .allowed_lateness(Time.seconds(3)).side_output_late_data(LATE)
                .aggregate(SumCount(), KeyStartSumCount(),
                           output_type="k string, start long, total long, n long"))
    return build


#: 5 s windows, 3 s lateness ([0, 5 s) cleaned at 7999). Watermarks: a MIN, 1999, 5999, 5999,
#: 11999, 11999, 19999; b MIN, 1499, 2999, 8999, 8999, 12999, 20999; the union's minimum MIN,
#: 1499, 2999, 5999, 8999, 11999, 19999. 5999 (the batch without data ending the first run)
#: fires [0, 5 s): a 1+10+4, b 2+20; b's a@2000 (batch 3) is within the lateness: a re-fires
#: with 1+10+4+50. a@3000 at 8999 is late: side output. 11999 fires [5 s, 10 s): a 3+30, b 40;
#: 19999 fires [10 s, 15 s): a 5, b 60
UNION = Program(
    files={
        "a": [[ev("a", 1, 1000), ev("b", 2, 2000)], [ev("a", 3, 6000)], [ev("a", 4, 4000)],
              [ev("a", 5, 12000)], [ev("a", 6, 3000)], [ev("b", 7, 20000)]],
        "b": [[ev("a", 10, 1500)], [ev("b", 20, 3000)], [ev("a", 30, 9000), ev("b", 40, 7000)],
              [ev("a", 50, 2000)], [ev("b", 60, 13000)], [ev("a", 70, 21000)]],
    },
    build=_union(by_column=False),
    expected=Counter([("a", 0, 15, 3), ("b", 0, 22, 2), ("a", 0, 65, 4), ("a", 5000, 33, 2),
                      ("b", 5000, 40, 1), ("a", 10000, 5, 1), ("b", 10000, 60, 1)]),
    sides={LATE: Counter([("a", 6, 3000)])},
)
#: the same keyed by a column: one stage in the stream's key groups (the keyed plan) whatever
#: the parallelism, docs/architecture.md ("Key groups: many when one keyed operator reads the
#: sources")
UNION_BY_COLUMN = Program(UNION.files, _union(by_column=True), UNION.expected, UNION.sides)


def _parity_of_v(row: Any) -> str:
    return str(row.v % 2)


def _union_rekeyed(s: Sources) -> Any:
    sums = (s["a"].union(s["b"]).key_by("k").window(TUMBLING_5S)
            .allowed_lateness(Time.seconds(3)).sum("v"))
    return sums.key_by(_parity_of_v, key_type=Types.STRING()).window(TUMBLING_10S).sum("v")


#: UNION's files: sums per k (5 s, lateness 3 s) keyed by a column reading both sources (the
#: distributed plan's first node takes the rows itself), then sums per parity of the sum (10 s).
#: The first window's results as in UNION (sum keeps the first element's k and ts), each at
#: its window's end - 1: at 5999 a 15, b 22 (4999); b's a@2000 re-fires a 65 (4999, late data
#: downstream, on time there); a@3000 dropped at 8999; at 11999 a 33, b 40 (9999); at 19999
#: a 5, b 60 (14999). The second window: [0, 10 s) fires at 11999: odd 15+65+33 = 113 (a's
#: first: a 1000), even 22+40 = 62 (b 2000); [10 s, 20 s) at 19999: odd a 5, even b 60
UNION_REKEYED = Program(
    files=UNION.files, build=_union_rekeyed,
    expected=Counter([("a", 113, 1000), ("b", 62, 2000), ("a", 5, 12000), ("b", 60, 13000)]),
    sides={},
)


# -------------------------- (e) a window keyed by item, then a window keyed by its group
GROUP = {"a": "x", "b": "x", "c": "y"}


class ItemSum(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        total, _ = next(iter(elements))
        yield Row(item=key, grp=GROUP[key], total=total)


class GroupTotal(AggregateFunction):
    def create_accumulator(self) -> Any:
        return (0, 0)

    def add(self, value: Any, accumulator: Any) -> Any:
        return (accumulator[0] + value.total, accumulator[1] + 1)

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        return (acc_a[0] + acc_b[0], acc_a[1] + acc_b[1])


def _cascade(s: Sources) -> Any:
    items = (s["in"].key_by("k").window(TUMBLING_5S).allowed_lateness(Time.seconds(5))
             .side_output_late_data(LATE)
             .aggregate(SumCount(), ItemSum(), output_type="item string, grp string, total long"))
    return (items.key_by("grp").window(TUMBLING_10S).side_output_late_data(LATE_2)
            .aggregate(GroupTotal(), KeyStartSumCount(),
                       output_type="grp string, start long, total long, n long"))


#: item sums per 5 s (5 s lateness) feed group sums per 10 s (no lateness). Watermarks: MIN,
#: 2999, 7999, 7999, 11999, 20999, 29999. 7999: the item windows [0, 5 s) fire (a 1, b 2, c 3,
#: stamped 4999) into the open group window [0, 10 s); a@4000 then re-fires a's (1+6); a@2500
#: (batch 3) again (1+6+8). 11999: the item windows [5 s, 10 s) fire (a 4, c 5) before the group
#: windows [0, 10 s) fire (x 1+2+7+15+4 in 5 results, y 3+5 in 2); then b@9000 is within b's
#: lateness: b's new [5 s, 10 s) fires at once (10), stamped 9999, late in the group window
#: (its cleanup 9999 <= 11999): group late output. 20999: b's [10 s, 15 s) (7) fires x's
#: [10 s, 20 s); 29999: c's [20 s, 25 s) (9) fires y's [20 s, 30 s). a@3000 at 20999 is late
#: for its item window: item late output
CASCADE = Program(
    files={"in": [
        [ev("a", 1, 1000), ev("b", 2, 2000), ev("c", 3, 3000)],
        [ev("a", 4, 6000), ev("c", 5, 8000)],
        [ev("a", 6, 4000)],
        [ev("b", 7, 12000), ev("a", 8, 2500)],
        [ev("c", 9, 21000), ev("b", 10, 9000)],
        [ev("a", 11, 30000), ev("a", 12, 3000)],
    ]},
    build=_cascade,
    expected=Counter([("x", 0, 29, 5), ("y", 0, 8, 2), ("x", 10000, 7, 1), ("y", 20000, 9, 1)]),
    sides={LATE: Counter([("a", 12, 3000)]), LATE_2: Counter([("b", "x", 10)])},
)


# ---------- (g) item windows into one windowAll: not keyed, so it stays on one task (Flink:
# windowAll runs with parallelism 1)
class StartSumCount(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        total, n = next(iter(elements))
        yield (context.window().start, total, n)


def _cascade_all(s: Sources) -> Any:
    items = (s["in"].key_by("k").window(TUMBLING_5S).allowed_lateness(Time.seconds(5))
             .side_output_late_data(LATE)
             .aggregate(SumCount(), ItemSum(), output_type="item string, grp string, total long"))
    return (items.window_all(TUMBLING_10S).side_output_late_data(LATE_2)
            .aggregate(GroupTotal(), StartSumCount(), output_type="start long, total long, n long"))


#: CASCADE's item results into one 10 s windowAll: its groups x and y added up
CASCADE_ALL = Program(
    files=CASCADE.files,
    build=_cascade_all,
    expected=Counter([(0, 37, 7), (10000, 7, 1), (20000, 9, 1)]),
    sides=CASCADE.sides,
)


# ------------------- (f) a KeyedProcessFunction with event-time timers after a map's key_by
BEHIND = OutputTag("behind", Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()]))


class Totals(KeyedProcessFunction):
    """Adds each element's value to its key's total and reports the total 2 s after the
    element; an element at or behind the watermark goes to BEHIND instead (its timer is still
    set, in the past when it is 2 s behind: it fires at the next watermark increase)."""

    def open(self, runtime_context: Any) -> None:
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        if value.ts <= ctx.timer_service().current_watermark():
            ctx.output(BEHIND, (value.k, value.v, value.ts))
        else:
            self.total.update((self.total.value() or 0) + value.v)
        ctx.timer_service().register_event_time_timer(value.ts + 2000)
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), timestamp, self.total.value() or 0,
               ctx.timer_service().current_watermark())


def _upper(row: Any) -> Any:
    return Row(k=row.k.upper(), v=row.v * 10, ts=row.ts)


def _process(s: Sources) -> Any:
    mapped = s["in"].map(_upper, output_type=Types.ROW_NAMED(
        ["k", "v", "ts"], [Types.STRING(), Types.LONG(), Types.LONG()]))
    # keyed by a function: by the column "k", the keyed plan would take the map's rows itself
    return mapped.key_by(_k, key_type=Types.STRING()).process(
        Totals(), "k string, t long, total long, wm long")


#: Watermarks: MIN, 1499, 2499, 5999, 5999, 8999, 19999. A@500 (1499) is behind. 5999 (the
#: batch without data ending the first run) fires A@2500 (A@500's), A@3000 and A@4500 (total
#: 10+30) and B@3500
#: (20+50); A@3000 (batch 3) is behind, its timer 5000 too. B@5000 (5999) behind. 8999 fires
#: A@5000 (40), B@7000 and B@8000 (70); 19999 fires C@11000 (70). A@22000 stays
PROCESS = Program(
    files={"in": [
        [ev("a", 1, 1000), ev("b", 2, 1500)],
        [ev("a", 3, 2500), ev("a", 4, 500)],
        [ev("b", 5, 6000)],
        [ev("a", 6, 3000)],
        [ev("c", 7, 9000), ev("b", 8, 5000)],
        [ev("a", 9, 20000)],
    ]},
    build=_process,
    expected=Counter([("A", 2500, 40, 5999), ("A", 3000, 40, 5999), ("A", 4500, 40, 5999),
                      ("B", 3500, 70, 5999),
                      ("A", 5000, 40, 8999), ("B", 7000, 70, 8999), ("B", 8000, 70, 8999),
                      ("C", 11000, 70, 19999)]),
    sides={BEHIND: Counter([("A", 40, 500), ("A", 60, 3000), ("B", 80, 5000)])},
)

PROGRAMS = {"join": JOIN, "co_group": CO_GROUP, "interval": INTERVAL,
            "interval_exclusive": INTERVAL_EXCLUSIVE, "union": UNION,
            "union_by_column": UNION_BY_COLUMN, "union_rekeyed": UNION_REKEYED,
            "cascade": CASCADE, "process": PROCESS, "cascade_all": CASCADE_ALL}
#: programs that cannot be distributed (explain() says why): the one-task plan only
ONE_TASK_ONLY = {"cascade_all": "is not keyed: it runs with parallelism 1, as in Flink"}

def _params(broken: dict[str, Any], leave_out: Any = ()) -> list[Any]:
    return [pytest.param(name, marks=broken[name]) if name in broken else name
            for name in PROGRAMS if name not in leave_out]


PLANS = {"one_task": 1, "distributed": 2}
#: queries run at once in the shared session: more, on a loaded 2-core machine, and Spark's
#: Python worker for a transformWithStateInPandas query may time out connecting back
CONCURRENT_QUERIES = 6


# ---------------------------------------------------------------------------- the runs
@dataclass
class Run:
    main: Batches
    sides: dict[str, Batches]
    operators: list[str]
    #: per batch id: (the last file it read, whether it read none: a batch without data)
    batches: dict[int, tuple[int, bool]]
    #: the runs (0: the first start, 1: the restart) whose start warned that Spark restores
    #: no source's own watermark
    warned: list[int] = field(default_factory=list)


def _sources(spark: Any, root: Path, files: Files) -> Sources:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(0)).with_timestamp_assigner("ts")
    return {name: DataStream(spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
                             .json(str(root / name))).assign_timestamps_and_watermarks(strategy)
            for name in files}


def run_programs(spark: Any, root: Path, programs: dict[str, Program],
                 cuts: Sequence[int] = (0, RESTART_AFTER)) -> dict[str, dict[str, Any]]:
    """Every program under every plan, as concurrent queries of the one session over its files
    (shared by the plans), a run per cut: each run starts on the checkpoint of the one before
    with the next files. Per program and plan: its Run, or the exception its query raised."""
    out: dict[str, dict[str, Any]] = {
        name: {plan: Run({}, {t.tag_id: {} for t in p.sides}, [], {}) for plan in PLANS}
        for name, p in programs.items()}
    bounds: list[int | None] = [*cuts, None]

    def finish(started: list[Any]) -> None:
        for name, plan, query, sink, sides in started:
            try:
                query.awaitTermination()
            except Exception as failure:  # noqa: BLE001 (the program's test re-raises it)
                out[name][plan] = failure
                continue
            got = out[name][plan]
            got.main.update({b: Counter(tuple(r) for r in rows)
                             for b, rows in sink.batches.items()})
            for t, s in sides.items():
                got.sides[t.tag_id].update({b: Counter(tuple(r) for r in rows)
                                            for b, rows in s.batches.items()})
            got.operators = [op["operatorName"]
                             for op in query.lastProgress["stateOperators"]]
            got.batches.update({p["batchId"]: _files_read(p) for p in query.recentProgress})
        started.clear()

    for run, (lo, hi) in enumerate(zip(cuts, bounds[1:])):
        started: list[Any] = []
        for name, program in programs.items():
            for src, batches in program.files.items():
                write_batches(root / name / src, batches[lo:hi], first=lo)
            for plan, parallelism in PLANS.items():
                if isinstance(out[name][plan], BaseException) or (
                        parallelism > 1 and name in ONE_TASK_ONLY):
                    continue
                result = program.build(_sources(spark, root / name, program.files))
                if parallelism > 1:
                    result = result.set_parallelism(parallelism)
                label = f"agree_{name}_{plan}_{run}"
                sink = MemorySink(label)
                sides = {t: MemorySink(f"{label}_{t.tag_id}") for t in program.sides}
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    query = result.start(main=sink, side_outputs=sides,
                                         checkpoint_location=str(root / name / f"cp_{plan}"),
                                         trigger={"availableNow": True})
                if any(w.category is RestartedWatermarksWarning for w in caught):
                    out[name][plan].warned.append(run)
                started.append((name, plan, query, sink, sides))
            if len(started) >= CONCURRENT_QUERIES:
                finish(started)
        finish(started)
    return out


def _files_read(progress: Any) -> tuple[int, bool]:
    """The last file a batch read (the sources read one file each per batch) and whether it
    read none."""
    def offsets(which: str) -> list[int]:
        parsed = [json.loads(s[which] or "null") for s in progress["sources"]]
        return [-1 if p is None else p["logOffset"] for p in parsed]

    ends = offsets("endOffset")
    return max(ends), ends == offsets("startOffset")


@pytest.fixture(scope="module")
def runs(spark: Any, tmp_path_factory: Any) -> dict[str, dict[str, Any]]:
    return run_programs(spark, tmp_path_factory.mktemp("agree"), PROGRAMS)


def by_file(run: Run, batches: Batches) -> dict[tuple[int, bool], Counter[tuple[Any, ...]]]:
    """The non-empty batches' outputs, each under the last file it read and whether it read
    none (a batch without data after that file): where the outputs stand in the input,
    whatever batches without output a plan runs in between (the one-task plan's wake-up clock
    may run one more before a restart, docs/spark-semantics.md)."""
    out: dict[tuple[int, bool], Counter[tuple[Any, ...]]] = {}
    for b, c in sorted(batches.items()):
        if c:
            key = run.batches[b]
            assert key not in out, f"two batches with outputs after file {key[0]}"
            out[key] = c
    return out


def total(batches: Batches) -> Counter[tuple[Any, ...]]:
    return sum(batches.values(), Counter())


def _outcome(runs: dict[str, dict[str, Any]], name: str, plan: str) -> Run:
    outcome = runs[name][plan]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


@pytest.mark.parametrize("name", _params({}))
def test_the_one_task_plan_gives_flinks_outputs(runs: dict[str, Any], name: str) -> None:
    got, program = _outcome(runs, name, "one_task"), PROGRAMS[name]
    assert total(got.main) == program.expected
    for tag, expected in program.sides.items():
        assert total(got.sides[tag.tag_id]) == expected, tag.tag_id


@pytest.mark.parametrize("name", _params(
    {}, ONE_TASK_ONLY))
def test_the_distributed_plan_equals_the_one_task_plan_batch_by_batch(
    runs: dict[str, Any], name: str
) -> None:
    one, dist = _outcome(runs, name, "one_task"), _outcome(runs, name, "distributed")
    assert by_file(dist, dist.main) == by_file(one, one.main)
    for tag in PROGRAMS[name].sides:
        assert by_file(dist, dist.sides[tag.tag_id]) == by_file(one, one.sides[tag.tag_id]), \
            tag.tag_id
    assert total(dist.main) == PROGRAMS[name].expected


#: the stateful operators of each program's distributed run: a transformWithStateInPandas per
#: keyed node; a graph whose one keyed operator reads the sources keyed by columns runs as one
#: stage in the stream's key groups (the keyed plan) under both plans
KEYED_PLAN = ["applyInPandasWithState"]
CHAINED = "transformWithStateInPandasExec"
DISTRIBUTED_OPERATORS = {
    "join": [CHAINED], "co_group": [CHAINED], "interval": KEYED_PLAN,
    "interval_exclusive": [CHAINED], "union": [CHAINED], "union_by_column": KEYED_PLAN,
    "union_rekeyed": [CHAINED, CHAINED],
    "cascade": [CHAINED, CHAINED], "process": [CHAINED],
}


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in ONE_TASK_ONLY])
def test_each_program_runs_on_the_plan_it_is_meant_to(runs: dict[str, Any], name: str) -> None:
    dist, one = _outcome(runs, name, "distributed"), _outcome(runs, name, "one_task")
    assert dist.operators == DISTRIBUTED_OPERATORS[name]
    assert one.operators == ["applyInPandasWithState"]


@pytest.mark.parametrize("name", [n for n in PROGRAMS if n not in ONE_TASK_ONLY])
def test_a_restart_of_a_graph_keeping_its_own_source_clocks_does_not_warn(
    runs: dict[str, Any], name: str
) -> None:
    """Every plan here keeps the sources' greatest timestamps in its state (one task: its key
    group; the keyed plan: heartbeats; the distributed plan: clock rows), so no restart warns
    that Spark forgot them."""
    for plan in PLANS:
        assert _outcome(runs, name, plan).warned == [], plan


@pytest.mark.parametrize("name", list(ONE_TASK_ONLY))
def test_a_program_that_cannot_be_distributed_says_why_and_refuses_set_parallelism(
    spark: Any, tmp_path: Path, name: str
) -> None:
    program = PROGRAMS[name]
    for src, batches in program.files.items():
        write_batches(tmp_path / src, batches)
    result = program.build(_sources(spark, tmp_path, program.files))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result.explain()
    assert re.search(r"distributed : no: .*" + re.escape(ONE_TASK_ONLY[name]), out.getvalue())
    with pytest.raises(PipelineError, match=r"setParallelism\(2\): this stream graph runs in "
                       r"one task \(.*" + re.escape(ONE_TASK_ONLY[name])):
        result.set_parallelism(2)
