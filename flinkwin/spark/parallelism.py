"""The stateful stage's parallelism: flinkwin's to choose, as a Flink operator's is.

Spark runs a streaming query's stateful stage in ``spark.sql.shuffle.partitions`` tasks (its
state partitions), read once when the query first starts and kept in the checkpoint from then
on. Spark's default, 200, suits large batch joins; for a window stage it means 200 state
partitions, each running its Python stage on every micro-batch even when empty.

flinkwin therefore starts its queries with its own value (:func:`stage_parallelism`), whatever
the session's setting and whoever starts the query (:mod:`flinkwin.spark.sizing`):

* ``set_parallelism(n)`` / ``setParallelism(n)`` on the window result, when given;
* else the environment's ``set_parallelism(n)`` when the program set one before building the
  window (Flink's ``parallelism.default``), capped by the key groups
  (:func:`requested_parallelism`);
* else Spark's default parallelism (the cores of a local master, the executors' cores of a
  cluster), capped by the key groups (a key group is processed by one task, so more tasks than
  key groups would sit idle) and rounded down to a divisor of 100800, so that the key-group
  labels spread the groups evenly (:mod:`flinkwin.spark.key_groups`). On Spark Connect, where
  the client cannot read the cores, the session's ``spark.default.parallelism`` stands for
  them when it is set, else the session's own number of state partitions (its
  ``spark.sql.shuffle.partitions``): never more than the session would run, nor than the key
  groups (16 instead of Spark's default 200).

The value applies at the query's first start; a restart from a checkpoint keeps the checkpoint's
(Spark's rule: the state is partitioned that way). Static DataFrames are left to Spark (its
adaptive execution coalesces empty partitions of batch jobs).
"""

from __future__ import annotations

from typing import Any

from flinkwin.spark.key_groups import BALANCING_MODULUS

SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions"
DEFAULT_PARALLELISM = "spark.default.parallelism"
#: Spark's conf for the state partitions of a query started now (unset: shuffle.partitions)
STATE_PARTITIONS = "spark.sql.streaming.internal.stateStore.partitions"


def stage_parallelism(session: Any, key_groups: int, requested: int | None = None) -> int:
    """The number of state partitions for a stage of ``key_groups`` key groups: ``requested``
    if given, else the default above."""
    if requested is not None:
        if not isinstance(requested, int) or isinstance(requested, bool) or requested < 1:
            raise ValueError(f"parallelism must be a positive int, got {requested!r}")
        return requested
    try:
        cores = int(session.sparkContext.defaultParallelism)
    except Exception:  # noqa: BLE001 (Spark Connect: no SparkContext on the client)
        cores = _session_parallelism(session) or key_groups
    cap = max(1, min(cores, key_groups))
    return max(p for p in range(1, cap + 1) if BALANCING_MODULUS % p == 0)


def requested_parallelism(own: int | None, default: int | None, key_groups: int) -> int | None:
    """The parallelism a stage of ``key_groups`` key groups asks for: its result's own
    ``set_parallelism`` as given, else the environment's ``default`` capped by the key groups,
    else None (:func:`stage_parallelism` chooses). Flink derives a max parallelism of at least
    128 for a job that sets none, so its default parallelism seldom meets it; flinkwin's key
    groups default to 16, and a task beyond them would hold no key group."""
    if own is not None:
        return own
    return None if default is None else min(default, key_groups)


def check_max_parallelism(operator: str, parallelism: int | None,
                          max_parallelism: int | None) -> None:
    """Refuse, as Flink does when the job is submitted, an operator whose ``parallelism`` is
    higher than its declared ``max_parallelism`` (Flink's ExecutionJobVertex: a task beyond
    the key groups would hold none). None for either: nothing to check (flinkwin's default
    key groups are not a declared max parallelism: a parallelism above them is honoured)."""
    if parallelism is None or max_parallelism is None or parallelism <= max_parallelism:
        return
    raise ValueError(
        f"Vertex {operator}'s parallelism ({parallelism}) is higher than the max parallelism "
        f"({max_parallelism}). Please lower the parallelism or increase the max parallelism "
        "(set_parallelism / set_max_parallelism on the result, or on the environment)."
    )


def describe_parallelism(own: int | None, default: int | None, key_groups: int) -> str | None:
    """``explain()``'s line for the parallelism asked for (None: none, flinkwin chooses)."""
    if own is not None:
        return str(own)
    if default is None:
        return None
    if default > key_groups:
        return (f"{key_groups} (the environment's {default}, capped by the {key_groups} key "
                "groups: set_max_parallelism raises them)")
    return f"{default} (the environment's)"


def _session_parallelism(session: Any) -> int | None:
    """The session's ``spark.default.parallelism``, else its state partitions, when set to a
    positive int (``spark.sql.shuffle.partitions`` may be ``auto`` on Databricks); else None."""
    for key in (DEFAULT_PARALLELISM, STATE_PARTITIONS, SHUFFLE_PARTITIONS):
        try:
            value = int(session.conf.get(key, None) or 0)
        except Exception:  # noqa: BLE001 (unreadable or not a number: not a usable setting)
            continue
        if value > 0:
            return value
    return None
