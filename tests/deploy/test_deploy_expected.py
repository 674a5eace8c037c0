"""The deployment pipeline's reference run on ``local[2]`` gives Flink's results."""

from __future__ import annotations

from typing import Any

from deploy_driver import STEPS


def test_local_reference_fires_refires_and_drops_late_data(local_reference: dict[str, Any]) -> None:
    main = local_reference["main"]
    fired = sorted((r["k"], r["window_start"], r["total"]) for r in main)
    assert fired == [
        ("a", 0, 6), ("a", 0, 106),        # fired at watermark >= 10 s, re-fired by a 7 s element
        ("a", 10_000, 34),
        ("b", 0, 15), ("b", 10_000, 21),
        ("c", 0, 7), ("c", 0, 1007),       # re-fired by a 0.5 s element within lateness
        ("c", 20_000, 3),
        ("d", 10_000, 2),
    ]
    late = sorted((r["k"], r["ts"], r["v"]) for r in local_reference["late"])
    assert late == [("a", 2000, 10000), ("d", 5000, 9)]
    assert sum(len(s) for s in STEPS) == 5
