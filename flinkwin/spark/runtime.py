"""What runs inside Spark's Python workers: one key group's rows through the core operator.

``KeyGroupRuntime.process_stream`` is the ``applyInPandasWithState`` function. Spark calls it
once per key group (hash of the key modulo ``key_groups``) that has rows in the micro-batch, and
once per key group whose timeout is due. Each call:

1. restores the group's state from the ``GroupState`` bytes (checking the recorded number of key
   groups) in the form it was written in: a :class:`~flinkwin.operator.WindowOperator` or one of
   its columnar equivalents (built-in aggregations, panes of aligned sliding windows, element
   lists of full-window functions; see :mod:`flinkwin.operator.states`), which hands a batch it
   cannot take (e.g. one that fires a window on arrival) over to the operator, and takes the
   state back after it where the state's shape allows;
2. advances it to Flink's watermark, recovered from Spark's (see
   :mod:`~flinkwin.spark.watermarks`; Spark's initial 0 means "none yet"), if that is greater
   than the watermark the group has seen, firing every event-time timer ``<=`` it,
   then sets processing time to the batch's timestamp (firing processing-time timers ``<=`` it);
3. processes the batch's rows (none for a timeout call) in arrival order (sorted by the arrival
   sequence taken before the shuffle, see :mod:`flinkwin.spark.arrival`; the rows are read by
   :mod:`flinkwin.spark.inputs`): Flink's STREAMING mode, the only one for a stream;
4. emits main and side outputs as one frame with a discriminator column, plus one metrics row
   (see :mod:`flinkwin.spark.outputs`);
5. snapshots the operator back into the state, sealed (see
   :func:`~flinkwin.spark.state_key.snapshot_binding`; the seal is checked in step 1 before
   anything is decoded), or removes it when the operator holds nothing,
   and sets the timeout from the operator's next timer. The operator also stays in the
   worker's memory, tagged with the snapshot's version: when the same worker gets the key group
   next and the state still carries that version, step 1 skips the restore (the operator is
   built and kept by :mod:`flinkwin.spark.operator_spec`).

Spark fires an event-time timeout when ``watermark > timeout`` while Flink fires a timer ``t``
when ``watermark >= t``, so the timeout is set to ``t - 1`` (never below Spark's current
watermark, which ``setTimeoutTimestamp`` rejects: a timer at or below the watermark fires at the
watermark's next increase, as in Flink). Processing-time timeouts fire when the batch timestamp
is greater than ``batch time + duration``; the duration is ``t - 1 - batch time`` (at least 1).

``process_static`` is the ``applyInPandas`` function for static DataFrames: processing time is
the worker's clock when the key group runs; all rows in arrival order (STREAMING mode) or stable
event-time order (BATCH mode), then the end of input: in STREAMING mode the watermark
``MAX_LONG`` (pending processing-time timers never fire, as in Flink); in BATCH mode the timer
services quiesced, then watermark and processing time ``MAX_LONG`` (every pending timer fires).
"""

from __future__ import annotations

import functools
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pyspark.sql.types import StructType

from flinkwin.errors import UnsupportedOperationError
from flinkwin.operator import WindowOperator, states
from flinkwin.operator.graph import GraphOperator
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.states import partials as partial_rows
from flinkwin.operator.states.partials import PartialSpec
from flinkwin.operator.timer_service import quiesce_timers
from flinkwin.operator.watermark_guard import (
    Uncertainty,
    check_event_timer,
    uncertain_watermark,
)
from flinkwin.output_tag import OutputTag
from flinkwin.time import MAX_LONG

from .daemon import automatic_collection_paused, young_collections_only
from .inputs import EventTime, StageInputs
from .key_groups import key_group_labels
from .nulls import NullMask
from .operator_spec import OPERATORS, SubtaskFactory
from .outputs import StageOutputs
from .row_encoder import RowEncoder
from .state_key import snapshot_binding
from .subtasks import DEFAULT_IDLE_CLOSE_S, SUBTASKS, current_run, reused_worker
from .watermarks import check_after_epoch, flink_watermark, spark_uncertainty

#: The arrival sequence of a heartbeat row: a copy of an input row sent to every key group so
#: that Spark calls each group in every micro-batch with input (see ``docs/metrics.md``); never
#: an element. Real rows' sequences are never negative (:mod:`flinkwin.spark.arrival`).
HEARTBEAT_SEQUENCE = -1
#: The grouping column holding each key group's label (see :mod:`flinkwin.spark.key_groups`).
KEY_GROUP_COLUMN = "_fw_kg"
#: Per key group: the number of key groups, the operator snapshot, and a version naming it.
STATE_SCHEMA = "key_groups int, snapshot binary, version string"
EVENT_TIME, PROCESSING_TIME, NO_TIMERS = "event time", "processing time", "none"
#: a graph node running a user function: it may register timers of either domain
USER_TIMERS = "user"


class KeyGroupMismatchError(RuntimeError):
    """The checkpoint was written with a different number of key groups."""


@dataclass
class KeyGroupRuntime:
    """The per-key-group function and its output encoding (see module docstring)."""

    #: builds the key group's operator: an OperatorSpec (a window stage), or a graph stage's
    #: spec (flinkwin.spark.graph.GraphSpec)
    operator: Any
    input_schema: StructType
    event_time: EventTime | None
    time_zone: str
    has_watermark: bool
    timer_domain: str
    key_groups: int
    main_encoder: RowEncoder
    with_window: bool
    side_tags: list[OutputTag]
    side_encoders: list[RowEncoder]
    output_schema: StructType
    null_timestamp_tag: OutputTag | None = None
    #: STREAMING mode: the column with the rows' arrival sequence (flinkwin.spark.arrival),
    #: by which each batch is ordered; None is BATCH mode (static input): event-time order.
    sequence_column: str | None = None
    #: The key groups' state kind (see flinkwin.operator.states).
    state_kind: str = states.OBJECT
    #: the input carries heartbeat rows (streaming, keyed: always with a sequence column, where
    #: ``HEARTBEAT_SEQUENCE`` marks them)
    heartbeats: bool = False
    #: the heartbeats carry each source's greatest event time, in this source-number column
    #: (a graph's keyed plan, flinkwin.spark.source_clocks)
    source_clocks: str | None = None
    #: a worker process closes the stage's subtasks after this long without a call
    idle_close_s: float = DEFAULT_IDLE_CLOSE_S
    #: the input columns whose nulls travel in a mask (see flinkwin.spark.nulls)
    null_masks: tuple[NullMask, ...] = ()
    #: the input's rows are partial aggregates (flinkwin.operator.states.partials), combined so
    partial: PartialSpec | None = None
    #: the shift on Spark's watermark (flinkwin.spark.watermarks): 0, or WATERMARK_SHIFT_MS
    #: for a stream declaring times before 1970
    watermark_shift: int = 0
    #: the stage's operators judge elements' timestamps against the watermark (windows,
    #: joins; not process functions): one at or before the epoch fails while it is uncertain
    epoch_elements: bool = True
    #: the stage computes every watermark from its own clocks (a graph in one key group, no
    #: source with Spark's watermark): Spark's value decides nothing, so it is never uncertain
    own_watermarks: bool = False
    #: main outputs arrive as ``Fired(value, firing)``: the firing columns are appended
    #: (``with_firing=True``, see docs/firings.md)
    with_firing: bool = False
    stage_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: what the key groups' sealed state is bound to besides the checkpoint and the key group
    #: (flinkwin.spark.state_key.stage_fingerprint)
    stage_fingerprint: str = ""
    #: each call's rows leave as one packed row (flinkwin.spark.outputs.unpack): the stage
    #: function's output schema is then ``PACKED_SCHEMA``
    packed_output: bool = False

    @functools.cached_property
    def _inputs(self) -> StageInputs:
        """How the key group's input chunks become rows (built once per stage in a worker)."""
        return StageInputs(self)

    @functools.cached_property
    def _outputs(self) -> StageOutputs:
        """How the key group's results leave the stage (built once per stage in a worker)."""
        return StageOutputs(self)


    # -------------------------------------------------------------- streaming
    def process_stream(
        self, key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: Any
    ) -> Iterator[pd.DataFrame]:
        """The ``applyInPandasWithState`` function (see module docstring); Python's automatic
        garbage collection waits until the call's output is built (see
        :mod:`flinkwin.spark.daemon`)."""
        run = current_run()
        stage = f"{self.stage_id}/{run}"  # one stage per query run (see flinkwin.spark.subtasks)
        with SUBTASKS.running(stage, self.idle_close_s, run):
            uncertainty = self._uncertainty(state)
            try:
                with automatic_collection_paused(), uncertain_watermark(uncertainty):
                    outputs = list(self._process_stream(
                        key, frames, state, stage, run, uncertainty is not None))
            except BaseException:
                SUBTASKS.close_stage(stage)  # the worker process exits now, closing nothing
                raise
            if not reused_worker():
                SUBTASKS.close_stage(stage)
        yield from outputs

    def _uncertainty(self, state: Any) -> Uncertainty | None:
        """Whether Flink's watermark is uncertain in this call (see
        :mod:`flinkwin.spark.watermarks`): in the ordinary mode, Spark's watermark is 0 after
        micro-batch 0, where it stands for ``MIN_LONG`` or a time at or before the epoch; never
        in a stage computing its watermarks itself (``own_watermarks``)."""
        if not self.has_watermark or self.own_watermarks or self.watermark_shift:
            return None
        return spark_uncertainty(state.getCurrentWatermarkMs())

    def _process_stream(
        self, key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: Any, stage: str,
        run: str, uncertain: bool = False,
    ) -> Iterator[pd.DataFrame]:
        group = int(key[0])
        factory = self._factory(group, stage, run)
        binding = snapshot_binding(self.stage_fingerprint, group)
        # operators kept in memory belong to the query run and the checkpoint they came from
        cached = f"{stage}/{binding.checkpoint}"
        op = None
        snapshot_bytes = 0
        version = None
        if state.exists:
            key_groups, snapshot, version = state.get
            if key_groups != self.key_groups:
                raise KeyGroupMismatchError(
                    f"the checkpoint was written with key_groups={key_groups} but the pipeline "
                    f"now uses key_groups={self.key_groups}; the number of key groups cannot "
                    "change on restart (like Flink's max parallelism): use the original value "
                    "or a new checkpoint location"
                )
            op = OPERATORS.take(cached, group, version, factory.subtask)
            if op is None:
                op = states.restore_sealed(bytes(snapshot), factory, self._pickler, binding,
                                           f"key group {group}'s state")
            snapshot_bytes = len(snapshot)
        else:
            OPERATORS.take(cached, group, None, factory.subtask)

        rows, nulls, partials = (
            (None, None, None) if state.hasTimedOut else self._inputs.batch(frames)
        )
        clocks = None if state.hasTimedOut else self._inputs.clocks
        spark_watermark = state.getCurrentWatermarkMs() if self.has_watermark else 0
        # MIN_LONG: none yet (or uncertain, see _uncertainty)
        watermark = flink_watermark(spark_watermark, self.watermark_shift)
        if uncertain:  # what the uncertain watermark would decide fails (watermark_guard)
            if rows is not None and self.epoch_elements:
                check_after_epoch(*rows)
            timer = None if op is None else op.next_event_time_timer()
            if timer is not None:
                check_event_timer(timer)
        batch_time = state.getCurrentProcessingTimeMs()
        if rows is None and nulls is None and clocks is None and (
            op is None or not self._due(op, watermark, batch_time)
        ):
            # a heartbeat or wake-up with nothing to do: report the state as it is
            keys, windows = (0, 0) if op is None else op.state_size()
            if op is not None:
                assert version is not None  # op came from the state
                self._set_timeout(op, state, spark_watermark, batch_time)
                OPERATORS.put(cached, group, version, op, factory.subtask)
            yield self._outputs.metrics_frame(keys, windows, snapshot_bytes, self.packed_output)
            return
        if op is None:
            op = states.new_state(self.state_kind, factory)
        if partials is not None:
            assert rows is not None and self.partial is not None
            op = partial_rows.prepare(
                op, *rows, max(op.current_watermark, watermark), partials,
                list(self.partial.key_columns), self.partial.field,
            )
        elif rows is not None:
            op = states.prepare(op, *rows, max(op.current_watermark, watermark))
        dropped, fired = op.num_late_records_dropped, op.num_windows_fired
        if watermark > op.current_watermark:
            op.advance_watermark(watermark)
        if batch_time > op.current_processing_time:
            op.advance_processing_time(batch_time)
        if partials is not None:
            assert rows is not None
            partial_rows.process_batch(op, *rows, partials)
        elif rows is not None:
            op.process_batch(*rows)
        if clocks is not None:
            op.see_source_clocks(*clocks, advance=rows is None)
        if uncertain:  # a window at the epoch (its timers at 0) is what the watermark decides
            timer = op.next_event_time_timer()
            if timer is not None:
                check_event_timer(timer)
        self._check_timers(op)
        keys, windows = op.state_size()
        counts = {
            "numRecordsIn": (
                0 if rows is None else len(rows[1]) if partials is None else partials.elements
            ),
            "numLateRecordsDropped": op.num_late_records_dropped - dropped,
            "numWindowsFired": op.num_windows_fired - fired,
            "keysInState": keys,
            "windowsInState": windows,
            "stateBytes": 0,  # set below, once the state is written
            "keyGroupCalls": 1,
        }
        out = self._outputs.drain(op, nulls, counts)
        # back to the columnar form after a batch handed over to the operator
        op = states.settle(op, self.state_kind, factory, self.input_schema.fieldNames())

        snapshot_bytes = 0
        if states.holds_nothing(op):
            state.remove()
        else:
            version = uuid.uuid4().hex
            snapshot = states.sealed_snapshot(op, self._pickler, binding)
            snapshot_bytes = len(snapshot)
            state.update((self.key_groups, snapshot, version))
            self._set_timeout(op, state, spark_watermark, batch_time)
            OPERATORS.put(cached, group, version, op, factory.subtask)
        assert out is not None  # the metrics row at least
        counts["stateBytes"] = snapshot_bytes
        yield self._outputs.emit(out, self.packed_output)

    @property
    def _pickler(self) -> StatePickler:
        """Seals the key groups' stored state (see flinkwin.operator.snapshots)."""
        return self.operator.state_pickler

    def _due(self, op: Any, watermark: int, now: int) -> bool:
        """True if advancing ``op`` to Flink's watermark and batch time fires a timer (a
        graph's operators have watermarks of their own: always advanced)."""
        if isinstance(op, GraphOperator):
            return True
        if watermark > op.current_watermark:
            timer = op.next_event_time_timer()
            if timer is not None and timer <= watermark:
                return True
        if now > op.current_processing_time:
            timer = op.next_processing_time_timer()
            if timer is not None and timer <= now:
                return True
        return False


    def _subtask(self, label: int) -> int:
        """The key group number of a grouping label (the runtime context's subtask index)."""
        labels = key_group_labels(self.key_groups)
        return labels.index(label) if label in labels else 0

    def _check_timers(self, op: Any) -> None:
        """Fail on a pending timer of a time domain this stage cannot wake keys for (a user
        trigger's timers are assumed to be in the assigner's domain when the stage is built):
        such a timer would fire late or never, silently."""
        if not isinstance(op, WindowOperator):
            return  # columnar states have event-time timers only
        domains = (
            (EVENT_TIME, op.event_timers, "registerEventTimeTimer"),
            (PROCESSING_TIME, op.processing_timers, "registerProcessingTimeTimer"),
        )
        for domain, timers, register in domains:
            if domain == self.timer_domain:
                continue
            due = timers.peek_timestamp()
            if due is None or due >= MAX_LONG:
                continue
            timestamp, key, window = next(iter(timers))
            runs = (
                "no timers at all" if self.timer_domain == NO_TIMERS
                else f"only {self.timer_domain} timers"
            )
            raise UnsupportedOperationError(
                f"trigger {op.trigger!r} called {register}({timestamp}) for key {key!r}, window "
                f"{window!r}, but this streaming stage runs {runs} (from its assigner and "
                f"trigger): Spark could not wake the key for a {domain} timer, which would "
                "fire late or never. Use a trigger in the assigner's time domain, or run on a "
                "static DataFrame, where both domains work"
            )

    def _factory(self, group: int, stage: str, run: str) -> SubtaskFactory:
        """Builds the operators of the key group labelled ``group``: all run the functions of
        its subtask in this worker process for this query run (see
        :mod:`flinkwin.spark.subtasks`)."""
        index = self._subtask(group)
        subtask = SUBTASKS.get(stage, index, lambda: self.operator.subtask(index),
                               self.idle_close_s, run)
        return SubtaskFactory(self.operator, index, subtask)

    def _set_timeout(self, op: Any, state: Any, watermark: int, now: int) -> None:
        """Wake a key group holding state at Spark's next watermark increase (event time) or
        next batch (processing time), whether or not a timer is due then: every group with
        state reports its totals in every batch the stage runs (see ``docs/metrics.md``)."""
        if self.timer_domain == EVENT_TIME:
            state.setTimeoutTimestamp(max(watermark, 1))
        elif self.timer_domain == PROCESSING_TIME:
            state.setTimeoutDuration(1)

    # ----------------------------------------------------------------- static
    def process_static(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The ``applyInPandas`` function for static input (see module docstring)."""
        group = int(frame[KEY_GROUP_COLUMN].iloc[0]) if KEY_GROUP_COLUMN in frame else 0
        op = self.operator.build(self._subtask(group))
        # processing time is the clock when this key group runs, read here in the worker (a
        # pipeline built now and run later sees the later time, as each Flink task reads its own)
        op.advance_processing_time(time.time_ns() // 1_000_000)
        rows, nulls = self._inputs.rows([frame])
        if rows is not None:
            op.process_batch(*rows)
        if self.sequence_column is not None:
            # STREAMING mode on a bounded input: the end-of-input watermark; pending
            # processing-time timers never fire (Flink quiesces the processing-time service
            # at the end of input, StreamOperatorWrapper)
            op.advance_watermark(MAX_LONG)
        elif isinstance(op, GraphOperator):
            op.end_batch_input()
        else:  # BATCH mode: timers registered by timer callbacks are ignored
            quiesce_timers(op)
            op.advance_watermark(MAX_LONG)
            op.advance_processing_time(MAX_LONG)
        op.close()
        keys, windows = op.state_size()
        counts = {
            "numRecordsIn": 0 if rows is None else len(rows[1]),
            "numLateRecordsDropped": op.num_late_records_dropped,
            "numWindowsFired": op.num_windows_fired,
            "keysInState": keys,  # left at the end of input (a static stage stores nothing)
            "windowsInState": windows,
            "stateBytes": 0,
            "keyGroupCalls": 1,
        }
        out = self._outputs.frame(op, nulls, counts)
        assert out is not None  # the metrics row at least
        return out


def stream_function(runtime: KeyGroupRuntime) -> Any:
    """``runtime.process_stream`` as a plain function (PySpark inspects the argument count of
    the functions it is given, and counts ``self`` on bound methods)."""

    def process_key_group(
        key: tuple[Any, ...], frames: Iterator[pd.DataFrame], state: Any
    ) -> Iterator[pd.DataFrame]:
        _quiet_spark_concat_warning()
        young_collections_only()
        return runtime.process_stream(key, frames, state)

    return process_key_group


def static_function(runtime: KeyGroupRuntime) -> Any:
    """``runtime.process_static`` as a plain one-argument function (see ``stream_function``)."""

    def process_key_group(frame: pd.DataFrame) -> pd.DataFrame:
        young_collections_only()
        with automatic_collection_paused():
            return runtime.process_static(frame)

    return process_key_group


def _quiet_spark_concat_warning() -> None:
    """PySpark's own applyInPandasWithState code pads our output with all-NA rows through
    ``pd.concat``, which makes pandas 2 warn on every batch; nothing a user can act on."""
    warnings.filterwarnings(
        "ignore",
        message="The behavior of DataFrame concatenation with empty or all-NA entries",
        category=FutureWarning,
    )



__all__ = [
    "STATE_SCHEMA",
    "EventTime",
    "KeyGroupMismatchError",
    "KeyGroupRuntime",
    "static_function",
    "stream_function",
]
