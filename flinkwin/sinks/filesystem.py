"""The few file-system operations the file sink's commit protocol needs, done through the
session's Hadoop ``FileSystem``, so a path means exactly what it means to Spark's writer
(local, ``dbfs:``, ``s3a:``, ``abfss:``...). Without JVM access (Spark Connect) a local or
mounted path is handled with Python's own file functions instead (:func:`file_system`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession


class FileSystemUnavailableError(RuntimeError):
    """The session gives no access to Hadoop's FileSystem (Spark Connect)."""


class HadoopFileSystem:
    """Paths under one root, handled by the Hadoop ``FileSystem`` that Spark writes them with."""

    def __init__(self, session: SparkSession, root: str) -> None:
        jvm = getattr(session, "_jvm", None)
        if jvm is None:
            raise FileSystemUnavailableError(
                "this session has no JVM access (Spark Connect): the file sink commits batches "
                "by renaming files, which needs a classic Spark session"
            )
        self._jvm = jvm
        conf = session._jsc.hadoopConfiguration()  # type: ignore[attr-defined]
        jroot = jvm.org.apache.hadoop.fs.Path(root)
        self._fs = jroot.getFileSystem(conf)
        self.root = self._fs.makeQualified(jroot)

    def path(self, *parts: str) -> Any:
        """The Hadoop path ``root/part/part...``."""
        result = self.root
        for part in parts:
            for name in part.split("/"):
                result = self._jvm.org.apache.hadoop.fs.Path(result, name)
        return result

    def uri(self, path: Any) -> str:
        """``path`` as Spark's writer takes it."""
        return str(path.toString())

    def exists(self, path: Any) -> bool:
        return bool(self._fs.exists(path))

    def delete(self, path: Any) -> None:
        self._fs.delete(path, True)

    def files_under(self, folder: Any) -> list[str]:
        """Data files below ``folder`` as relative ``a/b/name`` paths, leaving out hidden names
        (``_SUCCESS``, ``.crc``...), as Spark's readers do."""
        if not self._fs.exists(folder):
            return []
        found = []
        listing = self._fs.listFiles(folder, True)
        while listing.hasNext():
            path = listing.next().getPath()
            names = []
            while not path.equals(folder):
                names.append(str(path.getName()))
                path = path.getParent()
            if not any(_hidden(name) for name in names):
                found.append("/".join(reversed(names)))
        return sorted(found)

    def move(self, source: Any, target: Any) -> None:
        """Rename ``source`` to ``target``, creating the target's folder."""
        self._fs.mkdirs(target.getParent())
        if not self._fs.rename(source, target):
            raise OSError(f"rename of {source} to {target} failed")

    def write_text(self, path: Any, text: str) -> None:
        """Write a small file atomically: a hidden temporary file, then a rename."""
        tmp = self._jvm.org.apache.hadoop.fs.Path(path.getParent(), f".{path.getName()}.tmp")
        self._fs.mkdirs(path.getParent())
        out = self._fs.create(tmp, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        if not self._fs.rename(tmp, path):
            raise OSError(f"rename of {tmp} to {path} failed")


class LocalFileSystem:
    """The same operations on a local (or mounted) path with Python's file functions: used
    where the session has no JVM (Spark Connect, whose foreachBatch runs on the server)."""

    def __init__(self, root: str) -> None:
        self.root = Path(root).absolute()

    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*[name for part in parts for name in part.split("/")])

    def uri(self, path: Path) -> str:
        return str(path)

    def exists(self, path: Path) -> bool:
        return path.exists()

    def delete(self, path: Path) -> None:
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()

    def files_under(self, folder: Path) -> list[str]:
        if not folder.exists():
            return []
        found = []
        for file in folder.rglob("*"):
            if file.is_file():
                names = file.relative_to(folder).parts
                if not any(_hidden(name) for name in names):
                    found.append("/".join(names))
        return sorted(found)

    def move(self, source: Path, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)

    def write_text(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".{path.name}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def file_system(session: SparkSession, root: str) -> HadoopFileSystem | LocalFileSystem:
    """Hadoop's FileSystem on a classic session; Python's own for a local or mounted path on a
    session without JVM access (Spark Connect); otherwise a clear error."""
    if getattr(session, "_jvm", None) is not None:
        return HadoopFileSystem(session, root)
    from flinkwin.spark.checkpoint import local_path  # flinkwin.spark imports the sinks

    local = local_path(root)
    if local is None:
        raise FileSystemUnavailableError(
            f"FileSink({root!r}): this session has no JVM access (Spark Connect), so only a "
            "local or mounted path (e.g. /Volumes/... or /dbfs/...) can be committed exactly "
            "once; use such a path or a DeltaSink"
        )
    return LocalFileSystem(local)


def _hidden(name: str) -> bool:
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


__all__ = ["FileSystemUnavailableError", "HadoopFileSystem", "LocalFileSystem", "file_system"]
