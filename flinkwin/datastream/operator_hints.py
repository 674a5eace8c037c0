"""Operator names and hints of a stream (PyFlink's ``name``, ``uid``, ``set_parallelism``...)
and its physical partitioning (``shuffle``, ``rebalance``, ``rescale``, ``forward``,
``global_``), each also with its Java name: recorded on the stream and
returned by it, as PyFlink's builders do; they change nothing on Spark (a window result's name
and uid appear in ``explain()``, its ``set_parallelism`` sizes its stage). Partitioning decides
only which parallel instance of the next operator gets an element: flinkwin's operators keep
no per-instance (operator) state, and one arrival order, that of a parallelism-1 run, which
every partitioning allows. ``partition_custom``, whose partitioner chooses the instance, and
``iterate`` are refused with an error saying so."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flinkwin.errors import UnsupportedOperationError
from flinkwin.unsupported import PARTITIONING

if TYPE_CHECKING:
    from typing_extensions import Self


class OperatorHints:
    """Mixed into ``DataStream``: the operator names and hints (see module docstring)."""

    _hints: dict[str, Any]

    def name(self, name: str) -> Self:
        """Name this operator (recorded; shown by a window result's ``explain()``)."""
        return self._hint("name", name, str)

    def get_name(self) -> str | None:
        """The name given with ``name()``, or None."""
        return self._hints.get("name")

    def uid(self, uid: str) -> Self:
        """Flink's operator id for savepoints (recorded): a flinkwin query's state belongs to
        its checkpoint location instead."""
        return self._hint("uid", uid, str)

    def set_uid_hash(self, uid_hash: str) -> Self:
        """Flink's operator hash (recorded; see ``uid``)."""
        return self._hint("uid_hash", uid_hash, str)

    def set_description(self, description: str) -> Self:
        """Describe this operator (recorded)."""
        return self._hint("description", description, str)

    def set_parallelism(self, parallelism: int) -> Self:
        """This operator's parallelism (recorded: a map or source runs in as many Spark tasks
        as its input has partitions; a window result's ``set_parallelism`` sizes its stage)."""
        return self._hint("parallelism", parallelism, int)

    def set_max_parallelism(self, max_parallelism: int) -> Self:
        """This operator's max parallelism (recorded). Key groups belong to a window stage:
        set them on the window's result (``WindowResultStream.set_max_parallelism``), on the
        environment, or with ``DataStream(df, key_groups=...)``."""
        return self._hint("max_parallelism", max_parallelism, int)

    def slot_sharing_group(self, slot_sharing_group: str) -> Self:
        """Flink's slot sharing group, by name (recorded; Spark schedules its own tasks)."""
        return self._hint("slot_sharing_group", slot_sharing_group, str)

    def set_buffer_timeout(self, timeout_millis: int) -> Self:
        """Flink's network buffer timeout (recorded; Spark has no such buffer)."""
        return self._hint("buffer_timeout", timeout_millis, int)

    def disable_chaining(self) -> Self:
        """Recorded; Spark plans its own stages."""
        return self._hint("chaining", "disabled", str)

    def start_new_chain(self) -> Self:
        """Recorded; Spark plans its own stages."""
        return self._hint("chaining", "new chain", str)

    def force_non_parallel(self) -> Self:
        """Recorded; Spark sizes its own tasks."""
        return self._hint("parallelism", 1, int)

    # ------------------------------------------------------- physical partitioning
    def shuffle(self) -> Self:
        """Flink's random partitioning (recorded). Partitioning changes which parallel subtask
        gets an element, never the elements: flinkwin keeps one arrival order, that of a
        parallelism-1 run (``docs/semantics.md``), which every partitioning allows."""
        return self._partitioning("shuffle")

    def rebalance(self) -> Self:
        """Flink's round-robin partitioning (recorded; see ``shuffle``)."""
        return self._partitioning("rebalance")

    def rescale(self) -> Self:
        """Flink's local round-robin partitioning (recorded; see ``shuffle``)."""
        return self._partitioning("rescale")

    def forward(self) -> Self:
        """Flink's forward partitioning (recorded; see ``shuffle``)."""
        return self._partitioning("forward")

    def global_(self) -> Self:
        """Flink's partitioning to the first instance (recorded; see ``shuffle``)."""
        return self._partitioning("global")

    def partition_custom(self, partitioner: Any, key_selector: Any) -> Any:
        """Refused: a custom ``Partitioner`` chooses the instance an element goes to, which
        flinkwin does not control (see the message)."""
        raise UnsupportedOperationError(
            f"partition_custom(): {PARTITIONING}; a Partitioner cannot choose a Spark task. "
            "Remove the call (the results do not depend on it) or key the stream with "
            "key_by(...)"
        )

    def iterate(self, *args: Any) -> Any:
        """Refused: Flink's iterations (feedback edges) are not supported."""
        raise UnsupportedOperationError(
            "iterate(): iterations (a stream fed back into its own graph) are not supported; "
            "a Spark query's graph is acyclic: loop in the function itself, or write the "
            "results and read them as a second query's input"
        )

    def _partitioning(self, kind: str) -> Self:
        return self._hint("partitioning", kind, str)

    # ------------------------------------------------------------ Flink's Java names
    def getName(self) -> str | None:  # noqa: N802
        return self.get_name()

    def setUidHash(self, uid_hash: str) -> Self:  # noqa: N802
        return self.set_uid_hash(uid_hash)

    def setDescription(self, description: str) -> Self:  # noqa: N802
        return self.set_description(description)

    def setParallelism(self, parallelism: int) -> Self:  # noqa: N802
        return self.set_parallelism(parallelism)

    def setMaxParallelism(self, max_parallelism: int) -> Self:  # noqa: N802
        return self.set_max_parallelism(max_parallelism)

    def slotSharingGroup(self, slot_sharing_group: str) -> Self:  # noqa: N802
        return self.slot_sharing_group(slot_sharing_group)

    def setBufferTimeout(self, timeout_millis: int) -> Self:  # noqa: N802
        return self.set_buffer_timeout(timeout_millis)

    def disableChaining(self) -> Self:  # noqa: N802
        return self.disable_chaining()

    def startNewChain(self) -> Self:  # noqa: N802
        return self.start_new_chain()

    def forceNonParallel(self) -> Self:  # noqa: N802
        return self.force_non_parallel()

    def partitionCustom(self, partitioner: Any, key_selector: Any) -> Any:  # noqa: N802
        return self.partition_custom(partitioner, key_selector)

    def _hint(self, key: str, value: Any, kind: type) -> Self:
        if not isinstance(value, kind) or isinstance(value, bool):
            raise TypeError(f"{key} must be a {kind.__name__}, got {value!r}")
        if isinstance(value, int) and value < 1:
            raise ValueError(f"{key} must be positive, got {value!r}")
        self._hints[key] = value
        return self


__all__ = ["OperatorHints"]
