"""Differential fuzzer for stream graphs (a dev script, never run by ``make test``).

For each seed: draw a random graph from a small grammar and random input files, run it as
concurrent queries of one local session, and compare the outputs file by file:

- ``one``/``dist``: the one-task plan and ``set_parallelism(2)`` (the distributed plan), each
  uninterrupted (``.../full``) and stopped after a random file then restarted on its
  checkpoint (``.../cut``);
- ``todf``: the one-task plan's ``toDF().writeStream`` started with the session at Spark's
  default of 200 shuffle partitions (main output only).

Invariants (docs/spark-semantics.md, "Stream graphs"): every variant gives ``one/full``'s
outputs at the same place in the input. A place is the file a batch read; a batch without
data after file j is the watermark step of batch j + 1 (in a batch the watermark comes first),
so it is counted under j + 1: that is where a restart's extra batch at the end of its first
run, and the one-task plan's wake-up clock batches, stand in the uninterrupted run. Not
compared across a restart (documented differences, docs/spark-semantics.md): a graph with
``with_idleness`` (processing time: the restart's batch without data turns every source
idle), and a restart that warned ``RestartedWatermarksWarning`` (a source's watermark is
Spark's: it lags after a restart). A plan refusing ``set_parallelism(2)`` with its reason is
no mismatch.

Grammar: 1-3 sources ``k string, v long, ts long`` (out-of-orderness 0-3000 ms, some with
``with_idleness(1 ms)``), optionally ``map``/``filter``-ed; a node is a source (or a union of
sources), or an operator over nodes: a keyed window (tumbling/sliding/session, lateness,
late side output, keyed by the column, by a function, or re-keyed coarser), a window
``join``/``coGroup``, an ``interval_join`` (negative/exclusive bounds, late side outputs), a
``KeyedProcessFunction`` with event-time timers and ValueState (behind-the-watermark side
output); operators nest up to depth 2, with ``map``/``filter`` between them. Every operator
outputs rows ``k, v, ts`` (ts: the result's timestamp), so any can feed any.

``--oracle`` also compares ``one/full`` (so every variant) with ``graph_oracle``, a reference
model of Flink written from Flink's sources that shares no code with flinkwin, file by file;
``--oracle-only`` runs only ``one/full`` and the oracle (cheaper). Seeds whose graph the oracle
does not model (``graph_oracle.supported``) are counted as skipped. ``--edges`` draws most
timestamps on window and watermark edges, ``--offsets`` windows with offsets (both change the
draws); ``--record DIR`` keeps ``one/full``'s outputs, which ``--replay DIR`` compares with the
oracle again without Spark (after a change to the oracle).

    PYTHONPATH=$PWD .venv/bin/python bench/probes/fuzz_graphs.py --seeds 0-19 [--verbose]
    PYTHONPATH=$PWD .venv/bin/python bench/probes/fuzz_graphs.py --seeds 0-99 --oracle-only \
        --edges --offsets --record /tmp/rec
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent.parent / "tests"
sys.path[:0] = [str(TESTS / "spark"), str(TESTS)]
os.environ["PYSPARK_PYTHON"] = sys.executable
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(HERE), str(TESTS / "spark"), os.environ.get("PYTHONPATH", "")])

import fuzz_graph_functions as fn  # noqa: E402
import graph_oracle  # noqa: E402
from batch_files import write_batches  # noqa: E402
from conftest import _create_session as session  # noqa: E402

from flinkwin import (  # noqa: E402
    Duration,
    EventTimeSessionWindows,
    OutputTag,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream  # noqa: E402
from flinkwin.datastream.graph_stream import RestartedWatermarksWarning  # noqa: E402
from flinkwin.spark import MemorySink  # noqa: E402

SCHEMA = "k string, v long, ts long"
ROW = Types.ROW_NAMED(["k", "v", "ts"], [Types.STRING(), Types.LONG(), Types.LONG()])
KEYS = ["a", "b", "c", "d"]
#: the times' origin: far enough past the epoch for every watermark to be certain (before,
#: reading it fails with UncertainWatermarkError, docs/spark-semantics.md); a multiple of
#: every window size. Descriptions show times relative to it
T0 = 1_000_000
Place = int
Spec = tuple[Any, ...]
Built = tuple[Any, str, Spec]  # a builder over the sources, its description, its spec
Outputs = dict[Place, Counter[tuple[Any, ...]]]
#: ``--edges``: draw most timestamps on or next to a multiple of 500 ms, where windows end and
#: watermarks (delays and lateness are multiples of 500) reach them
EDGES = False
#: ``--offsets``: tumbling and sliding windows with offsets (other draws)
OFFSETS = False


# ------------------------------------------------------------------------------ the draw
@dataclass
class Source:
    name: str
    delay_ms: int
    idle: bool
    files: list[list[dict[str, Any]]]


@dataclass
class Draw:
    """A random program: its sources, a builder over them, its side-output tags."""

    seed: int
    sources: list[Source]
    desc: str
    build: Any
    tags: list[OutputTag] = field(default_factory=list)
    cut: int = 1
    spec: Any = None  # the same program as data, for graph_oracle


def draw_files(rng: random.Random, n_files: int, serial: list[int]) -> list[list[dict]]:
    files: list[list[dict]] = []
    seen: list[int] = [0]
    for i in range(n_files):
        rows = []
        for _ in range(rng.randint(0, rng.choice([3, 6, 15]))):
            r = rng.random()
            if r < 0.15:
                ts = rng.choice(seen)  # a duplicate timestamp
            elif r < 0.35:
                ts = rng.randint(0, max(0, i * 2500 - 2000))  # behind: late, or within lateness
            else:
                ts = i * 2500 + rng.randint(-1500, 3000)
            if EDGES and rng.random() < 0.6:  # on a window's, lateness's or delay's edge
                ts = round(ts / 500) * 500 + rng.choice([-1, 0, 0, 1])
            ts = max(ts, 0)
            seen.append(ts)
            serial[0] += 1
            rows.append({"k": rng.choice(KEYS), "v": serial[0], "ts": T0 + ts})
        files.append(rows)
    return files


class Grammar:
    """Draws a program as a tree of closures over the sources, with its description."""

    def __init__(self, rng: random.Random, sources: list[Source]) -> None:
        self.rng, self.sources, self.tags = rng, sources, []
        self.used: set[str] = set()

    def tag(self, name: str, collected: bool = True) -> OutputTag:
        """A side output's tag. A join's late elements are TaggedUnions, which no type
        describes (start() refuses them): their tag is set, its output not collected."""
        if not collected:
            return OutputTag(f"{name}_uncollected{len(self.tags)}")
        t = OutputTag(f"{name}{len(self.tags)}", ROW)
        self.tags.append(t)
        return t

    def between(self, build: Any, desc: str, spec: Spec) -> Built:
        """Maybe a map or a filter after ``build``."""
        r = self.rng.random()
        if r < 0.15:
            return ((lambda s: build(s).map(fn.double_v, output_type=ROW)), f"map({desc})",
                    ("map", spec))
        if r < 0.3:
            return (lambda s: build(s).filter(fn.not_div3)), f"filter({desc})", ("filter", spec)
        return build, desc, spec

    def leaf(self) -> Built:
        """A source, or a union of two (of one type: a map goes after the union)."""
        free = [s.name for s in self.sources if s.name not in self.used] or [
            s.name for s in self.sources]
        name = self.rng.choice(free)
        self.used.add(name)
        others = [s.name for s in self.sources if s.name not in self.used]
        if others and self.rng.random() < 0.3:
            other = self.rng.choice(others)
            self.used.add(other)
            return self.between(lambda s: s[name].union(s[other]), f"union({name}, {other})",
                                ("union", ("source", name), ("source", other)))
        return self.between(lambda s: s[name], name, ("source", name))

    def node(self, depth: int) -> Built:
        if depth == 0 or self.rng.random() < 0.35:
            return self.leaf()
        return self.between(*self.operator(depth))

    def operator(self, depth: int) -> Built:
        kind = self.rng.choice(["window", "window", "join", "cogroup", "interval", "process"])
        if kind in ("window", "process"):
            up, d, us = self.node(depth - 1)
            key, kd = self.key()
            if kind == "process":
                delay = self.rng.choice([0, 1000, 2500])
                behind = self.tag("behind")
                return (lambda s: key(up(s)).process(fn.Totals(delay, behind), ROW),
                        f"process({kd}({d}), timer +{delay}, behind->{behind.tag_id})",
                        ("process", us, kd[4:-1], delay, behind.tag_id))
            assigner, ad, a_spec = self.assigner()
            lateness = self.rng.choice([0, 0, 2000, 5000])
            late = self.tag("late") if self.rng.random() < 0.6 else None
            agg = self.rng.random() < 0.5

            def window(s: Any) -> Any:
                w = key(up(s)).window(assigner)
                if lateness:
                    w = w.allowed_lateness(Time.milliseconds(lateness))
                if late is not None:
                    w = w.side_output_late_data(late)
                if agg:
                    return w.aggregate(fn.SumCount(), fn.KeyWindowSum(), output_type=ROW)
                return w.process(fn.KeyWindowSum(), output_type=ROW)
            late_d = f", late->{late.tag_id}" if late else ""
            return window, (f"window({kd}({d}), {ad}, lateness {lateness}{late_d}"
                            f"{', aggregate' if agg else ''})"), (
                "window", us, kd[4:-1], a_spec, lateness, late.tag_id if late else None)
        left, ld, ls = self.node(depth - 1)
        right, rd, rs = self.node(depth - 1)
        if kind == "interval":
            lkey, lkd = self.key()
            rkey, rkd = self.key(same_as=lkd[4:-1])
            lo = self.rng.choice([-3000, -1000, 0, 500])
            hi = self.rng.choice([lo, lo + 1000, 2000, 3000])
            lo_ex, hi_ex = self.rng.random() < 0.3, self.rng.random() < 0.3
            if hi - lo < 1 + lo_ex + hi_ex:  # an empty interval: inclusive instead
                lo_ex = hi_ex = False
            ltag, rtag = self.tag("left_late"), self.tag("right_late")

            def interval(s: Any) -> Any:
                j = lkey(left(s)).interval_join(rkey(right(s))).between(
                    Time.milliseconds(lo), Time.milliseconds(hi))
                if lo_ex:
                    j = j.lower_bound_exclusive()
                if hi_ex:
                    j = j.upper_bound_exclusive()
                return (j.side_output_left_late_data(ltag).side_output_right_late_data(rtag)
                        .process(fn.PairJoin(), output_type=ROW))
            bounds = f"{'(' if lo_ex else '['}{lo}, {hi}{')' if hi_ex else ']'}"
            return interval, f"interval_join({lkd}({ld}), {rkd}({rd}), {bounds})", (
                "interval", ls, rs, lkd[4:-1], rkd[4:-1], lo, hi, lo_ex, hi_ex, ltag.tag_id,
                rtag.tag_id)
        where, wd = self.selector()
        assigner, ad, a_spec = self.assigner()
        lateness = self.rng.choice([0, 0, 2000])
        late = self.tag("late", collected=False) if self.rng.random() < 0.4 else None

        def two(s: Any) -> Any:
            w = (left(s).join(right(s)) if kind == "join" else left(s).co_group(right(s)))
            w = w.where(*where).equal_to(*where).window(assigner)
            if lateness:
                w = w.allowed_lateness(Time.milliseconds(lateness))
            if late is not None:
                w = w.side_output_late_data(late)
            return w.apply(fn.join_pair if kind == "join" else fn.CoSum(), output_type=ROW)
        late_d = f", late->{late.tag_id}" if late else ""
        return two, f"{kind}({ld}, {rd}, by {wd}, {ad}, lateness {lateness}{late_d})", (
            kind, ls, rs, wd, a_spec, lateness)

    def selector(self) -> tuple[tuple[Any, ...], str]:
        r = self.rng.random()
        if r < 0.4:
            return ("k",), "k"
        if r < 0.7:
            return (fn.key_k, Types.STRING()), "fn k"
        return (fn.coarse, Types.STRING()), "coarse"

    def key(self, same_as: str | None = None) -> tuple[Any, str]:
        choices = {"k": lambda st: st.key_by("k"),
                   "fn k": lambda st: st.key_by(fn.key_k, key_type=Types.STRING()),
                   "coarse": lambda st: st.key_by(fn.coarse, key_type=Types.STRING())}
        if same_as is not None:
            name = "fn k" if same_as == "k" and self.rng.random() < 0.5 else same_as
            if same_as == "fn k" and self.rng.random() < 0.5:
                name = "k"
        else:
            name = self.rng.choice(list(choices))
        return choices[name], f"key[{name}]"

    def assigner(self) -> tuple[Any, str, Spec]:
        r = self.rng.random()
        if r < 0.7:  # --offsets: multiples of 500, as the timestamps of --edges
            offset = self.rng.choice([0, 0, 500, -1500]) if OFFSETS else 0
            at = f" offset {offset}" if offset else ""
        if r < 0.4:
            size = self.rng.choice([2000, 5000])
            return (TumblingEventTimeWindows.of(Time.milliseconds(size), Time.milliseconds(offset)),
                    f"tumbling {size}{at}", ("tumbling", size, offset))
        if r < 0.7:
            return (SlidingEventTimeWindows.of(Time.milliseconds(4000), Time.milliseconds(2000),
                                               Time.milliseconds(offset)),
                    f"sliding 4000/2000{at}", ("sliding", 4000, 2000, offset))
        gap = self.rng.choice([1000, 3000])
        return (EventTimeSessionWindows.with_gap(Time.milliseconds(gap)), f"session {gap}",
                ("session", gap))


def draw(seed: int) -> Draw:
    rng = random.Random(seed)
    n_files = rng.randint(3, 8)
    serial = [0]
    sources = [Source(f"s{i}", rng.choice([0, 0, 500, 1500, 3000]), rng.random() < 0.2,
                      draw_files(rng, n_files, serial)) for i in range(rng.randint(1, 3))]
    grammar = Grammar(rng, sources)
    build, desc, spec = grammar.operator(rng.choice([1, 2, 2]))
    src_d = ", ".join(f"{s.name}(delay {s.delay_ms}{', idle 1ms' if s.idle else ''})"
                      for s in sources)
    return Draw(seed, sources, f"[{src_d}] {desc}", build, grammar.tags,
                cut=rng.randint(1, n_files - 1), spec=spec)


# ------------------------------------------------------------------------------ the runs
@dataclass
class Outcome:
    main: dict[int, Counter] = field(default_factory=dict)
    sides: dict[str, dict[int, Counter]] = field(default_factory=dict)
    batches: dict[int, tuple[int, bool]] = field(default_factory=dict)
    error: str | None = None

    def at(self, outputs: dict[int, Counter]) -> Outputs:
        """The outputs by place (see the module's docstring)."""
        out: Outputs = {}
        for b, c in outputs.items():
            if not c:
                continue
            last, no_data = self.batches.get(b, (-2, False))
            place = last + 1 if no_data else last
            out[place] = out.get(place, Counter()) + c
        return out


def files_read(progress: Any) -> tuple[int, bool]:
    def offsets(which: str) -> list[int]:
        parsed = [json.loads(s[which] or "null") for s in progress["sources"]]
        return [-1 if p is None else p["logOffset"] for p in parsed]
    ends = offsets("endOffset")
    return max(ends), ends == offsets("startOffset")


def streams(spark: Any, root: Path, d: Draw) -> dict[str, DataStream]:
    out = {}
    for s in d.sources:
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(
            Duration.of_millis(s.delay_ms)).with_timestamp_assigner("ts")
        if s.idle:
            strategy = strategy.with_idleness(Duration.of_millis(1))
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
            str(root / s.name))
        out[s.name] = DataStream(df).assign_timestamps_and_watermarks(strategy)
    return out


#: (seed, variant) whose restart warned RestartedWatermarksWarning
WARNED: set[tuple[int, str]] = set()
VARIANTS = {"one/full": (1, False), "dist/full": (2, False), "one/cut": (1, True),
            "dist/cut": (2, True), "todf": (1, False)}


def start(spark: Any, root: Path, d: Draw, variant: str, run: int) -> Any:
    parallelism, cut = VARIANTS[variant]
    data = root / ("cut" if cut else "full")
    result = d.build(streams(spark, data, d))
    if parallelism > 1:
        result = result.set_parallelism(parallelism)
    label = f"fz{d.seed}_{variant.replace('/', '_')}_{run}"
    cp = str(root / f"cp_{variant.replace('/', '_')}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if variant == "todf":
            rows: dict[int, Counter] = {}

            def collect(batch: Any, batch_id: int) -> None:
                rows[batch_id] = Counter(tuple(r) for r in batch.collect())
            before = spark.conf.get("spark.sql.shuffle.partitions")
            spark.conf.set("spark.sql.shuffle.partitions", "200")
            try:
                query = (result.toDF().writeStream.foreachBatch(collect)
                         .option("checkpointLocation", cp).trigger(availableNow=True).start())
            finally:
                spark.conf.set("spark.sql.shuffle.partitions", before)
            return query, rows, {}
        sink = MemorySink(label)
        sides = {t: MemorySink(f"{label}_{t.tag_id}") for t in d.tags}
        query = result.start(main=sink, side_outputs=sides, checkpoint_location=cp,
                             trigger={"availableNow": True})
    if any(w.category is RestartedWatermarksWarning for w in caught):
        WARNED.add((d.seed, variant))
    return query, sink, sides


def collect(out: Outcome, query: Any, sink: Any, sides: dict[OutputTag, Any]) -> None:
    try:
        query.awaitTermination()
    except Exception as failure:  # noqa: BLE001 (reported as the variant's outcome)
        lines = [ln.strip() for ln in str(failure).splitlines() if ln.strip()]
        cause = [ln for ln in lines if "Error" in ln and "STREAM_FAILED" not in ln]
        out.error = (cause[-1] if cause else lines[0])[:400]
        return
    if isinstance(sink, dict):
        out.main.update(sink)
    else:
        out.main.update({b: Counter(tuple(r) for r in rows) for b, rows in sink.batches.items()})
    for t, s in sides.items():
        out.sides.setdefault(t.tag_id, {}).update(
            {b: Counter(tuple(r) for r in rows) for b, rows in s.batches.items()})
    out.batches.update({p["batchId"]: files_read(p) for p in query.recentProgress})


def run_draw(spark: Any, root: Path, d: Draw, variants: list[str]) -> dict[str, Outcome]:
    n = len(d.sources[0].files)
    for s in d.sources:
        write_batches(root / "full" / s.name, s.files)
        write_batches(root / "cut" / s.name, s.files[:d.cut])
    outcomes = {v: Outcome() for v in variants}
    for run in (0, 1):
        started = []
        for v in variants:
            cut = VARIANTS[v][1]
            if run == 1 and not cut:
                continue
            try:
                started.append((v, *start(spark, root, d, v, run)))
            except Exception as failure:  # noqa: BLE001
                outcomes[v].error = f"start: {type(failure).__name__}: {failure}"[:300]
        for v, query, sink, sides in started:
            collect(outcomes[v], query, sink, sides)
        if run == 0:
            for s in d.sources:
                write_batches(root / "cut" / s.name, s.files[d.cut:n], first=d.cut)
    return outcomes


# ------------------------------------------------------------------------------ the checks
def compare(d: Draw, outcomes: dict[str, Outcome]) -> list[str]:
    ref = outcomes["one/full"]
    problems = []
    if ref.error:
        errs = {v: o.error for v, o in outcomes.items()}
        if all(errs.values()):
            return [f"all variants fail: {ref.error}"]
        return [f"errors differ: {errs}"]
    restart_ok = not any(s.idle for s in d.sources)
    for v, o in outcomes.items():
        if v == "one/full" or (not restart_ok and v.endswith("/cut")):
            continue
        if (d.seed, v) in WARNED:  # the documented lag of Spark's watermark after a restart
            continue
        if o.error and "PipelineError: setParallelism(2): this stream graph runs in one task" in (
                o.error):
            continue  # refused with the reason (explain() says it too): not a mismatch
        if o.error and v.startswith("dist") and "UncertainWatermarkError" in o.error:
            # documented (docs/spark-semantics.md, "Watermarks: Spark's view"): a distributed
            # plan reading Spark's watermark (one source, or one watermarked before a filter),
            # whose 0 after micro-batch 0 is uncertain, where the one-task plan may generate
            # its own
            continue
        if o.error:
            problems.append(f"{v} fails: {o.error}")
            continue
        pairs = [("main", ref.main, o.main)]
        if v != "todf":
            pairs += [(t.tag_id, ref.sides.get(t.tag_id, {}), o.sides.get(t.tag_id, {}))
                      for t in d.tags]
        for what, a, b in pairs:
            pa, pb = ref.at(a), o.at(b)
            if pa != pb:
                diff = {p: (dict(pa.get(p, {})), dict(pb.get(p, {})))
                        for p in sorted(set(pa) | set(pb)) if pa.get(p) != pb.get(p)}
                problems.append(f"{v} {what} differs from one/full at file: {diff}")
    return problems


def unmodelled(d: Draw) -> str | None:
    """Why the oracle does not run ``d``, or None."""
    return graph_oracle.supported(d.spec, {s.name: s for s in d.sources})


def compare_oracle(d: Draw, ref: Outcome) -> list[str]:
    """``one/full``'s outputs by place against graph_oracle's (Flink's, independently)."""
    if ref.error:
        return [f"one/full fails: {ref.error}"]
    files = {s.name: [[(r["k"], r["v"], r["ts"]) for r in f] for f in s.files]
             for s in d.sources}
    main, sides = graph_oracle.run(d.spec, files, {s.name: s.delay_ms for s in d.sources})
    problems = []
    pairs = [("main", main, ref.at(ref.main))] + [
        (t.tag_id, sides.get(t.tag_id, {}), ref.at(ref.sides.get(t.tag_id, {})))
        for t in d.tags]
    for what, want, got in pairs:
        if want != got:
            diff = {p: (dict(want.get(p, {})), dict(got.get(p, {})))
                    for p in sorted(set(want) | set(got)) if want.get(p) != got.get(p)}
            problems.append(f"oracle {what} (oracle, one/full) at file: {diff}")
    return problems


def record(path: Path, d: Draw, ref: Outcome) -> None:
    """``ref``'s outputs by place, for ``replay``."""
    def by_place(outputs: dict[int, Counter]) -> list[list[Any]]:
        return [[p, [[list(r), n] for r, n in c.items()]] for p, c in ref.at(outputs).items()]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"main": by_place(ref.main), "sides": {
        t.tag_id: by_place(ref.sides.get(t.tag_id, {})) for t in d.tags}}))


def replay(directory: Path, wanted: list[int]) -> None:
    """compare_oracle over recorded outputs (the graph and files drawn again from the seed)."""
    bad = n = 0
    for seed in wanted:
        path = directory / f"{seed}.json"
        if not path.exists():
            continue
        d, saved, n = draw(seed), json.loads(path.read_text()), n + 1
        if unmodelled(d):
            continue

        def outputs(rows: list[list[Any]]) -> dict[int, Counter]:
            return {p: Counter({tuple(r): k for r, k in c}) for p, c in rows}
        ref = Outcome(main=outputs(saved["main"]), sides={
            t: outputs(rows) for t, rows in saved["sides"].items()})
        ref.batches = {p: (p, False) for p in range(len(d.sources[0].files) + 1)}
        problems = compare_oracle(d, ref)
        if problems:
            bad += 1
            print(describe(d) + "\n" + "\n".join("  MISMATCH " + p for p in problems))
    print(f"replayed {n} seeds, {bad} with mismatches")


def describe(d: Draw) -> str:
    lines = [f"seed {d.seed}: {d.desc}  (restart after file {d.cut - 1})"]
    for s in d.sources:
        lines.append(f"  {s.name}: " + " | ".join(
            " ".join(f"{r['k']}{r['v']}@{r['ts'] - T0}" for r in f) for f in s.files))
    return "\n".join(lines)


def report(d: Any, problems: list[str], ok: str, verbose: bool) -> int:
    """Print a seed's outcome (its draw and each mismatch, or ``ok``); 1 if it mismatched."""
    if problems:
        print(describe(d), flush=True)
        for p in problems:
            print("  MISMATCH " + p, flush=True)
        return 1
    print(f"{ok}: {d.desc}" if verbose else ok, flush=True)
    return 0


def seeds(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-9")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the files and checkpoints")
    parser.add_argument("--oracle", action="store_true",
                        help="also compare one/full with graph_oracle (Flink's semantics)")
    parser.add_argument("--oracle-only", action="store_true",
                        help="run only one/full, compared with graph_oracle")
    parser.add_argument("--record", type=Path,
                        help="write one/full's outputs by place per seed here (JSON), to check "
                             "the oracle again without Spark: --replay")
    parser.add_argument("--edges", action="store_true",
                        help="timestamps on the edges of windows and watermarks (other draws)")
    parser.add_argument("--offsets", action="store_true",
                        help="tumbling and sliding windows with offsets (other draws)")
    parser.add_argument("--replay", type=Path, help="compare the oracle with --record's files")
    args = parser.parse_args()
    global EDGES, OFFSETS
    EDGES, OFFSETS = args.edges, args.offsets
    if args.replay:
        replay(args.replay, seeds(args.seeds))
        return
    oracle = args.oracle or args.oracle_only
    variants = ["one/full"] if args.oracle_only else list(VARIANTS)
    spark = session()
    bad, skipped = 0, 0
    for seed in seeds(args.seeds):
        d = draw(seed)
        why = unmodelled(d) if oracle else None
        if why and args.oracle_only:
            skipped += 1
            print(f"seed {seed} skipped (the oracle does not model {why})", flush=True)
            continue
        root = Path(tempfile.mkdtemp(prefix=f"fuzz{seed}_"))
        began = time.monotonic()
        outputs = 0
        try:
            outcomes = run_draw(spark, root, d, variants)
            ref = outcomes["one/full"]
            outputs = sum(sum(c.values()) for per in [ref.main, *ref.sides.values()]
                          for c in per.values())
            problems = compare(d, outcomes) if len(variants) > 1 else []
            if oracle and not why and ref.error and "UncertainWatermarkError" in ref.error:
                # documented (docs/spark-semantics.md, "Watermarks: Spark's view"): a source
                # watermarked before a filter has Spark's watermark, whose 0 after a first
                # batch without rows is uncertain, and user code reading it fails
                why = "one/full's documented UncertainWatermarkError"
            elif oracle and not why:
                problems += compare_oracle(d, ref)
            if args.record and not ref.error:
                record(args.record / f"{seed}.json", d, ref)
        except Exception:  # noqa: BLE001 (the fuzzer's own failure: print it, go on)
            problems = ["fuzzer: " + traceback.format_exc(limit=3)]
        took = time.monotonic() - began
        if why:
            skipped += 1
        note = f", oracle skipped: {why}" if why else ""
        bad += report(d, problems, f"seed {seed} ok ({took:.0f} s, {outputs} outputs{note})",
                      args.verbose)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    n = len(seeds(args.seeds))
    print(f"{bad} of {n} seeds with mismatches"
          + (f"; the oracle skipped {skipped}, compared {n - skipped}" if oracle else ""))


if __name__ == "__main__":
    main()
