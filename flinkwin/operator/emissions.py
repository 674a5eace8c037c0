"""``OrderedEmissions``: an operator's main and side outputs, and the order a function emitted
them in.

A Flink operator hands each record to its outputs as the function emits it (``out.collect``,
``ctx.output``), so in a job the operators after it see a function's main and side outputs
interleaved in that order. flinkwin's operators keep the main output and each side output in
their own lists (``drain_output``, ``drain_side_outputs``, what a stage writes to its sinks) and
the order across them (``drain_in_order``, what a graph hands to the nodes after the operator).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from flinkwin.output_tag import OutputTag

Emitted = list[tuple[Any, int | None]]


class OrderedEmissions:
    """Main and side outputs in emission order (see module docstring)."""

    _output: Emitted
    _side_outputs: dict[OutputTag, Emitted]
    #: what each emission went to, in order (None: the main output)
    _order: list[OutputTag | None]

    def _reset_emissions(self) -> None:
        self._output, self._side_outputs, self._order = [], {}, []

    def emit_main(self, value: Any, timestamp: int | None) -> None:
        self._output.append((value, timestamp))
        self._order.append(None)

    def emit_side(self, tag: OutputTag, value: Any, timestamp: int | None) -> None:
        self._side_outputs.setdefault(tag, []).append((value, timestamp))
        self._order.append(tag)

    def drain_output(self) -> Emitted:
        out, self._output = self._output, []
        self._order = [tag for tag in self._order if tag is not None]
        return out

    def drain_side_outputs(self) -> dict[OutputTag, Emitted]:
        out, self._side_outputs = self._side_outputs, {}
        self._order = [tag for tag in self._order if tag is None]
        return out

    def drain_in_order(self) -> list[tuple[OutputTag | None, Any, int | None]]:
        """Everything emitted since the last drain, main output (tag None) and side outputs,
        in the order it was emitted."""
        main = iter(self._output)
        sides = {tag: iter(items) for tag, items in self._side_outputs.items()}
        out = [(tag, *next(main if tag is None else sides[tag])) for tag in self._order]
        self._reset_emissions()
        return out


def interleaved(
    main: Sequence[tuple[Any, int | None]],
    sides: Mapping[OutputTag, Sequence[tuple[Any, int | None]]],
    marks: list[tuple[OutputTag, int]],
) -> list[tuple[OutputTag | None, Any, int | None]]:
    """``main`` and ``sides`` as one list in emission order, from ``marks``: per side-output
    emission, its tag and how many main outputs came before it (for an operator whose main
    output is appended on hot paths, where keeping an order list would cost)."""
    out: list[tuple[OutputTag | None, Any, int | None]] = []
    items = {tag: iter(values) for tag, values in sides.items()}
    done = 0
    for tag, at in marks:
        out.extend((None, value, ts) for value, ts in main[done:at])
        done = max(done, at)
        out.append((tag, *next(items[tag])))
    out.extend((None, value, ts) for value, ts in main[done:])
    return out


__all__ = ["OrderedEmissions", "interleaved"]
