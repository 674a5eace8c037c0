"""The crash test: two flinkwin queries writing their main and late outputs to Delta tables,
one appending (``DeltaSink``), one upserting (``DeltaUpsertSink``), run side by side in one
driver that is SIGKILLed at many points, restarted from their checkpoints each time; both must
end with exactly the tables of an uninterrupted run (as multisets: nothing lost, nothing written
twice). Each SIGKILL interrupts both queries, so one driver start serves both.

The driver (``crash_driver.py``) runs as its own process group. Kills are of two kinds, aimed
at one query's batch in turn: at a chosen phase of a chosen batch (before the main commit,
between the main and the late commit, after both before Spark's commit log), done by the driver
itself; and at a random moment, done here with SIGKILL to the whole group a random delay
(0-1.5 s) after a chosen batch was planned (its offsets written). Every kind is aimed at each
query at least once (a fixed plan, in an order drawn from the seed); the batches and delays come
from the seed. ``FLINKWIN_CRASH_SEED`` replays a seed (the input and the batch-phase kills are
reproducible; timed kills land where the clock puts them).

The upsert query runs the windows with early firings: its final table must hold, row for row,
each (user, window)'s last firing in the uninterrupted run (which appends every firing), and no
(user, window) twice.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from crash_driver import LATE, PHASES, QUERIES, pipeline
from deltalake import DeltaTable

from flinkwin.sinks import DeltaSink

# runs its own Spark processes for a long while: `make test` runs it beside the rest
pytestmark = [pytest.mark.beside, pytest.mark.extended]

DRIVER = Path(__file__).with_name("crash_driver.py")
BATCHES = 21
KILLS = 10
USERS = [f"u{i}" for i in range(5)]


def _write_input(directory: Path, rng: random.Random) -> int:
    """One JSON file per batch: clicks out of order by up to 6 s, one in eight far behind the
    watermark (late beyond the allowed lateness) or within the lateness (late firings)."""
    directory.mkdir(parents=True)
    rows = 0
    for batch in range(BATCHES):
        base = 2500 * batch
        lines = []
        for _ in range(12):
            ts = base + rng.randint(-4000, 2000)
            roll = rng.random()
            if roll < 0.125:
                ts = base - rng.randint(15000, 40000)
            elif roll < 0.25:
                ts = base - rng.randint(5000, 9000)
            row = {"user": rng.choice(USERS), "ts": max(ts, 0), "v": rng.randint(1, 9)}
            lines.append(json.dumps(row) + "\n")
        path = directory / f"clicks-{batch:04d}.json"
        path.write_text("".join(lines))
        os.utime(path, (1_000_000 + 10 * batch, 1_000_000 + 10 * batch))
        rows += len(lines)
    return rows


def _table(path: Path) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(sorted(r.items())) for r in DeltaTable(str(path)).to_pyarrow_table()
                   .to_pylist())


def _last(checkpoint: Path, log: str) -> int:
    """The last batch id in Spark's offset log (planned) or commit log (done); -1: none."""
    folder = checkpoint / log
    ids = [int(p.name) for p in folder.iterdir() if p.name.isdigit()] if folder.exists() else []
    return max(ids, default=-1)


def _latest(firings: Counter[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
    """Each (user, window)'s firing with the greatest firing_index."""
    last: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in sorted((dict(f) for f in firings), key=lambda r: r["firing_index"]):
        last[(row["user"], row["window_start"], row["window_end"])] = row
    return Counter(tuple(sorted(r.items())) for r in last.values())


def _reference(spark: Any, source: Path, out: Path) -> None:
    """Both queries uninterrupted, side by side, each into ``out/<query>``."""
    queries = [
        pipeline(spark, str(source), name == "upsert").start(
            main=DeltaSink(str(out / name / "main"), engine="deltalake"),
            side_outputs={LATE: DeltaSink(str(out / name / "late"), engine="deltalake")},
            checkpoint_location=str(out / name / "ck"), trigger={"availableNow": True},
        )
        for name in QUERIES
    ]
    for query in queries:
        query.awaitTermination()


def _run_driver(work: Path, kill: tuple[str, str, int, Any], log: Path) -> int:
    """One driver run until it finishes or dies; returns its exit code (-9: killed)."""
    query, kind, batch, detail = kill
    args = [sys.executable, str(DRIVER), "--input", str(work / "in"), "--work", str(work)]
    if kind in PHASES:
        args += ["--kill", f"{query}:{batch}:{kind}"]
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    with log.open("a") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        deadline = None
        started = time.monotonic()
        try:
            while proc.poll() is None:
                if time.monotonic() - started > 600:
                    raise AssertionError(f"driver run {kill} took over 10 minutes")
                if (kind == "timed" and deadline is None
                        and _last(work / query / "ck", "offsets") >= batch):
                    deadline = time.monotonic() + detail
                if deadline is not None and time.monotonic() >= deadline:
                    os.killpg(proc.pid, signal.SIGKILL)
                time.sleep(0.05)
        finally:
            # the JVM and the Python workers die with the driver, as on a lost machine
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode


def _plan(rng: random.Random) -> list[tuple[str, str]]:
    """The (query, kind) of each kill: every kind at each query once, then drawn ones up to
    ``KILLS``, in an order drawn from ``rng``; the first is always the point the issue names
    (main table committed, late not yet)."""
    fixed = [(query, kind) for query in QUERIES for kind in (*PHASES, "timed")]
    fixed.remove(("append", "after-main"))
    drawn = [(rng.choice(QUERIES), rng.choice((*PHASES, "timed")))
             for _ in range(KILLS - 1 - len(fixed))]
    rest = fixed + drawn
    rng.shuffle(rest)
    return [("append", "after-main"), *rest]


def test_sigkilled_driver_restarts_both_sinks_to_exactly_the_uninterrupted_tables(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seed = int(os.environ.get("FLINKWIN_CRASH_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    input_rows = _write_input(tmp_path / "in", rng)
    began = time.monotonic()
    _reference(spark, tmp_path / "in", tmp_path / "ref")
    reference_seconds = time.monotonic() - began
    # the batch id each query ends with, uninterrupted: at it, a query has finished
    final = {name: _last(tmp_path / "ref" / name / "ck", "commits") for name in QUERIES}

    log = tmp_path / "driver.log"
    plan = _plan(rng)
    kills: list[tuple[str, str, int, Any]] = []
    interrupted: Counter[str] = Counter()  # kills that found a query unfinished
    runs = 0
    began = time.monotonic()
    while True:
        done = {name: _last(tmp_path / name / "ck", "commits") for name in QUERIES}
        open_ = [name for name in QUERIES if done[name] < BATCHES - 3]
        if min(interrupted[name] for name in QUERIES) < KILLS and open_:
            # the drawn kills after the plan's are aimed at the open query furthest ahead: a
            # kill aimed at the other one lets this one run on, and once it has finished with
            # fewer than KILLS kills, kills aimed at the other (at its last batch, never
            # committed) would go on without end
            query, kind = plan[len(kills)] if len(kills) < len(plan) else \
                (max(open_, key=lambda name: done[name]), rng.choice((*PHASES, "timed")))
            if query not in open_:
                query = open_[0]
            # the next kill lands in a batch neither query has committed, spread over what is
            # left (the queries run side by side, but either may be a batch ahead)
            ahead = max(done.values())
            left = max(1, KILLS - min(interrupted.values(), default=0))
            span = max(1, (BATCHES - 3 - ahead) // left)
            target = min(max(ahead, done[query]) + 1 + rng.randrange(span), BATCHES - 3)
            detail = round(rng.uniform(0.0, 1.5), 2) if kind == "timed" else None
            kill: tuple[str, str, int, Any] = (query, kind, target, detail)
        else:
            kill = ("", "none", -1, None)
        runs += 1
        code = _run_driver(tmp_path, kill, log)
        context = f"seed={seed} run={runs} kill={kill} log={log}"
        if code == 0:
            break
        assert code == -signal.SIGKILL, f"driver failed ({code}): {context}\n" + \
            log.read_text()[-3000:]
        kills.append(kill)
        for name in QUERIES:
            interrupted[name] += _last(tmp_path / name / "ck", "commits") < final[name]
        assert runs < 3 * KILLS, f"no end in sight: {context}"
    crash_seconds = time.monotonic() - began

    lines, failures = [], []
    for name in QUERIES:
        upsert = name == "upsert"
        differences = {}
        compared = 0
        for table in ("main", "late"):
            want = _table(tmp_path / "ref" / name / table)
            got = _table(tmp_path / name / table)
            if upsert and table == "main":
                want = _latest(want)
                windows = Counter((r["user"], r["window_start"], r["window_end"])
                                  for r in (dict(g) for g in got))
                assert max(windows.values()) == 1, f"seed={seed}: a (user, window) twice"
            compared += sum(want.values())
            differences[table] = sum(((want - got) + (got - want)).values())
        aimed = Counter(k[1] for k in kills if k[0] == name)
        lines.append(
            f"crash test ({name}): seed={seed} input={input_rows} rows in {BATCHES} files; "
            f"kills={interrupted[name]} (aimed at this query: {dict(aimed)}), "
            f"restarts={runs - 1}, rows compared={compared} "
            f"(main {sum(_table(tmp_path / 'ref' / name / 'main').values())}"
            f"{' firings' if upsert else ''}, "
            f"late {sum(_table(tmp_path / 'ref' / name / 'late').values())}), "
            f"differences={differences}"
        )
        if interrupted[name] < KILLS or any(aimed[k] < 1 for k in (*PHASES, "timed")):
            failures.append(f"{name}: too few kills")
        if differences != {"main": 0, "late": 0}:
            failures.append(f"{name}: differences {differences}")
        if not sum(_table(tmp_path / name / "late").values()):
            failures.append(f"{name}: no late row")
        if upsert:  # the windows did fire early and late, and the table kept the last of each
            timings = Counter(dict(r)["firing_timing"]
                              for r in _table(tmp_path / "ref" / name / "main"))
            if not (timings["EARLY"] and timings["LATE"]):
                failures.append(f"{name}: firings {dict(timings)}")
    figures = "\n".join(lines) + (f"\nuninterrupted runs {reference_seconds:.0f} s, "
                                  f"crashing runs {crash_seconds:.0f} s")
    with capsys.disabled():
        print("\n" + figures)
    assert not failures, (failures, figures)
