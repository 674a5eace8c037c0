"""PyFlink's ``pyflink.common.watermark_strategy``: ``WatermarkStrategy`` and
``TimestampAssigner``."""

from flinkwin.timestamps import TimestampAssigner
from flinkwin.watermark import WatermarkStrategy

__all__ = ["TimestampAssigner", "WatermarkStrategy"]
