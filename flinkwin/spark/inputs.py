"""A key group's rows as the operator takes them: the batch's user columns in arrival order
(STREAMING mode; stable event-time order in BATCH mode) with their timestamps, restored from
how they travel (timestamps and nested floats, masked nulls: see :mod:`flinkwin.spark.timestamps`
and :mod:`flinkwin.spark.nulls`), heartbeat rows left out, rows without a timestamp routed to
their side output or failing, and a combined input's partial-aggregate columns."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
import pandas as pd

from flinkwin.operator.states.partials import COUNT, HIGH, LOW, PartialRows
from flinkwin.time import MIN_LONG

from .nulls import NullMask, restore_nulls
from .timestamps import from_wire, on_wire

if TYPE_CHECKING:
    from .runtime import KeyGroupRuntime


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


class StageInputs:
    """Reads a key-group call's input chunks (see module docstring) as ``stage`` (the stage's
    :class:`~flinkwin.spark.runtime.KeyGroupRuntime`) declares them."""

    def __init__(self, stage: KeyGroupRuntime) -> None:
        self.stage = stage
        #: the row order ``rows`` applied to the last batch (None: as received)
        self._order: np.ndarray | None = None
        #: the last batch's heartbeats' source numbers and event times when they carry the
        #: sources' clocks (``stage.source_clocks``), else None
        self.clocks: tuple[np.ndarray, np.ndarray] | None = None

    def batch(
        self, frames: Iterable[pd.DataFrame]
    ) -> tuple[tuple[pd.DataFrame, np.ndarray] | None, pd.DataFrame | None, PartialRows | None]:
        """``rows``, and the rows' partial columns when the input is combined."""
        if self.stage.partial is None:
            return (*self.rows(frames), None)
        parts = [f for f in frames if len(f)]
        rows, nulls = self.rows(parts)
        if rows is None:
            return rows, nulls, None
        order = self._order
        spec = self.stage.partial

        def read(name: str) -> np.ndarray:
            column = _column(parts, name)
            return column if order is None else column[order]

        bounds = (read(HIGH), read(LOW)) if spec.bounds else (None, None)
        return rows, nulls, PartialRows(read(COUNT), *bounds)

    def rows(
        self, frames: Iterable[pd.DataFrame]
    ) -> tuple[tuple[pd.DataFrame, np.ndarray] | None, pd.DataFrame | None]:
        """The batch's user columns in arrival order (STREAMING mode; in stable event-time
        order in BATCH mode) with their timestamps, and the rows whose timestamp is null when
        they go to a side output (else such a row fails).

        Spark hands the rows over in chunks; each needed column is concatenated and put in
        order with numpy (one pass per column, helper columns are left out)."""
        parts = [f for f in frames if len(f)]
        self.clocks = None
        if not parts:
            return None, None
        event_time = self.stage.event_time
        order: np.ndarray | None = None
        shipped: dict[str, np.ndarray] = {}
        nulls: pd.DataFrame | None = None
        beats: np.ndarray | None = None
        if self.stage.sequence_column is not None:
            sequence = _column(parts, self.stage.sequence_column)
            if self.stage.heartbeats:
                beats = sequence < 0
                if self.stage.source_clocks is not None and event_time is not None:
                    self.clocks = (_column(parts, self.stage.source_clocks)[beats],
                                   _column(parts, event_time.column)[beats])
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
                if self.stage.null_timestamp_tag is None:
                    self._null_timestamp(self._null_rows(parts, shipped, index[:1]))
                nulls = self._null_rows(parts, shipped, index)
                order = rows[~missing[rows]]
            if order is not None:
                raw = raw[order]
            values = raw.astype(np.int64, copy=False)
            timestamps = event_time.millis(values)
            if self.stage.sequence_column is None and (timestamps[1:] < timestamps[:-1]).any():
                sort = np.argsort(timestamps, kind="stable")
                timestamps = timestamps[sort]
                values = values[sort]
                order = sort if order is None else order[sort]
            if not len(timestamps):
                return None, nulls
        self._order = order
        columns: dict[str, Any] = {}
        for field_ in self.stage.input_schema.fields:
            name, dtype = field_.name, field_.dataType
            if event_time is not None and name == event_time.rebuilt:
                columns[name] = from_wire(values, dtype, self.stage.time_zone)  # epoch micros
                continue
            column = self._shipped(parts, shipped, name)
            if order is not None:
                column = column[order]
            if on_wire(dtype):  # timestamps and nested floats travel changed (see timestamps)
                column = from_wire(column, dtype, self.stage.time_zone)
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
        return {m.column: m for m in self.stage.null_masks}

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
        assert self.stage.event_time is not None
        columns: dict[str, Any] = {}
        for field_ in self.stage.input_schema.fields:
            name, dtype = field_.name, field_.dataType
            if name == self.stage.event_time.rebuilt:  # null: MIN_LONG on the wire
                columns[name] = from_wire(
                    np.full(len(index), MIN_LONG), dtype, self.stage.time_zone
                )
                continue
            column = self._shipped(parts, shipped, name)[index]
            if on_wire(dtype):  # timestamps and nested floats travel changed (see timestamps)
                column = from_wire(column, dtype, self.stage.time_zone)
            columns[name] = column
        return pd.DataFrame(columns, copy=False)

    def _null_timestamp(self, rows: pd.DataFrame) -> NoReturn:
        assert self.stage.event_time is not None
        bad = {c: rows[c].iloc[0] for c in rows.columns}
        timestamp = self.stage.event_time.rebuilt or self.stage.event_time.column
        if timestamp in bad:
            bad[timestamp] = None
        raise ValueError(
            f"event timestamp is null for row {bad}; every element needs a timestamp "
            "(filter such rows out before the window, or route them to a side output with "
            "WatermarkStrategy.withNullTimestamps(OutputTag(...)))"
        )


def _column(parts: list[pd.DataFrame], name: str) -> np.ndarray:
    """Column ``name`` of the chunks as one numpy array (object when chunks' dtypes differ)."""
    arrays = [p[name].to_numpy() for p in parts]
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


__all__ = ["EventTime", "StageInputs"]
