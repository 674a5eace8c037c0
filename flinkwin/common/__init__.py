"""PyFlink's ``pyflink.common``, under the same names and module layout: a program's
``from pyflink.common import Types, WatermarkStrategy`` becomes
``from flinkwin.common import Types, WatermarkStrategy``, and ``pyflink.common.typeinfo``,
``.time``, ``.watermark_strategy``, ``.types``, ``.configuration`` and ``.execution_config``
become the modules of the same names here. Names flinkwin does not provide (serialization
schemas, restart strategies, the job client...) raise an ``ImportError`` saying what to do
instead (:mod:`flinkwin.unsupported`)."""

from typing import Any

from flinkwin.common.configuration import Configuration
from flinkwin.common.execution_config import ExecutionConfig
from flinkwin.record import Row, RowKind
from flinkwin.time import Duration, Time
from flinkwin.timestamps import TimestampAssigner
from flinkwin.types import TypeInformation, Types
from flinkwin.unsupported import missing
from flinkwin.watermark import WatermarkStrategy
from flinkwin.windows.serializers import TypeSerializer


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)


__all__ = [
    "Configuration",
    "Duration",
    "ExecutionConfig",
    "Row",
    "RowKind",
    "Time",
    "TimestampAssigner",
    "TypeInformation",
    "TypeSerializer",
    "Types",
    "WatermarkStrategy",
]
