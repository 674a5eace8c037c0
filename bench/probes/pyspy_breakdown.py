"""Probe helper (issue 31): sums a ``py-spy record --subprocesses -f raw`` profile of a Spark
run by process kind and by what flinkwin's graph stage was doing.

    py-spy record --subprocesses -r 100 -f raw -o hot.txt -- \
        .venv/bin/python bench/probes/profile_hotitems.py --events 200000
    .venv/bin/python bench/probes/pyspy_breakdown.py hot.txt

A worker's stack is put in the first category (in the order of ``CATEGORIES``) one of whose
markers occurs in it: so the user functions, the snapshot and the element conversion are
counted apart from the operators that call them.
"""

from __future__ import annotations

import sys
from collections import Counter

#: (category, markers): the first category with a marker in the stack takes the sample
#: (frames are matched as ``function@file``)
CATEGORIES = [
    ("idle: the flinkwin-subtasks watcher's sleep (py-spy counted it)",
     ["SubtaskRegistry._run@"]),
    ("worker start: module imports", ["_find_and_load@", "@<frozen zipimport>"]),
    ("snapshot (write: sealed_snapshot)", ["sealed_snapshot@"]),
    ("restore (restore_sealed)", ["restore_sealed@"]),
    ("user functions (CountAgg, WindowResultFunction, TopN)", ["@bench_hotitems.py"]),
    ("input: stage rows -> elements", ["elements@graph.py", "_records@", "batch@inputs.py",
                                       "rows@inputs.py"]),
    ("window operator: per element (assign, trigger, timers, contents)",
     ["process_element@window_operator.py"]),
    ("keyed process operator: per element", ["process_element@keyed_process_operator.py"]),
    ("watermark: firing windows and timers", ["advance_watermark@"]),
    ("graph: pushing elements between operators", ["process_batch@graph.py"]),
    ("output frame (results -> Arrow/pandas)", ["frame@outputs.py"]),
    ("flinkwin function, other", ["process_stream@"]),
    ("pyspark: Arrow <-> pandas, serializers", ["@serializers.py", "@types.py", "@conversion.py",
                                                "@ipc.py"]),
    ("pyspark worker: other", ["@worker.py", "@daemon.py"]),
]


def frames(stack: str) -> list[str]:
    """``function (path/file.py:line)`` frames as ``function@file.py``."""
    out = []
    for frame in stack.split(";"):
        name, _, where = frame.partition(" (")
        out.append(f"{name}@{where.rsplit('/', 1)[-1].split(':', 1)[0]}")
    return out


def main(path: str) -> None:
    by_process: Counter[str] = Counter()
    worker: Counter[str] = Counter()
    with open(path, encoding="utf-8") as f:
        lines = f.readlines()
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        n = int(count)
        # --subprocesses: the stack starts with the chain of processes down to the sampled one
        process = [f for f in stack.split(";") if f.startswith("process ")][-1]
        kind = ("python worker" if "pyspark.daemon" in process or "pyspark.worker" in process
                else "driver (python)" if ".py" in process else process[:60])
        by_process[kind] += n
        if kind != "python worker":
            continue
        norm = ";".join(frames(stack))
        for category, markers in CATEGORIES:
            if any(m in norm for m in markers):
                worker[category] += n
                break
        else:
            worker["other: " + stack.rsplit(";", 1)[-1][:70]] += n
    total = sum(by_process.values())
    print(f"{total:,} samples (non-idle)")
    for kind, n in by_process.most_common():
        print(f"  {kind:60s} {n:8,} {100 * n / total:5.1f}%")
    w = sum(worker.values())
    print(f"python worker: {w:,} samples")
    for category, n in worker.most_common(25):
        print(f"  {category:70s} {n:8,} {100 * n / w:5.1f}%")


if __name__ == "__main__":
    main(sys.argv[1])
