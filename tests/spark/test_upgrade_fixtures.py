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
from pathlib import Path
from typing import Any

import pytest
from upgrade_programs import CASES, LATE

from flinkwin.spark import MemorySink
from flinkwin.spark.restart import DOCUMENT, STATE_FORMAT

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "checkpoints"


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


def _restart(spark: Any, release: str, case: str, root: Path) -> None:
    fixture = FIXTURES / release / case
    meta = json.loads((fixture / "fixture.json").read_text())
    assert meta["flinkwin_commit"].startswith(release) and meta["case"] == case
    _copy(fixture, root)
    program, _ = CASES[case]
    main, late = MemorySink(f"fw_upgrade_{case}"), MemorySink(f"fw_upgrade_{case}_late")
    query = program(spark, root / "inputs", meta["times_before_1970"]).start(
        main=main, side_outputs={LATE: late}, checkpoint_location=str(root / "checkpoint"),
        trigger={"availableNow": True},
    )
    query.awaitTermination()
    progress = query.recentProgress
    assert progress and progress[0]["batchId"] == meta["batches_before"] + 1  # continued
    before = json.loads((fixture / "before.json").read_text())
    expected = json.loads((fixture / "expected.json").read_text())
    after = {"main": [list(r) for r in main.rows()], "late": [list(r) for r in late.rows()]}
    assert {k: sorted(before[k] + after[k]) for k in before} == expected
    recorded = json.loads((root / "checkpoint" / "flinkwin" / DOCUMENT).read_text())
    assert recorded["state_format"] == STATE_FORMAT  # this flinkwin's formats from now on


@pytest.mark.parametrize("case", _cases("c45addd"))
def test_a_checkpoint_written_by_flinkwin_c45addd_restarts_under_this_version(
    spark: Any, tmp_path: Path, case: str
) -> None:
    _restart(spark, "c45addd", case, tmp_path)


def test_the_c45addd_fixtures_cover_every_state_form_and_graphs() -> None:
    assert _cases("c45addd") == sorted(CASES)


@pytest.mark.parametrize("case", _cases("93994cd"))
def test_a_checkpoint_written_by_flinkwin_93994cd_restarts_under_this_version(
    spark: Any, tmp_path: Path, case: str
) -> None:
    """The last flinkwin writing format 2 of the operator snapshot (unsigned pickled objects,
    no seal): read without a state key."""
    _restart(spark, "93994cd", case, tmp_path)
