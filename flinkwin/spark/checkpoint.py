"""flinkwin's own small files inside a query's checkpoint directory.

Spark's checkpoint holds the offsets, commits and state of a query; flinkwin keeps a few more
facts next to them, under ``<checkpoint>/flinkwin/``: what must stay the same across restarts
(the pipeline's fingerprint, stable ids for the sinks' transactions, drawn window offsets).
They live in the checkpoint so that a restart from the same checkpoint sees the same values,
and a new checkpoint starts afresh, as Delta's ``txnAppId`` requires.

Files are small JSON documents written atomically (write to a temporary name, then rename), so
a driver killed mid-write leaves either the old document or the new one. Local paths (and
``file:`` URIs, FUSE mounts such as Databricks' ``/Volumes`` and ``/dbfs``) are written with
Python's own file functions; other URIs (``dbfs:``, ``s3a:``, ``abfss:``...) go through the
session's Hadoop ``FileSystem`` on a classic session.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

from pyspark.sql import SparkSession

#: The folder inside the checkpoint that holds flinkwin's files.
FOLDER = "flinkwin"


class CheckpointMetadataError(RuntimeError):
    """flinkwin's files in the checkpoint cannot be read or written."""


def local_path(location: str) -> str | None:
    """``location`` as a local file path, or None for a URI of another file system."""
    if location.startswith("file://"):
        return location[len("file://"):]
    if location.startswith("file:"):
        return location[len("file:"):]
    if "://" in location or (":" in location.split("/", 1)[0] and not os.path.isabs(location)):
        return None
    return location


class CheckpointStore:
    """Reads and atomically writes JSON documents under ``<location>/flinkwin/``."""

    def __init__(self, session: SparkSession | None, location: str) -> None:
        if not location:
            raise CheckpointMetadataError("a checkpoint location is required")
        self.session = session
        self.location = location.rstrip("/")
        self._local = local_path(self.location)

    def _path(self, name: str) -> str:
        base = self._local if self._local is not None else self.location
        return f"{base}/{FOLDER}/{name}"

    def read_json(self, name: str) -> dict[str, Any] | None:
        """The document ``name``, or None when it does not exist yet."""
        path = self._path(name)
        try:
            text = self._read_text(path)
            if text is None:
                return None
            data = json.loads(text)
        except (OSError, ValueError) as exc:
            raise CheckpointMetadataError(f"cannot read flinkwin's {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise CheckpointMetadataError(f"flinkwin's {path} is not a JSON object")
        return data

    def write_json(self, name: str, data: dict[str, Any]) -> None:
        """Write ``data`` as the document ``name`` atomically (temporary file, then rename)."""
        path = self._path(name)
        text = json.dumps(data, indent=2, sort_keys=True)
        try:
            if self._local is not None:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                _replace_local(path, text, f"{path}.{uuid.uuid4().hex}.tmp")
            else:
                self._hadoop_write(path, text)
        except OSError as exc:
            raise CheckpointMetadataError(f"cannot write flinkwin's {path}: {exc}") from exc

    # ------------------------------------------------------ Spark's files in the checkpoint
    def _spark_path(self, relative: str) -> str:
        base = self._local if self._local is not None else self.location
        return f"{base}/{relative}"

    def spark_listing(self, relative: str) -> list[str]:
        """The names in Spark's folder ``relative`` of the checkpoint (none when it is absent)."""
        path = self._spark_path(relative)
        try:
            if self._local is not None:
                return sorted(os.listdir(path)) if os.path.isdir(path) else []
            fs, jpath = self._hadoop(path)
            if not fs.exists(jpath):
                return []
            return sorted(str(status.getPath().getName()) for status in fs.listStatus(jpath))
        except OSError as exc:
            raise CheckpointMetadataError(f"cannot list Spark's {path}: {exc}") from exc

    def read_spark_file(self, relative: str) -> str | None:
        """The text of Spark's file ``relative``, or None when it does not exist."""
        path = self._spark_path(relative)
        try:
            return self._read_text(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise CheckpointMetadataError(f"cannot read Spark's {path}: {exc}") from exc

    def remove_spark_file(self, relative: str) -> None:
        """Delete Spark's file ``relative`` and the checksum Hadoop keeps next to it."""
        for path in (self._spark_path(relative), self._checksum(relative)):
            try:
                if self._local is not None:
                    if os.path.exists(path):
                        os.remove(path)
                else:
                    fs, jpath = self._hadoop(path)
                    fs.delete(jpath, False)
            except OSError as exc:
                raise CheckpointMetadataError(f"cannot delete Spark's {path}: {exc}") from exc

    def replace_spark_file(self, relative: str, text: str) -> None:
        """Replace Spark's file ``relative`` by ``text`` atomically; its stale checksum goes
        first (Hadoop reads a file without one unchecked, never against a wrong one)."""
        path = self._spark_path(relative)
        checksum = self._checksum(relative)
        try:
            if self._local is not None:
                if os.path.exists(checksum):
                    os.remove(checksum)
                _replace_local(path, text, f"{os.path.dirname(path)}/.{uuid.uuid4().hex}.tmp")
            else:
                fs, jpath = self._hadoop(checksum)
                fs.delete(jpath, False)
                self._hadoop_write(path, text)
        except OSError as exc:
            raise CheckpointMetadataError(f"cannot rewrite Spark's {path}: {exc}") from exc

    def _read_text(self, path: str) -> str | None:
        """The text of the file ``path`` (local or remote), or None when it does not exist."""
        if self._local is not None:
            if not os.path.exists(path):
                return None
            with open(path, encoding="utf-8") as f:
                return f.read()
        return self._hadoop_read(path)

    def _checksum(self, relative: str) -> str:
        folder, _, name = relative.rpartition("/")
        return self._spark_path(f"{folder}/.{name}.crc" if folder else f".{name}.crc")

    # ------------------------------------------------------------ remote file systems
    def _jvm(self) -> Any:
        jvm = getattr(self.session, "_jvm", None)
        if jvm is None:
            raise CheckpointMetadataError(
                f"checkpoint {self.location!r} is not a local path and this session has no "
                "JVM access (Spark Connect): use a local or mounted path (e.g. /Volumes/... "
                "or /dbfs/...) for the checkpoint"
            )
        return jvm

    def _hadoop(self, path: str) -> tuple[Any, Any]:
        jvm = self._jvm()
        conf = self.session._jsc.hadoopConfiguration()  # type: ignore[union-attr]
        jpath = jvm.org.apache.hadoop.fs.Path(path)
        return jpath.getFileSystem(conf), jpath

    def _hadoop_read(self, path: str) -> str | None:
        fs, jpath = self._hadoop(path)
        if not fs.exists(jpath):
            return None
        stream = fs.open(jpath)
        try:
            return str(self._jvm().org.apache.commons.io.IOUtils.toString(stream, "UTF-8"))
        finally:
            stream.close()

    def _hadoop_write(self, path: str, text: str) -> None:
        fs, jpath = self._hadoop(path)
        tmp = self._jvm().org.apache.hadoop.fs.Path(f"{path}.{uuid.uuid4().hex}.tmp")
        fs.mkdirs(jpath.getParent())
        out = fs.create(tmp, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        if fs.exists(jpath):
            fs.delete(jpath, False)
        if not fs.rename(tmp, jpath):
            raise OSError(f"rename of {tmp} to {path} failed")


def _replace_local(path: str, text: str, tmp: str) -> None:
    """Write ``text`` to the local file ``path`` atomically: to ``tmp`` first, then renamed."""
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


__all__ = ["FOLDER", "CheckpointMetadataError", "CheckpointStore", "local_path"]
