"""Guards on the test suite itself: what must never let CI pass without running the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_spark_tests_fail_loudly_when_java_is_missing(tmp_path: Path) -> None:
    # A PATH with no java on it (the interpreter is called by its absolute path).
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "PYTEST_ADDOPTS")}
    env["PATH"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "tests/spark/test_key_groups.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "Java 17 is needed for the Spark tests" in out, out
    summary = out.strip().splitlines()[-1]
    assert "error" in summary and "skipped" not in summary, summary
