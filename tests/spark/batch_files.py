"""A stream's input as files, one per micro-batch: the one writer that the Spark tests
(through ``spark_scenarios``), the deploy drivers and the upgrade fixtures' generator share.
It imports nothing but the standard library, so a script of its own process (a deploy driver,
the generator under an older flinkwin) can import it with ``tests/spark`` on ``sys.path``."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def write_batches(directory: Path, batches: Sequence[Sequence[dict[str, Any]]], first: int = 0):
    """One JSON file per batch, ``batch-<first + i>.json``, modification times strictly
    increasing (Spark's file source orders files by modification time; equal times are taken in
    an arbitrary order)."""
    directory.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(batches, start=first):
        path = directory / f"batch-{i:04d}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.utime(path, (1_000_000 + 10 * i, 1_000_000 + 10 * i))
