"""``processAllAvailable()`` for a query whose stage wakes keys in processing time.

Spark runs a micro-batch on every trigger of a stage with ``ProcessingTimeTimeout`` (its
``shouldRunAnotherBatch`` is always true: processing-time timers are due as the clock moves,
whether or not input arrives), so the query never finds "no new data" and Spark's own
``processAllAvailable()`` never returns. :func:`settle_on_available_input` gives such a query
(started by flinkwin) a ``processAllAvailable()`` that returns once the input available when it
was called is processed and committed: when a micro-batch planned after the call finds no new
input on any source (its start and end offsets agree). Processing-time timers keep firing on
later triggers, as before.
"""

from __future__ import annotations

import functools
import time
from typing import Any

#: How often the progress of the query is read.
_POLL_S = 0.05


def settle_on_available_input(query: Any) -> Any:
    """``query`` with the ``processAllAvailable()`` of this module's docstring (and
    ``process_all_available``)."""
    call = functools.partial(process_all_available, query)
    query.processAllAvailable = call
    query.process_all_available = call
    return query


def process_all_available(query: Any) -> None:
    """Block until a micro-batch planned after this call finds no new input (see module
    docstring); re-raise the query's failure; return if it stopped."""
    last = query.lastProgress
    # a batch running now may have been planned before the call: wait for the one after it
    first = (-1 if last is None else int(last["batchId"])) + 2
    while True:
        if not query.isActive:
            error = query.exception()
            if error is not None:
                raise error
            return
        for progress in query.recentProgress:
            if int(progress["batchId"]) >= first and _found_no_new_input(progress):
                return
        time.sleep(_POLL_S)


def _found_no_new_input(progress: Any) -> bool:
    return all(s["startOffset"] == s["endOffset"] for s in progress["sources"])


__all__ = ["process_all_available", "settle_on_available_input"]
