"""PyFlink's ``pyflink.datastream.output_tag``: ``OutputTag``."""

from flinkwin.output_tag import OutputTag

__all__ = ["OutputTag"]
