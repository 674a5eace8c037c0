"""The tiers of the test suite (Makefile: ``make test``, ``make test-extended``; CI runs both)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tiers import EXTENDED

TESTS = Path(__file__).resolve().parent


def test_every_case_left_to_the_extended_tier_exists() -> None:
    """A renamed test or case must not leave both tiers without it unnoticed: pytest collects
    every name of ``EXTENDED`` (tests/conftest.py), and marks it ``extended``."""
    files = sorted({name.split("::")[0] for name in EXTENDED})
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-m", "extended", *files],
        cwd=TESTS, capture_output=True, text=True, check=False,
    ).stdout.splitlines()
    found = {line.removeprefix("tests/") for line in collected}
    assert found >= EXTENDED, sorted(EXTENDED - found)
