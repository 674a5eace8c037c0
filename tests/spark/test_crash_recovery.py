"""The crash test: a flinkwin query writing its main and late outputs to Delta tables is
SIGKILLed at many points, restarted from its checkpoint each time, and must end with exactly
the tables of an uninterrupted run (as multisets: nothing lost, nothing written twice).

The driver (``crash_driver.py``) runs as its own process group. Kills are of two kinds, drawn
from a seed: at a chosen phase of a chosen batch (before the main commit, between the main and
the late commit, after both before Spark's commit log), done by the driver itself; and at a
random moment, done here with SIGKILL to the whole group a random delay (0-1.5 s) after a
chosen batch was planned (its offsets written). ``FLINKWIN_CRASH_SEED`` replays a seed (the
input and the batch-phase kills are reproducible; timed kills land where the clock puts them).

The upsert variant runs the windows with early firings into a ``DeltaUpsertSink``: its final
table must hold, row for row, each (user, window)'s last firing in the uninterrupted run (which
appends every firing), and no (user, window) twice.
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
from crash_driver import LATE, PHASES, pipeline
from deltalake import DeltaTable

from flinkwin.sinks import DeltaSink

# runs its own Spark processes for a long while: `make test` runs it beside the rest
pytestmark = pytest.mark.beside

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


def _reference(spark: Any, source: Path, out: Path, upsert: bool) -> None:
    query = pipeline(spark, str(source), upsert).start(
        main=DeltaSink(str(out / "main"), engine="deltalake"),
        side_outputs={LATE: DeltaSink(str(out / "late"), engine="deltalake")},
        checkpoint_location=str(out / "ck"), trigger={"availableNow": True},
    )
    query.awaitTermination()


def _run_driver(work: Path, kill: tuple[str, int, Any], log: Path, upsert: bool) -> int:
    """One driver run until it finishes or dies; returns its exit code (-9: killed)."""
    kind, batch, detail = kill
    args = [sys.executable, str(DRIVER), "--input", str(work / "in"),
            "--checkpoint", str(work / "ck"), "--main", str(work / "main"),
            "--late", str(work / "late")]
    if kind == "point":
        args += ["--kill", f"{batch}:{detail}"]
    if upsert:
        args.append("--upsert")
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
                if kind == "timed" and deadline is None and _last(work / "ck", "offsets") >= batch:
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


@pytest.mark.parametrize("mode", ["append", "upsert"])
def test_sigkilled_driver_restarts_to_exactly_the_uninterrupted_tables(
    spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    upsert = mode == "upsert"
    seed = int(os.environ.get("FLINKWIN_CRASH_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    input_rows = _write_input(tmp_path / "in", rng)
    began = time.monotonic()
    _reference(spark, tmp_path / "in", tmp_path / "ref", upsert)
    reference_seconds = time.monotonic() - began

    log = tmp_path / "driver.log"
    kills: list[tuple[str, int, Any]] = []
    runs = 0
    began = time.monotonic()
    while True:
        done = _last(tmp_path / "ck", "commits")
        if len(kills) < KILLS:
            # the next kill lands in a batch not yet committed, spread over what is left
            span = max(1, (BATCHES - 3 - done) // (KILLS - len(kills)))
            target = min(done + 1 + rng.randrange(span), BATCHES - 3)
            if not kills:  # the point the issue names: main table committed, late not yet
                kill: tuple[str, int, Any] = ("point", target, "after-main")
            elif rng.random() < 0.6:
                kill = ("point", target, rng.choice(PHASES))
            else:
                kill = ("timed", target, round(rng.uniform(0.0, 1.5), 2))
        else:
            kill = ("none", -1, None)
        runs += 1
        code = _run_driver(tmp_path, kill, log, upsert)
        context = f"seed={seed} run={runs} kill={kill} log={log}"
        if code == 0:
            break
        assert code == -signal.SIGKILL, f"driver failed ({code}): {context}\n" + \
            log.read_text()[-3000:]
        kills.append(kill)
        assert runs < 3 * KILLS, f"no end in sight: {context}"
    crash_seconds = time.monotonic() - began

    differences = {}
    compared = 0
    for name in ("main", "late"):
        want, got = _table(tmp_path / "ref" / name), _table(tmp_path / name)
        if upsert and name == "main":
            want = _latest(want)
            windows = Counter((r["user"], r["window_start"], r["window_end"])
                              for r in (dict(g) for g in got))
            assert max(windows.values()) == 1, f"seed={seed}: a (user, window) twice"
        compared += sum(want.values())
        differences[name] = sum(((want - got) + (got - want)).values())
    by_kind = Counter(k[0] if k[0] == "timed" else k[2] for k in kills)
    figures = (
        f"crash test ({mode}): seed={seed} input={input_rows} rows in {BATCHES} files; "
        f"kills={len(kills)} ({dict(by_kind)}), restarts={runs - 1}, "
        f"rows compared={compared} (main {sum(_table(tmp_path / 'ref' / 'main').values())}"
        f"{' firings' if upsert else ''}, "
        f"late {sum(_table(tmp_path / 'ref' / 'late').values())}), "
        f"differences={differences}; uninterrupted run {reference_seconds:.0f} s, "
        f"crashing runs {crash_seconds:.0f} s"
    )
    with capsys.disabled():
        print("\n" + figures)
    assert len(kills) >= 10, figures
    assert by_kind["after-main"] >= 1, figures
    assert differences == {"main": 0, "late": 0}, figures
    assert sum(_table(tmp_path / "late").values()) > 0, figures
    if upsert:  # the windows did fire early and late, and the table kept the last of each
        timings = Counter(dict(r)["firing_timing"] for r in _table(tmp_path / "ref" / "main"))
        assert timings["EARLY"] and timings["LATE"], (timings, figures)
