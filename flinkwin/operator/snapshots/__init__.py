"""Snapshots: how state becomes bytes and back, one module per form.

The pickled objects are written and read by the operator's :class:`StatePickler`: ``dumps``
(the Spark runtime passes cloudpickle's, which pickles classes and functions defined in
``__main__`` or a notebook by value) and an HMAC-SHA256 of the pickled bytes under the
pipeline's state key. Restoring verifies the HMAC before unpickling anything: a snapshot not
written under this key fails with :class:`SnapshotAuthenticationError` (see
``docs/reliability.md`` for what the key protects against). An object whose class cannot be
found under its pickled name (moved or renamed since the snapshot was taken) fails with
:class:`SnapshotRestoreError` naming the class.

What a stage stores in Spark's state is *sealed* (:meth:`StatePickler.seal`): whatever form the key
group's state takes (the object operator's snapshot, the columnar frames, a graph's snapshots of
its operators), one HMAC-SHA256 under the state key covers all of its bytes together with the
:class:`SnapshotBinding` it belongs to (the query's checkpoint, the stage, the key group).
:meth:`StatePickler.unseal` checks it before anything is decoded (no Arrow, no pickle), so columns
that hold pickled values (a stream without a declared type) are covered too.

The formats are listed (and versioned) in :mod:`~flinkwin.operator.snapshots.formats`; the
object window operator's snapshot is :mod:`~flinkwin.operator.snapshots.window`, the keyed
process operator's :mod:`~flinkwin.operator.snapshots.process`; the columnar state forms write
theirs in :mod:`flinkwin.operator.states`. The keys a snapshot holds are read back, and checked
against the operator's declared key type, by :mod:`~flinkwin.operator.snapshots.restored_keys`.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

#: How snapshots are read: on one thread (their buffers are small; a thread pool's hand-offs to
#: decompress them cost more than they save, and more still on a cold pool)
READ_OPTIONS = pa.ipc.IpcReadOptions(use_threads=False)


class SnapshotRestoreError(ValueError):
    """A snapshot cannot be restored: it refers to a class that is not importable here."""


class _Unpickler(pickle.Unpickler):
    """Names the class a snapshot refers to when it cannot be imported under that name."""

    def find_class(self, module: str, name: str) -> Any:
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError) as exc:
            raise SnapshotRestoreError(
                f"the snapshot refers to {module}.{name}, which cannot be imported here "
                f"({type(exc).__name__}: {exc}). Snapshots keep user objects (keys, "
                "accumulators, window elements, trigger and window state) pickled under their "
                f"class's module and name: make {module}.{name} importable again in the driver "
                "and the Python workers (e.g. leave an alias where the class used to be: "
                f"'from <new module> import <new name> as {name}' in {module}), or start the "
                "pipeline from a new checkpoint location"
            ) from exc


class SnapshotAuthenticationError(SnapshotRestoreError):
    """A snapshot's pickled objects were not written under this pipeline's state key."""


#: The key of a pipeline that configures none: anyone can compute the HMAC under it, so it
#: detects corruption and careless edits but authenticates nothing.
UNKEYED = b"flinkwin: no state key configured"
_MAGIC = b"FWS1"  # signed pickled objects: magic, HMAC-SHA256 (32 bytes), pickled bytes
_TAG = hashlib.sha256().digest_size
#: A sealed snapshot: magic, HMAC-SHA256 (32 bytes) over the binding and the snapshot, snapshot.
_SEAL = b"FWSEAL1:"
_SEAL_DOMAIN = b"flinkwin sealed snapshot 1"


@dataclass(frozen=True)
class SnapshotBinding:
    """What a sealed snapshot belongs to: the query's ``checkpoint`` (Spark's query id, kept in
    the checkpoint's metadata), the ``stage`` (its fingerprint, see
    ``flinkwin.spark.state_key.stage_fingerprint``) and the ``key_group``. A snapshot sealed
    under one binding is refused under any other."""

    checkpoint: str = ""
    stage: str = ""
    key_group: str = ""

    def message(self) -> bytes:
        """The binding as the HMAC's unambiguous prefix (each part length-prefixed)."""
        parts = [_SEAL_DOMAIN, *(p.encode() for p in (self.checkpoint, self.stage, self.key_group))]
        return b"".join(len(p).to_bytes(4, "big") + p for p in parts)

    def describe(self) -> str:
        return (f"checkpoint (query id) {self.checkpoint or '-'}, key group "
                f"{self.key_group or '-'}, stage {self.stage or '-'}")


@dataclass(frozen=True)
class StatePickler:
    """How the user objects of a snapshot become bytes and back.

    ``dumps`` pickles (``pickle.dumps`` when None; the Spark runtime gives cloudpickle's, so
    classes defined in ``__main__`` travel by value); the bytes are signed with HMAC-SHA256
    under ``key``, and :meth:`loads` checks the signature before unpickling. ``source`` names
    where the key came from, for error messages (never the key itself)."""

    key: bytes = field(default=UNKEYED, repr=False)
    dumps: Callable[[Any], bytes] | None = None
    source: str = "no state key configured"

    def sign(self, payload: bytes) -> bytes:
        return hmac.new(self.key, payload, hashlib.sha256).digest()

    def dump(self, value: Any) -> bytes:
        """``value`` pickled and signed."""
        if self.dumps is None:
            payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        else:
            payload = self.dumps(value)
        return _MAGIC + self.sign(payload) + payload

    def load(self, blob: bytes, what: str = "operator snapshot") -> Any:
        """The value :meth:`dump` wrote; refuses (before unpickling anything) bytes whose
        signature does not match under this key."""
        head = len(_MAGIC) + _TAG
        if len(blob) < head or not blob.startswith(_MAGIC):
            raise SnapshotAuthenticationError(
                f"{what}: the pickled objects carry no flinkwin signature; refusing to unpickle "
                "them (they were not written by this flinkwin)"
            )
        tag, payload = blob[len(_MAGIC):head], blob[head:]
        if not hmac.compare_digest(tag, self.sign(payload)):
            raise SnapshotAuthenticationError(
                f"{what}: HMAC-SHA256 check of its pickled objects failed under the state key "
                f"({self.source}); refusing to unpickle them. The state was modified outside "
                "flinkwin, or written under another key: restart with the key the checkpoint "
                "was written with, or start from a new checkpoint location"
            )
        return _Unpickler(io.BytesIO(payload)).load()

    def _seal_tag(self, data: bytes, binding: SnapshotBinding) -> bytes:
        mac = hmac.new(self.key, binding.message(), hashlib.sha256)
        mac.update(data)
        return mac.digest()

    def seal(self, data: bytes, binding: SnapshotBinding) -> bytes:
        """``data`` (a snapshot, any form) with one HMAC-SHA256 over it and ``binding``."""
        return _SEAL + self._seal_tag(data, binding) + data

    def unseal(self, sealed: bytes, binding: SnapshotBinding, what: str = "snapshot") -> bytes:
        """The snapshot :meth:`seal` sealed under ``binding``, checked before anything in it is
        decoded. A snapshot written before sealing (no seal) is returned as it is when no state
        key is configured (read as before: the pickled objects of the object form carry their
        own signature, under the public key) and refused under a configured key."""
        head = len(_SEAL) + _TAG
        if not sealed.startswith(_SEAL):
            if self.key == UNKEYED:
                return sealed
            raise SnapshotAuthenticationError(
                f"{what}: the stored state carries no flinkwin seal, while a state key is "
                f"configured ({self.source}); refusing to decode it. It was written by a "
                "flinkwin before sealed snapshots (which did not sign every state form), or "
                "modified outside flinkwin: start the pipeline from a new checkpoint location"
            )
        data = sealed[head:]
        if len(sealed) < head or not hmac.compare_digest(
            sealed[len(_SEAL):head], self._seal_tag(data, binding)
        ):
            raise SnapshotAuthenticationError(
                f"{what}: HMAC-SHA256 check of the stored state failed under the state key "
                f"({self.source}) for {binding.describe()}; refusing to decode it. The state "
                "was modified outside flinkwin, written under another key, or belongs to "
                "another checkpoint, stage or key group: restart with the key and checkpoint "
                "the state was written with, or start from a new checkpoint location"
            )
        return data
