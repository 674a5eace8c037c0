"""Spark's Python workers run an interpreter that can import flinkwin.

Spark starts its Python workers with ``PYSPARK_PYTHON`` (``python3`` from ``PATH`` when unset),
not with the interpreter that runs the driver. A script run as ``.venv/bin/python job.py``
therefore gets workers without the venv's pyarrow, pandas and flinkwin, and the first
micro-batch dies deep inside Spark with ``ModuleNotFoundError``.

:func:`ensure_worker_python` runs when a pipeline is built on a session (``DataStream(df)``):

* on a **local** master (``local``, ``local[*]``...) whose workers' interpreter the user did not
  choose (neither ``PYSPARK_PYTHON`` nor ``spark.pyspark.python`` set), the workers run the
  driver's own interpreter (``sys.executable``), which is the venv's;
* then, once per session, one tiny Spark job imports what the window stage needs on a worker,
  and a failure raises :class:`WorkerPythonError` with one line saying which interpreter
  lacks which module and how to choose another.

Clusters and Databricks choose their workers' interpreter themselves: only the check runs there.
Spark Connect sessions have no driver-side SparkContext; nothing is checked.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

#: what the window stage imports on a worker
REQUIRED_MODULES = ("pyarrow", "pandas", "numpy", "flinkwin")

_checked: set[int] = set()
#: the line of a failed worker start that names the cause
_CAUSE = re.compile(r"ModuleNotFoundError|ImportError|Cannot run program|No such file")


class WorkerPythonError(RuntimeError):
    """Spark's Python workers cannot import what flinkwin's stages need."""


def ensure_worker_python(spark: Any) -> None:
    """Point a local session's workers at this interpreter if the user chose none, then check
    (once per SparkContext) that the workers import :data:`REQUIRED_MODULES`."""
    try:
        sc = spark.sparkContext
    except Exception:  # noqa: BLE001 (Spark Connect: no JVM-side context)
        return
    # (getConf copies the whole configuration over py4j, a few hundred calls: only if needed)
    chosen = os.environ.get("PYSPARK_PYTHON") or (
        str(sc.master).startswith("local") and sc.getConf().get("spark.pyspark.python", None)
    )
    if str(sc.master).startswith("local") and not chosen:
        # UDFs built from now on carry this interpreter (pyspark reads sc.pythonExec per UDF)
        sc.pythonExec = sys.executable
        os.environ["PYSPARK_PYTHON"] = sys.executable
    if id(sc) in _checked:
        return
    missing = _missing_on_workers(sc)
    if missing:
        executable, module, error = missing
        raise WorkerPythonError(
            f"Spark's Python workers run {executable!r}, which cannot import {module!r} "
            f"({error}); set PYSPARK_PYTHON (or spark.pyspark.python) to an interpreter that "
            f"has flinkwin, pyarrow and pandas, e.g. PYSPARK_PYTHON={sys.executable}, before "
            "the SparkSession is created"
        )
    _checked.add(id(sc))


def _missing_on_workers(sc: Any) -> tuple[str, str, str] | None:
    """``(interpreter, module, error)`` for the first module a worker cannot import, else
    ``None``."""
    modules = REQUIRED_MODULES

    def probe(_: Any) -> Any:
        import importlib
        import sys as worker_sys

        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as exc:  # noqa: BLE001 (any import failure is the answer)
                yield (worker_sys.executable, name, f"{type(exc).__name__}: {exc}")
                return
        yield None

    try:
        answers = sc.parallelize([0], 1).mapPartitions(probe).collect()
    except Exception as exc:  # noqa: BLE001 (the worker could not even start)
        lines = str(exc).splitlines()
        cause = next((line.strip() for line in lines if _CAUSE.search(line)), lines[0])
        return (sc.pythonExec, "pyspark", cause[:300])
    return answers[0] if answers else None
