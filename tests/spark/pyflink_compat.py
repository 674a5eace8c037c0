"""The thin layer that lets PyFlink's own tests run verbatim on flinkwin.

``self.env`` is flinkwin's :class:`~flinkwin.datastream.StreamExecutionEnvironment`
(``from_collection`` builds a static DataFrame on the shared Spark session), fresh for each
test as PyFlink's test base makes one. The sink is the one thing left here:
``DataStreamTestSinkFunction`` is a flinkwin ``SinkFunction`` recording each element as Flink's
``toString`` prints it (``(a,1)``, ``+I[a, 1]``), as PyFlink's Java test sink does. flinkwin's
``add_sink`` runs when it is called, so ``env.execute()`` has nothing left to run.
"""

from __future__ import annotations

import unittest
from typing import Any

import pytest

from flinkwin.datastream import StreamExecutionEnvironment
from flinkwin.functions import SinkFunction
from flinkwin.spark.printing import flink_string


class DataStreamTestSinkFunction(SinkFunction):
    """Records each element as Flink's ``toString`` (see module docstring)."""

    def __init__(self) -> None:
        self.results: list[str] = []

    def invoke(self, value: Any, context: Any) -> None:
        self.results.append(flink_string(value))

    def get_results(self) -> list[str]:
        return list(self.results)

    def clear(self) -> None:
        self.results.clear()


class PyFlinkStreamingTestCase(unittest.TestCase):
    """PyFlink's test base: ``self.env`` over the shared Spark session."""

    env: StreamExecutionEnvironment

    @pytest.fixture(autouse=True)
    def _spark_env(self, spark: Any, fresh_env: StreamExecutionEnvironment) -> None:
        self.env = fresh_env


__all__ = ["DataStreamTestSinkFunction", "PyFlinkStreamingTestCase"]
