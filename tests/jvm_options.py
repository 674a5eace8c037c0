"""JVM options for the Spark processes the tests start as subprocesses (job and user-script
drivers, notebook kernels, the Spark Connect server, deployment drivers).

Each lives a minute or two, where the C1 compiler alone and the serial collector cost less CPU
than the JVM's defaults (C2 compiler threads, G1) on a 2-core machine; once the class archive
is made (:mod:`class_archive`), they also map Spark's classes from it. Spark's launcher reads
``SPARK_SUBMIT_OPTS``; tests/conftest.py sets it for every process the tests start, unless
the environment sets it already, and the tests' own shared sessions are launched with the
JVM's default compilers and the parallel collector instead (:func:`long_lived`): they live the
whole run, where C1 alone costs more wall time than it saves, and G1's concurrent work costs
more CPU than the parallel collector's pauses (four Spark test files in one session, 2026-11-30,
alternating runs: wall 135–141 s with G1, 131–136 s parallel; the JVM's CPU 158–167 s
against 149–158 s).

Every one of them, the shared sessions too, starts its child processes with ``vfork``
(:data:`FORK`) instead of the JDK's default ``posix_spawn`` through its ``jspawnhelper``
program: without Hadoop's native library, Spark's local file system runs ``chmod`` (and, with
Spark's default checkpoint file manager, ``readlink``) as a process for each checkpoint file a
micro-batch writes (docs/operations.md, "Checkpoint files on a local disk"). The option is the
JDK's own (17); what the processes compute is unchanged."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import class_archive

#: how the JVM starts child processes (module docstring)
FORK = "-Djdk.lang.Process.launchMechanism=VFORK"
SHORT_LIVED = f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC {FORK}"
LONG_LIVED = f"-XX:+UseParallelGC {FORK}"
VARIABLE = "SPARK_SUBMIT_OPTS"
#: the value set here (None: the environment's own, left alone) and the archive's options
_ours: str | None = None
_archive = ""


def set_short_lived() -> None:
    """Set the options for every process started from now on, unless already set."""
    global _ours
    if VARIABLE not in os.environ:
        os.environ[VARIABLE] = _ours = SHORT_LIVED


def start_class_archive() -> None:
    """Have the class archive made, unless the environment sets the options itself."""
    if _ours is not None:
        class_archive.start()


def use_class_archive() -> None:
    """Once the class archive exists, name it in the options set here (cheap until then)."""
    global _ours, _archive
    archive: Path | None = class_archive.path()
    if _archive or _ours is None or archive is None or not archive.exists():
        return
    _archive = class_archive.USE.format(archive)
    if os.environ.get(VARIABLE) == _ours:
        os.environ[VARIABLE] = _ours = f"{SHORT_LIVED} {_archive}"


@contextmanager
def long_lived() -> Iterator[None]:
    """Within: a JVM launched here takes :data:`LONG_LIVED` (the default compilers, the
    parallel collector), not :data:`SHORT_LIVED`, and the class archive if made (a setting of
    the environment's own is kept)."""
    ours = _ours is not None and os.environ.get(VARIABLE) == _ours
    if ours:
        os.environ[VARIABLE] = f"{LONG_LIVED} {_archive}" if _archive else LONG_LIVED
    try:
        yield
    finally:
        if ours and _ours is not None:
            os.environ[VARIABLE] = _ours
