"""A key group's window state, whichever form it takes, behind one set of functions.

The runtime keeps per key group either the object-based
:class:`~flinkwin.operator.WindowOperator` or one of its columnar equivalents:

- ``"columnar"``: :class:`~flinkwin.operator.states.columnar.ColumnarAggregation`, built-in
  aggregations over tumbling and sliding windows;
- ``"continuous"``: :class:`~flinkwin.operator.states.continuous.ContinuousAggregation`, the same
  under ``ContinuousEventTimeTrigger``;
- ``"panes"``: :class:`~flinkwin.operator.states.panes.PaneAggregation`, aligned sliding windows;
- ``"sessions"``: :class:`~flinkwin.operator.states.sessions.SessionAggregation`, built-in
  aggregations over event-time sessions;
- ``"lists"``: :class:`~flinkwin.operator.states.lists.ColumnarLists`, full-window functions;
- ``"object"``: :class:`~flinkwin.operator.WindowOperator`, everything.

All of them process a batch (``process_batch``), advance the watermark and processing time,
expose their outputs (frames for the aggregations, :meth:`frame_outputs`; values otherwise),
report timers and sizes, and snapshot. A columnar state hands a batch it cannot take over to the
equivalent operator (:func:`prepare`) and takes the state back after it (:func:`settle`); a
snapshot is restored into the form it was written in (:func:`restore_state`). What a stage stores
is sealed (:func:`sealed_snapshot`, :func:`restore_sealed`): checked before it is decoded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from flinkwin.operator.snapshots import SnapshotBinding, StatePickler
from flinkwin.operator.snapshots.formats import (
    COLUMNAR,
    CONTINUOUS,
    LISTS,
    OBJECT,
    PANES,
    SESSIONS,
    form_of,
)
from flinkwin.operator.states.columnar import FORMAT as COLUMNAR_FORMAT
from flinkwin.operator.states.columnar import ColumnarAggregation, snapshot_format
from flinkwin.operator.states.columnar import supports as columnar_supports
from flinkwin.operator.states.continuous import FORMAT as CONTINUOUS_FORMAT
from flinkwin.operator.states.continuous import ContinuousAggregation
from flinkwin.operator.states.continuous import supports as continuous_supports
from flinkwin.operator.states.lists import FORMAT as LISTS_FORMAT
from flinkwin.operator.states.lists import ColumnarLists
from flinkwin.operator.states.lists import supports as lists_supports
from flinkwin.operator.states.panes import FORMAT as PANES_FORMAT
from flinkwin.operator.states.panes import PaneAggregation
from flinkwin.operator.states.panes import supports as panes_supports
from flinkwin.operator.states.sessions import FORMAT as SESSIONS_FORMAT
from flinkwin.operator.states.sessions import SessionAggregation
from flinkwin.operator.states.sessions import supports as sessions_supports
from flinkwin.operator.window_operator import WindowOperator

_CLASSES: dict[str, Any] = {
    COLUMNAR: ColumnarAggregation, PANES: PaneAggregation, SESSIONS: SessionAggregation,
    LISTS: ColumnarLists, CONTINUOUS: ContinuousAggregation,
}
#: The snapshot format each columnar kind writes (the object kind writes the operator's).
FORMATS = {
    COLUMNAR: COLUMNAR_FORMAT, PANES: PANES_FORMAT, SESSIONS: SESSIONS_FORMAT,
    LISTS: LISTS_FORMAT, CONTINUOUS: CONTINUOUS_FORMAT,
}
#: What ``explain()`` adds to the window-state line per kind.
DESCRIPTIONS = {
    OBJECT: "",
    COLUMNAR: " (columnar panes: one pandas frame per key group)",
    PANES: (
        " (panes of gcd(size, slide) per key, combined when a window fires: one pandas frame "
        "per key group)"
    ),
    CONTINUOUS: " (columnar panes with their fire times: one pandas frame per key group)",
    SESSIONS: " (columnar sessions: one pandas frame per key group, batches merged per key)",
    LISTS: " (columnar element lists: one pandas frame per key group, elements built lazily "
    "when a window fires)",
}

Factory = Callable[[], WindowOperator]


def state_kind(template: WindowOperator, columnar_input: bool) -> str:
    """The state kind for ``template``'s configuration; ``columnar_input`` says whether the
    input's columns survive a columnar (Arrow) snapshot unchanged. Firing metadata is kept by
    the object form only."""
    if columnar_input and template.firings is None:
        for kind, supported in (
            (PANES, panes_supports), (COLUMNAR, columnar_supports),
            (SESSIONS, sessions_supports), (LISTS, lists_supports),
            (CONTINUOUS, continuous_supports),
        ):
            if supported(template):
                return kind
    return OBJECT


def new_state(kind: str, factory: Factory) -> Any:
    """An empty state of ``kind``."""
    if kind == OBJECT:
        return factory()
    return _CLASSES[kind](factory(), factory)


def restore_state(snapshot: bytes, factory: Factory) -> Any:
    """The state a snapshot was taken of, in the form it was written in (its format, one of
    :data:`flinkwin.operator.snapshots.formats.RELEASED`, says which): a columnar form, else what
    ``factory`` builds (the window operator, or a graph stage's operator), which checks the
    format itself."""
    kind = form_of(snapshot_format(snapshot))
    state = new_state(kind, factory) if kind in _CLASSES else factory()
    state.restore(snapshot)
    return state


def sealed_snapshot(state: Any, pickler: StatePickler, binding: SnapshotBinding) -> bytes:
    """``state``'s snapshot as a stage stores it: sealed under ``binding`` (one HMAC-SHA256
    over all of its bytes, see :meth:`StatePickler.seal`)."""
    return pickler.seal(state.snapshot(), binding)


def restore_sealed(
    stored: bytes, factory: Factory, pickler: StatePickler, binding: SnapshotBinding,
    what: str = "snapshot",
) -> Any:
    """The state a :func:`sealed_snapshot` holds, in the form it was written in; the seal is
    checked (:meth:`StatePickler.unseal`) before anything is decoded."""
    return restore_state(pickler.unseal(stored, binding, what), factory)


def prepare(state: Any, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int) -> Any:
    """The state to process this batch with under ``watermark``: ``state``, or its operator
    equivalent when it cannot take the batch."""
    columnar: Any = state
    if not isinstance(state, tuple(_CLASSES.values())) or columnar.accepts(
        frame, timestamps, watermark
    ):
        return state
    return columnar.to_operator()


def settle(state: Any, kind: str, factory: Factory, columns: list[str]) -> Any:
    """The state to keep after a call whose outputs were drained: an operator back in its
    columnar form where ``kind`` allows it and its state has that shape; element lists whose
    window function left keyed state behind as an operator."""
    if isinstance(state, ColumnarLists) and state.holds_function_state():
        return state.to_operator()
    if isinstance(state, WindowOperator) and kind in (COLUMNAR, SESSIONS, LISTS, CONTINUOUS):
        return _CLASSES[kind].from_operator(state, factory, columns) or state
    return state


def frame_outputs(state: Any) -> bool:
    """True if the state's outputs are frames (``drain_main_timed``, ``drain_late``)."""
    return isinstance(state, (ColumnarAggregation, PaneAggregation))


def holds_nothing(state: Any) -> bool:
    """True when the state keeps nothing worth a snapshot (its clocks come back from Spark on
    the next call)."""
    return bool(state.holds_nothing())


__all__ = [
    "COLUMNAR",
    "CONTINUOUS",
    "DESCRIPTIONS",
    "FORMATS",
    "LISTS",
    "OBJECT",
    "PANES",
    "SESSIONS",
    "frame_outputs",
    "holds_nothing",
    "new_state",
    "prepare",
    "restore_sealed",
    "restore_state",
    "sealed_snapshot",
    "settle",
    "state_kind",
]
