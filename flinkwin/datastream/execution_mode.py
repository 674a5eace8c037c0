"""PyFlink's ``pyflink.datastream.execution_mode``: ``RuntimeExecutionMode``."""

from flinkwin.runtime_mode import RuntimeExecutionMode

__all__ = ["RuntimeExecutionMode"]
