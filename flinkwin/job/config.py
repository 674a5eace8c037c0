"""A job's settings: from a JSON config file and the command line (the command line wins).

Everything is checked before Spark starts, and every problem is a :class:`JobConfigError`
naming the setting, so a mistyped sink or trigger fails the job at once instead of after the
cluster came up (or worse, writing somewhere else).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from flinkwin.sinks import ConsoleSink, DeltaSink, DeltaUpsertSink, FileSink, Sink, as_sink
from flinkwin.sinks.resolve import FILE_FORMATS

DELTA_ENGINES = ("auto", "spark", "deltalake")
CONFIG_KEYS = (
    "module", "params", "checkpoint", "trigger", "sinks", "delta_engine", "master", "remote",
    "conf", "timeout_seconds", "pickle_by_value",
)


class JobConfigError(ValueError):
    """A job setting is missing, unknown or malformed (the message names it)."""


@dataclass(frozen=True)
class JobConfig:
    """What ``python -m flinkwin.job`` runs (see ``docs/deployment.md``).

    ``module`` is ``"package.module"``, ``"package.module:function"`` or a ``.py`` file path
    (optionally ``:function``), the function defaulting to ``build``. ``sinks`` maps every
    output's name (``main``, a side output's name, or ``<query>.<output>`` when the module
    builds several queries) to a sink spec (:func:`sink_from_spec`). ``trigger`` is one of
    Spark's triggers as a dict: ``{"availableNow": True}``, ``{"once": True}`` or
    ``{"processingTime": "1 minute"}``. ``timeout_seconds`` stops the queries after that long
    (a processing-time job otherwise runs until stopped or failed).
    """

    module: str
    checkpoint: str
    sinks: Mapping[str, Any]
    trigger: Mapping[str, Any] = field(default_factory=lambda: {"availableNow": True})
    params: Mapping[str, Any] = field(default_factory=dict)
    delta_engine: str = "auto"
    master: str | None = None
    remote: str | None = None
    conf: Mapping[str, str] = field(default_factory=dict)
    timeout_seconds: float | None = None
    pickle_by_value: bool = False

    @property
    def waits_for_end(self) -> bool:
        """True when the queries stop by themselves (availableNow, once)."""
        return "processingTime" not in self.trigger


def parse_trigger(value: Any) -> dict[str, Any]:
    """A Spark trigger from ``"availableNow"``, ``"once"``, ``"processingTime=30 seconds"`` or
    a dict with exactly one of those keys."""
    if isinstance(value, str):
        name, eq, interval = value.partition("=")
        name = name.strip()
        if name in ("availableNow", "once") and not eq:
            return {name: True}
        if name == "processingTime" and interval.strip():
            return {"processingTime": interval.strip()}
        raise JobConfigError(
            f"trigger {value!r}: use 'availableNow', 'once' or 'processingTime=<interval>' "
            "(e.g. 'processingTime=1 minute')"
        )
    if not isinstance(value, Mapping) or len(value) != 1:
        raise JobConfigError(
            f"trigger {value!r}: a dict with exactly one of availableNow, once, processingTime"
        )
    ((name, arg),) = value.items()
    if name in ("availableNow", "once"):
        if arg is not True:
            raise JobConfigError(f"trigger {{{name!r}: {arg!r}}}: the value must be true")
        return {name: True}
    if name == "processingTime":
        if not isinstance(arg, str) or not _INTERVAL.match(arg):
            raise JobConfigError(
                f"trigger processingTime={arg!r}: give an interval such as '30 seconds'"
            )
        return {name: arg}
    if name == "continuous":
        raise JobConfigError(
            "trigger continuous is not supported: Spark's continuous processing runs no "
            "stateful operators, and a window stage is one (use processingTime)"
        )
    raise JobConfigError(f"unknown trigger {name!r}: use availableNow, once or processingTime")


_INTERVAL = re.compile(r"^\s*\d+(\.\d+)?\s*[a-zA-Z]+\s*$")


def sink_from_spec(spec: Any, *, delta_engine: str = "auto") -> Sink:
    """A sink from a spec string or dict.

    Strings: ``delta:<path>``, ``delta-table:<catalog.schema.table>``, ``delta-upsert:<path>``,
    ``delta-upsert-table:<catalog.schema.table>``, ``<format>:<path>``
    (format one of parquet, json, csv, orc, text) and ``console``. Dicts: ``{"format":
    "delta", "path" or "table": ..., "engine", "partition_by", "app_id",
    "storage_options"}``, ``{"format": "delta-upsert"``, the same keys plus ``"keys"`` and
    ``"replacing_trigger"}``, ``{"format": "parquet", "path": ..., "partition_by", "options":
    {...}}``, ``{"format": "console"}``. A job runs in its own process, so ``memory`` sinks
    are refused."""
    if isinstance(spec, str):
        if spec.partition(":")[0] == "memory":
            raise JobConfigError(
                f"sink {spec!r}: a memory sink lives in the job's process and is gone when it "
                "ends; write to Delta or files"
            )
        try:
            return as_sink(spec, delta_engine=_engine(delta_engine))
        except ValueError as error:
            raise JobConfigError(f"sink {spec!r}: {error}") from None
    if isinstance(spec, Mapping):
        return _sink_from_dict(dict(spec), delta_engine)
    raise JobConfigError(f"sink {spec!r}: give a string such as 'delta:/path' or a dict")


def _sink_from_dict(spec: dict[str, Any], delta_engine: str) -> Sink:
    kind = spec.pop("format", None)
    allowed: tuple[str, ...]
    if kind == "delta":
        allowed = ("path", "table", "engine", "partition_by", "app_id", "storage_options")
    elif kind == "delta-upsert":
        allowed = ("path", "table", "engine", "partition_by", "app_id", "storage_options",
                   "keys", "replacing_trigger")
    elif kind in FILE_FORMATS:
        allowed = ("path", "partition_by", "options")
    elif kind == "console":
        allowed = ()
    else:
        raise JobConfigError(
            f"sink format {kind!r}: use delta, delta-upsert, console or one of "
            f"{', '.join(FILE_FORMATS)}"
        )
    unknown = sorted(set(spec) - set(allowed))
    if unknown:
        raise JobConfigError(
            f"{kind} sink: unknown key(s) {unknown}; allowed: {', '.join(allowed) or 'none'}"
        )
    try:
        if kind == "delta":
            engine = _engine(spec.pop("engine", delta_engine))
            return DeltaSink(engine=engine, **spec)  # type: ignore[arg-type]
        if kind == "delta-upsert":
            engine = _engine(spec.pop("engine", delta_engine))
            return DeltaUpsertSink(engine=engine, **spec)  # type: ignore[arg-type]
        if kind == "console":
            return ConsoleSink()
        if "path" not in spec:
            raise JobConfigError(f"{kind} sink: 'path' is required")
        options = spec.pop("options", {})
        if not isinstance(options, Mapping):
            raise JobConfigError(f"{kind} sink: 'options' must be a dict")
        return FileSink(spec["path"], format=kind, partition_by=spec.get("partition_by"),
                        **options)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, JobConfigError):
            raise
        raise JobConfigError(f"{kind} sink {spec}: {exc}") from exc


def _engine(value: Any) -> str:
    if value not in DELTA_ENGINES:
        raise JobConfigError(f"Delta engine {value!r}: use one of {', '.join(DELTA_ENGINES)}")
    return str(value)


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m flinkwin.job`` / ``flinkwin-job``."""
    p = argparse.ArgumentParser(
        prog="flinkwin-job",
        description="Run a flinkwin pipeline module as a streaming job: build its queries, "
        "write every output to its sink, wait for the end (availableNow, once) or run until "
        "stopped (processingTime).",
        epilog="Settings come from --config (JSON) and the command line; the command line "
        "wins. See docs/deployment.md.",
    )
    p.add_argument("--config", help="a JSON file with any of: " + ", ".join(CONFIG_KEYS))
    p.add_argument("--module", help="package.module[:function] or file.py[:function] "
                   "(function default: build)")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter for the module's build function (repeatable)")
    p.add_argument("--sink", action="append", default=[], metavar="OUTPUT=SPEC",
                   help="an output's sink: delta:PATH, delta-table:NAME, parquet:PATH, ..., "
                   "console (repeatable; every output needs one)")
    p.add_argument("--checkpoint", help="the checkpoint location (one folder per query below "
                   "it when the module builds several)")
    p.add_argument("--trigger", help="availableNow (default), once, processingTime=INTERVAL")
    p.add_argument("--delta-engine", choices=DELTA_ENGINES,
                   help="engine of delta sinks given as strings (default auto)")
    p.add_argument("--master", help="Spark master for a new classic session (e.g. local[2])")
    p.add_argument("--remote", help="Spark Connect URL (sc://host:port)")
    p.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="a Spark configuration for the session (repeatable)")
    p.add_argument("--timeout-seconds", type=float,
                   help="stop the queries after this long (default: never)")
    p.add_argument("--pickle-by-value", action="store_true", default=None,
                   help="ship the module's code inside the pickled functions (for a module "
                   "Spark's Python workers cannot import, e.g. on Spark Connect)")
    return p


def parse_args(argv: Sequence[str] | None = None) -> JobConfig:
    """The job's settings from the command line (and its ``--config`` file).
    Raises :class:`JobConfigError` for any bad setting."""
    args = parser().parse_args(argv)
    values: dict[str, Any] = _read_config(args.config) if args.config else {}
    for key in ("module", "checkpoint", "trigger", "delta_engine", "master", "remote",
                "timeout_seconds", "pickle_by_value"):
        given = getattr(args, key)
        if given is not None:
            values[key] = given
    for key, pairs in (("params", args.param), ("sinks", args.sink), ("conf", args.conf)):
        merged = dict(_mapping(values.get(key, {}), key))
        merged.update(_pairs(pairs, f"--{'sink' if key == 'sinks' else key.rstrip('s')}"))
        values[key] = merged
    return build_config(values)


def build_config(values: Mapping[str, Any]) -> JobConfig:
    """A checked :class:`JobConfig` from a config document's keys."""
    unknown = sorted(set(values) - set(CONFIG_KEYS))
    if unknown:
        raise JobConfigError(f"unknown setting(s) {unknown}; known: {', '.join(CONFIG_KEYS)}")
    module = values.get("module")
    if not isinstance(module, str) or not module.strip():
        raise JobConfigError("no pipeline module: give --module package.module[:function]")
    checkpoint = values.get("checkpoint")
    if not isinstance(checkpoint, str) or not checkpoint.strip():
        raise JobConfigError(
            "no checkpoint location: give --checkpoint (a job restarts from it; without one "
            "a restart would recompute and write everything again)"
        )
    sinks = _mapping(values.get("sinks", {}), "sinks")
    if not sinks:
        raise JobConfigError("no sinks: give --sink main=delta:/path (one per output)")
    engine = _engine(values.get("delta_engine", "auto"))
    for name, spec in sinks.items():
        try:
            sink_from_spec(spec, delta_engine=engine)
        except JobConfigError as exc:
            raise JobConfigError(f"output {name!r}: {exc}") from None
    if values.get("master") and values.get("remote"):
        raise JobConfigError("give at most one of master and remote")
    timeout = values.get("timeout_seconds")
    if timeout is not None and (not isinstance(timeout, (int, float)) or timeout <= 0):
        raise JobConfigError(f"timeout_seconds={timeout!r}: must be a positive number")
    by_value = values.get("pickle_by_value", False)
    if not isinstance(by_value, bool):
        raise JobConfigError(f"pickle_by_value={by_value!r}: must be true or false")
    return JobConfig(
        module=module.strip(),
        checkpoint=checkpoint.strip(),
        sinks=dict(sinks),
        trigger=parse_trigger(values.get("trigger", {"availableNow": True})),
        params=dict(_mapping(values.get("params", {}), "params")),
        delta_engine=engine,
        master=values.get("master"),
        remote=values.get("remote"),
        conf={k: str(v) for k, v in _mapping(values.get("conf", {}), "conf").items()},
        timeout_seconds=None if timeout is None else float(timeout),
        pickle_by_value=by_value,
    )


def _read_config(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise JobConfigError(f"cannot read the config file {path!r}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise JobConfigError(f"the config file {path!r} is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise JobConfigError(f"the config file {path!r} must hold a JSON object")
    return doc


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise JobConfigError(f"{what} must be an object of names to values, got {value!r}")
    return value


def _pairs(items: Sequence[str], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise JobConfigError(f"{option} {item!r}: expected NAME=VALUE")
        out[key.strip()] = value
    return out


__all__ = [
    "DELTA_ENGINES",
    "JobConfig",
    "JobConfigError",
    "build_config",
    "parse_args",
    "parse_trigger",
    "parser",
    "sink_from_spec",
]
