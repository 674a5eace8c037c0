"""Sizing a query's stateful stage whoever starts it (flinkwin's ``start()``, ``writeStream``,
``print()``, ``flinkwin-job``, or the user's own ``result.toDF().writeStream...start()``).

Spark takes a streaming query's number of state partitions from the session of the DataFrame
at the moment ``DataStreamWriter.start()`` runs (it clones the session then), records it in the
checkpoint's offset log and reads it back from there on every restart; a plan cannot carry it
and a ``StreamingQueryListener`` runs too late (``bench/probes/FINDINGS.md``). The one
mechanism, :func:`state_partitions`, therefore sets it around the start call: Spark's
``spark.sql.streaming.internal.stateStore.partitions``, which sizes the query's stateful
operators only, so the user's own stateless shuffles upstream (``repartition``, joins with a
static table...) keep the session's ``spark.sql.shuffle.partitions``. Where a Spark refuses
that key (a managed service's list of settable confs), ``spark.sql.shuffle.partitions`` is set
instead. The session's own value (or its absence) is restored right after the call, error or
not. Spark keeps one count per query: a stateful operator of the user's in the same query
(``dropDuplicates``, an aggregation, a stream-stream join) runs in the same count.

The user's own writer is sized by the DataFrame flinkwin hands out: ``toDF()`` of a streaming
stream that contains a flinkwin stage (:func:`sized_data_frame`) is an instance of a subclass of
its own class (classic or Spark Connect) whose ``writeStream`` is Spark's writer with ``start``
and ``toTable`` run inside :func:`state_partitions`, after flinkwin's checks of the checkpoint
(those of its own ``start()``). A DataFrame derived from it (``select``, ``join``, ``groupBy``, a
temporary view...) is Spark's plain DataFrame again: deriving one warns
(:class:`UnsizedStageWarning`) when the session's setting would give the stage far more state
partitions than it needs, with the one line that sizes it.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

from pyspark.sql import DataFrame

from .file_source_log import before_start
from .parallelism import SHUFFLE_PARTITIONS, STATE_PARTITIONS, stage_parallelism
from .restart import checkpoint_location

#: DataFrame methods that register the DataFrame for SQL (a query then derives from it)
_VIEWS = frozenset({
    "createTempView", "createOrReplaceTempView", "createGlobalTempView",
    "createOrReplaceGlobalTempView", "registerTempTable",
})


class UnsizedStageWarning(UserWarning):
    """A query started from this DataFrame would run a flinkwin stage in the session's number
    of state partitions, far from the stage's own (see :mod:`flinkwin.spark.sizing`)."""


@dataclass(frozen=True)
class StageSize:
    """What decides a stage's state partitions: its key groups and the parallelism asked for
    (``set_parallelism``), plus ``check(checkpoint)``, flinkwin's checks of the checkpoint a
    query of this stage starts from (None: none beyond the file sources' log)."""

    key_groups: int
    requested: int | None = None
    check: Callable[[str | None], None] | None = field(default=None, compare=False)
    #: the stage is a distributed graph: its query needs the RocksDB state store
    rocksdb: bool = False

    def partitions(self, session: Any) -> int:
        return stage_parallelism(session, self.key_groups, self.requested)


@contextmanager
def state_partitions(session: Any, partitions: int | None) -> Iterator[None]:
    """Within the block, a streaming query started from ``session`` gets ``partitions`` state
    partitions (kept by its checkpoint); the session's settings are restored exactly after the
    block. ``None`` changes nothing."""
    if partitions is None:
        yield
        return
    key, before = STATE_PARTITIONS, _explicit(session, STATE_PARTITIONS)
    try:
        session.conf.set(key, str(partitions))
    except Exception:  # noqa: BLE001 (a Spark that does not let a client set the internal key)
        key, before = SHUFFLE_PARTITIONS, _explicit(session, SHUFFLE_PARTITIONS)
        session.conf.set(key, str(partitions))
    try:
        yield
    finally:
        if before is None:
            session.conf.unset(key)
        else:
            session.conf.set(key, before)


#: Spark's state store provider, and the one transformWithStateInPandas (a distributed graph,
#: flinkwin.spark.graph_chained) needs
PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
ROCKSDB_FIX = f"spark.conf.set({PROVIDER_CONF!r}, {ROCKSDB!r})"


#: RocksDB's changelog checkpointing: a commit writes the batch's changed keys to a changelog
#: file instead of flushing and uploading new SST files (snapshots are uploaded in the
#: background); Spark restarts a checkpoint with it on or off (docs/benchmarks.md, "Where the
#: distributed plan's time goes")
CHANGELOG_CONF = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"


@contextmanager
def state_store(session: Any, rocksdb: bool) -> Iterator[None]:
    """Within the block, a streaming query started from ``session`` uses the RocksDB state
    store when ``rocksdb`` (Spark records the provider in the new query's checkpoint; a restart
    keeps the checkpoint's), with changelog checkpointing unless the session sets it; the
    session's settings are restored exactly after the block."""
    if not rocksdb:
        yield
        return
    changes: dict[str, str] = {} if uses_rocksdb(session) else {PROVIDER_CONF: ROCKSDB}
    if _explicit(session, CHANGELOG_CONF) is None:
        changes[CHANGELOG_CONF] = "true"
    before: dict[str, str | None] = {key: _explicit(session, key) for key in changes}
    for key, value in changes.items():
        session.conf.set(key, value)
    try:
        yield
    finally:
        for key, previous in before.items():
            if previous is None:
                session.conf.unset(key)
            else:
                session.conf.set(key, previous)


def uses_rocksdb(session: Any) -> bool:
    """True when a query started from ``session`` now would use the RocksDB state store."""
    try:
        return (session.conf.get(PROVIDER_CONF, None) or "") == ROCKSDB
    except Exception:  # noqa: BLE001 (a conf Spark Connect's server refuses to read)
        return False


def _explicit(session: Any, key: str) -> str | None:
    """``key``'s value set in the session (None: unset, Spark's default applies)."""
    value = session.conf.getAll.get(key)
    return None if value is None else str(value)


def session_state_partitions(session: Any) -> int | None:
    """The state partitions a query started now from ``session`` would get from the session
    (None: not a number, e.g. Databricks' ``auto``)."""
    value = _explicit(session, STATE_PARTITIONS) or session.conf.get(SHUFFLE_PARTITIONS)
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# --------------------------------------------------------------- the DataFrame of toDF()
#: the sized subclass of each DataFrame / DataStreamWriter class (classic, Spark Connect)
_SIZED: dict[type, type] = {}


def sized_data_frame(df: DataFrame, size: StageSize) -> DataFrame:
    """``df`` (an output of a streaming flinkwin stage) whose ``writeStream...start()`` and
    ``toTable()`` start the query with the stage's state partitions (see module docstring)."""
    sized = cast(DataFrame, object.__new__(_sized_class(type(df), _sized_data_frame)))
    sized.__dict__.update(df.__dict__)
    sized.__dict__["_fw_size"] = size
    return sized


def _sized_class(base: type, make: Callable[[type], type]) -> type:
    if base not in _SIZED:
        _SIZED[base] = make(base)
    return _SIZED[base]


def _sized_data_frame(base: type) -> type:
    class SizedDataFrame(base):  # type: ignore[valid-type, misc]
        """Spark's DataFrame; its ``writeStream`` starts the query at the flinkwin stage's
        parallelism, and a DataFrame derived from it warns when that matters."""

        @property
        def writeStream(self) -> Any:  # noqa: N802
            writer = super().writeStream
            writer.__class__ = _sized_class(type(writer), _sized_writer)
            writer.__dict__.update(_fw_size=self._fw_size, _fw_session=self.sparkSession,
                                   _fw_checkpoint=None, _fw_query_name=None)
            return writer

        def __getattribute__(self, name: str) -> Any:
            value = super().__getattribute__(name)
            if name.startswith("_") or not inspect.ismethod(value):
                return value
            if name in ("na", "stat"):
                _warn_derived(self, name)
                return value

            @functools.wraps(value)
            def derive(*args: Any, **kwargs: Any) -> Any:
                out = value(*args, **kwargs)
                if name in _VIEWS or (isinstance(out, DataFrame) and out is not self) or (
                    type(out).__name__ == "GroupedData"
                ):
                    _warn_derived(self, name)
                return out

            return derive

    SizedDataFrame.__name__ = SizedDataFrame.__qualname__ = base.__name__
    return SizedDataFrame


def _warn_derived(df: Any, method: str) -> None:
    """Warn once per sized DataFrame when a derived query would be far from the stage's size."""
    if df.__dict__.get("_fw_warned"):
        return
    df.__dict__["_fw_warned"] = True
    session, size = df.sparkSession, df._fw_size
    if size.rocksdb and not uses_rocksdb(session):
        warnings.warn(
            f"flinkwin: a streaming query started from a DataFrame derived from toDF() (by "
            f"{method}()) runs a distributed stream graph (transformWithStateInPandas), which "
            "needs the RocksDB state store; this session uses another one, and Spark would "
            "fail the query at its first micro-batch (STORE_BACKEND_NOT_SUPPORTED_FOR_TWS). Set "
            f"it before start(): {ROCKSDB_FIX} (toDF().writeStream and flinkwin's start() set "
            "it themselves)",
            UnsizedStageWarning,
            stacklevel=3,
        )
    wanted, current = size.partitions(session), session_state_partitions(session)
    if current is None or (current <= 2 * wanted and (size.requested is None or current == wanted)):
        return
    key = STATE_PARTITIONS if _explicit(session, STATE_PARTITIONS) else SHUFFLE_PARTITIONS
    warnings.warn(
        f"flinkwin: a streaming query started from a DataFrame derived from toDF() (by "
        f"{method}()) runs the flinkwin stage in the session's {current} state partitions "
        f"instead of its {wanted} (Spark runs Python in every state partition of every "
        f"micro-batch). Size it with spark.conf.set({key!r}, {str(wanted)!r}) before its "
        "start() (it also sets the query's other shuffles), or start the query from "
        "toDF().writeStream or the result's writeStream directly",
        UnsizedStageWarning,
        stacklevel=3,
    )


def _sized_writer(base: type) -> type:
    start_signature = inspect.signature(getattr(base, "start"))  # noqa: B009
    table_signature = inspect.signature(getattr(base, "toTable"))  # noqa: B009

    class SizedWriter(base):  # type: ignore[valid-type, misc]
        """Spark's DataStreamWriter, starting its query as flinkwin's own start does."""

        def option(self, key: str, value: Any) -> Any:
            self._fw_note({key: value})
            return super().option(key, value)

        def options(self, **options: Any) -> Any:
            self._fw_note(options)
            return super().options(**options)

        def queryName(self, queryName: str) -> Any:  # noqa: N802, N803
            self.__dict__["_fw_query_name"] = queryName
            return super().queryName(queryName)

        def start(self, *args: Any, **kwargs: Any) -> Any:
            with self._fw_starting(start_signature.bind(self, *args, **kwargs).arguments):
                return super().start(*args, **kwargs)

        def toTable(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802
            with self._fw_starting(table_signature.bind(self, *args, **kwargs).arguments):
                return super().toTable(*args, **kwargs)

        def _fw_note(self, options: dict[str, Any]) -> None:
            for key, value in options.items():
                if str(key).lower() == "checkpointlocation":
                    self.__dict__["_fw_checkpoint"] = None if value is None else str(value)

        @contextmanager
        def _fw_starting(self, arguments: dict[str, Any]) -> Iterator[None]:
            self._fw_note(arguments.get("options") or {})
            if arguments.get("queryName") is not None:
                self.__dict__["_fw_query_name"] = arguments["queryName"]
            session, size = self._fw_session, self._fw_size
            location = checkpoint_location(session, self._fw_checkpoint, self._fw_query_name)
            before_start(session, location)
            if size.check is not None:
                size.check(location)
            with state_partitions(session, size.partitions(session)), state_store(
                session, size.rocksdb
            ):
                yield

    SizedWriter.__name__ = SizedWriter.__qualname__ = base.__name__
    return SizedWriter


__all__ = [
    "CHANGELOG_CONF",
    "PROVIDER_CONF",
    "ROCKSDB",
    "ROCKSDB_FIX",
    "STATE_PARTITIONS",
    "StageSize",
    "UnsizedStageWarning",
    "sized_data_frame",
    "session_state_partitions",
    "state_partitions",
    "state_store",
    "uses_rocksdb",
]
