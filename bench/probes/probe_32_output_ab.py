"""Probe (issue 32, round 4): in one process, the stage's output path before round 4's cuts
(``StageOutputs.frame`` converting every column through Arrow, fired rows drained with
``drop``/``reset_index``/``pop``) against the current one, alternating, CPU seconds of the
stage function (``bench/bench_key_group.py``'s harness) and its output digests.

The old ``outputs.py`` is read from a copy of the tree at ``--base`` (for example
``git archive ea23634 | tar -x -C /tmp/base``)::

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_32_output_ab.py \\
        --base /tmp/base --workloads session,continuous --events 1000000 --rounds 6
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_key_group as harness  # noqa: E402

from flinkwin.operator.states import columnar, sessions  # noqa: E402
from flinkwin.spark import outputs, row_encoder  # noqa: E402


def _old_drain(parts: list[pd.DataFrame], drop: tuple[str, ...]) -> pd.DataFrame | None:
    if not parts:
        return None
    frame = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    parts.clear()
    if drop:
        frame = frame.drop(columns=list(drop))
    return frame.reset_index(drop=True)


def _old_timed(drop_of: Any) -> Any:
    def drain(self: Any) -> tuple[pd.DataFrame | None, np.ndarray]:
        frame = _old_drain(self._main, drop_of(self))
        if frame is None:
            return None, np.empty(0, dtype=np.int64)
        return frame, frame.pop(columnar._END).to_numpy(dtype=np.int64) - 1
    return drain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="a copy of the tree before the cuts")
    parser.add_argument("--workloads", default="session,continuous")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    old_outputs = types.ModuleType("flinkwin.spark.outputs_before")
    old_outputs.__package__ = "flinkwin.spark"
    source = Path(args.base, "flinkwin/spark/outputs.py").read_text()
    exec(compile(source, "outputs_before", "exec"), old_outputs.__dict__)  # noqa: S102
    old_outputs.arrow_to_pandas = row_encoder._arrow_to_pandas  # Arrow's conversion, as before
    session_drop = (sessions._START, sessions._SW_START, sessions._SW_END, sessions._SEQ,
                    sessions._FIRED)
    variants = {
        "new": (outputs.StageOutputs.frame, columnar.ColumnarAggregation.drain_main_timed,
                sessions.SessionAggregation.drain_main_timed),
        "old": (old_outputs.StageOutputs.frame,
                _old_timed(lambda s: tuple(c for c in s.PANE_COLUMNS if c != columnar._END)),
                _old_timed(lambda s: session_drop)),
    }

    def use(name: str) -> None:
        (outputs.StageOutputs.frame, columnar.ColumnarAggregation.drain_main_timed,
         sessions.SessionAggregation.drain_main_timed) = variants[name]

    for kind in args.workloads.split(","):
        data = harness.batches(args.events)
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        digests: set[tuple[str, str]] = set()
        for r in range(args.rounds):
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                use(name)
                harness.run(harness.runtime(kind), data[:2])  # warm-up
                begin = time.process_time()
                digests.add(harness.run(harness.runtime(kind), data))
                cpu[name].append(time.process_time() - begin)
        old, new = statistics.median(cpu["old"]), statistics.median(cpu["new"])
        print(f"{kind}: {args.events:,} events, CPU medians of {args.rounds}: old {old:.3f} s, "
              f"new {new:.3f} s ({100 * (new - old) / old:+.1f}%); outputs and snapshots "
              f"equal: {len(digests) == 1}; old {[round(x, 2) for x in cpu['old']]}, "
              f"new {[round(x, 2) for x in cpu['new']]}")


if __name__ == "__main__":
    main()
