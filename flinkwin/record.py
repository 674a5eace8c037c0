"""``Row``: the elements user functions see, shaped and printed like PyFlink's
``pyflink.common.Row``.

A row read from a DataFrame has the DataFrame's column names: ``row.user``, ``row["user"]``,
``row[0]``, ``row.as_dict()``, and prints as ``Row(user='alice', clicks=3)``. As PyFlink 2.x's
Row: ``Row(b=1, a=2)`` keeps the names in the order given; ``Row(1, 2)`` has no names (prints
``<Row(1, 2)>``); ``Person = Row("name", "age"); Person("Alice", 11)`` names the values; two named
rows are equal when they hold the same value for each name, whatever the names' order;
``"name" in row`` looks for a field name (for a row without names, a value).

Where flinkwin differs from PyFlink (documented in ``docs/api-contract.md``):
- a Row is an immutable tuple (rows are shared between windows and state): ``row[0] = x`` raises;
  build a new one (``row.replace("clicks", 4)`` or ``Row(...)``);
- a Row also equals the plain tuple of its values and the dict of its fields, so expectations can
  be written either way (two Rows are equal only with the same set of field names, as in PyFlink);
  rows equal by name hash alike; a row hashes as the plain tuple of its values unless its names
  were first seen in another order (then it hashes as its values in that order);
- a named row class called with fewer values than names raises (PyFlink builds a broken row);
- every element is an insertion: ``get_row_kind()`` is ``RowKind.INSERT``.

Rows of one schema share a generated subclass, so creating one costs a tuple.

The elements of a ``Types.TUPLE`` stream are tuples, as PyFlink hands them: :func:`tuple_class`
makes rows that are Python tuples to the user (``repr`` ``('a', 3)``, Flink's ``print()``
``(a,3)``, equal to the plain tuple) and keep their field names (``f0``, ``f1``...) for
flinkwin's own use (field-name keys and built-in aggregations) and Java-style ``t.f0`` access.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any


class RowKind(Enum):
    """The change a row describes (PyFlink's ``RowKind``); window streams only insert."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def __str__(self) -> str:
        """Flink's short string (``+I``, ``-U``, ``+U``, ``-D``), as PyFlink's."""
        return ("+I", "-U", "+U", "-D")[self.value]


class UnknownFieldError(KeyError, ValueError):
    """A field name the row does not have (a ``KeyError`` as for a dict, and the ``ValueError``
    PyFlink's ``Row`` raises)."""


class Row(tuple):
    """An immutable row with (optional) field names; see the module docstring."""

    __slots__ = ()
    #: Field names (pyspark's attribute); None for a row without names.
    __fields__: tuple[str, ...] | None = None
    _index: dict[str, int] = {}

    def __new__(cls, *args: Any, **kwargs: Any) -> Row:
        if cls is not Row:  # a named row class: its values, positionally
            if kwargs:
                raise TypeError("a named Row class takes its values positionally")
            return _checked(cls, args)
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:  # in the order given (PyFlink 2.x; 1.x sorted them)
            return tuple.__new__(record_class(tuple(kwargs)), kwargs.values())
        return tuple.__new__(Row, args)

    @staticmethod
    def of(fields: Sequence[str], values: Iterable[Any]) -> Row:
        """A row named ``fields`` holding ``values`` (in that order)."""
        return _checked(record_class(tuple(fields)), tuple(values))

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Row:
        """A row with the mapping's keys as names, in the mapping's order."""
        return tuple.__new__(record_class(tuple(data.keys())), data.values())

    def __call__(self, *args: Any) -> Row:
        """``Row("name", "age")("Alice", 11)``: a row named by this row's values."""
        if type(self).__fields__ is not None:
            raise TypeError("only a Row without field names can name another row")
        if len(args) != len(self):
            raise ValueError(
                f"Can not create Row with fields {self}, expected {len(self)} values "
                f"but got {args}"
            )
        return Row.of(tuple(self), args)

    def __getattr__(self, name: str) -> Any:
        """Fields the class has no property for (names starting with ``_``, e.g. Spark's CSV
        columns ``_c0``...)."""
        index = type(self)._index.get(name)
        if index is None:
            raise AttributeError(f"Row has no field {name!r}")
        return tuple.__getitem__(self, index)

    def __getitem__(self, item: Any) -> Any:  # type: ignore[override]
        if isinstance(item, str):
            index = type(self)._index.get(item)
            if index is None:
                raise UnknownFieldError(item)
            return tuple.__getitem__(self, index)
        return tuple.__getitem__(self, item)

    def __setitem__(self, key: Any, value: Any) -> None:
        raise TypeError(
            "flinkwin Rows are immutable: build a new one (row.replace(field, value) or Row(...))"
        )

    def __setattr__(self, key: str, value: Any) -> None:
        self.__setitem__(key, value)

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        """The row as a dict of its fields; ``recursive`` converts nested rows too."""
        fields = type(self).__fields__
        if fields is None:
            raise TypeError("Cannot convert a Row class into dict")
        if not recursive:
            return dict(zip(fields, self))
        return dict(zip(fields, (_as_plain(v) for v in self)))

    asDict = as_dict  # noqa: N815 (pyspark's name)

    def get_row_kind(self) -> RowKind:
        return RowKind.INSERT

    def set_row_kind(self, row_kind: RowKind) -> None:
        if row_kind is not RowKind.INSERT:
            raise TypeError(
                f"flinkwin window streams are append-only: a Row cannot become {row_kind}"
            )

    def set_field_names(self, field_names: Sequence[str]) -> None:
        """Name (or rename) this row's fields."""
        names = tuple(field_names)
        if len(names) != len(self):
            raise ValueError(f"{len(names)} field names for a Row of {len(self)} values")
        object.__setattr__(self, "__class__", record_class(names))

    def get_fields_by_names(self, names: Sequence[str]) -> list[Any]:
        """The values of ``names``, in that order (PyFlink's); all values for a row without
        names. A name the row does not have raises ``UnknownFieldError``."""
        fields = type(self).__fields__
        if fields is None or list(names) == list(fields):
            return list(self)
        unknown = [n for n in names if n not in type(self)._index]
        if unknown:
            raise UnknownFieldError(f"Field names {unknown} not exist in {list(fields)}.")
        return [tuple.__getitem__(self, type(self)._index[n]) for n in names]

    @staticmethod
    def of_kind(row_kind: RowKind, *args: Any, **kwargs: Any) -> Row:
        """``Row(*args, **kwargs)`` of ``row_kind`` (PyFlink's); only ``INSERT`` rows exist
        in flinkwin's append-only streams."""
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def __contains__(self, item: object) -> bool:
        """A field name of a named row; a value of a row without names (PyFlink's)."""
        fields = type(self).__fields__
        if fields is None or type(self)._is_tuple:
            return tuple.__contains__(self, item)
        return item in type(self)._index

    def get(self, name: str, default: Any = None) -> Any:
        index = type(self)._index.get(name)
        return default if index is None else tuple.__getitem__(self, index)

    def replace(self, field: str, value: Any) -> Row:
        """A copy with ``field`` set to ``value``."""
        index = type(self)._index.get(field)
        if index is None:
            raise UnknownFieldError(field)
        values = list(self)
        values[index] = value
        return tuple.__new__(type(self), values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Row):
            mine, theirs = type(self).__fields__, type(other).__fields__
            if mine == theirs:
                return tuple.__eq__(self, other)
            if mine is None or theirs is None or sorted(mine) != sorted(theirs):
                return False
            index = type(other)._index  # the same names in another order (PyFlink's equality)
            return all(v == tuple.__getitem__(other, index[n]) for n, v in zip(mine, self))
        if isinstance(other, Mapping):
            fields = type(self).__fields__
            return fields is not None and dict(zip(fields, self)) == dict(other)
        return tuple.__eq__(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        fields = type(self).__fields__
        if fields is None:
            values = ", ".join(repr(v) for v in self)
            return f"<Row({values})>"
        pairs = ", ".join(f"{k}={v!r}" for k, v in zip(fields, self))
        return f"Row({pairs})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[Any, ...]:
        fields = type(self).__fields__
        if fields is None:
            return (Row, tuple(self))
        if type(self)._is_tuple:
            return (_rebuild_tuple, (fields, tuple(self)))
        return (_rebuild, (fields, tuple(self)))

    #: True for the elements of a ``Types.TUPLE`` stream (see :func:`tuple_class`).
    _is_tuple = False


#: The name flinkwin used before it followed PyFlink's ``Row``.
Record = Row

_RECORD_CLASSES: dict[tuple[str, ...], type[Row]] = {}
_TUPLE_CLASSES: dict[tuple[str, ...], type[Row]] = {}
#: For each set of field names, the order it was first seen in: a named row hashes its values in
#: that order, so two rows equal by name (same names, another order) hash alike, and a row of
#: the first order hashes as the plain tuple of its values (which it also equals).
_HASH_ORDER: dict[frozenset[str], tuple[str, ...]] = {}


def _checked(klass: type[Row], values: Iterable[Any]) -> Row:
    row = tuple.__new__(klass, values)
    fields = klass.__fields__ or ()
    if len(row) != len(fields):
        raise ValueError(f"Row has {len(fields)} field names but {len(row)} values")
    return row


def _as_plain(value: Any) -> Any:
    if isinstance(value, Row):
        return value.as_dict(True) if type(value).__fields__ is not None else list(value)
    if isinstance(value, list):
        return [_as_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_plain(v) for k, v in value.items()}
    return value


def record_class(fields: tuple[str, ...]) -> type[Row]:
    """The Row subclass for one schema (created once per field list)."""
    klass = _RECORD_CLASSES.get(fields)
    if klass is None:
        klass = _new_class("Row", fields, {})
        _RECORD_CLASSES[fields] = klass
    return klass


def tuple_class(fields: tuple[str, ...]) -> type[Row]:
    """The class of a ``Types.TUPLE`` stream's elements with these field names: tuples to the
    user (``repr``/``str`` of a tuple, printed ``(a,3)``), still named for flinkwin."""
    klass = _TUPLE_CLASSES.get(fields)
    if klass is None:
        klass = _new_class(
            "tuple",
            fields,
            # a tuple to the user: it hashes as the plain tuple it equals, whatever field order
            # a Row of the same names was created with first
            {"_is_tuple": True, "__repr__": tuple.__repr__, "__str__": tuple.__repr__,
             "__hash__": tuple.__hash__},
        )
        _TUPLE_CLASSES[fields] = klass
    return klass


def element_class(fields: tuple[str, ...], tuple_elements: bool) -> type[Row]:
    """The class of a stream's elements: :func:`tuple_class` for a ``Types.TUPLE`` stream,
    :func:`record_class` otherwise."""
    return tuple_class(fields) if tuple_elements else record_class(fields)


def is_tuple_element(value: Any) -> bool:
    """True for the element of a ``Types.TUPLE`` stream (see :func:`tuple_class`)."""
    return isinstance(value, Row) and type(value)._is_tuple


def _hasher(positions: tuple[int, ...]) -> Any:
    def __hash__(self: Row) -> int:  # noqa: N807
        return hash(tuple(tuple.__getitem__(self, i) for i in positions))

    return __hash__


def _new_class(name: str, fields: tuple[str, ...], extra: dict[str, Any]) -> type[Row]:
    if len(set(fields)) != len(fields):
        raise ValueError(f"duplicate field names in {fields}")
    index = {f: i for i, f in enumerate(fields)}
    order = _HASH_ORDER.setdefault(frozenset(fields), fields)
    if order != fields and "__hash__" not in extra:
        extra = {**extra, "__hash__": _hasher(tuple(index[f] for f in order))}
    namespace: dict[str, Any] = {
        "__slots__": (),
        "__fields__": fields,
        "_fields": list(fields),
        "_index": index,
        "__getitem__": _item_getter(index),
        **extra,
    }
    # Field names win over tuple's and Row's methods (``row.count``, ``row.index``, as in
    # PyFlink, whose Row is no tuple); flinkwin calls its own methods through ``Row``.
    for i, field in enumerate(fields):
        if field.isidentifier() and not field.startswith("_"):
            namespace[field] = property(_field_getter(i))
    return type(name, (Row,), namespace)


def _item_getter(index: dict[str, int]) -> Any:
    """``Row.__getitem__`` for one schema, its field positions at hand (the common lookups,
    ``row["name"]`` and ``row[0]``, first)."""
    get = tuple.__getitem__

    def __getitem__(self: tuple[Any, ...], item: Any) -> Any:  # noqa: N807
        if type(item) is str:
            try:
                return get(self, index[item])
            except KeyError:
                raise UnknownFieldError(item) from None
        if type(item) is int or not isinstance(item, str):
            return get(self, item)
        position = index.get(item)  # a str subclass
        if position is None:
            raise UnknownFieldError(item)
        return get(self, position)

    return __getitem__


def _field_getter(index: int) -> Any:
    def get(self: tuple[Any, ...]) -> Any:
        return tuple.__getitem__(self, index)

    return get


def _rebuild(fields: tuple[str, ...], values: tuple[Any, ...]) -> Row:
    """Unpickling: no validation, the class is cached per schema."""
    klass = _RECORD_CLASSES.get(fields)
    return tuple.__new__(klass if klass is not None else record_class(fields), values)


def _rebuild_tuple(fields: tuple[str, ...], values: tuple[Any, ...]) -> Row:
    """Unpickling a ``Types.TUPLE`` element."""
    return tuple.__new__(tuple_class(fields), values)


def to_record(value: Any) -> Any:
    """Dicts and Row-like objects (``pyspark.sql.Row``) become Rows; anything else (tuples,
    Rows, scalars) is passed through unchanged."""
    if isinstance(value, Row):
        return value
    if isinstance(value, Mapping):
        return Row.from_mapping(value)
    fields = getattr(value, "__fields__", None)
    if isinstance(value, tuple) and fields is not None:
        return Row.of(tuple(fields), tuple(value))
    return value


def checked_reduce_result(result: Any, template: Any) -> Any:
    """A reduce result as the reduce function returned it (PyFlink hands that object to the
    window function and the next reduce call, a tuple staying a tuple), after checking that a
    tuple returned for named ``template`` rows has one value per field: a ``ReduceFunction``
    returns the type of its inputs, and a result of another width could not be written to the
    input's columns. A dict (or a pyspark Row) becomes a Row, as every dict element does
    (:func:`to_record`), unless the inputs are dicts themselves (a ``Types.MAP`` stream)."""
    if type(result) is tuple and isinstance(template, Row):
        fields = type(template).__fields__
        if fields is not None and len(result) != len(fields):
            raise TypeError(
                f"the reduce function returned {result!r} ({len(result)} values) for "
                f"elements of {len(fields)} fields {list(fields)}: a ReduceFunction "
                "returns the type of its inputs"
            )
    return result if isinstance(template, Mapping) else to_record(result)
