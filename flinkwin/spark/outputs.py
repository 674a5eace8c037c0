"""How a key group's results leave the stage: one frame of the stage's output schema.

Each key-group call emits its main and side outputs as one frame with a discriminator column
(``_fw_tag``: 0 the main output, ``j`` the ``j``-th side output the stage emits; side outputs it
does not emit are discarded and counted), plus one metrics row (tag ``METRICS_TAG``) that
``observe`` sums per batch and every output filters out (see ``docs/metrics.md``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from flinkwin.operator import states
from flinkwin.operator.firings import Firing
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.windows import TimeWindow

from .row_encoder import RowEncoder, arrow_to_pandas

if TYPE_CHECKING:
    from .runtime import KeyGroupRuntime

TAG_COLUMN = "_fw_tag"
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
#: The one column of a packed stage's rows (see :func:`unpack`).
PACKED_COLUMN = "_fw_packed"
#: The stateful function's output schema when its rows leave packed.
PACKED_SCHEMA = f"{PACKED_COLUMN} binary"


class Drained(NamedTuple):
    """A call's outputs taken from its operator (:meth:`StageOutputs.drain`): the leading
    columns (None: the metrics row alone), the number of rows, the metrics counts."""

    arrays: list[pa.Array] | None
    rows: int
    counts: dict[str, int] | None


def unpack(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` after a stage whose rows leave packed: each packed row's Arrow IPC
    stream, as the record batches it holds (already of the stage's output schema).

    Why packed: PySpark's ``applyInPandasWithState`` turns the frames a call returns into
    Arrow with a fixed cost per row (it pads its state frame with one all-null row per
    output row and concatenates both through pandas, ~3 µs a row; docs/benchmarks.md), which
    a stage emitting far more results than it holds keys pays on every result. A packed call
    returns one row, and this Arrow-only pass hands Spark the record batches unchanged."""
    import pyarrow as pa

    for batch in batches:
        for blob in batch.column(0):
            if not blob.is_valid:  # never written by a call: fail rather than lose its rows
                raise RuntimeError("flinkwin: a packed stage row without its Arrow stream")
            yield from pa.ipc.open_stream(blob.as_buffer())


def _packed(table: pa.Table) -> pd.DataFrame:
    """``table`` as one row of the packed schema: its Arrow IPC stream."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pd.DataFrame({PACKED_COLUMN: [sink.getvalue().to_pybytes()]})


class StageOutputs:
    """The outputs of one key-group call as the stage's rows (see module docstring), as
    ``stage`` (the stage's :class:`~flinkwin.spark.runtime.KeyGroupRuntime`) declares them."""

    def __init__(self, stage: KeyGroupRuntime) -> None:
        self.stage = stage

    def frame(
        self,
        op: Any,
        nulls: pd.DataFrame | None = None,
        counts: dict[str, int] | None = None,
    ) -> pd.DataFrame | None:
        """Main and side outputs as one frame (:meth:`drain`), then, if ``counts`` is given,
        one metrics row."""
        drained = self.drain(op, nulls, counts)
        return None if drained is None else self.emit(drained)

    def drain(
        self,
        op: Any,
        nulls: pd.DataFrame | None = None,
        counts: dict[str, int] | None = None,
    ) -> Drained | None:
        """Take ``op``'s main and side outputs as the stage's leading columns: the tag column,
        then each output's columns (null outside its own rows; the main output's last column
        is each result's timestamp, Flink's: its window's ``max_timestamp()``); ``counts``
        (completed with the late and discarded counts) make a metrics row after them, built
        by :meth:`emit` (a count may still change until then, as ``stateBytes`` does).
        ``nulls`` (rows without a timestamp) join their side output. Side outputs no output of
        the stage reads are discarded here (and counted). None: no row at all."""
        groups: list[tuple[int, list[pa.Array]]] = []
        late_sent = discarded = 0
        if states.frame_outputs(op):
            frame, stamps = op.drain_main_timed()
            count, main_arrays = _frame_group(self.stage.main_encoder, frame)
            groups.append((count, [*main_arrays, pa.array(stamps, pa.int64())]))
            late = op.drain_late()
            late_sent = 0 if late is None else len(late)
            requested = op.late_tag in self.stage.side_tags
            discarded = 0 if requested else late_sent
            for side_tag, encoder in zip(self.stage.side_tags, self.stage.side_encoders):
                groups.append(_frame_group(encoder, late if side_tag == op.late_tag else None))
        else:
            drained = op.drain_output()
            values = [v for v, _ in drained]
            firings = [v.firing for v in values] if self.stage.with_firing else []
            if self.stage.with_firing:
                values = [v.value for v in values]
            windows = [v.window for v in values] if self.stage.with_window else []
            if self.stage.with_window:
                values = [v.value for v in values]
            main_arrays = self.stage.main_encoder.arrays(values)
            if self.stage.with_window:
                main_arrays += _window_arrays(windows)
            if self.stage.with_firing:
                main_arrays += _firing_arrays(firings)
            main_arrays.append(pa.array([ts for _, ts in drained], pa.int64()))
            groups.append((len(values), main_arrays))
            sides = op.drain_side_outputs()
            late_tags = getattr(op, "late_output_tags", None)
            if late_tags is None:
                late_tags = () if op.late_output_tag is None else (op.late_output_tag,)
            late_sent = sum(len(sides.get(tag, ())) for tag in late_tags)
            for side_tag, encoder in zip(self.stage.side_tags, self.stage.side_encoders):
                side = [v for v, _ in sides.pop(side_tag, [])]
                groups.append((len(side), encoder.arrays(side)))
            discarded = sum(len(v) for v in sides.values())
        if nulls is not None and self.stage.null_timestamp_tag in self.stage.side_tags:
            j = self.stage.side_tags.index(self.stage.null_timestamp_tag)
            extra = _frame_group(self.stage.side_encoders[j], nulls)
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
            counts.update(numLateRecordsToSideOutput=late_sent,
                          numSideOutputRecordsDiscarded=discarded)
            if total == 0:
                return Drained(None, 1, counts)
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
        return Drained(arrays, rows, counts)

    def emit(self, drained: Drained, packed: bool = False) -> pd.DataFrame:
        """The stage's rows of ``drained``: a frame of the stage's output schema, or, when
        ``packed``, one row holding them as an Arrow IPC stream (:func:`packed_schema`)."""
        arrays, rows, counts = drained
        if packed:
            return _packed(self.table(drained))
        if arrays is None:
            assert counts is not None
            return self.metrics_row(counts)
        # the metrics columns (the schema's last, null but on the metrics row) as the
        # nullable Int64 arrays Arrow's conversion would give, without Arrow
        absent = np.ones(rows, dtype=bool)
        if counts is not None:
            absent[-1] = False
        metrics = {}
        for name, column in zip(METRICS, METRIC_COLUMNS):
            numbers = np.zeros(rows, dtype=np.int64)
            if counts is not None:
                numbers[-1] = counts[name]
            metrics[column] = pd.arrays.IntegerArray(numbers, absent.copy())
        table = pa.Table.from_arrays(arrays, names=self._leading_names)
        return arrow_to_pandas(_as_declared(table, self.arrow_schema), metrics)

    def table(self, drained: Drained) -> pa.Table:
        """The stage's rows of ``drained`` as an Arrow table of its output schema (what
        :meth:`emit` packs), built from the encoders' arrays without pandas."""
        arrays, rows, counts = drained
        if arrays is None:
            assert counts is not None
            return self._metrics_table(counts)
        return self._table(arrays, rows, counts)

    def _table(self, arrays: list[pa.Array], rows: int, counts: dict[str, int] | None
               ) -> pa.Table:
        """The rows as an Arrow table of the stage's output schema, exactly (field names,
        types and nullability), as Spark reads it back."""
        absent = np.ones(rows, dtype=bool)
        if counts is not None:
            absent[-1] = False
        metrics = []
        for name in METRICS:
            numbers = np.zeros(rows, dtype=np.int64)
            if counts is not None:
                numbers[-1] = counts[name]
            metrics.append(pa.array(numbers, pa.int64(), mask=absent))
        schema = self.arrow_schema
        columns = [
            column if column.type == field.type else column.cast(field.type)
            for column, field in zip([*arrays, *metrics], schema)
        ]
        return pa.Table.from_arrays(columns, schema=schema)

    def _metrics_table(self, counts: dict[str, int]) -> pa.Table:
        """The metrics row alone as :meth:`_table` builds rows."""
        schema = self.arrow_schema
        leading = [
            pa.array([METRICS_TAG], pa.int8()) if name == TAG_COLUMN
            else pa.nulls(1, schema.field(name).type)
            for name in self._leading_names
        ]
        return self._table(leading, 1, counts)

    def empty_frame(self) -> pd.DataFrame:
        return arrow_to_pandas(self.arrow_schema.empty_table())

    def metrics_frame(self, keys: int, windows: int, state_bytes: int, packed: bool = False
                      ) -> pd.DataFrame:
        """The output of a call that changes nothing: the metrics row alone."""
        counts = dict.fromkeys(METRICS, 0)
        counts.update(keysInState=keys, windowsInState=windows, stateBytes=state_bytes,
                      keyGroupCalls=1)
        return self.emit(Drained(None, 1, counts), packed)

    def metrics_row(self, counts: dict[str, int]) -> pd.DataFrame:
        """The metrics row alone (``counts`` per metric), as ``frame`` builds it."""
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
        schema = self.arrow_schema
        arrays = [
            pa.array([METRICS_TAG], pa.int8()) if name == TAG_COLUMN
            else pa.array([0], pa.int64()) if name in METRIC_COLUMNS
            else pa.nulls(1, schema.field(name).type)
            for name in schema.names
        ]
        return arrow_to_pandas(pa.Table.from_arrays(arrays, schema=schema))

    @functools.cached_property
    def _leading_names(self) -> list[str]:
        """The output columns before the metrics columns (which end the output schema)."""
        names = self.stage.output_schema.fieldNames()
        assert tuple(names[len(names) - len(METRIC_COLUMNS):]) == METRIC_COLUMNS
        return names[: len(names) - len(METRIC_COLUMNS)]

    @functools.cached_property
    def arrow_schema(self) -> pa.Schema:
        """The stage's output schema in Arrow, converted once."""
        from pyspark.sql.pandas.types import to_arrow_schema

        return to_arrow_schema(self.stage.output_schema, timezone="UTC")


def _as_declared(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` with the nested fields whose floats leave the stage as text cast to that text
    (see flinkwin.spark.timestamps.text_floats)."""
    for i, (column, declared) in enumerate(zip(table.columns, schema)):
        if pa.types.is_nested(column.type) and column.type != declared.type:
            table = table.set_column(i, declared.name, column.cast(declared.type))
    return table


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
    "PACKED_COLUMN",
    "PACKED_SCHEMA",
    "Drained",
    "METRICS",
    "METRICS_TAG",
    "METRIC_COLUMNS",
    "STATE_METRICS",
    "TAG_COLUMN",
    "StageOutputs",
    "unpack",
]
