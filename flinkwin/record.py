"""Records: the elements user functions see, shaped like ``pyspark.sql.Row``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class Record(tuple):
    """An immutable record with named fields (a tuple subclass, like ``pyspark.sql.Row``).

    Supports ``r.field``, ``r["field"]``, ``r[0]`` and ``r.asDict()``. A Record equals a tuple of
    its values and a dict with the same fields, so expectations can be written either way.
    """

    __fields__: tuple[str, ...]

    def __new__(cls, fields: Sequence[str], values: Iterable[Any]) -> Record:
        rec = tuple.__new__(cls, values)
        rec.__fields__ = tuple(fields)
        if len(rec.__fields__) != tuple.__len__(rec):
            raise ValueError(f"Record has {len(rec.__fields__)} field names but {len(rec)} values")
        return rec

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Record:
        return cls(tuple(data.keys()), tuple(data.values()))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return tuple.__getitem__(self, self.__fields__.index(name))
        except ValueError:
            raise AttributeError(f"Record has no field {name!r}") from None

    def __getitem__(self, item: Any) -> Any:  # type: ignore[override]
        if isinstance(item, str):
            try:
                return tuple.__getitem__(self, self.__fields__.index(item))
            except ValueError:
                raise KeyError(item) from None
        return tuple.__getitem__(self, item)

    def asDict(self) -> dict[str, Any]:  # noqa: N802 (pyspark's name)
        return dict(zip(self.__fields__, self))

    as_dict = asDict

    def get(self, name: str, default: Any = None) -> Any:
        return self[name] if name in self.__fields__ else default

    def __contains__(self, item: object) -> bool:
        return item in self.__fields__

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
        return (Record, (self.__fields__, tuple(self)))


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
