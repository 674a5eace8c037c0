"""Records: the elements user functions see, shaped like ``pyspark.sql.Row``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class Record(tuple):
    """An immutable record with named fields (a tuple subclass, like ``pyspark.sql.Row``).

    Supports ``r.field``, ``r["field"]``, ``r[0]`` and ``r.asDict()``. A Record equals a tuple of
    its values and a dict with the same fields, so expectations can be written either way.
    Records of one schema share a generated subclass, so creating one costs a tuple.
    """

    __slots__ = ()
    __fields__: tuple[str, ...] = ()
    _index: dict[str, int] = {}

    def __new__(cls, fields: Sequence[str], values: Iterable[Any]) -> Record:
        klass = record_class(tuple(fields))
        rec = tuple.__new__(klass, values)
        if len(rec) != len(klass.__fields__):
            n = len(klass.__fields__)
            raise ValueError(f"Record has {n} field names but {len(rec)} values")
        return rec

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Record:
        return tuple.__new__(record_class(tuple(data.keys())), data.values())

    def __getattr__(self, name: str) -> Any:
        index = type(self)._index.get(name)
        if index is None:
            raise AttributeError(f"Record has no field {name!r}")
        return tuple.__getitem__(self, index)

    def __getitem__(self, item: Any) -> Any:  # type: ignore[override]
        if isinstance(item, str):
            index = type(self)._index.get(item)
            if index is None:
                raise KeyError(item)
            return tuple.__getitem__(self, index)
        return tuple.__getitem__(self, item)

    def asDict(self) -> dict[str, Any]:  # noqa: N802 (pyspark's name)
        return dict(zip(self.__fields__, self))

    as_dict = asDict

    def get(self, name: str, default: Any = None) -> Any:
        index = type(self)._index.get(name)
        return default if index is None else tuple.__getitem__(self, index)

    def replace(self, field: str, value: Any) -> Record:
        """A copy with ``field`` set to ``value``."""
        values = list(self)
        values[type(self)._index[field]] = value
        return tuple.__new__(type(self), values)

    def __contains__(self, item: object) -> bool:
        return item in type(self)._index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self.asDict() == dict(other)
        return tuple.__eq__(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in zip(self.__fields__, self))
        return f"Record({inner})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.__fields__, tuple(self)))


_RECORD_CLASSES: dict[tuple[str, ...], type[Record]] = {}


def record_class(fields: tuple[str, ...]) -> type[Record]:
    """The Record subclass for one schema (created once per field list)."""
    klass = _RECORD_CLASSES.get(fields)
    if klass is None:
        if len(set(fields)) != len(fields):
            raise ValueError(f"duplicate field names in {fields}")
        namespace = {
            "__slots__": (),
            "__fields__": fields,
            "_index": {f: i for i, f in enumerate(fields)},
        }
        klass = type("Record", (Record,), namespace)
        _RECORD_CLASSES[fields] = klass
    return klass


def _rebuild(fields: tuple[str, ...], values: tuple[Any, ...]) -> Record:
    """Unpickling: no validation, the class is cached per schema."""
    klass = _RECORD_CLASSES.get(fields)
    return tuple.__new__(klass if klass is not None else record_class(fields), values)


def to_record(value: Any) -> Any:
    """Dicts and Row-like objects become Records; anything else is passed through unchanged."""
    if isinstance(value, Record):
        return value
    if isinstance(value, Mapping):
        return Record.from_mapping(value)
    fields = getattr(value, "__fields__", None)
    if isinstance(value, tuple) and fields is not None:
        return Record(tuple(fields), tuple(value))
    return value
