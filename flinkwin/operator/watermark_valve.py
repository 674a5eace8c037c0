"""How an operator combines the watermarks and idleness of its inputs, as Flink does.

:class:`StatusWatermarkValve` is Flink's valve of one input gate (``StatusWatermarkValve``):
all the channels one input of an operator reads, which for a graph's node are the sources and
operators upstream of it through unions and stateless steps (a union merges its inputs'
channels into one gate; Flink builds a window join and coGroup as a union of both inputs, so
those read one gate). It emits the minimum over its *aligned* active channels:

* a channel that turns idle leaves the minimum (the minimum over the rest may advance);
* a channel that turns active again is aligned only once its watermark has caught up with the
  valve's last output: until then its (lower) watermark holds nothing back;
* when the last active channel turns idle and it held the minimum, the valve emits the greatest
  watermark of all its channels ("flushes" them), then turns idle itself.

:func:`combined_watermark` is how a two-input operator (an interval join) combines its two
gates' outputs (``AbstractStreamOperator.processWatermark1/2``, ``CombinedWatermarkStatus``): the
minimum over the inputs that are not idle, never going back; with every input idle it stays.

Both are Flink's by their tests (``tests/core/test_watermark_valve_flink.py`` ports
``StatusWatermarkValveTest``). A graph keeps them in its state: Flink recomputes them after a
restore, which in flinkwin would make a restart change results a run without one gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flinkwin.time import MIN_LONG

#: what a valve emits: ``("watermark", t)``, ``("status", IDLE)`` or ``("status", ACTIVE)``
IDLE, ACTIVE = "IDLE", "ACTIVE"
Emitted = list[tuple[str, Any]]


@dataclass
class StatusWatermarkValve:
    """Flink's ``StatusWatermarkValve`` over ``channels`` input channels, each starting active
    and aligned at ``MIN_LONG`` (see module docstring)."""

    watermarks: list[int]
    idle: list[bool]
    aligned: list[bool]
    #: the last watermark emitted, and whether the valve is idle (every channel idle)
    output: int = MIN_LONG
    output_idle: bool = False

    @classmethod
    def of(cls, channels: int) -> StatusWatermarkValve:
        return cls([MIN_LONG] * channels, [False] * channels, [True] * channels)

    def input_watermark(self, watermark: int, channel: int) -> Emitted:
        """Channel ``channel``'s watermark: ignored while it or the valve is idle, or if not
        greater than its last; it may align the channel and advance the output."""
        if self.output_idle or self.idle[channel] or watermark <= self.watermarks[channel]:
            return []
        self.watermarks[channel] = watermark
        if not self.aligned[channel] and watermark >= self.output:
            self.aligned[channel] = True  # caught up
        return self._new_minimum()

    def input_status(self, idle: bool, channel: int) -> Emitted:
        """Channel ``channel`` turns idle (``idle``) or active; no change, no output."""
        emitted: Emitted = []
        if idle and not self.idle[channel]:
            self.idle[channel], self.aligned[channel] = True, False
            if all(self.idle):
                if self.watermarks[channel] == self.output:
                    emitted += self._flush()
                self.output_idle = True
                emitted.append(("status", IDLE))
            elif self.watermarks[channel] == self.output:
                emitted += self._new_minimum()
        elif not idle and self.idle[channel]:
            self.idle[channel] = False
            if self.watermarks[channel] >= self.output:
                self.aligned[channel] = True
            if self.output_idle:
                self.output_idle = False
                emitted.append(("status", ACTIVE))
        return emitted

    def _new_minimum(self) -> Emitted:
        aligned = [w for w, a in zip(self.watermarks, self.aligned) if a]
        if aligned and min(aligned) > self.output:
            self.output = min(aligned)
            return [("watermark", self.output)]
        return []

    def _flush(self) -> Emitted:
        top = max(self.watermarks)
        if top > self.output:
            self.output = top
            return [("watermark", top)]
        return []

    def to_json(self) -> dict[str, Any]:
        return {"w": self.watermarks, "i": self.idle, "a": self.aligned,
                "o": self.output, "oi": self.output_idle}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> StatusWatermarkValve:
        return cls([int(w) for w in value["w"]], [bool(i) for i in value["i"]],
                   [bool(a) for a in value["a"]], int(value["o"]), bool(value["oi"]))


def feed(valve: StatusWatermarkValve, channels: Sequence[tuple[int, bool]]) -> None:
    """Each channel's watermark and idleness now (``channels``, in the valve's order), as a
    graph's stage learns them once per call: first the channels turning active (an element
    makes its source active before its periodic watermark follows), then every watermark,
    then the channels turning idle (their last watermark came before the timeout)."""
    for c, (_, idle) in enumerate(channels):
        if not idle and valve.idle[c]:
            valve.input_status(False, c)
    for c, (watermark, _) in enumerate(channels):
        valve.input_watermark(watermark, c)
    for c, (_, idle) in enumerate(channels):
        if idle and not valve.idle[c]:
            valve.input_status(True, c)


def combined_watermark(inputs: Sequence[tuple[int, bool]], current: int) -> int:
    """A two-input operator's watermark (``current``: its last) from its inputs' last
    watermarks and idleness, as Flink's ``CombinedWatermarkStatus`` combines them: the minimum
    over the inputs that are not idle, never going back; with every input idle it stays."""
    active = [watermark for watermark, idle in inputs if not idle]
    return max(current, min(active)) if active else current


__all__ = ["ACTIVE", "IDLE", "Emitted", "StatusWatermarkValve", "combined_watermark", "feed"]
