"""An independent reference model of Flink's DataStream semantics for the grammar of
``fuzz_graphs.py`` (a dev script, never run by ``make test``).

Written from Flink's Java sources, not from flinkwin (it imports nothing from flinkwin): small,
slow and meant to be obviously right. It runs a graph spec (the tuples ``fuzz_graphs.Grammar``
draws beside its closures) over per-source input files and returns, per input file, the
multiset of main-output rows and of each collected side output's rows.

Flink's rules it follows:

- ``BoundedOutOfOrdernessWatermarks``: a source's watermark is ``max ts - delay - 1``
  (``Long.MIN_VALUE`` before its first element); ``StatusWatermarkValve`` and the two-input
  operators: an operator's watermark is the minimum over its inputs, here the minimum over
  the sources it reads; an operator advances only when that minimum increases.
- ``InternalTimerServiceImpl``: event-time timers are a set per (timestamp, key, namespace)
  (registering one twice keeps one); ``advanceWatermark(w)`` fires every timer ``<= w`` in
  timestamp order, including timers registered while firing.
- ``WindowOperator``: ``isWindowLate`` iff ``maxTimestamp + allowedLateness <= watermark``
  (such a window is skipped; a merging one is retired); an element all of whose windows were
  skipped goes to ``sideOutputLateData`` iff ``isElementLate`` (``ts + allowedLateness <=
  watermark``), else is dropped; after each window's element the cleanup timer at
  ``maxTimestamp + allowedLateness``; ``onEventTime`` fires the trigger, then clears the
  window when the timer is its cleanup time. ``EventTimeTrigger``: ``onElement`` fires at once
  when ``maxTimestamp <= watermark`` (a late-but-allowed element re-fires the whole window),
  else registers ``maxTimestamp``; ``onEventTime`` fires iff ``time == maxTimestamp``;
  ``onMerge`` registers the merged window's ``maxTimestamp`` when it is after the watermark;
  ``clear`` deletes it. Results carry ``window.maxTimestamp()`` (``TimestampedCollector``).
- Assigners: ``TimeWindow.getWindowStartWithOffset``, sliding windows from the last
  start down while ``start > ts - size``, sessions ``[ts, ts + gap)`` merged by
  ``TimeWindow.mergeWindows`` (``intersects``: ``start <= other.end && end >= other.start``,
  so touching sessions merge). ``MergingWindowSet.addWindow``: a new window inside an
  existing one merges into it without ``onMerge``; merged windows' trigger and cleanup timers
  are deleted.
- ``JoinedStreams``/``CoGroupedStreams``: a keyed window over the union of the two tagged
  inputs, applying ``CoGroupWindowFunction`` (a join emits every pair of the window's two
  sides, a coGroup calls the function once per window).
- ``IntervalJoinOperator``: exclusive bounds move by one ms inward; an element is late iff
  ``ts < watermark`` (side output); else buffered by timestamp and joined with the other
  side's buckets within bounds (result timestamp the greater of the two); cleanup timers at
  ``ts + upper`` (``upper > 0``, else ``ts``) for the left, ``ts - lower`` (``lower < 0``,
  else ``ts``) for the right, each removing its bucket.
- ``KeyedProcessOperator``: elements with their timestamp, timers' outputs at the timer's
  timestamp, ``currentWatermark()`` the operator's.

The micro-batch mapping (docs/spark-semantics.md, "Stream graphs"): batch N reads file N of
every source; a source's watermark in batch N comes from its files before N; in a batch the
watermarks come first (operators advance in topological order, what one fires reaching the
next ones before they advance), then the batch's elements in arrival order (the sources in
the graph's source order, each file's rows in file order), each through the whole graph before
the next. After the last file one more step advances the watermarks (Spark's batch without
data); its outputs are counted at the index ``n_files``. Not modelled: ``with_idleness``
(processing time) — ``supported`` says why a spec is refused.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

MIN_LONG = -(2**63)
Row = tuple[str, int, int]  # k, v, ts
Emit = Callable[[Row, int], None]


# --------------------------------------------------------------------------- user functions
def key_of(selector: str, row: Row) -> str:
    """``k`` and ``fn k`` key by the column, ``coarse`` by its first letter's pair."""
    if selector == "coarse":
        return "ab" if row[0][:1] in ("a", "b", "A", "B") else "cd"
    return row[0]


def window_start(ts: int, offset: int, size: int) -> int:
    """``TimeWindow.getWindowStartWithOffset``: ``ts - (ts - offset + size) % size``, with
    Java's remainder (the sign of the dividend)."""
    dividend = ts - offset + size
    remainder = abs(dividend) % size * (1 if dividend >= 0 else -1)
    return ts - remainder


class Node:
    """An operator or step of the tree; ``out`` hands its outputs to the parent."""

    def __init__(self, children: list[Node]) -> None:
        self.children = children
        self.out: Emit = lambda row, ts: None
        self.sources: set[str] = set().union(*(c.sources for c in children)) if children else set()
        self.wm = MIN_LONG
        self.timers: dict[tuple[Any, ...], int] = {}  # (time, key, namespace) -> registration
        self.seq = 0

    def receive(self, port: int, row: Row, ts: int) -> None:
        raise NotImplementedError

    # the timer service
    def register(self, time: int, key: Any, ns: Any) -> None:
        if (time, key, ns) not in self.timers:
            self.seq += 1
            self.timers[(time, key, ns)] = self.seq

    def delete(self, time: int, key: Any, ns: Any) -> None:
        self.timers.pop((time, key, ns), None)

    def advance(self, wm: int) -> None:
        self.wm = wm
        while True:
            due = [t for t in self.timers if t[0] <= wm]
            if not due:
                return
            first = min(due, key=lambda t: (t[0], self.timers[t]))
            del self.timers[first]
            self.on_timer(*first)

    def on_timer(self, time: int, key: Any, ns: Any) -> None:
        raise NotImplementedError


#: the clock of a source whose watermark Spark computes (a filter right after its
#: ``assign_timestamps_and_watermarks`` runs before the graph stage): Spark's minimum over all
#: the query's sources (docs/spark-semantics.md, "What is not like Flink": "Such a source's
#: watermark is Spark's minimum over all the query's sources")
SPARK = "*spark*"


class Leaf(Node):
    """A source as an operator reads it: its clock is its own watermark, or Spark's."""

    def __init__(self, name: str, spark: bool) -> None:
        super().__init__([])
        self.name = name
        self.sources = {SPARK if spark else name}
        self.filtered = False  # a filter before the stage (its rows never reach the stage)

    def receive(self, port: int, row: Row, ts: int) -> None:
        self.out(row, ts)


class Pass(Node):
    """A union, ``map(double_v)`` or ``filter(not_div3)``."""

    def __init__(self, kind: str, children: list[Node]) -> None:
        super().__init__(children)
        self.kind = kind

    def receive(self, port: int, row: Row, ts: int) -> None:
        if self.kind == "map":
            self.out((row[0], row[1] * 2, row[2]), ts)
        elif self.kind != "filter" or row[1] % 3 != 0:
            self.out(row, ts)


class Window(Node):
    """A keyed window (one input) or a window join/coGroup (two inputs, tagged by port)."""

    def __init__(self, children: list[Node], keys: list[str], assigner: tuple[Any, ...],
                 lateness: int, late: Callable[[Row], None] | None, function: str) -> None:
        super().__init__(children)
        self.keys, self.assigner, self.lateness = keys, assigner, lateness
        self.late, self.function = late, function
        self.state: dict[str, dict[tuple[int, int], list[tuple[int, Row]]]] = defaultdict(dict)

    def assign(self, ts: int) -> list[tuple[int, int]]:
        kind = self.assigner[0]
        if kind == "tumbling":
            size, offset = self.assigner[1], self.assigner[2]
            start = window_start(ts, offset, size)
            return [(start, start + size)]
        if kind == "sliding":
            size, slide, offset = self.assigner[1], self.assigner[2], self.assigner[3]
            out, start = [], window_start(ts, offset, slide)
            while start > ts - size:
                out.append((start, start + size))
                start -= slide
            return out
        return [(ts, ts + self.assigner[1])]

    def receive(self, port: int, row: Row, ts: int) -> None:
        key = key_of(self.keys[port], row)
        windows = self.state[key]
        skipped = True
        for w in self.assign(ts):
            if self.assigner[0] == "session":
                w = self.merge(key, w)
            if w[1] - 1 + self.lateness <= self.wm:  # isWindowLate
                if self.assigner[0] == "session" and not windows.get(w):
                    windows.pop(w, None)  # retired: it never held anything
                continue
            skipped = False
            windows.setdefault(w, []).append((port, row))
            if w[1] - 1 <= self.wm:  # EventTimeTrigger.onElement: FIRE
                self.emit(key, w)
            else:
                self.register(w[1] - 1, key, w)
            self.register(w[1] - 1 + self.lateness, key, w)  # the cleanup timer
        if skipped and ts + self.lateness <= self.wm and self.late is not None:
            self.late(row)

    def merge(self, key: str, new: tuple[int, int]) -> tuple[int, int]:
        """MergingWindowSet.addWindow over TimeWindow.mergeWindows: the window the element
        goes to, its contents moved from the windows it merged."""
        windows = self.state[key]
        group = [w for w in windows if w[0] <= new[1] and w[1] >= new[0]]
        if not group:
            windows[new] = []
            return new
        cover = (min([new[0]] + [w[0] for w in group]), max([new[1]] + [w[1] for w in group]))
        if len(group) == 1 and group[0] == cover:
            return cover  # inside an existing window: no merge, no onMerge
        contents: list[tuple[int, Row]] = []
        for w in group:
            contents += windows.pop(w)
            if w != cover:
                self.delete(w[1] - 1, key, w)  # the trigger's clear
                self.delete(w[1] - 1 + self.lateness, key, w)  # deleteCleanupTimer
        windows[cover] = contents
        if cover[1] - 1 > self.wm:  # EventTimeTrigger.onMerge
            self.register(cover[1] - 1, key, cover)
        return cover

    def on_timer(self, time: int, key: Any, ns: Any) -> None:
        windows = self.state[key]
        if ns not in windows:
            return
        if time == ns[1] - 1:
            self.emit(key, ns)
        if time == ns[1] - 1 + self.lateness:
            del windows[ns]
            self.delete(ns[1] - 1, key, ns)

    def emit(self, key: str, w: tuple[int, int]) -> None:
        contents = self.state[key][w]
        if not contents:
            return
        mts = w[1] - 1
        rows = [r for _, r in contents]
        if self.function == "sum":  # KeyWindowSum (over SumCount or the elements)
            self.out((key, sum(r[1] for r in rows) * 100 + len(rows), mts), mts)
            return
        first = [r for p, r in contents if p == 0]
        second = [r for p, r in contents if p == 1]
        if self.function == "join":  # join_pair over every pair
            for a in first:
                for b in second:
                    self.out((min(a[0], b[0]), a[1] * 1000 + b[1], max(a[2], b[2])), mts)
            return
        self.out((min(r[0] for r in rows), sum(r[1] for r in first) * 1000
                  + sum(r[1] for r in second) * 10 + len(rows), max(r[2] for r in rows)), mts)


class IntervalJoin(Node):
    def __init__(self, children: list[Node], keys: list[str], lo: int, hi: int, lo_ex: bool,
                 hi_ex: bool, late: list[Callable[[Row], None]]) -> None:
        super().__init__(children)
        self.keys, self.late = keys, late
        self.lo, self.hi = lo + lo_ex, hi - hi_ex
        self.buffers: list[dict[str, dict[int, list[Row]]]] = [
            defaultdict(lambda: defaultdict(list)), defaultdict(lambda: defaultdict(list))]

    def receive(self, port: int, row: Row, ts: int) -> None:
        key = key_of(self.keys[port], row)
        if ts < self.wm:
            self.late[port](row)
            return
        self.buffers[port][key][ts].append(row)
        lo, hi = (self.lo, self.hi) if port == 0 else (-self.hi, -self.lo)
        for other_ts, rows in list(self.buffers[1 - port][key].items()):
            if other_ts < ts + lo or other_ts > ts + hi:
                continue
            for other in rows:
                left, right = (row, other) if port == 0 else (other, row)
                when = max(ts, other_ts)
                self.out((left[0], left[1] * 1000 + right[1], when), when)
        self.register(ts + hi if hi > 0 else ts, key, port)

    def on_timer(self, time: int, key: Any, ns: Any) -> None:
        if ns == 0:
            bucket = time if self.hi <= 0 else time - self.hi
        else:
            bucket = time + self.lo if self.lo <= 0 else time
        self.buffers[ns][key].pop(bucket, None)


class Process(Node):
    """``KeyedProcessFunction`` ``Totals``: a ValueState total and a timer ``delay`` after each
    element; an element at or behind the watermark goes to ``behind`` instead of the total."""

    def __init__(self, child: Node, key: str, delay: int, behind: Callable[[Row], None]) -> None:
        super().__init__([child])
        self.key, self.delay, self.behind = key, delay, behind
        self.total: dict[str, int] = {}

    def receive(self, port: int, row: Row, ts: int) -> None:
        key = key_of(self.key, row)
        if ts <= self.wm:
            self.behind((row[0], row[1], ts))
        else:
            self.total[key] = self.total.get(key, 0) + row[1]
        self.register(ts + self.delay, key, None)

    def on_timer(self, time: int, key: Any, ns: Any) -> None:
        self.out((key, self.total.get(key, 0), time), time)


# --------------------------------------------------------------------------- the run
Spec = tuple[Any, ...]
PerFile = dict[int, Counter]


def supported(spec: Spec, sources: dict[str, Any]) -> str | None:
    """Why the oracle cannot run ``spec``, or None. Idleness (processing time) only matters
    to an operator reading two or more sources: one source's valve gives its own watermark,
    idle or not (``StatusWatermarkValve``)."""
    idle = {name for name, s in sources.items() if s.idle}
    run = Run(spec)
    used = {leaf.name for leaf in run.leaves}
    for node in run.order:
        read = (node.sources - {SPARK}) | (used if SPARK in node.sources else set())
        if len(read) > 1 and read & idle:
            return "with_idleness on a source of a multi-source operator"
    return None


class Run:
    def __init__(self, spec: Spec) -> None:
        self.place = 0
        self.main: PerFile = defaultdict(Counter)
        self.sides: dict[str, PerFile] = defaultdict(lambda: defaultdict(Counter))
        self.leaves: list[Leaf] = []
        self.order: list[Node] = []  # children before parents
        self.root = self.build(spec)
        self.root.out = lambda row, ts: self.main[self.place].update([row])

    def side(self, tag: str | None) -> Callable[[Row], None] | None:
        if tag is None:
            return None
        return lambda row: self.sides[tag][self.place].update([row])

    def build(self, spec: Spec, spark: bool = False) -> Node:
        kind = spec[0]
        if kind == "source":
            node: Node = Leaf(spec[1], spark)
            self.leaves.append(node)
            return node
        if kind == "filter" and spec[1][0] == "source":
            # Spark's watermark, taken before the filter (a map keeps every element: the
            # stage generates a mapped source's watermark itself, as any source's)
            node = Pass(kind, [self.build(spec[1], spark=True)])
            node.children[0].filtered = True  # type: ignore[attr-defined]
        elif kind in ("union", "map", "filter"):
            node = Pass(kind, [self.build(s) for s in spec[1:]])
        elif kind == "window":
            _, up, key, assigner, lateness, late = spec
            node = Window([self.build(up)], [key], assigner, lateness, self.side(late), "sum")
        elif kind in ("join", "cogroup"):
            _, left, right, where, assigner, lateness = spec
            node = Window([self.build(left), self.build(right)], [where, where], assigner,
                          lateness, None, kind)
        elif kind == "interval":
            _, left, right, lkey, rkey, lo, hi, lo_ex, hi_ex, ltag, rtag = spec
            node = IntervalJoin([self.build(left), self.build(right)], [lkey, rkey], lo, hi,
                                lo_ex, hi_ex, [self.side(ltag), self.side(rtag)])  # type: ignore[list-item]
        elif kind == "process":
            _, up, key, delay, behind = spec
            node = Process(self.build(up), key, delay, self.side(behind))  # type: ignore[arg-type]
        else:
            raise ValueError(f"unknown spec {kind}")
        for port, child in enumerate(node.children):
            child.out = (lambda p: lambda row, ts: node.receive(p, row, ts))(port)
        self.order.append(node)
        return node

    def watermarks(self, wms: dict[str, int]) -> None:
        for node in self.order:
            if isinstance(node, Pass):
                continue
            wm = min(wms[s] for s in node.sources)
            if wm > node.wm:
                node.advance(wm)

    def reaching(self, files: dict[str, list[Row]]) -> bool:
        """Whether any of ``files``' rows reaches the stage (past a filter before it)."""
        return any(not leaf.filtered or row[1] % 3 != 0
                   for leaf in self.leaves for row in files[leaf.name])

    def elements(self, files: dict[str, list[Row]]) -> None:
        names = list(dict.fromkeys(leaf.name for leaf in self.leaves))
        for name in names:
            for row in files[name]:
                for leaf in self.leaves:
                    if leaf.name == name:
                        leaf.receive(0, row, row[2])


def run(spec: Spec, files: dict[str, list[list[Row]]], delays: dict[str, int]
        ) -> tuple[PerFile, dict[str, PerFile]]:
    """Main and side outputs per input file index (``n_files``: the step after the last).

    Where a source has Spark's watermark in a graph of two or more sources, Spark's watermark
    is that minimum (no wake-up clock), and the stage runs only when Spark calls it
    (docs/spark-semantics.md, "When the stage runs"): in a micro-batch that brings it rows,
    or when Spark's watermark passes its timeout (``max(earliest timer - 1, watermark)``, set
    after each call); Spark runs the batch without data after the last file only when its
    watermark moved. Otherwise every step runs (the wake-up clock, or one source)."""
    r = Run(spec)
    n = len(next(iter(files.values())))
    used = {leaf.name for leaf in r.leaves}
    gated = len(used) > 1 and any(SPARK in leaf.sources for leaf in r.leaves)
    highest: dict[str, int | None] = {s: None for s in files}
    spark_before, timeout = MIN_LONG, None
    for i in range(n + 1):
        r.place = i
        wms = {s: MIN_LONG if h is None else h - delays[s] - 1 for s, h in highest.items()}
        wms[SPARK] = min(wms[s] for s in used)  # Spark's 0 before every source had data: MIN
        batch = {s: f[i] if i < n else [] for s, f in files.items()}
        if gated:
            ran = i < n or wms[SPARK] > spark_before
            called = ran and (r.reaching(batch) or (timeout is not None
                                                     and timeout < wms[SPARK]))
            spark_before = wms[SPARK]
        if not gated or called:
            r.watermarks(wms)
            r.elements(batch)
            timers = [t[0] for node in r.order for t in node.timers]
            timeout = max(min(timers) - 1, wms[SPARK]) if timers else None
        for s, rows in batch.items():  # filtered rows too: Spark's watermark saw them
            for row in rows:
                highest[s] = row[2] if highest[s] is None else max(highest[s], row[2])
    main = {p: c for p, c in r.main.items() if c}
    sides = {t: {p: c for p, c in per.items() if c} for t, per in r.sides.items()}
    return main, sides
