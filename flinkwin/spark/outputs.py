"""How a key group's results leave the stage: one frame of the stage's output schema.

Each key-group call emits its main and side outputs as one frame with a discriminator column
(``_fw_tag``: 0 the main output, ``j`` the ``j``-th side output the stage emits; side outputs it
does not emit are discarded and counted), plus one metrics row (tag ``METRICS_TAG``) that
``observe`` sums per batch and every output filters out (see ``docs/metrics.md``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

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
        """Main and side outputs as one frame: the tag column, then each output's columns
        (null outside its own rows; the main output's last column is each result's timestamp,
        Flink's: its window's ``max_timestamp()``), then, if ``counts`` is given, one metrics
        row. ``nulls`` (rows without a timestamp) join their side output. Side outputs no
        output of the stage reads are discarded here (and counted)."""
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
            counts = dict(counts, numLateRecordsToSideOutput=late_sent,
                          numSideOutputRecordsDiscarded=discarded)
            if total == 0:
                return self.metrics_row(counts)
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

    def empty_frame(self) -> pd.DataFrame:
        return arrow_to_pandas(self.arrow_schema.empty_table())

    def metrics_frame(self, keys: int, windows: int, state_bytes: int) -> pd.DataFrame:
        """The output of a call that changes nothing: the metrics row alone."""
        counts = dict.fromkeys(METRICS, 0)
        counts.update(keysInState=keys, windowsInState=windows, stateBytes=state_bytes,
                      keyGroupCalls=1)
        return self.metrics_row(counts)

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
    "METRICS",
    "METRICS_TAG",
    "METRIC_COLUMNS",
    "STATE_METRICS",
    "TAG_COLUMN",
    "StageOutputs",
]
