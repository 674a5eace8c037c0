"""The state key: what signs the pickled user objects a streaming stage keeps in Spark's state.

The key comes from the Spark conf ``spark.flinkwin.state.secret`` (on Databricks a secret
reference, ``{{secrets/<scope>/<key>}}``, in the cluster's or job's Spark config; the name
contains "secret", so Spark's default ``spark.redaction.regex`` hides its value in the UI and
the event log) or else the
driver's environment variable ``FLINKWIN_STATE_KEY``. It is read on the driver when the stage is
built and travels to the Python workers inside the stage's function, as Spark ships every
Python function (never into the checkpoint). Without either, snapshots are signed under a fixed
public key: that detects corruption but authenticates nothing, and flinkwin logs a warning once
per process. See ``docs/reliability.md``.

Each key group's stored state is sealed (:meth:`StatePickler.seal`) under its
:func:`snapshot_binding`: the query's id (Spark keeps it in the checkpoint's ``metadata`` and
hands it to every task as the local property ``sql.streaming.queryId``), the stage's
fingerprint (:func:`stage_fingerprint`, compiled into the stage) and the key group's label.
"""

from __future__ import annotations

import hashlib
import logging
import os

from pyspark import TaskContext, cloudpickle
from pyspark.sql import SparkSession

from flinkwin.operator.snapshots import UNKEYED, SnapshotBinding, StatePickler

#: The Spark conf holding the state key.
CONF = "spark.flinkwin.state.secret"
#: The environment variable (of the driver) holding the state key when the conf is not set.
ENV = "FLINKWIN_STATE_KEY"
#: The shortest key accepted, in bytes (HMAC-SHA256 wants at least 32 bytes of entropy).
MIN_KEY_BYTES = 16
#: The task's local property holding the streaming query's id (Spark's
#: ``StreamExecution.QUERY_ID_KEY``): the same on every restart from one checkpoint.
QUERY_ID_PROPERTY = "sql.streaming.queryId"

_log = logging.getLogger("flinkwin")
_warned = False


class StateKeyError(ValueError):
    """The configured state key cannot be used."""


def _conf(session: SparkSession) -> str | None:
    try:
        return session.conf.get(CONF, None)
    except Exception:  # a conf Spark Connect's server refuses to read: treat as unset
        return None


def state_pickler(session: SparkSession) -> StatePickler:
    """The pickler of the session's streaming stages: cloudpickle (by value for classes and
    functions defined in ``__main__`` or a notebook), signed under the configured state key."""
    value, source = _conf(session), f"the Spark conf {CONF}"
    if not value:
        value, source = os.environ.get(ENV), f"the environment variable {ENV}"
    if not value:
        _warn_unkeyed()
        return StatePickler(dumps=cloudpickle.dumps)
    if value.startswith("{{secrets/"):
        raise StateKeyError(
            f"{source} is the unresolved secret reference {value!r}: Databricks resolves "
            "{{secrets/<scope>/<key>}} only in a cluster's or job's Spark config (set at "
            "startup), not in spark.conf.set(); set it there, or pass "
            "dbutils.secrets.get(<scope>, <key>) to spark.conf.set"
        )
    key = value.encode()
    if len(key) < MIN_KEY_BYTES:
        raise StateKeyError(
            f"{source} holds {len(key)} bytes; a state key needs at least {MIN_KEY_BYTES} "
            "(e.g. python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    if key == UNKEYED:  # the public constant standing for "no key": it protects nothing
        raise StateKeyError(
            f"{source} is flinkwin's public stand-in for 'no state key', which anyone can "
            "sign with; set a secret "
            "(e.g. python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    return StatePickler(key=key, dumps=cloudpickle.dumps, source=source)


def stage_fingerprint(*parts: object) -> str:
    """A short stable digest of what a stage is (its kind, its user-visible schemas, its
    operators' wiring): what a key group's sealed state is bound to besides its checkpoint."""
    text = "\n".join(str(p) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def snapshot_binding(stage: str, key_group: int) -> SnapshotBinding:
    """The binding of key group ``key_group``'s state in the running task: the streaming
    query's id (empty outside a streaming task), ``stage``, the key group."""
    context = TaskContext.get()
    query = context.getLocalProperty(QUERY_ID_PROPERTY) if context is not None else None
    return SnapshotBinding(query or "", stage, str(key_group))


def _warn_unkeyed() -> None:
    global _warned
    if not _warned:
        _warned = True
        _log.warning(
            "flinkwin: no state key configured (%s or %s): streaming state is signed under a "
            "public key, which detects corruption but not tampering; whoever can write the "
            "checkpoint can run code in the Python workers (see docs/reliability.md)", CONF, ENV,
        )


__all__ = [
    "CONF", "ENV", "QUERY_ID_PROPERTY", "StateKeyError", "snapshot_binding",
    "stage_fingerprint", "state_pickler",
]
