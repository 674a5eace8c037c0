"""State survives upgrades: checkpoints written by an earlier flinkwin (committed under
tests/fixtures/checkpoints/<commit>/, made by generate.py there) restart under this one.

Each fixture is a program of ``upgrade_programs.py`` stopped after its first input files: its
checkpoint (the file source's paths under a placeholder), all of its input files, what the first
run wrote and what an uninterrupted run over all input wrote. The test copies it, puts the
paths back, restarts the same program on the remaining files and checks that the first run's
output plus the restart's is the uninterrupted run's: every window, early firing and late
element, with the state of the windows open at the stop restored.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from upgrade_programs import CASES, LATE, SINCE, plain

from flinkwin.spark import MemorySink
from flinkwin.spark.restart import DOCUMENT, STATE_FORMAT

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "checkpoints"
RELEASES = ("c45addd", "93994cd", "6d45d1e", "a49b90f", "0d0fe0d")


def _cases(release: str) -> list[str]:
    return sorted(p.name for p in (FIXTURES / release).iterdir() if p.is_dir())


def _copy(fixture: Path, root: Path) -> None:
    """The fixture's checkpoint and inputs under ``root``, the placeholder replaced by it."""
    meta = json.loads((fixture / "fixture.json").read_text())
    shutil.copytree(fixture / "checkpoint", root / "checkpoint")
    for relative in meta["rewritten"]:
        path = root / "checkpoint" / relative
        path.write_bytes(path.read_bytes().replace(meta["placeholder"].encode(),
                                                   str(root).encode()))
    for source in (fixture / "inputs").iterdir():
        (root / "inputs" / source.name).mkdir(parents=True)
        for path in sorted(source.iterdir()):
            copy = root / "inputs" / source.name / path.name
            shutil.copyfile(path, copy)
            i = int(path.stem.split("-")[1])  # the times generate.py gave (Spark orders by them)
            os.utime(copy, (1_000_000 + 10 * i, 1_000_000 + 10 * i))


@dataclass
class _Restart:
    query: Any
    main: MemorySink
    late: MemorySink
    fixture: Path
    root: Path


def _start(spark: Any, release: str, case: str, root: Path) -> _Restart:
    fixture = FIXTURES / release / case
    meta = json.loads((fixture / "fixture.json").read_text())
    assert meta["flinkwin_commit"].startswith(release) and meta["case"] == case
    _copy(fixture, root)
    program, _ = CASES[case]
    name = f"fw_upgrade_{release}_{case}"
    main, late = MemorySink(name), MemorySink(f"{name}_late")
    query = program(spark, root / "inputs", meta["times_before_1970"]).start(
        main=main, side_outputs={LATE: late}, checkpoint_location=str(root / "checkpoint"),
        trigger={"availableNow": True},
    )
    return _Restart(query, main, late, fixture, root)


def _check(run: _Restart | Exception) -> None:
    if isinstance(run, Exception):
        raise run  # the restart failed to start (reported by its own test)
    run.query.awaitTermination()
    meta = json.loads((run.fixture / "fixture.json").read_text())
    progress = run.query.recentProgress
    assert progress and progress[0]["batchId"] == meta["batches_before"] + 1  # continued
    before = json.loads((run.fixture / "before.json").read_text())
    expected = json.loads((run.fixture / "expected.json").read_text())
    after = {"main": [plain(r) for r in run.main.rows()],
             "late": [plain(r) for r in run.late.rows()]}
    assert {k: sorted(before[k] + after[k]) for k in before} == expected
    recorded = json.loads((run.root / "checkpoint" / "flinkwin" / DOCUMENT).read_text())
    assert recorded["state_format"] == STATE_FORMAT  # this flinkwin's formats from now on


@pytest.fixture(scope="module")
def restarts(
    spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[tuple[str, str], _Restart | Exception]]:
    """Every fixture's restart, started at once as concurrent queries of the one session
    (independent checkpoints and sinks): their small micro-batches overlap instead of waiting
    for one another. Each test awaits and checks its own."""
    started: dict[tuple[str, str], _Restart | Exception] = {}
    try:
        for release in RELEASES:
            for case in _cases(release):
                root = tmp_path_factory.mktemp(f"upgrade-{release}-{case}")
                try:
                    started[release, case] = _start(spark, release, case, root)
                except Exception as error:  # noqa: BLE001 (raised by the case's test)
                    started[release, case] = error
        yield started
    finally:
        for run in started.values():
            if isinstance(run, _Restart):
                run.query.stop()


@pytest.mark.parametrize("case", _cases("c45addd"))
def test_a_checkpoint_written_by_flinkwin_c45addd_restarts_under_this_version(
    restarts: dict[tuple[str, str], _Restart | Exception], case: str
) -> None:
    _check(restarts["c45addd", case])


def test_the_c45addd_fixtures_cover_every_state_form_and_graphs() -> None:
    assert _cases("c45addd") == sorted(set(CASES) - set(SINCE))


@pytest.mark.parametrize("case", _cases("93994cd"))
def test_a_checkpoint_written_by_flinkwin_93994cd_restarts_under_this_version(
    restarts: dict[tuple[str, str], _Restart | Exception], case: str
) -> None:
    """The last flinkwin writing format 2 of the operator snapshot (unsigned pickled objects,
    no seal): read without a state key."""
    _check(restarts["93994cd", case])


@pytest.mark.parametrize("case", _cases("6d45d1e"))
def test_a_distributed_graph_checkpoint_written_by_flinkwin_6d45d1e_restarts_under_this_version(
    restarts: dict[tuple[str, str], _Restart | Exception], case: str
) -> None:
    """The first release of the distributed plan (each keyed node a transformWithStateInPandas
    operator on RocksDB, without changelog checkpointing; elements between the stages
    cloudpickled): its checkpoint continues under this flinkwin's wire, state calls and
    changelog checkpointing, on the distributed plan."""
    run = restarts["6d45d1e", case]
    _check(run)
    assert isinstance(run, _Restart)
    recorded = json.loads((run.root / "checkpoint" / "flinkwin" / DOCUMENT).read_text())
    assert recorded["stage"] == "distributed graph"


@pytest.mark.parametrize("case", _cases("a49b90f"))
def test_an_interval_keyed_checkpoint_written_by_flinkwin_a49b90f_restarts_under_this_version(
    restarts: dict[tuple[str, str], _Restart | Exception], case: str
) -> None:
    """The last flinkwin whose keys of a day-time interval column were ``pandas.Timedelta``
    (``datetime.timedelta`` since): a window open at the stop, restored with its old key,
    and the restart's elements of the same interval are one key (each window fires once with
    all of its values)."""
    _check(restarts["a49b90f", case])


@pytest.mark.parametrize("case", _cases("0d0fe0d"))
def test_a_mapped_source_graph_checkpoint_written_by_flinkwin_0d0fe0d_restarts_under_this_version(
    restarts: dict[tuple[str, str], _Restart | Exception], case: str
) -> None:
    """The last flinkwin taking a mapped source's watermark from Spark (computed before the
    map, ``from_upstream`` in the graph's fingerprint): its checkpoint continues with the
    stage generating that watermark from the elements, as for any source, in the keyed plan
    (heartbeats now carry the sources' clocks) and distributed (clock rows)."""
    _check(restarts["0d0fe0d", case])


def test_every_case_newer_than_a_release_has_its_fixture() -> None:
    assert all(case in _cases(release) for case, release in SINCE.items())
