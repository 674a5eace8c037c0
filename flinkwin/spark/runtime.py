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
   sequence taken before the shuffle, see :mod:`flinkwin.spark.arrival`): Flink's STREAMING
   mode, the only one for a stream;
4. emits main and side outputs as one frame with a discriminator column (side outputs the stage
   does not emit are discarded and counted), plus one metrics row (tag ``METRICS_TAG``) that
   ``observe`` sums per batch and every output filters out (see ``docs/metrics.md``);
5. snapshots the operator back into the state, sealed (see
   :func:`~flinkwin.spark.state_key.snapshot_binding`; the seal is checked in step 1 before
   anything is decoded), or removes it when the operator holds nothing,
   and sets the timeout from the operator's next timer. The operator also stays in the
   worker's memory, tagged with the snapshot's version: when the same worker gets the key group
   next and the state still carries that version, step 1 skips the restore.

Spark fires an event-time timeout when ``watermark > timeout`` while Flink fires a timer ``t``
when ``watermark >= t``, so the timeout is set to ``t - 1`` (never below Spark's current
watermark, which ``setTimeoutTimestamp`` rejects: a timer at or below the watermark fires at the
watermark's next increase, as in Flink). Processing-time timeouts fire when the batch timestamp
is greater than ``batch time + duration``; the duration is ``t - 1 - batch time`` (at least 1).

``process_static`` is the ``applyInPandas`` function for static DataFrames: processing time is
the worker's clock when the key group runs; all rows in arrival order (STREAMING mode) or stable
event-time order (BATCH mode), then the end-of-input watermark ``MAX_LONG`` and processing time
``MAX_LONG``.
"""

from __future__ import annotations

import copy
import functools
import time
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark.sql.types import StructType

from flinkwin.errors import UnsupportedOperationError
from flinkwin.operator import WindowOperator, states
from flinkwin.operator.firings import Firing
from flinkwin.operator.graph import GraphOperator
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.states import partials as partial_rows
from flinkwin.operator.states.partials import COUNT, HIGH, LOW, PartialRows, PartialSpec
from flinkwin.operator.watermark_guard import (
    Uncertainty,
    UncertainWatermarkError,
    check_event_timer,
    uncertain_watermark,
)
from flinkwin.output_tag import OutputTag
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.windows import TimeWindow

from .daemon import automatic_collection_paused, young_collections_only
from .key_groups import key_group_labels
from .nulls import NullMask, restore_nulls
from .schema import RowEncoder, arrow_to_pandas
from .state_key import snapshot_binding
from .subtasks import DEFAULT_IDLE_CLOSE_S, SUBTASKS, current_run, reused_worker
from .timestamps import from_wire, on_wire
from .watermarks import DECLARATION, flink_watermark

TAG_COLUMN = "_fw_tag"
#: The arrival sequence of a heartbeat row: a copy of an input row sent to every key group so
#: that Spark calls each group in every micro-batch with input (see ``docs/metrics.md``); never
#: an element. Real rows' sequences are never negative (:mod:`flinkwin.spark.arrival`).
HEARTBEAT_SEQUENCE = -1
#: The grouping column holding each key group's label (see :mod:`flinkwin.spark.key_groups`).
KEY_GROUP_COLUMN = "_fw_kg"
#: The tag of a key-group call's metrics row (never part of any output).
METRICS_TAG = -1
#: Per-call metrics, summed per micro-batch (see docs/metrics.md); each travels in its own
#: column ``_fw_x_<name>``, set only on the metrics row.
METRICS = (
    "numRecordsIn",
    "numLateRecordsDropped",
    "numLateRecordsToSideOutput",
    "numWindowsFired",
    "numSideOutputRecordsDiscarded",
    "keysInState",
    "windowsInState",
    "stateBytes",
    "keyGroupCalls",
)
#: The metrics that are totals held after the batch (each call reports its key group's own);
#: the others count what happened in the batch.
STATE_METRICS = ("keysInState", "windowsInState", "stateBytes")
METRIC_COLUMNS = tuple(f"_fw_x_{name}" for name in METRICS)
_STATE_BYTES = METRIC_COLUMNS[METRICS.index("stateBytes")]
#: Per key group: the number of key groups, the operator snapshot, and a version naming it.
STATE_SCHEMA = "key_groups int, snapshot binary, version string"
EVENT_TIME, PROCESSING_TIME, NO_TIMERS = "event time", "processing time", "none"


class KeyGroupMismatchError(RuntimeError):
    """The checkpoint was written with a different number of key groups."""


# ----------------------------------------------------------------------------- runtime
@dataclass(frozen=True)
class EventTime:
    """Where the stage reads event time from.

    ``column`` is the shipped column holding it in ``unit``: ``"ms"`` (epoch milliseconds) or
    ``"us"`` (epoch microseconds: a timestamp travels so, exact and cheaper for Arrow and pandas
    than a timestamp column). When the timestamp is a user column, that column is not shipped
    and ``rebuilt`` names it: the workers rebuild it from the microseconds.
    """

    column: str
    unit: str
    rebuilt: str | None = None

    def millis(self, values: np.ndarray) -> np.ndarray:
        """Epoch milliseconds of the shipped values (floored, as Spark's ``unix_millis``)."""
        if self.unit == "ms":
            return values
        return values // 1000


@dataclass
class OperatorSpec:
    """Everything needed to build the core operator in a worker (picklable)."""

    assigner: Any
    function: Any
    key_fields: list[str] | None
    trigger: Any
    evictor: Any
    allowed_lateness_ms: int
    late_tag: OutputTag | None
    key_groups: int = 1
    task_name: str = "Window"
    #: the long-overflow policy (see flinkwin.longs), from spark.sql.ansi.enabled
    overflow: str = "wrap"
    #: the elements are tuples (a ``Types.TUPLE`` input stream), else Rows
    tuple_elements: bool = False
    #: the input is one column of pickled values (no declared type upstream)
    pickled_elements: bool = False
    #: the input is one column of an atomic type (``Types.STRING()``...): elements are values
    atomic_elements: bool = False
    #: per nested input column, the function shaping its values (flinkwin.spark.nested)
    element_converters: dict[str, Any] = field(default_factory=dict)
    #: pickles and signs the user objects of snapshots (see flinkwin.spark.state_key)
    state_pickler: StatePickler = field(default_factory=StatePickler)
    #: the declared key type (None: keys of a key selector compare by type and value)
    key_type: Any = None
    #: main outputs leave tagged with their firing (``with_firing=True``)
    tag_firings: bool = False

    def task_info(self, key_group: int) -> TaskInfo:
        return TaskInfo(
            task_name=self.task_name,
            index_of_this_subtask=key_group,
            number_of_parallel_subtasks=self.key_groups,
            max_number_of_parallel_subtasks=self.key_groups,
        )

    def subtask(self, key_group: int) -> Subtask:
        """A new subtask of key group ``key_group``, with its own copy of the user functions
        (as each Flink subtask deserializes its own), so state handles kept in ``open`` and
        attributes set there stay its own."""
        return Subtask(
            _own_copy(self.function), _own_copy(self.key_fields), self.task_info(key_group)
        )

    def build(self, key_group: int = 0, subtask: Subtask | None = None) -> WindowOperator:
        """An operator of key group ``key_group``: running ``subtask``'s functions (opened and
        closed by the subtask), or with its own copy of them."""
        if subtask is None:
            subtask_functions = (_own_copy(self.function), _own_copy(self.key_fields))
        else:
            subtask_functions = (subtask.function, subtask.key_selector)
        return WindowOperator(
            self.assigner,
            subtask_functions[0],
            key_selector=subtask_functions[1],
            trigger=self.trigger,
            evictor=self.evictor,
            allowed_lateness=self.allowed_lateness_ms,
            late_output_tag=self.late_tag,
            task_info=self.task_info(key_group),
            overflow=self.overflow,
            tuple_elements=self.tuple_elements,
            pickled_elements=self.pickled_elements,
            atomic_elements=self.atomic_elements,
            element_converters=self.element_converters,
            state_pickler=self.state_pickler,
            subtask=subtask,
            key_type=self.key_type,
            tag_firings=self.tag_firings,
        )


def _own_copy(function: Any) -> Any:
    try:
        return copy.deepcopy(function)
    except Exception:  # an uncopyable object (a lock, a client): share it, as before
        return function


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
    #: main outputs arrive as ``Fired(value, firing)``: the firing columns are appended
    #: (``with_firing=True``, see docs/firings.md)
    with_firing: bool = False
    #: the row order ``_rows`` applied to the last batch (None: as received)
    _order: np.ndarray | None = field(default=None, init=False, repr=False)
    stage_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    #: what the key groups' sealed state is bound to besides the checkpoint and the key group
    #: (flinkwin.spark.state_key.stage_fingerprint)
    stage_fingerprint: str = ""

    # ------------------------------------------------------------------ input
    def _input(
        self, frames: Iterable[pd.DataFrame]
    ) -> tuple[tuple[pd.DataFrame, np.ndarray] | None, pd.DataFrame | None, PartialRows | None]:
        """``_rows``, and the rows' partial columns when the input is combined."""
        if self.partial is None:
            return (*self._rows(frames), None)
        parts = [f for f in frames if len(f)]
        rows, nulls = self._rows(parts)
        if rows is None:
            return rows, nulls, None
        order = self._order
        spec = self.partial

        def read(name: str) -> np.ndarray:
            column = _column(parts, name)
            return column if order is None else column[order]

        bounds = (read(HIGH), read(LOW)) if spec.bounds else (None, None)
        return rows, nulls, PartialRows(read(COUNT), *bounds)

    def _rows(
        self, frames: Iterable[pd.DataFrame]
    ) -> tuple[tuple[pd.DataFrame, np.ndarray] | None, pd.DataFrame | None]:
        """The batch's user columns in arrival order (STREAMING mode; in stable event-time
        order in BATCH mode) with their timestamps, and the rows whose timestamp is null when
        they go to a side output (else such a row fails).

        Spark hands the rows over in chunks; each needed column is concatenated and put in
        order with numpy (one pass per column, helper columns are left out)."""
        parts = [f for f in frames if len(f)]
        if not parts:
            return None, None
        event_time = self.event_time
        order: np.ndarray | None = None
        shipped: dict[str, np.ndarray] = {}
        nulls: pd.DataFrame | None = None
        beats: np.ndarray | None = None
        if self.sequence_column is not None:
            sequence = _column(parts, self.sequence_column)
            if self.heartbeats:
                beats = sequence < 0
                if beats.all():
                    return None, None
                order = np.flatnonzero(~beats) if beats.any() else None
            if order is not None:
                sequence = sequence[order]
            if (sequence[1:] < sequence[:-1]).any():
                sort = np.argsort(sequence, kind="stable")
                order = sort if order is None else order[sort]
        if event_time is None:
            timestamps = np.full(sum(len(p) for p in parts), MIN_LONG, dtype=np.int64)
            if order is not None:
                timestamps = timestamps[order]
        else:
            raw = shipped[event_time.column] = _column(parts, event_time.column)
            missing = pd.isna(raw) | self._null_rows_of(parts, event_time.column)
            if beats is not None:
                missing &= ~beats
            if missing.any():
                rows = np.arange(len(missing)) if order is None else order
                index = rows[missing[rows]]  # arrival order
                if self.null_timestamp_tag is None:
                    self._null_timestamp(self._null_rows(parts, shipped, index[:1]))
                nulls = self._null_rows(parts, shipped, index)
                order = rows[~missing[rows]]
            if order is not None:
                raw = raw[order]
            values = raw.astype(np.int64, copy=False)
            timestamps = event_time.millis(values)
            if self.sequence_column is None and (timestamps[1:] < timestamps[:-1]).any():
                sort = np.argsort(timestamps, kind="stable")
                timestamps = timestamps[sort]
                values = values[sort]
                order = sort if order is None else order[sort]
            if not len(timestamps):
                return None, nulls
        self._order = order
        columns: dict[str, Any] = {}
        for field_ in self.input_schema.fields:
            name, dtype = field_.name, field_.dataType
            if event_time is not None and name == event_time.rebuilt:
                columns[name] = from_wire(values, dtype, self.time_zone)  # epoch micros
                continue
            column = self._shipped(parts, shipped, name)
            if order is not None:
                column = column[order]
            if on_wire(dtype):  # timestamps and nested floats travel changed (see timestamps)
                column = from_wire(column, dtype, self.time_zone)
            columns[name] = column
        return (pd.DataFrame(columns, copy=False), timestamps), nulls

    def _shipped(
        self, parts: list[pd.DataFrame], shipped: dict[str, np.ndarray], name: str
    ) -> np.ndarray:
        """Input column ``name`` of the chunks, its nulls restored (see flinkwin.spark.nulls)."""
        column = shipped[name] if name in shipped else _column(parts, name)
        mask = self._masks.get(name)
        if mask is None:
            return column
        return restore_nulls(column, mask, lambda m: _column(parts, m))

    @functools.cached_property
    def _masks(self) -> dict[str, NullMask]:
        return {m.column: m for m in self.null_masks}

    def _null_rows_of(self, parts: list[pd.DataFrame], name: str) -> np.ndarray | bool:
        """Where the masked column ``name`` is null (False when it is not masked)."""
        mask = self._masks.get(name)
        if mask is None:
            return False
        return ((_column(parts, mask.mask) >> mask.bit) & 1).astype(bool)

    def _null_rows(
        self, parts: list[pd.DataFrame], shipped: dict[str, np.ndarray], index: np.ndarray
    ) -> pd.DataFrame:
        """The user columns of the rows at ``index`` (those without a timestamp)."""
        assert self.event_time is not None
        columns: dict[str, Any] = {}
        for field_ in self.input_schema.fields:
            name, dtype = field_.name, field_.dataType
            if name == self.event_time.rebuilt:  # null: MIN_LONG on the wire
                columns[name] = from_wire(np.full(len(index), MIN_LONG), dtype, self.time_zone)
                continue
            column = self._shipped(parts, shipped, name)[index]
            if on_wire(dtype):  # timestamps and nested floats travel changed (see timestamps)
                column = from_wire(column, dtype, self.time_zone)
            columns[name] = column
        return pd.DataFrame(columns, copy=False)

    def _null_timestamp(self, rows: pd.DataFrame) -> NoReturn:
        assert self.event_time is not None
        bad = {c: rows[c].iloc[0] for c in rows.columns}
        timestamp = self.event_time.rebuilt or self.event_time.column
        if timestamp in bad:
            bad[timestamp] = None
        raise ValueError(
            f"event timestamp is null for row {bad}; every element needs a timestamp "
            "(filter such rows out before the window, or route them to a side output with "
            "WatermarkStrategy.withNullTimestamps(OutputTag(...)))"
        )

    # ----------------------------------------------------------------- output
    def _output_frame(
        self,
        op: Any,
        nulls: pd.DataFrame | None = None,
        counts: dict[str, int] | None = None,
    ) -> pd.DataFrame | None:
        """Main and side outputs as one frame: the tag column, then each output's columns
        (null outside its own rows; the main output's last column is each result's timestamp,
        Flink's: its window's ``max_timestamp()``), then, if ``counts`` is given, one metrics
        row. ``nulls`` (rows without a timestamp) join their side output. Side outputs no
        output of the stage reads are discarded here (and counted)."""
        groups: list[tuple[int, list[pa.Array]]] = []
        late_sent = discarded = 0
        if states.frame_outputs(op):
            frame, stamps = op.drain_main_timed()
            count, main_arrays = _frame_group(self.main_encoder, frame)
            groups.append((count, [*main_arrays, pa.array(stamps, pa.int64())]))
            late = op.drain_late()
            late_sent = 0 if late is None else len(late)
            requested = op.late_tag in self.side_tags
            discarded = 0 if requested else late_sent
            for side_tag, encoder in zip(self.side_tags, self.side_encoders):
                groups.append(_frame_group(encoder, late if side_tag == op.late_tag else None))
        else:
            drained = op.drain_output()
            values = [v for v, _ in drained]
            firings = [v.firing for v in values] if self.with_firing else []
            if self.with_firing:
                values = [v.value for v in values]
            windows = [v.window for v in values] if self.with_window else []
            if self.with_window:
                values = [v.value for v in values]
            main_arrays = self.main_encoder.arrays(values)
            if self.with_window:
                main_arrays += _window_arrays(windows)
            if self.with_firing:
                main_arrays += _firing_arrays(firings)
            main_arrays.append(pa.array([ts for _, ts in drained], pa.int64()))
            groups.append((len(values), main_arrays))
            sides = op.drain_side_outputs()
            late_tags = getattr(op, "late_output_tags", None)
            if late_tags is None:
                late_tags = () if op.late_output_tag is None else (op.late_output_tag,)
            late_sent = sum(len(sides.get(tag, ())) for tag in late_tags)
            for side_tag, encoder in zip(self.side_tags, self.side_encoders):
                side = [v for v, _ in sides.pop(side_tag, [])]
                groups.append((len(side), encoder.arrays(side)))
            discarded = sum(len(v) for v in sides.values())
        if nulls is not None and self.null_timestamp_tag in self.side_tags:
            j = self.side_tags.index(self.null_timestamp_tag)
            extra = _frame_group(self.side_encoders[j], nulls)
            count, routed = groups[j + 1]
            groups[j + 1] = (
                count + extra[0],
                [pa.concat_arrays([a, b]) for a, b in zip(routed, extra[1])],
            )
        sizes = [count for count, _ in groups]
        total = sum(sizes)
        rows = total + (counts is not None)
        if rows == 0:
            return None
        if counts is not None:
            counts = dict(counts, numLateRecordsToSideOutput=late_sent,
                          numSideOutputRecordsDiscarded=discarded)
            if total == 0:
                return self._metrics_row(counts)
        tag = np.repeat(np.arange(len(sizes), dtype=np.int8), sizes)
        if counts is not None:
            tag = np.append(tag, np.int8(METRICS_TAG))
        arrays: list[pa.Array] = [pa.array(tag, pa.int8())]
        before = 0
        for count, group in groups:
            after = rows - before - count
            for arr in group:
                parts = [pa.nulls(before, arr.type), arr, pa.nulls(after, arr.type)]
                arrays.append(pa.concat_arrays([p for p in parts if len(p)] or [arr]))
            before += count
        if counts is not None:
            for name in METRICS:
                value = pa.array([counts[name]], pa.int64())
                arrays.append(pa.concat_arrays([pa.nulls(total, pa.int64()), value]))
        else:
            arrays.extend(pa.nulls(rows, pa.int64()) for _ in METRICS)
        table = pa.Table.from_arrays(arrays, names=self.output_schema.fieldNames())
        return arrow_to_pandas(_as_declared(table, self._arrow_schema()))

    def _empty_frame(self) -> pd.DataFrame:
        return arrow_to_pandas(self._arrow_schema().empty_table())

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
        micro-batch 0, where it stands for ``MIN_LONG`` or a time at or before the epoch."""
        if (
            not self.has_watermark or self.watermark_shift or state.getCurrentWatermarkMs() > 0
            or _batch_id() == 0
        ):
            return None
        return Uncertainty(_REMEDY)

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
            op = _CACHE.take(cached, group, version, factory.subtask)
            if op is None:
                op = states.restore_sealed(bytes(snapshot), factory, self._pickler, binding,
                                           f"key group {group}'s state")
            snapshot_bytes = len(snapshot)
        else:
            _CACHE.take(cached, group, None, factory.subtask)

        rows, nulls, partials = (None, None, None) if state.hasTimedOut else self._input(frames)
        spark_watermark = state.getCurrentWatermarkMs() if self.has_watermark else 0
        # MIN_LONG: none yet (or uncertain, see _uncertainty)
        watermark = flink_watermark(spark_watermark, self.watermark_shift)
        if uncertain:  # what the uncertain watermark would decide fails (watermark_guard)
            if rows is not None and self.epoch_elements:
                _check_after_epoch(*rows)
            timer = None if op is None else op.next_event_time_timer()
            if timer is not None:
                check_event_timer(timer)
        batch_time = state.getCurrentProcessingTimeMs()
        if rows is None and nulls is None and (
            op is None or not self._due(op, watermark, batch_time)
        ):
            # a heartbeat or wake-up with nothing to do: report the state as it is
            keys, windows = (0, 0) if op is None else op.state_size()
            if op is not None:
                assert version is not None  # op came from the state
                self._set_timeout(op, state, spark_watermark, batch_time)
                _CACHE.put(cached, group, version, op, factory.subtask)
            yield self._metrics_frame(keys, windows, snapshot_bytes)
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
        out = self._output_frame(op, nulls, counts)
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
            _CACHE.put(cached, group, version, op, factory.subtask)
        assert out is not None  # the metrics row at least
        out.iat[len(out) - 1, out.columns.get_loc(_STATE_BYTES)] = snapshot_bytes
        yield out

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

    def _metrics_frame(self, keys: int, windows: int, state_bytes: int) -> pd.DataFrame:
        """The output of a call that changes nothing: the metrics row alone."""
        counts = dict.fromkeys(METRICS, 0)
        counts.update(keysInState=keys, windowsInState=windows, stateBytes=state_bytes,
                      keyGroupCalls=1)
        return self._metrics_row(counts)

    def _metrics_row(self, counts: dict[str, int]) -> pd.DataFrame:
        """The metrics row alone (``counts`` per metric), as ``_output_frame`` builds it."""
        template = self._metrics_template
        columns = {
            name: pd.arrays.IntegerArray(
                np.array([counts[name[len("_fw_x_"):]]], dtype=np.int64), np.zeros(1, dtype=bool)
            ) if name in METRIC_COLUMNS else template[name].array.copy()
            for name in template.columns
        }
        return pd.DataFrame(columns, copy=False)

    @functools.cached_property
    def _metrics_template(self) -> pd.DataFrame:
        """A metrics row with every metric 0, converted once per stage."""
        schema = self._arrow_schema()
        arrays = [
            pa.array([METRICS_TAG], pa.int8()) if name == TAG_COLUMN
            else pa.array([0], pa.int64()) if name in METRIC_COLUMNS
            else pa.nulls(1, schema.field(name).type)
            for name in schema.names
        ]
        return arrow_to_pandas(pa.Table.from_arrays(arrays, schema=schema))

    def _arrow_schema(self) -> pa.Schema:
        return self._arrow_output_schema

    @functools.cached_property
    def _arrow_output_schema(self) -> pa.Schema:
        from pyspark.sql.pandas.types import to_arrow_schema

        return to_arrow_schema(self.output_schema, timezone="UTC")

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

    def _factory(self, group: int, stage: str, run: str) -> _SubtaskFactory:
        """Builds the operators of the key group labelled ``group``: all run the functions of
        its subtask in this worker process for this query run (see
        :mod:`flinkwin.spark.subtasks`)."""
        index = self._subtask(group)
        subtask = SUBTASKS.get(stage, index, lambda: self.operator.subtask(index),
                               self.idle_close_s, run)
        return _SubtaskFactory(self.operator, index, subtask)

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
        rows, nulls = self._rows([frame])
        if rows is not None:
            op.process_batch(*rows)
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
        out = self._output_frame(op, nulls, counts)
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


_REMEDY = (
    f"Declare {DECLARATION} for a stream whose event times may lie this close to 1970 or "
    "before it: Spark's watermark then carries Flink's exactly (see docs/spark-semantics.md, "
    "\"Watermarks\")"
)


def _check_after_epoch(frame: pd.DataFrame, timestamps: np.ndarray) -> None:
    """Fail on an element before the epoch met under the uncertain watermark: whether its
    windows are late is what that watermark would decide. An element at 0 is exact: every
    window holding it ends after 0, and one whose timers are at 0 (the only case the value
    decides) fails on its timer after the batch (``check_event_timer``)."""
    early = np.flatnonzero(timestamps < 0)
    if len(early):
        i = int(early[0])
        row = {c: _plain(frame[c].iloc[i]) for c in frame.columns}
        raise UncertainWatermarkError(
            f"element {row} has event time {int(timestamps[i])} ms, before "
            "1970-01-01T00:00:00Z, while the stream's watermark is uncertain (Long.MIN_VALUE "
            "or a time at or before the epoch: Spark's watermark cannot go below it). "
            + _REMEDY
        )


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def _batch_id() -> int | None:
    """The streaming query's micro-batch id, which Spark sets on the tasks it runs (None:
    not known)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    value = None if context is None else context.getLocalProperty("streaming.sql.batchId")
    return None if value is None else int(value)


def _quiet_spark_concat_warning() -> None:
    """PySpark's own applyInPandasWithState code pads our output with all-NA rows through
    ``pd.concat``, which makes pandas 2 warn on every batch; nothing a user can act on."""
    warnings.filterwarnings(
        "ignore",
        message="The behavior of DataFrame concatenation with empty or all-NA entries",
        category=FutureWarning,
    )


@dataclass(frozen=True)
class _SubtaskFactory:
    """Builds the operators of one key group, all running ``subtask``'s functions."""

    spec: OperatorSpec
    index: int
    subtask: Subtask

    def __call__(self) -> WindowOperator:
        return self.spec.build(self.index, self.subtask)


class _OperatorCache:
    """Operators kept in a Python worker between micro-batches, so a key group processed by
    the same worker again skips ``restore``. An entry is used only if its version equals the
    one in Spark's state (anything else, e.g. a retried batch reading an older state, restores
    from the snapshot); it is removed while in use, so a failed call never leaves a
    half-updated operator behind; and only with the subtask it was built for (a subtask closed
    meanwhile leaves its operators unused). A stage's entries are kept per checkpoint (the
    runtime's ``stage`` names both), so a copy of a checkpoint never continues another's
    operators unchecked. Holds the key groups of the ``max_stages`` most recent stages."""

    def __init__(self, max_stages: int = 4) -> None:
        self.max_stages = max_stages
        self._stages: OrderedDict[str, dict[int, tuple[str, Any, Subtask]]] = OrderedDict()

    def take(self, stage: str, group: int, version: str | None, subtask: Subtask) -> Any:
        entry = self._stages.get(stage, {}).pop(group, None)
        if entry is None or version is None or entry[0] != version or entry[2] is not subtask:
            return None
        return entry[1]

    def put(self, stage: str, group: int, version: str, op: Any, subtask: Subtask) -> None:
        groups = self._stages.setdefault(stage, {})
        self._stages.move_to_end(stage)
        groups[group] = (version, op, subtask)
        while len(self._stages) > self.max_stages:
            self._stages.popitem(last=False)


_CACHE = _OperatorCache()


def _as_declared(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with the nested fields whose floats leave the stage as text cast to that text
    (see flinkwin.spark.timestamps.text_floats)."""
    for i, (column, declared) in enumerate(zip(table.columns, schema)):
        if pa.types.is_nested(column.type) and column.type != declared.type:
            table = table.set_column(i, declared.name, column.cast(declared.type))
    return table


def _column(parts: list[pd.DataFrame], name: str) -> np.ndarray:
    """Column ``name`` of the chunks as one numpy array (object when chunks' dtypes differ)."""
    arrays = [p[name].to_numpy() for p in parts]
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _frame_group(encoder: RowEncoder, frame: pd.DataFrame | None) -> tuple[int, list[pa.Array]]:
    if frame is None:
        return 0, list(encoder.empty_arrays)
    return len(frame), encoder.frame_arrays(frame)


#: Epoch milliseconds that convert to microseconds (Spark's timestamps) without overflow.
_MIN_TS_MS, _MAX_TS_MS = MIN_LONG // 1000, MAX_LONG // 1000


def _firing_arrays(firings: list[Firing]) -> list[pa.Array]:
    """firing_timing, firing_index, firing_is_last (see docs/firings.md)."""
    return [
        pa.array([f.timing for f in firings], pa.string()),
        pa.array([f.index for f in firings], pa.int64()),
        pa.array([f.is_last for f in firings], pa.bool_()),
    ]


def _window_arrays(windows: list[Any]) -> list[pa.Array]:
    """window_start/window_end as UTC timestamps (null for the global window)."""
    starts = [w.start if isinstance(w, TimeWindow) else None for w in windows]
    ends = [w.end if isinstance(w, TimeWindow) else None for w in windows]
    target = pa.timestamp("us", tz="UTC")
    try:
        return [
            pa.array(starts, pa.int64()).cast(pa.timestamp("ms")).cast(target),
            pa.array(ends, pa.int64()).cast(pa.timestamp("ms")).cast(target),
        ]
    except pa.ArrowInvalid:
        bad = next(
            w for w in windows if isinstance(w, TimeWindow)
            and not all(_MIN_TS_MS <= b <= _MAX_TS_MS for b in (w.start, w.end))
        )
        raise ValueError(
            f"with_window=True: window {bad} has a bound outside the range of a Spark "
            "timestamp; use with_window=False (the window's bounds are then not output)"
        ) from None


__all__ = [
    "STATE_SCHEMA",
    "EventTime",
    "KeyGroupMismatchError",
    "KeyGroupRuntime",
    "METRICS",
    "METRICS_TAG",
    "METRIC_COLUMNS",
    "OperatorSpec",
    "static_function",
    "stream_function",
]
