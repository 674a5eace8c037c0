"""PyFlink's ``pyflink.common.serializer``: ``TypeSerializer``, the base of the window
serializers (PyFlink's state-namespace internals raise an ``ImportError`` saying why)."""

from typing import Any

from flinkwin.unsupported import missing
from flinkwin.windows.serializers import T, TypeSerializer


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)


__all__ = ["T", "TypeSerializer"]
