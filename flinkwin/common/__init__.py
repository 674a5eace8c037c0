"""What PyFlink programs import from ``pyflink.common``, under the same names:
``from flinkwin.common import Row, Types, Time, Duration, WatermarkStrategy``."""

from flinkwin.record import Row, RowKind
from flinkwin.time import Duration, Time
from flinkwin.timestamps import TimestampAssigner
from flinkwin.types import TypeInformation, Types
from flinkwin.watermark import WatermarkStrategy

__all__ = [
    "Duration",
    "Row",
    "RowKind",
    "Time",
    "TimestampAssigner",
    "TypeInformation",
    "Types",
    "WatermarkStrategy",
]
