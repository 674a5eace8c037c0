"""Probe (issue 32): where the stage function's CPU goes, part by part, for the workloads of
``bench/bench_key_group.py`` (no Spark; the suite's shape: 10k keys, 10 micro-batches, 16 key
groups). Each part is wrapped in a thread-CPU clock (no profiler: per-call Python is not
inflated); nested parts are indented under the part that calls them. Prints CPU seconds, µs
per event and ms per micro-batch (the 16 calls of one batch).

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_32_stage_parts.py aggregate process_window
"""

from __future__ import annotations

import argparse
import collections
import functools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_key_group as harness  # noqa: E402

from flinkwin.operator import states, vectorized, window_operator  # noqa: E402
from flinkwin.operator.states import lists, window_elements  # noqa: E402
from flinkwin.spark import inputs, outputs  # noqa: E402

SPENT: collections.Counter[str] = collections.Counter()
EVENTS = {"tumbling": 2_000_000, "aggregate": 2_000_000, "session": 1_000_000,
          "process_window": 1_000_000, "continuous": 1_000_000}
#: (owner, attribute, label); a label's indentation says which part it is inside
PARTS: list[tuple[Any, str, str]] = [
    (inputs.StageInputs, "batch", "input: chunks to columns in arrival order"),
    (window_operator.WindowOperator, "process_batch", "object operator: process_batch"),
    (vectorized._Batch, "key_codes", "  keys (codes, first elements)"),
    (vectorized._Batch, "_fold_quiet", "  fold: elements built + add per element"),
    (vectorized, "op_records", "    elements built (Rows)"),
    (vectorized._Batch, "_quiet_pane_timers", "  timers of the panes"),
    (window_operator.WindowOperator, "advance_watermark", "object operator: firing"),
    (lists.ColumnarLists, "process_batch", "element lists: process_batch"),
    (lists.ColumnarLists, "_numbers", "  window registration numbers"),
    (lists.ColumnarLists, "advance_watermark", "element lists: firing and cleanup"),
    (lists.ColumnarLists, "_fire", "  fire (ranks, takes, keys, calls)"),
    (window_operator.WindowOperator, "fire_windows", "    function calls and outputs"),
    (window_elements._Records, "get", "      elements built (Rows)"),
    (outputs.StageOutputs, "frame", "output frame"),
    (states, "sealed_snapshot", "snapshot"),
]


def _wrap(owner: Any, name: str, label: str) -> None:
    function = getattr(owner, name)

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        begin = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[label] += time.thread_time() - begin

    setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="+", choices=sorted(EVENTS))
    args = parser.parse_args()
    for owner, name, label in PARTS:
        _wrap(owner, name, label)
    for kind in args.workloads:
        events = EVENTS[kind]
        data = harness.batches(events)
        harness.run(harness.runtime(kind), data[:2])  # warm-up
        SPENT.clear()
        begin = time.thread_time()
        digests = harness.run(harness.runtime(kind), data)
        total = time.thread_time() - begin
        batches = len(data)
        print(f"{kind}: {total:.3f} s CPU, {total / events * 1e6:.3f} µs per event, "
              f"{total / batches * 1e3:.0f} ms per micro-batch (digests {digests[0]} "
              f"{digests[1]}; the total includes the harness hashing the outputs)")
        for _, _, label in PARTS:
            if SPENT[label]:
                seconds = SPENT[label]
                print(f"  {label:50s} {seconds:6.3f} s  {seconds / events * 1e6:6.3f} µs/event"
                      f"  {seconds / batches * 1e3:5.0f} ms/batch")


if __name__ == "__main__":
    main()
