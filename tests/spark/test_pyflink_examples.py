"""PyFlink programs, written as a PyFlink user writes them, run as a user runs them.

Each program in ``pyflink_examples/`` is a PyFlink program whose only change is the package
name in its imports (``pyflink`` -> ``flinkwin``): the source (``env.from_collection(...)``),
the environment lines and ``ds.print()`` are PyFlink's API. The windowing programs use the
sample data of PyFlink's own windowing examples (apache/flink
``flink-python/pyflink/examples/datastream/windowing``), in code written for these tests. Each
runs as ``__main__`` (its classes pickled by value, as a script's are), and its printed lines
are compared with what Flink prints, worked out from Flink's semantics in each test.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any

import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "pyflink_examples")


def run_example(name: str, capsys: pytest.CaptureFixture[str],
                monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Run the ported program as a script and return the lines it printed."""
    monkeypatch.setattr(sys, "argv", [name])
    capsys.readouterr()
    runpy.run_path(os.path.join(EXAMPLES, name), run_name="__main__")
    return capsys.readouterr().out.splitlines()


def assert_flink_output(printed: list[str], expected: list[str]) -> None:
    """The same lines as Flink prints, and each key's lines in Flink's order (lines of
    different keys may interleave differently: Spark runs keys in parallel)."""
    assert sorted(printed) == sorted(expected)
    for key in {line.split(",")[0] for line in expected}:
        assert [x for x in printed if x.split(",")[0] == key] == [
            x for x in expected if x.split(",")[0] == key
        ]


@pytest.fixture(autouse=True)
def _session(spark: Any, fresh_env: Any) -> None:
    """The programs build their DataFrames on the active (shared) session, each with a fresh
    environment."""


def test_tumbling_time_window_example_prints_flinks_windows(capsys: Any, monkeypatch: Any) -> None:
    # elements at 1, 2, 3, 4, 5, 8, 9, 15 ms; 5 ms tumbling windows [0,5) [5,10) [15,20)
    printed = run_example("tumbling_time_window.py", capsys, monkeypatch)
    assert_flink_output(printed, ["(hi,0,5,4)", "(hi,5,10,3)", "(hi,15,20,1)"])


def test_sliding_time_window_example_prints_flinks_windows(capsys: Any, monkeypatch: Any) -> None:
    # 5 ms windows every 2 ms: [-2,3) holds 1, 2; [0,5) 1..4; [2,7) 2..5; [4,9) 4, 5, 8;
    # [6,11) and [8,13) 8, 9; [10,15) nothing (no output); [12,17) and [14,19) 15
    printed = run_example("sliding_time_window.py", capsys, monkeypatch)
    assert_flink_output(printed, [
        "(hi,-2,3,2)", "(hi,0,5,4)", "(hi,2,7,4)", "(hi,4,9,3)", "(hi,6,11,2)", "(hi,8,13,2)",
        "(hi,12,17,1)", "(hi,14,19,1)",
    ])


def test_session_with_gap_window_example_prints_flinks_sessions(
    capsys: Any, monkeypatch: Any
) -> None:
    # gap 5 ms: 1, 2, 3, 4, 8, 9 chain into [1,14); 15 starts [15,20) (14 < 15: no overlap)
    printed = run_example("session_with_gap_window.py", capsys, monkeypatch)
    assert_flink_output(printed, ["(hi,1,14,6)", "(hi,15,20,1)"])


def test_session_with_dynamic_gap_window_example_prints_flinks_session(
    capsys: Any, monkeypatch: Any
) -> None:
    # each element's gap is its own timestamp: [1,2) [2,4) [3,6) [4,8) [8,16) [9,18) [15,30);
    # Flink's TimeWindow.intersects includes the ends ([1,2) and [2,4) touch), so all merge
    printed = run_example("session_with_dynamic_gap_window.py", capsys, monkeypatch)
    assert_flink_output(printed, ["(hi,1,30,7)"])


def test_tumbling_count_window_example_prints_flinks_full_windows(
    capsys: Any, monkeypatch: Any
) -> None:
    # windows of 2 per key: hi 1+3, (5 never completes); hello 2+4, then 6+6
    printed = run_example("tumbling_count_window.py", capsys, monkeypatch)
    assert_flink_output(printed, ["(hi,4)", "(hello,6)", "(hello,12)"])



def test_running_totals_program_prints_each_keys_running_total(
    capsys: Any, monkeypatch: Any
) -> None:
    # a KeyedProcessFunction with ValueState: each element's key and its key's running total,
    # in arrival order per key
    printed = run_example("running_totals.py", capsys, monkeypatch)
    assert_flink_output(printed, [
        "('apples', 3)", "('pears', 10)", "('apples', 7)", "('plums', 1)", "('pears', 15)",
        "('apples', 9)",
    ])


def test_count_until_quiet_program_fires_every_timer_after_all_elements(
    capsys: Any, monkeypatch: Any
) -> None:
    # a bounded source: every element is in before the end-of-input watermark fires the timers
    # (element time + 1 s: x's at 1.5, 2.2 and 5.1 s, y's at 1.7 and 5 s) in timestamp order,
    # each reporting its key's count over all of the key's elements
    printed = run_example("count_until_quiet.py", capsys, monkeypatch)
    assert printed == [
        "x at 1500: 3", "y at 1700: 2", "x at 2200: 3", "y at 5000: 2", "x at 5100: 3",
    ]
