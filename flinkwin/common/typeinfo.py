"""PyFlink's ``pyflink.common.typeinfo``: ``Types`` and ``TypeInformation`` (the classes
behind them, ``RowTypeInfo``, ``BasicTypeInfo``..., raise an ``ImportError`` naming the
``Types`` factory to use instead)."""

from typing import Any

from flinkwin.types import TypeInformation, Types
from flinkwin.unsupported import missing


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)

__all__ = ["TypeInformation", "Types"]
