"""Micro-benchmark of the window operator alone (no Spark): vectorized batch path vs per-element.

Workload: a keyed tumbling event-time window with the built-in ``sum``; by default 1M elements
over 10k keys, fed as 10 pandas batches of 100k rows through ``WindowOperator.process_batch``,
the watermark advanced after each batch (which fires the windows it closes). The per-element
path gets the first ``--per-element-elements`` rows (default 100k, one batch) through
``process_element`` one row at a time, with the same watermarks; the rows are converted to dicts
before the clock starts, so only operator work is timed. Both paths' outputs on that prefix are
compared (``--no-check`` skips it).

Usage::

    .venv/bin/python bench/bench_operator.py            # print the results
    .venv/bin/python bench/bench_operator.py --write    # also append them to docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from flinkwin import TumblingEventTimeWindows  # noqa: E402
from flinkwin.functions import FieldKeySelector  # noqa: E402
from flinkwin.functions.builtin import sum_of  # noqa: E402
from flinkwin.operator import WindowOperator  # noqa: E402

DEFAULT_OUTPUT = REPO / "docs" / "benchmarks.md"


@dataclass
class Workload:
    batches: list[pd.DataFrame]
    timestamps: list[np.ndarray]
    watermarks: list[int]
    window_ms: int

    @property
    def elements(self) -> int:
        return sum(len(b) for b in self.batches)


def make_workload(
    elements: int, keys: int, batches: int, window_ms: int, seed: int
) -> Workload:
    """``elements`` rows (key, value) over ``keys`` keys, in ``batches`` equal batches.

    Batch ``i`` covers event time ``[i * span, (i + 1) * span)`` with ``span = window_ms``,
    timestamps uniformly random inside (out of order within the batch); the watermark after
    batch ``i`` is the batch's end minus 1, so each watermark closes one window per key.
    """
    rng = np.random.default_rng(seed)
    per_batch = -(-elements // batches)
    out_batches, out_ts, watermarks = [], [], []
    done = 0
    for i in range(batches):
        n = min(per_batch, elements - done)
        if n <= 0:
            break
        done += n
        frame = pd.DataFrame(
            {
                "key": rng.integers(0, keys, n, dtype=np.int64),
                "value": rng.integers(0, 100, n, dtype=np.int64),
            }
        )
        start = i * window_ms
        ts = rng.integers(start, start + window_ms, n, dtype=np.int64)
        out_batches.append(frame)
        out_ts.append(ts)
        watermarks.append(start + window_ms - 1)
    return Workload(out_batches, out_ts, watermarks, window_ms)


def new_operator(window_ms: int) -> WindowOperator:
    return WindowOperator(
        TumblingEventTimeWindows.of(window_ms),
        sum_of("value"),
        key_selector=FieldKeySelector(["key"]),
    )


def run_vectorized(work: Workload, limit: int | None = None) -> tuple[float, int, list]:
    """Seconds, elements processed and outputs of the batch path (first ``limit`` rows)."""
    op = new_operator(work.window_ms)
    outputs: list = []
    n = 0
    start = time.perf_counter()
    for frame, ts, wm in zip(work.batches, work.timestamps, work.watermarks):
        if limit is not None and n >= limit:
            break
        if limit is not None and n + len(frame) > limit:
            frame, ts = frame.iloc[: limit - n], ts[: limit - n]
        op.process_batch(frame, ts)
        op.advance_watermark(wm)
        outputs.extend(op.drain_output())
        n += len(frame)
    return time.perf_counter() - start, n, outputs


def run_per_element(work: Workload, limit: int) -> tuple[float, int, list]:
    """Seconds, elements processed and outputs of the per-element path (first ``limit`` rows).
    Rows become dicts before timing starts."""
    prepared = []
    n = 0
    for frame, ts, wm in zip(work.batches, work.timestamps, work.watermarks):
        if n >= limit:
            break
        take = min(len(frame), limit - n)
        records = frame.iloc[:take].to_dict("records")
        prepared.append((records, ts[:take].tolist(), wm))
        n += take
    op = new_operator(work.window_ms)
    outputs: list = []
    start = time.perf_counter()
    for records, ts_list, wm in prepared:
        for record, ts in zip(records, ts_list):
            op.process_element(record, ts)
        op.advance_watermark(wm)
        outputs.extend(op.drain_output())
    return time.perf_counter() - start, n, outputs


def is_vectorized() -> str:
    try:
        from flinkwin.operator.vectorized import is_vectorizable
    except ImportError:
        return "unknown"
    return "yes" if is_vectorizable(new_operator(1000)) else "no (falls back to per-element)"


def format_report(results: dict, command: str) -> str:
    """A markdown section for docs/benchmarks.md."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    vec, per = results["vectorized"], results["per_element"]
    lines = [
        f"## Operator micro-benchmark ({now})",
        "",
        f"Command: `{command}`",
        "",
        f"Workload: keyed tumbling event-time window ({results['window_ms']} ms) with built-in "
        f"`sum`, {results['keys']:,} keys, watermark advanced after each batch. Machine: "
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"pandas {pd.__version__}, numpy {np.__version__}, one process.",
        "",
        "| path | elements | seconds | elements/s |",
        "| --- | ---: | ---: | ---: |",
        f"| vectorized (`process_batch`, {results['batches']} batches) | {vec['elements']:,} | "
        f"{vec['seconds']:.3f} | {vec['rate']:,.0f} |",
        f"| per-element (`process_element`) | {per['elements']:,} | {per['seconds']:.3f} | "
        f"{per['rate']:,.0f} |",
        "",
        f"Vectorized / per-element: **{results['ratio']:.1f}x**. Vectorized path selected: "
        f"{results['vectorized_path']}. Outputs identical on the per-element prefix: "
        f"{results['check']}.",
        "",
    ]
    return "\n".join(lines)


def write_report(text: str, path: Path = DEFAULT_OUTPUT) -> None:
    """Append ``text`` to ``path`` (creating it with a title if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.stat().st_size == 0:
        path.write_text("# Benchmarks\n\n", encoding="utf-8")
    with path.open("a", encoding="utf-8") as f:
        if not path.read_text(encoding="utf-8").endswith("\n\n"):
            f.write("\n")
        f.write(text)


def the_command() -> str:
    """The command line that ran this script, relative to the repository where possible."""

    def rel(p: str) -> str:
        try:
            absolute = Path(os.path.abspath(p))  # not resolve(): keep the venv's symlink
            return os.path.relpath(absolute, REPO) if absolute.is_relative_to(REPO) else p
        except ValueError:
            return p

    return shlex.join([rel(sys.executable), rel(sys.argv[0]), *sys.argv[1:]])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elements", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--per-element-elements", type=int, default=100_000)
    parser.add_argument("--window-ms", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs for each path")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-check", action="store_true", help="skip the output comparison")
    parser.add_argument("--write", action="store_true", help=f"append to {DEFAULT_OUTPUT}")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)

    work = make_workload(args.elements, args.keys, args.batches, args.window_ms, args.seed)
    per_limit = min(args.per_element_elements, work.elements)

    vec_seconds = per_seconds = float("inf")
    vec_n = per_n = 0
    per_out: list = []
    for _ in range(args.repeat):
        s, vec_n, _out = run_vectorized(work)
        vec_seconds = min(vec_seconds, s)
        s, per_n, per_out = run_per_element(work, per_limit)
        per_seconds = min(per_seconds, s)

    check = "skipped"
    if not args.no_check:
        _, _, vec_prefix_out = run_vectorized(work, per_limit)
        check = "yes" if vec_prefix_out == per_out else "NO - outputs differ"

    vec_rate = vec_n / vec_seconds
    per_rate = per_n / per_seconds
    results = {
        "keys": args.keys,
        "batches": len(work.batches),
        "window_ms": args.window_ms,
        "vectorized": {"elements": vec_n, "seconds": vec_seconds, "rate": vec_rate},
        "per_element": {"elements": per_n, "seconds": per_seconds, "rate": per_rate},
        "ratio": vec_rate / per_rate,
        "vectorized_path": is_vectorized(),
        "check": check,
    }
    print(
        f"vectorized : {vec_n:>9,} elements in {vec_seconds:7.3f} s = {vec_rate:>12,.0f} elements/s"
    )
    print(
        f"per-element: {per_n:>9,} elements in {per_seconds:7.3f} s = {per_rate:>12,.0f} elements/s"
    )
    print(f"ratio      : {results['ratio']:.1f}x (vectorized path: {results['vectorized_path']})")
    print(f"outputs identical on the first {per_limit:,} elements: {check}")
    if args.write:
        write_report(format_report(results, the_command()), args.output)
        print(f"appended to {args.output}")
    return results


if __name__ == "__main__":
    main()
