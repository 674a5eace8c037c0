"""FileSink: each batch's rows appended to a folder of parquet/json/csv/orc/text files, once.

A batch is written by Spark into a hidden staging folder ``<path>/_flinkwin/<writer>/staging/
<batch>`` (Spark's usual layout, partition folders included), then committed by an atomic
marker ``<path>/_flinkwin/<writer>/commits/<batch>.json``, then its files are moved into
``<path>``. ``<writer>`` is the output's id kept in the checkpoint (a new checkpoint starts
batch ids at 0 again and gets a new id, so it never finds an old query's markers). A batch
re-run after a failure finds its marker and only finishes the moves a crash interrupted; a
staging folder without a marker is from an attempt that died before the commit and is
written afresh. Readers (``spark.read.parquet(path)``, pyarrow datasets) skip ``_flinkwin``
and see each batch's files once.
"""

from __future__ import annotations

import json
from typing import Any

from pyspark.sql import DataFrame

from .base import Sink, SinkContext
from .filesystem import HadoopFileSystem, LocalFileSystem, file_system
from .writer_ids import new_writer_id, writer_id

#: The hidden folder inside the output path that holds the commit protocol's files.
FOLDER = "_flinkwin"


class FileSink(Sink):
    """Appends each non-empty batch to ``path`` in ``format`` (parquet, json, csv, orc,
    text), exactly once: a replayed batch id adds nothing (see the module docstring).

    Needs a classic Spark session (files are committed through Hadoop's FileSystem). While a
    batch is being moved into place a reader may see part of its files; once the query has
    finished the batch, every file is there exactly once.
    """

    def __init__(
        self,
        path: str,
        format: str = "parquet",  # noqa: A002 (DataFrameWriter's name)
        partition_by: list[str] | None = None,
        **options: Any,
    ) -> None:
        self.path = path
        self.format = format
        self.partition_by = partition_by
        self.options = options
        self._fs: HadoopFileSystem | LocalFileSystem | None = None
        self._writer = new_writer_id()

    def open(self, context: SinkContext) -> None:
        missing = [c for c in self.partition_by or [] if c not in context.schema.fieldNames()]
        if missing:
            raise ValueError(
                f"FileSink({self.path!r}): partition column(s) {missing} are not in the "
                f"{context.label!r} output's columns {context.schema.fieldNames()}"
            )
        self._fs = file_system(context.session, self.path)
        self._writer = writer_id(context)

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        fs = self._fs or file_system(df.sparkSession, self.path)
        staging = fs.path(FOLDER, self._writer, "staging", str(batch_id))
        marker = fs.path(FOLDER, self._writer, "commits", f"{batch_id}.json")
        if not fs.exists(marker):
            if fs.exists(staging):
                fs.delete(staging)  # an attempt that died before its commit
            if df.isEmpty():
                return
            writer = df.write.mode("error").format(self.format).options(**self.options)
            if self.partition_by:
                writer = writer.partitionBy(*self.partition_by)
            writer.save(fs.uri(staging))
            files = fs.files_under(staging)
            fs.write_text(marker, json.dumps({"batch_id": batch_id, "files": files}))
        # commit done (now or by an earlier attempt): move what is still staged into place
        for name in fs.files_under(staging):
            fs.move(fs.path(FOLDER, self._writer, "staging", str(batch_id), name), fs.path(name))
        if fs.exists(staging):
            fs.delete(staging)

    def __repr__(self) -> str:
        return f"FileSink({self.path!r}, format={self.format!r})"


__all__ = ["FileSink"]
