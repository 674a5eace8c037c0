"""JVM options for the Spark processes the tests start as subprocesses (job and user-script
drivers, notebook kernels, the Spark Connect server, deployment drivers).

Each lives a minute or two, where the C1 compiler alone and the serial collector cost less CPU
than the JVM's defaults (C2 compiler threads, G1) on a 2-core machine. Spark's launcher reads
``SPARK_SUBMIT_OPTS``; tests/conftest.py sets it for every process the tests start, unless
the environment sets it already, and the tests' own shared sessions are launched without it
(:func:`long_lived`): they live the whole run."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

SHORT_LIVED = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
VARIABLE = "SPARK_SUBMIT_OPTS"


def set_short_lived() -> None:
    """Set the options for every process started from now on, unless already set."""
    os.environ.setdefault(VARIABLE, SHORT_LIVED)


@contextmanager
def long_lived() -> Iterator[None]:
    """Within: a JVM launched here takes the JVM's defaults, not :data:`SHORT_LIVED` (a
    setting of the environment's own is kept)."""
    ours = os.environ.get(VARIABLE) == SHORT_LIVED
    if ours:
        del os.environ[VARIABLE]
    try:
        yield
    finally:
        if ours:
            os.environ[VARIABLE] = SHORT_LIVED
