"""The window stage's parallelism is flinkwin's (Flink's operator parallelism), not Spark's
200 default shuffle partitions: chosen at the first start, kept by the checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import run_stream, watermark, write_batches

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.spark.parallelism import SHUFFLE_PARTITIONS, stage_parallelism

BATCHES = [[{"user": "a", "ts": 1_000, "n": 1}, {"user": "b", "ts": 2_000, "n": 2}],
           [{"user": "a", "ts": 12_000, "n": 3}]]


def _state_partitions(checkpoint: Path) -> int:
    """The shuffle partitions Spark recorded for the query (its state partitions)."""
    text = (checkpoint / "offsets" / "0").read_text().splitlines()
    return int(json.loads(text[1])["conf"][SHUFFLE_PARTITIONS])


def _run(spark: Any, tmp_path: Path, name: str, parallelism: int | None = None) -> Path:
    source, checkpoint = tmp_path / f"{name}-in", tmp_path / f"{name}-chk"
    write_batches(source, BATCHES)

    def build(stream: Any) -> Any:
        result = (stream.assign_timestamps_and_watermarks(watermark(0))
                  .key_by("user").window(TumblingEventTimeWindows.of(Time.seconds(10)))
                  .sum("n"))
        return result if parallelism is None else result.set_parallelism(parallelism)

    run = run_stream(spark, source, checkpoint, "user string, ts long, n long", build)
    assert sorted((r["user"], r["n"]) for rows in run.main.values() for r in rows) == [
        ("a", 1), ("b", 2)]
    return checkpoint


@pytest.fixture
def spark_default_partitions(spark: Any) -> Any:
    """The shared session with Spark's own default of 200 shuffle partitions."""
    before = spark.conf.get(SHUFFLE_PARTITIONS)
    spark.conf.set(SHUFFLE_PARTITIONS, "200")
    yield spark
    spark.conf.set(SHUFFLE_PARTITIONS, before)


def test_a_default_session_runs_the_window_stage_at_spark_default_parallelism(
    spark_default_partitions: Any, tmp_path: Path
) -> None:
    """At Spark's default of 200 shuffle partitions, the stage runs in as many tasks as the
    session's default parallelism (2 cores here), and the session's setting is left as it was."""
    spark = spark_default_partitions
    checkpoint = _run(spark, tmp_path, "default")
    assert _state_partitions(checkpoint) == spark.sparkContext.defaultParallelism == 2
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "200"


def test_set_parallelism_chooses_the_stage_tasks_and_a_restart_keeps_the_checkpoints(
    spark_default_partitions: Any, tmp_path: Path
) -> None:
    spark = spark_default_partitions
    checkpoint = _run(spark, tmp_path, "explicit", parallelism=3)
    assert _state_partitions(checkpoint) == 3
    write_batches(tmp_path / "explicit-in", [[{"user": "b", "ts": 25_000, "n": 4}]], first=2)
    more = run_stream(
        spark, tmp_path / "explicit-in", checkpoint, "user string, ts long, n long",
        lambda s: s.assign_timestamps_and_watermarks(watermark(0)).key_by("user")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("n").set_parallelism(5))
    assert sorted((r["user"], r["n"]) for rows in more.main.values() for r in rows) == [
        ("a", 3)]
    partitions = [p.name for p in (checkpoint / "state" / "0").iterdir() if p.name.isdigit()]
    assert sorted(partitions) == ["0", "1", "2"]  # Spark kept the checkpoint's 3 partitions


def test_the_default_parallelism_is_capped_by_the_key_groups_and_spreads_them_evenly() -> None:
    class Context:
        def __init__(self, cores: int) -> None:
            self.defaultParallelism = cores

    class Session:
        def __init__(self, cores: int) -> None:
            self.sparkContext = Context(cores)

    assert stage_parallelism(Session(2), 16) == 2
    assert stage_parallelism(Session(64), 16) == 16
    assert stage_parallelism(Session(11), 16) == 10  # 100800 = 2^6 3^2 5^2 7: 11 does not divide
    assert stage_parallelism(Session(64), 1) == 1  # windowAll: one key group, one task
    assert stage_parallelism(Session(64), 16, requested=7) == 7
    with pytest.raises(ValueError, match="positive int"):
        stage_parallelism(Session(2), 16, requested=0)


def test_on_spark_connect_the_stage_is_sized_without_the_cores() -> None:
    """A Connect client reads no cores: ``spark.default.parallelism`` stands for them when set,
    else the session's own state partitions, capped by the key groups; never the session's 200
    for a stage of 16 key groups."""

    class Conf:
        def __init__(self, values: dict[str, str]) -> None:
            self.values = values

        def get(self, key: str, default: Any = None) -> Any:
            return self.values.get(key, "200" if key == SHUFFLE_PARTITIONS else default)

    class ConnectSession:
        def __init__(self, **values: str) -> None:
            self.conf = Conf({k.replace("_", "."): v for k, v in values.items()})

        @property
        def sparkContext(self) -> Any:  # noqa: N802
            raise RuntimeError("[JVM_ATTRIBUTE_NOT_SUPPORTED] sparkContext")

    assert stage_parallelism(ConnectSession(), 16) == 16
    assert stage_parallelism(ConnectSession(), 128) == 126  # a divisor of 100800
    assert stage_parallelism(ConnectSession(spark_sql_shuffle_partitions="4"), 16) == 4
    assert stage_parallelism(ConnectSession(spark_sql_shuffle_partitions="auto"), 16) == 16
    assert stage_parallelism(ConnectSession(spark_default_parallelism="8"), 16) == 8
    assert stage_parallelism(ConnectSession(), 16, requested=3) == 3


def test_a_parallelism_above_a_declared_max_parallelism_is_refused_when_the_stage_runs(
    spark: Any, fresh_env: Any,
) -> None:
    """Flink refuses the job at submission ("Vertex ...'s parallelism (8) is higher than the
    max parallelism (4). Please lower the parallelism or increase the max parallelism."), the
    setters being free in any order before; flinkwin refuses it when the stage runs or feeds
    another operator. flinkwin's default key groups are not a declared max parallelism."""
    df = spark.createDataFrame([("a", 1_000, 1), ("b", 2_000, 2)], "user string, ts long, n long")

    def counts(stream: Any) -> Any:
        return (stream.assign_timestamps_and_watermarks(watermark(0)).key_by("user")
                .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("n"))

    def total(result: Any) -> list[tuple[str, int]]:
        return sorted((r["user"], r["n"]) for r in result.toDF().collect())

    assert total(counts(DataStream(df)).set_parallelism(32)) == [("a", 1), ("b", 2)]
    result = counts(DataStream(df)).set_parallelism(8).set_max_parallelism(4)
    refused = r"'s parallelism \(8\) is higher than the max parallelism \(4\)\. Please lower"
    with pytest.raises(ValueError, match=r"^Vertex Window\(TumblingEventTimeWindows\(10000\), "
                       r"EventTimeTrigger\(\), sum\('n'\)\)" + refused):
        result.toDF()
    with pytest.raises(ValueError, match=refused):
        result.map(lambda row: row)
    assert total(result.set_max_parallelism(8)) == [("a", 1), ("b", 2)]

    fresh_env.set_max_parallelism(4)  # declared for the streams built from now on
    named = counts(DataStream(df)).name("counts").set_parallelism(8)
    with pytest.raises(ValueError, match=r"^Vertex counts" + refused):
        named.print()
    assert total(named.set_max_parallelism(16)) == [("a", 1), ("b", 2)]
    graph = counts(DataStream(df).union(DataStream(df))).set_parallelism(8)
    with pytest.raises(ValueError, match=refused):
        graph.toDF()
    assert total(graph.set_max_parallelism(8)) == [("a", 2), ("b", 4)]
