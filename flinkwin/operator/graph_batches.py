"""A graph's window node reading a source takes that source's rows as one batch, where no one
can tell.

:class:`~flinkwin.operator.graph.GraphOperator` pushes a micro-batch's rows through the graph
one at a time, depth first, in arrival order (Flink's chained order for one record). A window
node whose input is a source of the stage can instead take its rows in one
:meth:`~flinkwin.operator.WindowOperator.process_batch` call (vectorized: see
:mod:`flinkwin.operator.vectorized`) before the others are pushed, giving exactly the element
path's results, when the rows it takes make it emit nothing:

- its watermark and processing time do not change within a micro-batch's rows (they advance
  before them), and its input is the source's rows alone, in arrival order: its state after
  them is the same whenever it takes them, and nothing else in the graph reads that state;
- it emits nothing while taking them (no result, no late element on a side output), so
  nothing downstream, no operator and none of the stage's outputs, sees anything at another
  moment than on the element path: every other node receives what it received, in the same
  order.

The window emits nothing for an element (:func:`quiet_prefix`) when, with an event-time
assigner, its timestamp is after the window's watermark (every window holding it ends after the
watermark: neither late nor fired on arrival by ``EventTimeTrigger`` or
``ContinuousEventTimeTrigger``, nor by ``ProcessingTimeTrigger``, which never fires on
arrival), and always with a processing-time assigner and ``ProcessingTimeTrigger`` (nothing is
late in processing time). A window takes the longest such prefix of its rows; from the first
other element on, its rows go the element path, in order after the prefix. Configurations the
vectorized path does not cover (merging assigners, evictors, other triggers, key selector
callables, declared key types), sources whose elements are not the frame's rows as they are
(pickled, atomic, nested columns) and keys with nulls (the element path fails on them, as
Flink does) keep the element path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flinkwin.functions.base import FieldKeySelector
from flinkwin.operator.vectorized import base_trigger, is_vectorizable
from flinkwin.operator.window_operator import WindowOperator
from flinkwin.triggers.continuous_event_time import ContinuousEventTimeTrigger
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.triggers.processing_time import ProcessingTimeTrigger

if TYPE_CHECKING:
    from flinkwin.operator.graph import SourceSpec

_EVENT_TRIGGERS = (EventTimeTrigger, ContinuousEventTimeTrigger, ProcessingTimeTrigger)


def takes_batches(op: Any, source: SourceSpec) -> bool:
    """True if ``op``, a node reading ``source`` directly, may take its rows as a batch."""
    if type(op) is not WindowOperator or not is_vectorizable(op):
        return False
    selector = op.key_selector
    if type(selector) is not FieldKeySelector or op.key_type is not None:
        return False
    if (
        source.pickled_elements or source.atomic_elements or source.converters
        or op.tuple_elements != source.tuple_elements
        or not set(selector.fields) <= set(source.names)
    ):
        return False
    trigger = type(base_trigger(op.trigger))
    if op.is_event_time:
        return trigger in _EVENT_TRIGGERS
    return trigger is ProcessingTimeTrigger


def quiet_prefix(op: WindowOperator, frame: pd.DataFrame, stamps: np.ndarray) -> int:
    """How many of ``frame``'s rows (a source's, in arrival order, renamed to its fields) ``op``
    takes before the first it could emit something for, or whose key has a null."""
    stop = np.zeros(len(stamps), dtype=bool)
    if op.is_event_time:
        stop |= stamps <= op.current_watermark
    selector = op.key_selector
    assert isinstance(selector, FieldKeySelector)
    for name in selector.fields:
        stop |= frame[name].isna().to_numpy(dtype=bool)
    return int(stop.argmax()) if stop.any() else len(stamps)


def take_quiet_rows(
    op: WindowOperator, frame: pd.DataFrame, stamps: np.ndarray, records: list[Any]
) -> int:
    """Feed ``op`` the quiet prefix of a source's rows (``frame``, its ``stamps`` and
    ``records``, the elements the element path would push); the number of rows taken."""
    taken = quiet_prefix(op, frame, stamps)
    if taken == 0:
        return 0
    op.process_batch(frame.iloc[:taken], stamps[:taken], records[:taken])
    if op.drain_output() or any(op.drain_side_outputs().values()):  # (cannot happen)
        raise RuntimeError(
            f"{op.runtime_context.get_task_name()} emitted results while taking a batch of "
            "elements that cannot fire or be late"
        )
    return taken


class QuietBatches:
    """A graph's window nodes that take their source's rows in batches. ``consumers``: per
    stream, the ``(node, input)`` pairs reading it; ``outputs``: the stage's output streams."""

    def __init__(
        self, operators: Sequence[Any], sources: Sequence[SourceSpec],
        consumers: dict[Any, list[tuple[int, int]]], outputs: set[Any],
    ) -> None:
        #: per source, the window nodes reading it that take its rows in batches
        self.nodes = [
            [j for j, index in consumers.get(("source", i), ())
             if index == 0 and takes_batches(operators[j], source)]
            for i, source in enumerate(sources)
        ]
        #: per source, the nodes reading it, and whether it is one of the stage's outputs
        self._readers = [
            ({j for j, _ in consumers.get(("source", i), ())}, ("source", i) in outputs)
            for i in range(len(sources))
        ]

    def take(
        self, i: int, operators: Sequence[Any], rows: pd.DataFrame, stamps: np.ndarray,
        records: list[Any],
    ) -> list[tuple[int, int]]:
        """Source ``i``'s rows of a micro-batch to its window nodes (see
        :func:`take_quiet_rows`): per node, ``(node, rows taken)``."""
        return [
            (j, take_quiet_rows(operators[j], rows, stamps, records)) for j in self.nodes[i]
        ]

    def routes(
        self, sources: np.ndarray, taken: Sequence[list[tuple[int, int]]]
    ) -> Iterator[tuple[int, tuple[int, ...]]]:
        """Per row of the micro-batch still to be pushed (``sources``: each row's source;
        ``taken``: per source, what :meth:`take` returned): its position and the nodes it
        skips (they took it). A row every reader of its source took, and that is no output
        of the stage, is not pushed at all."""
        sources = np.asarray(sources)
        keep = np.ones(len(sources), dtype=bool)
        #: per row, its index in ``skips``
        skip_of = np.zeros(len(sources), dtype=np.int64)
        skips: list[tuple[int, ...]] = [()]
        for i, pairs in enumerate(taken):
            if not pairs:
                continue
            rows = np.flatnonzero(sources == i)
            readers, output = self._readers[i]
            # the i-th row of the source at position p skips the nodes that took > p rows:
            # the same nodes for every p between two consecutive counts
            cuts = sorted({0, len(rows), *(min(count, len(rows)) for _, count in pairs)})
            for lo, hi in zip(cuts, cuts[1:]):
                skip = tuple(j for j, count in pairs if lo < count)
                if not skip:
                    continue
                if not output and readers <= set(skip):
                    keep[rows[lo:hi]] = False
                else:
                    skip_of[rows[lo:hi]] = len(skips)
                    skips.append(skip)
        for row in np.flatnonzero(keep).tolist():
            yield row, skips[skip_of[row]]


__all__ = ["QuietBatches", "quiet_prefix", "take_quiet_rows", "takes_batches"]
