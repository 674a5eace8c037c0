"""A user's script run the way a user runs it: ``.venv/bin/python script.py``, no activation,
nothing telling Spark which interpreter its Python workers should run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

# runs its own Spark processes: `make test` runs it beside the rest
pytestmark = [pytest.mark.spark, pytest.mark.beside]

GETTING_STARTED = Path(__file__).resolve().parent.parent / "docs" / "getting-started.md"


def _script() -> str:
    text = GETTING_STARTED.read_text(encoding="utf-8")
    found = re.search(r"<!-- script -->\s*\n```python\n(.*?)\n```", text, re.S)
    assert found, "getting-started.md has no complete script block"
    return found.group(1)


def _bare_python() -> str:
    """An interpreter without pyarrow (the venv's base): what ``python3`` on a user's PATH is."""
    base = getattr(sys, "_base_executable", None) or shutil.which("python3")
    assert base
    done = subprocess.run([base, "-c", "import pyarrow"], capture_output=True)
    if done.returncode == 0:
        pytest.skip(f"{base} has pyarrow: it cannot stand for a bare python3")
    return base


def _user_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a shell where ``python3`` lacks pyarrow and no PYSPARK_* is set."""
    bare = _bare_python()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(bare)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")}
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    env.update(extra)
    return env


@pytest.fixture(autouse=True)
def _java() -> None:
    if shutil.which("java") is None:
        pytest.skip("Java 17 is needed")


def test_the_getting_started_script_runs_as_a_user_runs_it(tmp_path: Path) -> None:
    """The complete script of Getting Started, run with the venv's interpreter while
    ``python3`` on PATH has no pyarrow: flinkwin gives the local workers the script's
    interpreter, and the job writes both Delta tables."""
    script = tmp_path / "clicks_job.py"
    script.write_text(_script())
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_user_env(tmp_path),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.replace("\r", "\n").splitlines()
             if line.startswith(("totals ", "late "))]
    assert lines == [
        "totals [('ann', 1000, 5), ('ann', 12000, 8), ('bob', 2000, 2), ('bob', 15000, 1)]",
        "late [('ann', 3000, 5)]",
    ]


def test_workers_that_cannot_import_flinkwin_fail_fast_in_one_line(tmp_path: Path) -> None:
    """A workers' interpreter chosen by the user without pyarrow fails at ``DataStream(...)``
    with one line naming the interpreter, the module and the fix, before any query runs."""
    bare = _bare_python()
    script = tmp_path / "job.py"
    script.write_text(
        "from pyspark.sql import SparkSession\n"
        "import flinkwin as fw\n"
        "spark = SparkSession.builder.master('local[1]').getOrCreate()\n"
        "fw.DataStream(spark.createDataFrame([(1,)], 'x long'))\n"
        "print('NOT REACHED')\n"
    )
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path,
                          env=_user_env(tmp_path, PYSPARK_PYTHON=bare),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and "NOT REACHED" not in done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("flinkwin.spark.workers.WorkerPythonError: Spark's Python workers "
                           f"run {bare!r}, which cannot import 'pyarrow'"), last
    assert "set PYSPARK_PYTHON" in last
