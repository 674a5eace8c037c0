"""PyFlink's ``pyflink.common.watermark_strategy``: ``WatermarkStrategy`` and
``TimestampAssigner``."""

from typing import Any

from flinkwin.timestamps import TimestampAssigner
from flinkwin.unsupported import missing
from flinkwin.watermark import WatermarkStrategy


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)

__all__ = ["TimestampAssigner", "WatermarkStrategy"]
