"""Probe (issue 32): the stage function of two trees of flinkwin in one process, alternating,
CPU seconds of ``bench/bench_key_group.py``'s harness per run and the digests of its outputs and
snapshots (equal digests: byte-identical outputs and state).

Each tree is imported as its own copy of ``flinkwin`` and of the harness (the modules are
swapped in ``sys.modules`` between the imports; objects keep their own tree's code), so a cut
is measured against the tree before it under the same load, runs alternated. ``--base`` is a
copy of the tree before the cuts (for example ``git archive df6962e | tar -x -C /tmp/base``);
the other tree is this one::

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_32_ab_trees.py --base /tmp/base \\
        --workloads aggregate,process_window --rounds 6
"""

from __future__ import annotations

import argparse
import gc
import importlib
import statistics
import sys
import time
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parents[2]
EVENTS = {"tumbling": 2_000_000, "aggregate": 2_000_000, "session": 1_000_000,
          "process_window": 1_000_000, "continuous": 1_000_000}


def _ours(name: str) -> bool:
    return name == "flinkwin" or name.startswith("flinkwin.") or name == "bench_key_group"


class Tree:
    """One tree's modules: installed in ``sys.modules`` (and its path first on ``sys.path``)
    while it runs, so that imports made inside a run (flinkwin imports some modules lazily)
    come from the same tree."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.modules: dict[str, ModuleType] = {}
        with self:
            self.harness = importlib.import_module("bench_key_group")
        assert Path(self.harness.fw.__file__).is_relative_to(path), self.harness.fw.__file__

    def __enter__(self) -> Tree:
        for name in [n for n in sys.modules if _ours(n)]:
            del sys.modules[name]
        sys.modules.update(self.modules)
        sys.path[:0] = [str(self.path), str(self.path / "bench")]
        return self

    def __exit__(self, *exc: object) -> None:
        del sys.path[:2]
        self.modules = {n: m for n, m in sys.modules.items() if _ours(n)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="a copy of the tree before the cuts")
    parser.add_argument("--workloads", default="aggregate,process_window")
    parser.add_argument("--events", type=int, default=0, help="events (default: the suite's)")
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    trees = {"before": Tree(Path(args.base).resolve()), "after": Tree(HERE)}
    for kind in args.workloads.split(","):
        with trees["after"] as tree:
            data = tree.harness.batches(args.events or EVENTS[kind])
        for tree in trees.values():
            with tree:
                tree.harness.run(tree.harness.runtime(kind), data[:2])  # warm-up
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        digests: dict[str, set[tuple[str, str]]] = {name: set() for name in trees}
        for i in range(args.rounds):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))
            for name in order:
                with trees[name] as tree:
                    stage = tree.harness.runtime(kind)
                    gc.collect()
                    begin = time.thread_time()
                    digests[name].add(tree.harness.run(stage, data))
                    seconds[name].append(time.thread_time() - begin)
        before, after = (statistics.median(seconds[n]) for n in ("before", "after"))
        same = digests["before"] == digests["after"] and len(digests["after"]) == 1
        print(f"{kind:15s} before {before:6.3f} s  after {after:6.3f} s  "
              f"({(after - before) / before:+.1%})  runs before "
              f"{' '.join(f'{s:.2f}' for s in seconds['before'])} | after "
              f"{' '.join(f'{s:.2f}' for s in seconds['after'])}  digests "
              f"{'equal' if same else 'DIFFER'} {sorted(digests['after'])}", flush=True)


if __name__ == "__main__":
    main()
