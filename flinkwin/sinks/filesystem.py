"""The few file-system operations the file sink's commit protocol needs, done through the
session's Hadoop ``FileSystem``, so a path means exactly what it means to Spark's writer
(local, ``dbfs:``, ``s3a:``, ``abfss:``...)."""

from __future__ import annotations

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


def _hidden(name: str) -> bool:
    return name.startswith(".") or (name.startswith("_") and "=" not in name)


__all__ = ["FileSystemUnavailableError", "HadoopFileSystem"]
