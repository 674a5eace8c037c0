"""Every snapshot format flinkwin has released, and how each is read: the one list a new format
is added to.

A stage keeps, per key group, ``(key_groups, snapshot, version)`` in Spark's state. The
``snapshot`` is sealed (:meth:`flinkwin.operator.snapshots.StatePickler.seal`; one written before
seals existed has none and is read as it is without a state key) and names its format: the
``flinkwin.format`` entry of its Arrow schema's metadata. A graph's snapshot holds its
operators' own snapshots, each of a format listed here too (an interval join's is its signed
pickle behind the magic ``FWIJ1``).

**The rule.** A released format is never changed and never dropped. A change to what a state
writes gets a new format name, written from then on; the old name stays in :data:`RELEASED`
with ``written=False`` and a reader (converting into the new form where needed). So a
checkpoint written by an earlier flinkwin restarts under a later one, and a flinkwin that meets
a format it does not list (written by a later flinkwin) refuses it, naming the format, before
decoding anything. The restart check (``flinkwin.spark.restart``) accepts a checkpoint whose
recorded formats are all :func:`readable`.
"""

from __future__ import annotations

from dataclasses import dataclass

# the state forms (a window stage's state kinds, see flinkwin.operator.states, and a graph's
# parts)
OBJECT, COLUMNAR, PANES, SESSIONS, LISTS = "object", "columnar", "panes", "sessions", "lists"
CONTINUOUS, GRAPH, PROCESS, INTERVAL_JOIN = "continuous", "graph", "keyed-process", "interval-join"


@dataclass(frozen=True)
class Format:
    """One released snapshot format."""

    #: its ``flinkwin.format`` (an interval join's: its magic)
    name: str
    #: the state form it holds
    form: str
    #: whether this flinkwin writes it (False: read only, for checkpoints of earlier versions)
    written: bool
    #: the first commit of flinkwin that wrote it
    since: str
    #: how this flinkwin reads it
    reader: str


RELEASED: tuple[Format, ...] = (
    Format("2", OBJECT, False, "ec6eb6f", "flinkwin.operator.snapshots.window.restore_operator; "
           "its pickled objects carry no signature: read only without a state key"),
    Format("3", OBJECT, False, "ec2e85a", "flinkwin.operator.snapshots.window.restore_operator (no "
           "firing records: it was written before firing metadata existed)"),
    Format("4", OBJECT, True, "2a0203b", "flinkwin.operator.snapshots.window.restore_operator"),
    Format("columnar-1", COLUMNAR, True, "a71f1e4", "ColumnarAggregation.restore"),
    Format("panes-1", PANES, True, "5f1eb4f", "PaneAggregation.restore"),
    Format("sessions-1", SESSIONS, True, "1898b5e", "SessionAggregation.restore"),
    Format("element-lists-1", LISTS, True, "2bf191d", "ColumnarLists.restore"),
    Format("continuous-1", CONTINUOUS, True, "d663d3d", "ContinuousAggregation.restore"),
    Format("graph-1", GRAPH, True, "637e33a", "GraphOperator.restore"),
    Format("keyed-process-1", PROCESS, True, "f8e9cb1",
           "flinkwin.operator.snapshots.process.restore_process_operator"),
    Format("FWIJ1", INTERVAL_JOIN, True, "233284a", "IntervalJoinOperator.restore"),
)
_BY_NAME = {f.name: f for f in RELEASED}


class UnknownFormatError(ValueError):
    """A snapshot of a format this flinkwin does not read."""


def written(form: str) -> str:
    """The format this flinkwin writes for ``form``."""
    (name,) = [f.name for f in RELEASED if f.form == form and f.written]
    return name


def readable(form: str) -> tuple[str, ...]:
    """Every format of ``form`` this flinkwin reads (the written one among them)."""
    return tuple(f.name for f in RELEASED if f.form == form)


def form_of(name: str, what: str = "snapshot") -> str:
    """The state form a snapshot of format ``name`` holds; refuses a format not released by
    this or an earlier flinkwin."""
    found = _BY_NAME.get(name)
    if found is None:
        raise UnknownFormatError(
            f"{what}: format {name!r} is not one this flinkwin reads "
            f"({', '.join(repr(f.name) for f in RELEASED)}); it was written by a later "
            "flinkwin (restart with that version) or is not a flinkwin snapshot"
        )
    return found.form


def check(name: str, form: str, what: str = "snapshot") -> Format:
    """The released format ``name``, which must hold ``form``."""
    actual = form_of(name, what)
    if actual != form:
        raise ValueError(f"{what}: format {name!r} holds {actual} state, not {form}")
    return _BY_NAME[name]


__all__ = [
    "RELEASED",
    "Format",
    "UnknownFormatError",
    "check",
    "form_of",
    "readable",
    "written",
]
