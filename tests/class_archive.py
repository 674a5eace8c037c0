"""A JVM class-data archive (AppCDS) of Spark's classes for the Spark processes the tests start.

Every Spark JVM a test starts (crash-test drivers, job and user-script drivers, notebook
kernels...) otherwise loads, parses and verifies some 13,000 classes from Spark's jars: about
half of a driver's start-up CPU. The archive holds them ready to map. It is made once per venv
(in the temporary directory), in the background when a test run begins (this module run as a
script: a small flinkwin query in a JVM that writes the archive at its exit), then named in
``SPARK_SUBMIT_OPTS`` (:mod:`jvm_options`). A JVM whose class path or Java differs from the
archive's ignores it (its warning switched off) and loads the classes as usual: the archive
only saves time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: the options that make a JVM use the archive, quietly when it cannot
USE = "-XX:SharedArchiveFile={} -Xlog:cds=off -Xlog:cds+dynamic=off"


_path: list[Path | None] = []


def path() -> Path | None:
    """The archive's file for this venv, PySpark and Java (None: no Java or no PySpark)."""
    if not _path:
        _path.append(_locate())
    return _path[0]


def _locate() -> Path | None:
    java = shutil.which("java")
    try:
        import pyspark
    except ImportError:
        return None
    if java is None:
        return None
    real = os.path.realpath(java)
    key = (f"{sys.prefix} {pyspark.__version__} {pyspark.__file__} {real} {os.stat(real).st_mtime} "
           f"{os.environ.get('JAVA_HOME')}")
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"flinkwin-tests-classes-{digest}.jsa"


def start() -> None:
    """Make the archive in the background unless it exists or another process makes it."""
    target = path()
    if target is None or target.exists():
        return
    lock = target.with_suffix(".lock")
    with contextlib.suppress(OSError):  # a maker killed on the way leaves its lock behind
        if time.time() - lock.stat().st_mtime > 600:
            lock.unlink()
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:  # another test process is making it (or the venv is read-only)
        return
    subprocess.Popen([sys.executable, __file__, str(target), str(lock)],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                     start_new_session=True)


def _make(target: Path, lock: Path) -> None:
    """Run a small windowed query to a file sink in a JVM that dumps its classes at exit, then
    move the archive into place (a partial one never becomes ``target``)."""
    partial = target.with_suffix(f".{os.getpid()}.partial")
    os.environ["SPARK_SUBMIT_OPTS"] = (
        f"-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ArchiveClassesAtExit={partial} "
        "-Xlog:cds=off -Xlog:cds+dynamic=off")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    gateway: Any = None
    try:
        from pyspark.sql import SparkSession

        from flinkwin import Time, TumblingEventTimeWindows
        from flinkwin.datastream import DataStream
        from flinkwin.sinks import FileSink
        from flinkwin.watermark import WatermarkStrategy

        spark = (SparkSession.builder.master("local[2]").appName("flinkwin-tests-classes")
                 .config("spark.sql.shuffle.partitions", "2")
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").getOrCreate())
        gateway = spark.sparkContext._gateway
        with tempfile.TemporaryDirectory() as work:
            source = Path(work, "in")
            source.mkdir()
            for batch in range(2):
                (source / f"{batch}.json").write_text(
                    "".join(f'{{"user": "u{i % 3}", "ts": {batch * 5000 + i}, "v": {i}}}\n'
                            for i in range(20)))
            clicks = spark.readStream.schema("user string, ts long, v long").option(
                "maxFilesPerTrigger", 1).json(str(source))
            strategy = WatermarkStrategy.forBoundedOutOfOrderness(1000).withTimestampAssigner("ts")
            (DataStream(clicks).assignTimestampsAndWatermarks(strategy).keyBy("user")
             .window(TumblingEventTimeWindows.of(Time.seconds(2))).sum("v", with_window=True)
             .start(main=FileSink(str(Path(work, "out"))),
                    checkpoint_location=str(Path(work, "ck")),
                    trigger={"availableNow": True}).awaitTermination())
            spark.range(100).selectExpr("id % 3 AS k").groupBy("k").count().collect()
        spark.stop()
        # the JVM exits (writing the archive) when its standard input closes
        gateway.proc.stdin.close()
        gateway.proc.wait()
        if partial.exists():
            partial.replace(target)
    finally:
        if gateway is not None and gateway.proc.poll() is None:
            gateway.proc.kill()
            gateway.proc.wait()
        partial.unlink(missing_ok=True)
        lock.unlink(missing_ok=True)


if __name__ == "__main__":
    _make(Path(sys.argv[1]), Path(sys.argv[2]))
