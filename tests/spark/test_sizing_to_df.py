"""A flinkwin stage is sized whoever starts the query: Spark's own ``writeStream...start()`` /
``toTable()`` on ``result.toDF()`` runs the stage in flinkwin's number of state partitions, in
a session left at Spark's default 200, while the user's own upstream shuffles keep the
session's setting and the session is left exactly as it was (flinkwin.spark.sizing)."""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F
from spark_scenarios import watermark, write_batches

import flinkwin
from flinkwin import DataStream, OutputTag, Time, TumblingEventTimeWindows, Types
from flinkwin.datastream.graph_stream import GraphResultStream
from flinkwin.spark.parallelism import SHUFFLE_PARTITIONS
from flinkwin.spark.restart import IncompatibleRestartError
from flinkwin.spark.sizing import (
    STATE_PARTITIONS,
    UnsizedStageWarning,
    session_state_partitions,
    state_partitions,
)

SCHEMA = "user string, ts long, n long"
USERS = [f"u{i}" for i in range(6)]
# three micro-batches (one file each); the watermark (no delay) fires [0, 10) after the
# second and [10, 20) after the third (and its no-data batch)
BATCHES = [
    [{"user": u, "ts": 1_000 + i, "n": i + 1} for i, u in enumerate(USERS)],
    [{"user": u, "ts": 12_000, "n": 10} for u in USERS[:3]],
    [{"user": "u0", "ts": 25_000, "n": 100}],
]


@pytest.fixture
def spark_default_partitions(spark: Any) -> Iterator[Any]:
    """The shared session at Spark's own default of 200 shuffle partitions, the state
    partitions unset (as in a session nobody tuned)."""
    before = spark.conf.get(SHUFFLE_PARTITIONS)
    spark.conf.set(SHUFFLE_PARTITIONS, "200")
    assert STATE_PARTITIONS not in spark.conf.getAll
    yield spark
    spark.conf.set(SHUFFLE_PARTITIONS, before)


def _stream(spark: Any, source: Path) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))


def _sums(spark: Any, source: Path, upstream: Any = None) -> Any:
    df = _stream(spark, source)
    if upstream is not None:
        df = upstream(df)
    return (DataStream(df).assign_timestamps_and_watermarks(watermark(0)).key_by("user")
            .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("n"))


def _state_partitions(query: Any) -> list[int]:
    return [o["numShufflePartitions"] for o in query.lastProgress["stateOperators"]]


def _recorded(checkpoint: Path) -> int:
    """The state partitions Spark recorded in the offset log (under shuffle.partitions)."""
    text = (checkpoint / "offsets" / "0").read_text().splitlines()
    return int(json.loads(text[1])["conf"][SHUFFLE_PARTITIONS])


def _session_untouched(spark: Any) -> None:
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "200"
    assert STATE_PARTITIONS not in spark.conf.getAll


def test_to_df_write_stream_runs_the_stage_sized_and_upstream_shuffles_at_the_session_setting(
    spark_default_partitions: Any, tmp_path: Path
) -> None:
    """The README idiom with Spark's memory sink, over several micro-batches: the window
    stage runs in the session's default parallelism (2 cores), the user's own
    ``repartition("user")`` upstream in the session's 200 partitions (each row's partition id
    is its hash modulo 200), the results are right, the session keeps its settings, and
    nothing warns. (Two files, so three micro-batches with the no-data batch that fires both
    windows: each runs 200 upstream tasks.)"""
    spark = spark_default_partitions
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    write_batches(source, [BATCHES[0], BATCHES[1] + BATCHES[2]])

    def upstream(df: Any) -> Any:
        return df.repartition("user").withColumn("pid", F.spark_partition_id())

    df = _sums(spark, source, upstream).toDF()
    assert isinstance(df, type(spark.range(1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsizedStageWarning)
        query = (df.writeStream.format("memory").queryName("sized_to_df")
                 .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
                 .start())
    _session_untouched(spark)
    query.awaitTermination()
    assert _state_partitions(query) == [spark.sparkContext.defaultParallelism] == [2]
    assert _recorded(checkpoint) == 2
    rows = spark.table("sized_to_df").collect()
    assert sorted((r["user"], r["ts"], r["n"]) for r in rows) == sorted(
        [(u, 1_000 + i, i + 1) for i, u in enumerate(USERS)]
        + [(u, 12_000, 10) for u in USERS[:3]])
    hashed = spark.createDataFrame([(u,) for u in USERS], "user string").select(
        "user", F.expr("pmod(hash(user), 200)").alias("p"))
    expected = {r["user"]: r["p"] for r in hashed.collect()}
    assert {r["user"]: r["pid"] for r in rows} == expected
    assert max(expected.values()) >= 2  # the upstream did run in more than the stage's 2


@pytest.mark.parametrize("then_window_again", [False, True], ids=["window", "graph"])
def test_a_to_df_query_restarts_from_its_checkpoint_at_the_recorded_partitions(
    spark_default_partitions: Any, tmp_path: Path, then_window_again: bool
) -> None:
    """``set_parallelism(3)`` (a graph of windows over windows: one key group, one task) and
    Spark's own foreachBatch writer; a restart with another parallelism keeps the checkpoint's
    count and continues the results."""
    spark = spark_default_partitions
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    write_batches(source, BATCHES[:2])

    def build(parallelism: int) -> Any:
        result = _sums(spark, source)
        if then_window_again:
            graph = result.key_by("user").window(TumblingEventTimeWindows.of(Time.seconds(10)))
            graph = graph.sum("n")
            assert isinstance(graph, GraphResultStream)
            return graph
        return result.set_parallelism(parallelism)

    tasks = 1 if then_window_again else 3

    def run(parallelism: int) -> list[tuple[str, int]]:
        rows: list[Any] = []
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnsizedStageWarning)
            query = (build(parallelism).toDF().writeStream
                     .foreachBatch(lambda batch, _: rows.extend(batch.collect()))
                     .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
                     .start())
        _session_untouched(spark)
        query.awaitTermination()
        assert _state_partitions(query) == [tasks]
        return sorted((r["user"], r["n"]) for r in rows)

    assert run(3) == sorted((u, i + 1) for i, u in enumerate(USERS))
    write_batches(source, BATCHES[2:], first=2)
    assert run(5) == [(u, 10) for u in USERS[:3]]
    assert _recorded(checkpoint) == tasks
    partitions = [p.name for p in (checkpoint / "state" / "0").iterdir() if p.name.isdigit()]
    assert len(partitions) == tasks


@pytest.mark.parametrize("what", ["late side output", "map after the window", "print"])
def test_every_stream_downstream_of_a_stage_starts_sized(
    spark_default_partitions: Any, tmp_path: Path, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Spark's writer on the ``toDF()`` of a side output or of a ``map`` after the window, and
    ``print()``, run the stage at ``set_parallelism(3)``."""
    spark = spark_default_partitions
    source = tmp_path / "in"
    write_batches(source, BATCHES[:2] + [[{"user": "u1", "ts": 500, "n": 7}]])
    late = OutputTag("late")
    result = (DataStream(_stream(spark, source)).assign_timestamps_and_watermarks(watermark(0))
              .key_by("user").window(TumblingEventTimeWindows.of(Time.seconds(10)))
              .side_output_late_data(late).sum("n").set_parallelism(3))
    rows: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsizedStageWarning)
        if what == "print":
            query = result.print()
        else:
            if what == "late side output":
                stream = result.get_side_output(late)
            else:  # the map joins the window's graph, whose parallelism is its own (as Flink's)
                stream = result.map(lambda r: (r["user"], r["n"] * 2),
                                    output_type=Types.TUPLE([Types.STRING(), Types.LONG()]))
                assert isinstance(stream, GraphResultStream)
                stream.set_parallelism(3)
            query = (stream.toDF().writeStream
                     .foreachBatch(lambda batch, _: rows.extend(batch.collect()))
                     .option("checkpointLocation", str(tmp_path / "chk"))
                     .trigger(availableNow=True).start())
    _session_untouched(spark)
    if what == "print":
        query.processAllAvailable()
        query.stop()
        printed = capsys.readouterr().out
        assert "u0" in printed and "u5" in printed
    else:
        query.awaitTermination()
    assert [o["numShufflePartitions"] for o in query.recentProgress[0]["stateOperators"]] == [3]
    if what == "late side output":
        assert [(r["user"], r["ts"], r["n"]) for r in rows] == [("u1", 500, 7)]
    elif what == "map after the window":
        assert sorted(tuple(r) for r in rows) == sorted(
            (u, 2 * (i + 1)) for i, u in enumerate(USERS))


def test_to_table_starts_the_query_sized(spark_default_partitions: Any, tmp_path: Path) -> None:
    spark = spark_default_partitions
    source, checkpoint, table = tmp_path / "in", tmp_path / "chk", tmp_path / "table"
    write_batches(source, BATCHES[:2])
    spark.sql("DROP TABLE IF EXISTS sized_to_table")
    spark.sql(f"CREATE TABLE sized_to_table ({SCHEMA}) USING parquet LOCATION '{table}'")
    try:
        query = (_sums(spark, source).set_parallelism(3).toDF().writeStream
                 .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
                 .toTable("sized_to_table"))
        _session_untouched(spark)
        query.awaitTermination()
        assert _state_partitions(query) == [3]
        rows = spark.table("sized_to_table").collect()
        assert sorted((r["user"], r["n"]) for r in rows) == sorted(
            (u, i + 1) for i, u in enumerate(USERS))
    finally:
        spark.sql("DROP TABLE IF EXISTS sized_to_table")


def test_a_to_df_start_runs_flinkwins_restart_checks(
    spark_default_partitions: Any, tmp_path: Path
) -> None:
    """The pipeline is recorded in the checkpoint as by ``start()``, and a changed pipeline
    restarting from it through ``toDF()`` fails naming the change."""
    spark = spark_default_partitions
    source, checkpoint = tmp_path / "in", tmp_path / "chk"
    write_batches(source, BATCHES[:1])
    query = (_sums(spark, source).toDF().writeStream.format("noop")
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination()
    assert (checkpoint / "flinkwin" / "pipeline.json").exists()
    changed = (DataStream(_stream(spark, source)).assign_timestamps_and_watermarks(watermark(0))
               .key_by("user").window(TumblingEventTimeWindows.of(Time.seconds(20))).sum("n"))
    writer = changed.toDF().writeStream.format("noop").trigger(availableNow=True)
    with pytest.raises(IncompatibleRestartError, match="assigner"):
        writer.start(checkpointLocation=str(checkpoint))
    _session_untouched(spark)


def test_a_dataframe_derived_from_to_df_warns_with_the_one_line_fix_as_flinkwins_warning_class(
    spark_default_partitions: Any, tmp_path: Path
) -> None:
    """Spark builds a derived DataFrame as its own class: a query started from it runs at the
    session's 200. Deriving one warns once, naming the line that sizes it."""
    spark = spark_default_partitions
    write_batches(tmp_path / "in", BATCHES[:1])
    df = _sums(spark, tmp_path / "in").toDF()
    fix = "spark.conf.set('spark.sql.shuffle.partitions', '2')"
    with pytest.warns(UnsizedStageWarning, match=re.escape(fix)) as record:
        derived = df.select("user", "n")
    assert len(record) == 1
    assert "(by select()) runs the flinkwin stage in the session's 200" in str(record[0].message)
    assert type(derived) is type(spark.range(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsizedStageWarning)
        df.filter("n > 0")  # once per DataFrame
    with pytest.warns(UnsizedStageWarning, match="by createOrReplaceTempView"):
        _sums(spark, tmp_path / "in").toDF().createOrReplaceTempView("sized_view")
    with pytest.warns(UnsizedStageWarning, match="by groupBy"):
        _sums(spark, tmp_path / "in").toDF().groupBy("user")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=flinkwin.UnsizedStageWarning)
        with pytest.raises(flinkwin.UnsizedStageWarning, match=re.escape(fix)):
            _sums(spark, tmp_path / "in").toDF().select("user")
    _session_untouched(spark)


def test_deriving_does_not_warn_where_the_session_setting_fits_the_stage(
    spark: Any, tmp_path: Path
) -> None:
    """The shared session runs 2 shuffle partitions, the stage's own count here."""
    write_batches(tmp_path / "in", BATCHES[:1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsizedStageWarning)
        _sums(spark, tmp_path / "in").toDF().select("user")


class _Conf:
    """A session conf: ``refused`` keys fail to set, as a managed service's may."""

    def __init__(self, values: dict[str, str], refused: tuple[str, ...] = ()) -> None:
        self.values, self.refused = dict(values), refused

    @property
    def getAll(self) -> dict[str, str]:  # noqa: N802
        return dict(self.values)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, "200" if key == SHUFFLE_PARTITIONS else default)

    def set(self, key: str, value: str) -> None:
        if key in self.refused:
            raise RuntimeError(f"[CONFIG_NOT_AVAILABLE] {key}")
        self.values[key] = value

    def unset(self, key: str) -> None:
        self.values.pop(key, None)


class _Session:
    def __init__(self, conf: _Conf) -> None:
        self.conf = conf


@pytest.mark.parametrize("values", [{}, {STATE_PARTITIONS: "7", SHUFFLE_PARTITIONS: "50"}],
                         ids=["unset", "set"])
def test_state_partitions_restores_the_session_exactly_also_on_error(
    values: dict[str, str]
) -> None:
    conf = _Conf(values)
    with pytest.raises(ValueError, match="boom"), state_partitions(_Session(conf), 3):
        assert conf.values[STATE_PARTITIONS] == "3"
        assert conf.values.get(SHUFFLE_PARTITIONS) == values.get(SHUFFLE_PARTITIONS)
        raise ValueError("boom")
    assert conf.values == values


def test_where_spark_refuses_the_internal_key_the_shuffle_partitions_size_the_stage() -> None:
    conf = _Conf({}, refused=(STATE_PARTITIONS,))
    with state_partitions(_Session(conf), 3):
        assert conf.values == {SHUFFLE_PARTITIONS: "3"}
    assert conf.values == {}  # unset again: Spark's default applies, as before


def test_a_session_count_that_is_not_a_number_is_not_compared() -> None:
    """Databricks may run ``spark.sql.shuffle.partitions=auto``: no count to warn about."""
    assert session_state_partitions(_Session(_Conf({SHUFFLE_PARTITIONS: "auto"}))) is None
    assert session_state_partitions(_Session(_Conf({STATE_PARTITIONS: "7"}))) == 7
    assert session_state_partitions(_Session(_Conf({}))) == 200
