"""User window functions for the deployment tests, defined in a module of their own as a user's
would be: cloudpickle pickles them by reference, so Spark's Python workers (executors of a
standalone cluster, a Spark Connect server's workers) must be able to import this module; the
driver ships it with ``addPyFile`` (classic) or ``addArtifacts(..., pyfile=True)`` (Connect)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flinkwin import ProcessWindowFunction, ReduceFunction


class SumValues(ReduceFunction):
    """Adds ``v`` incrementally, keeping the latest timestamp."""

    def reduce(self, a: Any, b: Any) -> Any:
        return {"k": a["k"], "ts": max(a["ts"], b["ts"]), "v": a["v"] + b["v"]}


class LabelWindow(ProcessWindowFunction):
    """Emits the reduced value with its window bounds and the watermark at firing time."""

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterator[Any]:
        window = context.window()
        for value in elements:
            yield (key, window.start, window.end, value["v"], context.current_watermark())
