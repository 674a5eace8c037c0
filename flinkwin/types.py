"""``Types``: PyFlink's type-information factories, accepted (and ignored) so PyFlink code ports.

flinkwin state is schemaless Python; the type information only documents intent.
"""

from __future__ import annotations

from typing import Any


class TypeInformation:
    """A named type, e.g. ``Types.LONG()``; carries no behaviour."""

    def __init__(self, name: str, *args: Any) -> None:
        self.name = name
        self.args = args

    def __repr__(self) -> str:
        return f"Types.{self.name}()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeInformation) and (self.name, self.args) == (
            other.name,
            other.args,
        )

    def __hash__(self) -> int:
        return hash(self.name)


#: PyFlink's atomic (basic) types: a stream of one of them hands each element's value itself.
BASIC_TYPE_NAMES = frozenset(
    "STRING BYTE BOOLEAN SHORT INT LONG FLOAT DOUBLE CHAR BIG_INT BIG_DEC INSTANT SQL_DATE "
    "SQL_TIME SQL_TIMESTAMP".split()
)


def is_atomic_type(type_info: Any) -> bool:
    """True for an atomic PyFlink type (``Types.STRING()``, ``Types.INT()``...): the elements
    of such a stream are bare values, not rows (``PICKLED_BYTE_ARRAY`` travels pickled)."""
    return isinstance(type_info, TypeInformation) and type_info.name in BASIC_TYPE_NAMES


def is_pickled_type(type_info: Any) -> bool:
    """True for ``Types.PICKLED_BYTE_ARRAY()``: the stream's one column holds pickled Python
    values. flinkwin's own streams carry this type (a ``map``/``flat_map`` or window function
    without an output type, as PyFlink's); it never comes from a DataFrame's metadata, so
    bytes from input data are never unpickled."""
    return isinstance(type_info, TypeInformation) and type_info.name == "PICKLED_BYTE_ARRAY"


class _TypesFactory:
    _NAMES = frozenset(
        "STRING BYTE BOOLEAN SHORT INT LONG FLOAT DOUBLE CHAR BIG_INT BIG_DEC INSTANT SQL_DATE "
        "SQL_TIME SQL_TIMESTAMP PICKLED_BYTE_ARRAY ROW ROW_NAMED TUPLE PRIMITIVE_ARRAY "
        "BASIC_ARRAY OBJECT_ARRAY MAP LIST".split()
    )

    def __getattr__(self, name: str) -> Any:
        if name not in self._NAMES:
            raise AttributeError(f"Types has no {name}")
        return lambda *args: TypeInformation(name, *args)


Types = _TypesFactory()
