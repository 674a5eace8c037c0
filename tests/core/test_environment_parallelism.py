"""The environment's ``set_parallelism(n)`` as Flink's ``parallelism.default``: the default of
every operator built afterwards, overridden by its result's own ``set_parallelism``, capped by
the key groups, and refused as Flink refuses it above the environment's max parallelism (the
resolution alone, no Spark session)."""

from __future__ import annotations

import pytest

from flinkwin.datastream.stream_execution_environment import (
    StreamExecutionEnvironment,
    default_parallelism,
)
from flinkwin.spark.parallelism import (
    check_max_parallelism,
    describe_parallelism,
    requested_parallelism,
)


def test_no_environment_or_no_set_parallelism_leaves_the_choice_to_flinkwin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(StreamExecutionEnvironment, "_current", None)
    assert default_parallelism() is None
    StreamExecutionEnvironment.get_execution_environment()
    assert default_parallelism() is None


def test_the_environments_parallelism_is_the_default_of_operators_built_afterwards(
    env: StreamExecutionEnvironment,
) -> None:
    env.set_parallelism(4)
    assert default_parallelism() == 4
    env.set_parallelism(1)
    assert default_parallelism() == 1
    env.get_config().set_parallelism(-1)  # Flink's PARALLELISM_DEFAULT: unset again
    assert default_parallelism() is None


def test_a_parallelism_above_the_environments_max_parallelism_is_refused_as_flink_does(
    env: StreamExecutionEnvironment,
) -> None:
    """Flink's ExecutionJobVertex: "Vertex ...'s parallelism (4) is higher than the max
    parallelism (2). Please lower the parallelism or increase the max parallelism."."""
    env.set_max_parallelism(2).set_parallelism(4)
    with pytest.raises(ValueError, match=r"parallelism \(4\) is higher than its max "
                       r"parallelism \(2\).*lower the parallelism or increase the max"):
        default_parallelism()
    env.set_max_parallelism(4)
    assert default_parallelism() == 4


def test_a_results_own_parallelism_overrides_the_environments_as_given() -> None:
    assert requested_parallelism(3, 8, 16) == 3
    assert requested_parallelism(32, 8, 16) == 32  # its own: as today, not capped
    assert requested_parallelism(1, 8, 16) == 1


def test_the_environments_parallelism_is_capped_by_the_key_groups() -> None:
    assert requested_parallelism(None, 3, 16) == 3
    assert requested_parallelism(None, 1, 16) == 1
    assert requested_parallelism(None, 32, 16) == 16  # a task beyond them holds no key group
    assert requested_parallelism(None, 4, 1) == 1  # one key group: one task
    assert requested_parallelism(None, None, 16) is None  # flinkwin chooses


def test_explain_names_where_the_parallelism_comes_from() -> None:
    assert describe_parallelism(2, 3, 16) == "2"
    assert describe_parallelism(None, 3, 16) == "3 (the environment's)"
    assert describe_parallelism(None, 32, 16) == (
        "16 (the environment's 32, capped by the 16 key groups: set_max_parallelism raises "
        "them)")
    assert describe_parallelism(None, None, 16) is None


def test_max_parallelism_defaulting() -> None:
    """Flink's ExecutionJobVertexTest#testMaxParallelismDefaulting, the part flinkwin has: a
    parallelism higher than a declared max parallelism is refused with Flink's message naming
    the operator, both numbers and the fix; an equal or lower one, or an undeclared max
    parallelism (flinkwin's default key groups), passes."""
    with pytest.raises(ValueError, match=(
        r"^Vertex testVertex's parallelism \(172\) is higher than the max parallelism \(4\)\. "
        r"Please lower the parallelism or increase the max parallelism")):
        check_max_parallelism("testVertex", 172, 4)
    check_max_parallelism("testVertex", 4, 1 << 15)  # configured trumps the default
    check_max_parallelism("testVertex", 4, 4)
    check_max_parallelism("testVertex", 172, None)  # not declared: flinkwin's key groups
    check_max_parallelism("testVertex", None, 4)  # no parallelism asked for
