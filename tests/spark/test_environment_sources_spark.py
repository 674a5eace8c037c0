"""Java's bounded sources on the environment: ``fromElements``, ``fromData`` and
``fromSequence`` (Flink 1.19 and 2.x), as a ported Java program calls them: each element
reaches the functions as ``from_collection`` gives it, in order."""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin.common import Types


@pytest.fixture(autouse=True)
def _session(spark: Any, fresh_env: Any) -> None:
    """``from_collection`` builds its DataFrame on the active (shared) session."""


def test_from_sequence_is_the_longs_from_to_to_included_in_order(fresh_env: Any) -> None:
    """``env.fromSequence(1, 10).keyBy(x -> x % 2).reduce(Long::sum)``: each key's rolling
    sums, in the sequence's order."""
    env = fresh_env.getExecutionEnvironment()
    env.setParallelism(1)
    sums = env.fromSequence(1, 10).keyBy(lambda x: x % 2).reduce(lambda a, b: a + b)
    assert list(sums.executeAndCollect()) == [1, 2, 4, 6, 9, 12, 16, 20, 25, 30]


def test_from_elements_and_from_data_give_the_elements_as_written(fresh_env: Any) -> None:
    words = fresh_env.fromElements(("a", 1), ("b", 2), ("a", 3))
    assert list(words.keyBy(lambda t: t[0]).sum(1).executeAndCollect()) == [
        ("a", 1), ("b", 2), ("a", 4)]
    assert list(fresh_env.fromData(["x", "y"]).executeAndCollect()) == ["x", "y"]
    assert list(fresh_env.fromData("x", "y").executeAndCollect()) == ["x", "y"]
    typed = fresh_env.fromData([(1, 2)], type_info=Types.TUPLE([Types.INT(), Types.INT()]))
    assert list(typed.map(lambda t: t[0] + t[1], output_type=Types.INT())
                .executeAndCollect()) == [3]
    # Java's spelling of the types: constants and varargs
    java = fresh_env.fromData([("a", 2)], type_info=Types.TUPLE(Types.STRING, Types.INT))
    assert list(java.map(lambda t: (t[0], t[1] * 10), output_type=Types.TUPLE(
        Types.STRING, Types.LONG)).executeAndCollect()) == [("a", 20)]


def test_physical_partitioning_and_java_named_hints_change_no_element(fresh_env: Any) -> None:
    """``rebalance()``, ``shuffle()``, ``rescale()``, ``forward()`` and ``global_()`` say which
    parallel subtask gets an element: the elements, and a key's order, stay those of a
    parallelism-1 run; the Java-named hints are recorded as the PyFlink-named ones; a
    ``KeyedStream`` refuses partitioning, as Flink's and PyFlink's do; ``partitionCustom``, whose
    ``Partitioner`` flinkwin refuses, is refused naming it."""
    from flinkwin.errors import UnsupportedOperationError

    source = fresh_env.fromSequence(1, 6).rebalance().shuffle().name("numbers")
    assert source.getName() == "numbers"
    mapped = (source.map(lambda x: x * 10, output_type=Types.LONG()).setParallelism(2)
              .rescale().forward().global_().slotSharingGroup("g").disableChaining())
    sums = mapped.keyBy(lambda x: x % 20).reduce(lambda a, b: a + b)
    assert list(sums.executeAndCollect()) == [10, 20, 40, 60, 90, 120]
    with pytest.raises(UnsupportedOperationError, match="Cannot override partitioning"):
        mapped.keyBy(lambda x: x).rebalance()
    with pytest.raises(UnsupportedOperationError, match="partition_custom"):
        mapped.partitionCustom(lambda key, n: key % n, lambda x: x)
