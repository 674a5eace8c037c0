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


#: PyFlink's atomic (basic) types.
BASIC_TYPE_NAMES = frozenset(
    "STRING BYTE BOOLEAN SHORT INT LONG FLOAT DOUBLE CHAR BIG_INT BIG_DEC INSTANT SQL_DATE "
    "SQL_TIME SQL_TIMESTAMP".split()
)
#: The types whose values are records of fields (Rows and tuples).
RECORD_TYPE_NAMES = frozenset(("ROW", "ROW_NAMED", "TUPLE"))


def is_atomic_type(type_info: Any) -> bool:
    """True for a type whose elements are single values rather than records of fields: a basic
    type (``Types.STRING()``, ``Types.INT()``...), ``Types.MAP``, ``Types.LIST`` and the arrays.
    A stream of such a type has one column, and its elements are that column's values (a
    ``str``, an ``int``, a ``dict``, a ``list``...), as PyFlink hands them over;
    ``PICKLED_BYTE_ARRAY`` values travel pickled instead."""
    return (
        isinstance(type_info, TypeInformation)
        and type_info.name not in RECORD_TYPE_NAMES
        and type_info.name != "PICKLED_BYTE_ARRAY"
    )


def is_pickled_type(type_info: Any) -> bool:
    """True for ``Types.PICKLED_BYTE_ARRAY()``: the stream's one column holds pickled Python
    values. flinkwin's own streams carry this type (a ``map``/``flat_map`` or window function
    without an output type, as PyFlink's); it never comes from a DataFrame's metadata, so
    bytes from input data are never unpickled."""
    return isinstance(type_info, TypeInformation) and type_info.name == "PICKLED_BYTE_ARRAY"


def declared_output(output_type: Any, output_schema: Any) -> Any:
    """The output type an operator was given: every function that produces elements takes
    PyFlink's ``output_type=`` and flinkwin's ``output_schema=``, one declaration under two
    names (PyFlink type information, a DDL string or a ``StructType``); both is an error."""
    if output_type is not None and output_schema is not None:
        raise ValueError(
            "pass output_schema or output_type, not both: they are one declaration "
            f"(got output_type={output_type!r} and output_schema={output_schema!r})"
        )
    return output_type if output_schema is None else output_schema


class _TypesFactory:
    _NAMES = frozenset(
        "STRING BYTE BOOLEAN SHORT INT LONG FLOAT DOUBLE CHAR BIG_INT BIG_DEC INSTANT SQL_DATE "
        "SQL_TIME SQL_TIMESTAMP PICKLED_BYTE_ARRAY ROW ROW_NAMED TUPLE PRIMITIVE_ARRAY "
        "BASIC_ARRAY OBJECT_ARRAY MAP LIST".split()
    )

    def __getattr__(self, name: str) -> Any:
        if name not in self._NAMES:
            raise AttributeError(f"Types has no {name}")
        if name in BASIC_TYPE_NAMES or name == "PICKLED_BYTE_ARRAY":
            return _ConstantType(name)
        return lambda *args: TypeInformation(name, *_java_arguments(name, args))


class _ConstantType(TypeInformation):
    """A type without parameters: PyFlink's ``Types.STRING()`` and Java's constant
    ``Types.STRING`` (calling it gives it back), so both spellings declare the same type."""

    def __call__(self) -> TypeInformation:
        return TypeInformation(self.name)


def _java_arguments(name: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Java's varargs forms as PyFlink's lists: ``Types.TUPLE(Types.STRING, Types.LONG)`` as
    ``Types.TUPLE([Types.STRING(), Types.LONG()])``, ``Types.ROW_NAMED(names, t1, t2)`` as
    ``Types.ROW_NAMED(names, [t1, t2])``; a constant argument is its type."""

    def plain(arg: Any) -> Any:
        if isinstance(arg, _ConstantType):
            return arg()
        if isinstance(arg, (list, tuple)):
            return [plain(a) for a in arg]
        return arg

    args = tuple(plain(a) for a in args)
    if name in ("TUPLE", "ROW") and args and all(isinstance(a, TypeInformation) for a in args):
        return ([*args],)
    if name == "ROW_NAMED" and len(args) > 1 and all(
            isinstance(a, TypeInformation) for a in args[1:]):
        return (args[0], [*args[1:]])
    return args


Types = _TypesFactory()
