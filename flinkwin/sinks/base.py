"""The sink interface: what receives one output's rows, batch by batch."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType


@dataclass(frozen=True)
class WindowOutput:
    """What a window stage's main output is, for sinks that depend on it (DeltaUpsertSink).

    ``key_columns``: the ``key_by`` column names (None: a key selector function; empty: a
    non-keyed ``window_all``); ``with_window``/``with_firing``: the result's window and firing
    columns; ``trigger``: the trigger's description, ``trigger_purges`` whether a firing before
    the window's last can purge its contents (True), never does (False) or flinkwin cannot
    tell (None: a user-defined trigger); ``merging``: the merging assigner (sessions), if any.
    """

    key_columns: tuple[str, ...] | None
    with_window: bool
    with_firing: bool
    trigger: str
    trigger_purges: bool | None
    merging: str | None = None


@dataclass(frozen=True)
class SinkContext:
    """What a sink learns when its query starts.

    ``label`` names the output (``"main"`` or the side output's tag id) and is stable across
    restarts; ``checkpoint_location`` is the query's checkpoint (None: Spark uses a temporary
    one, so nothing survives a restart); ``window`` describes a window stage's main output
    (None for side outputs and other stages).
    """

    session: SparkSession
    schema: StructType
    label: str
    checkpoint_location: str | None = None
    window: WindowOutput | None = None


class Sink(ABC):
    """Receives one output's rows, batch by batch.

    ``single_pass``: ``write_batch`` reads every row of ``df`` in one Spark action. A query
    whose only sink is single-pass hands it the stage's batch directly, as Spark's
    ``foreachBatch`` does; otherwise the batch is persisted and materialised once first, so the
    stateful stage runs exactly once however many sinks read it.

    A batch re-run after a failure comes with the same ``batch_id`` and the same rows; a sink
    that skips or replaces a batch id it already wrote is exactly-once.
    """

    single_pass = False

    def open(self, context: SinkContext) -> None:
        """Called once when the query starts, before the first batch; the default calls
        :meth:`bind`. Sinks that need the checkpoint override this instead."""
        self.bind(context.session, context.schema, context.label)

    def bind(self, session: SparkSession, schema: StructType, label: str) -> None:
        """Called once before the first batch with the output's schema and name
        (``"main"`` or the side output's tag id)."""
        return None

    @abstractmethod
    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        """Write one micro-batch's rows (a static DataFrame)."""


__all__ = ["Sink", "SinkContext", "WindowOutput"]
