"""The thin layer that lets PyFlink's own tests run verbatim on flinkwin.

It stands in for exactly the two things porting changes, the source and the sink, and says
what it does instead:

- ``self.env.from_collection(data, type_info=...)`` builds a Spark DataFrame from ``data``
  (columns ``f0, f1, ...`` typed from ``type_info``, or inferred by Spark without it) and wraps
  it in ``DataStream(df, type_info=...)``: the one-line source change of a real port.
- ``DataStreamTestSinkFunction`` is a flinkwin ``SinkFunction`` recording each element as
  Flink's ``toString`` prints it (``(a,1)``, ``+I[a, 1]``), as PyFlink's Java test sink does.
  flinkwin's ``add_sink`` runs when it is called, so ``env.execute()`` has nothing left to run;
  ``set_parallelism`` has no Spark counterpart here (Spark's parallelism is its own setting).
"""

from __future__ import annotations

import unittest
from typing import Any

import pytest

from flinkwin import DataStream, Types
from flinkwin.functions import SinkFunction
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.spark.printing import flink_string
from flinkwin.spark.schema import parse_schema


class StreamExecutionEnvironment:
    """The source side of ``self.env`` (see module docstring)."""

    def __init__(self, spark: Any) -> None:
        self.spark = spark
        self.runtime_mode = RuntimeExecutionMode.STREAMING

    def from_collection(self, collection: list[Any], type_info: Any = None) -> DataStream:
        if type_info is not None:
            df = self.spark.createDataFrame(collection, parse_schema(type_info))
        else:
            width = len(collection[0])
            df = self.spark.createDataFrame(collection, [f"f{i}" for i in range(width)])
        return DataStream(df, type_info=type_info, runtime_mode=self.runtime_mode)

    def set_parallelism(self, parallelism: int) -> None:
        """Spark's parallelism is the session's; nothing to set per job."""

    def set_runtime_mode(self, mode: RuntimeExecutionMode) -> None:
        self.runtime_mode = mode

    def execute(self, job_name: str | None = None) -> None:
        """Sinks ran when they were added (see module docstring)."""


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
    def _spark_env(self, spark: Any) -> None:
        self.env = StreamExecutionEnvironment(spark)


__all__ = [
    "DataStreamTestSinkFunction",
    "PyFlinkStreamingTestCase",
    "StreamExecutionEnvironment",
    "Types",
]
