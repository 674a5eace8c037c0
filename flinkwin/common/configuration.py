"""``Configuration``: PyFlink's key/value configuration, accepted and recorded.

A port keeps ``StreamExecutionEnvironment.get_execution_environment(config)`` and
``config.set_string(...)`` lines; the values are recorded (read them back with the getters)
and change nothing: Spark's settings are the SparkSession's.
"""

from __future__ import annotations

from typing import Any


class Configuration:
    """Keys to string values, as Flink keeps them (typed getters parse them back)."""

    def __init__(self, other: Configuration | None = None) -> None:
        self._data: dict[str, str] = {} if other is None else dict(other._data)

    def set_string(self, key: str, value: str) -> Configuration:
        self._data[key] = str(value)
        return self

    def get_string(self, key: str, default_value: str) -> str:
        return self._data.get(key, default_value)

    def set_integer(self, key: str, value: int) -> Configuration:
        return self.set_string(key, str(int(value)))

    def get_integer(self, key: str, default_value: int) -> int:
        return int(self._data[key]) if key in self._data else default_value

    def set_float(self, key: str, value: float) -> Configuration:
        return self.set_string(key, repr(float(value)))

    def get_float(self, key: str, default_value: float) -> float:
        return float(self._data[key]) if key in self._data else default_value

    def set_boolean(self, key: str, value: bool) -> Configuration:
        return self.set_string(key, "true" if value else "false")

    def get_boolean(self, key: str, default_value: bool) -> bool:
        return self._data[key].lower() == "true" if key in self._data else default_value

    def contains_key(self, key: str) -> bool:
        return key in self._data

    def remove_config(self, key: str) -> bool:
        return self._data.pop(key, None) is not None

    def add_all(self, other: Configuration) -> Configuration:
        self._data.update(other._data)
        return self

    def key_set(self) -> set[str]:
        return set(self._data)

    def to_dict(self) -> dict[str, str]:
        return dict(self._data)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Configuration) and other._data == self._data

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._data.items())))

    def __repr__(self) -> str:
        return f"Configuration({self._data!r})"


__all__ = ["Configuration"]
