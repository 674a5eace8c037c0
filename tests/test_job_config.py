"""``flinkwin-job``'s settings: command line, JSON config, and a clear error for each bad one
(checked before any Spark session starts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flinkwin.job import JobConfigError, main, parse_args, sink_from_spec
from flinkwin.job.config import parse_trigger
from flinkwin.job.runner import build_pipelines, load_build
from flinkwin.sinks import ConsoleSink, DeltaSink, FileSink

BASE = ["--module", "flinkwin.demo", "--checkpoint", "/ck", "--sink", "main=delta:/t"]


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("availableNow", {"availableNow": True}),
        ("once", {"once": True}),
        ("processingTime=30 seconds", {"processingTime": "30 seconds"}),
        ({"processingTime": "1 minute"}, {"processingTime": "1 minute"}),
        ({"availableNow": True}, {"availableNow": True}),
    ],
)
def test_triggers_parse_from_strings_and_dicts(given: object, expected: dict) -> None:
    assert parse_trigger(given) == expected


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("continuous=1 second", "use 'availableNow', 'once' or 'processingTime=<interval>'"),
        ({"continuous": "1 second"}, "continuous processing runs no stateful operators"),
        ({"processingTime": "soon"}, "give an interval such as '30 seconds'"),
        ({"availableNow": False}, "the value must be true"),
        ({"once": True, "availableNow": True}, "exactly one of"),
        ("processingTime=", "processingTime=<interval>"),
    ],
)
def test_bad_triggers_are_refused_by_name(given: object, message: str) -> None:
    with pytest.raises(JobConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_trigger(given)


def test_sink_specs_make_delta_file_and_console_sinks() -> None:
    delta = sink_from_spec("delta:/lake/t", delta_engine="deltalake")
    assert isinstance(delta, DeltaSink) and delta.path == "/lake/t" and delta.engine == "deltalake"
    table = sink_from_spec("delta-table:main.demo.t")
    assert isinstance(table, DeltaSink) and table.table == "main.demo.t" and table.engine == "auto"
    assert isinstance(sink_from_spec("parquet:/out"), FileSink)
    assert isinstance(sink_from_spec("console"), ConsoleSink)
    spec = {"format": "delta", "path": "/t", "partition_by": ["user"], "engine": "deltalake"}
    sink = sink_from_spec(spec)
    assert isinstance(sink, DeltaSink) and sink.partition_by == ["user"]
    files = sink_from_spec({"format": "json", "path": "/j", "options": {"compression": "gzip"}})
    assert isinstance(files, FileSink)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("memory:rows", "a memory sink lives in the job's process"),
        ("kafka:topic", "use 'delta:<path>'"),
        ("delta:", "use 'delta:<path>'"),
        ({"format": "delta", "path": "/t", "mode": "overwrite"}, r"unknown key\(s\) \['mode'\]"),
        ({"format": "delta", "table": "a.b.c", "engine": "deltalake"}, "catalog tables need"),
        ({"format": "delta", "path": "/t", "engine": "rust"}, "Delta engine 'rust'"),
        ({"format": "parquet"}, "'path' is required"),
        ({"format": "avro", "path": "/t"}, "sink format 'avro'"),
        (42, "give a string such as 'delta:/path' or a dict"),
    ],
)
def test_bad_sink_specs_are_refused_by_name(spec: object, message: str) -> None:
    with pytest.raises(JobConfigError, match=message):
        sink_from_spec(spec)


def test_config_file_and_command_line_merge_command_line_wins(tmp_path: Path) -> None:
    config = tmp_path / "job.json"
    config.write_text(json.dumps({
        "module": "flinkwin.demo",
        "checkpoint": "/from-file",
        "params": {"source": "/src", "batches": 3},
        "sinks": {"main": "delta:/a", "late": "delta:/late"},
        "trigger": {"processingTime": "1 minute"},
        "timeout_seconds": 60,
    }))
    parsed = parse_args(["--config", str(config), "--checkpoint", "/cli", "--param",
                         "batches=6", "--sink", "main=parquet:/b", "--trigger", "availableNow"])
    assert parsed.checkpoint == "/cli"
    assert parsed.params == {"source": "/src", "batches": "6"}
    assert parsed.sinks == {"main": "parquet:/b", "late": "delta:/late"}
    assert parsed.trigger == {"availableNow": True} and parsed.waits_for_end
    assert parsed.timeout_seconds == 60.0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--checkpoint", "/ck", "--sink", "main=delta:/t"], "no pipeline module"),
        (["--module", "m", "--sink", "main=delta:/t"], "no checkpoint location"),
        (["--module", "m", "--checkpoint", "/ck"], "no sinks"),
        ([*BASE, "--param", "novalue"], "--param 'novalue': expected NAME=VALUE"),
        ([*BASE, "--sink", "late"], "--sink 'late': expected NAME=VALUE"),
        ([*BASE, "--master", "local[2]", "--remote", "sc://h:1"], "at most one of master"),
        ([*BASE, "--timeout-seconds", "0"], "must be a positive number"),
    ],
)
def test_bad_command_lines_are_refused_by_name(argv: list[str], message: str) -> None:
    with pytest.raises(JobConfigError, match=message.replace("[", r"\[")):
        parse_args(argv)


def test_bad_config_files_are_refused_by_name(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{module: x}")
    with pytest.raises(JobConfigError, match="is not valid JSON"):
        parse_args(["--config", str(bad)])
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"module": "m", "checkpoint": "/c", "sink": {}}))
    with pytest.raises(JobConfigError, match=r"unknown setting\(s\) \['sink'\]"):
        parse_args(["--config", str(unknown)])
    with pytest.raises(JobConfigError, match="cannot read the config file"):
        parse_args(["--config", str(tmp_path / "missing.json")])


def test_main_reports_a_bad_setting_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--module", "flinkwin.demo", "--sink", "main=delta:/t"]) == 2
    assert "flinkwin-job: error: no checkpoint location" in capsys.readouterr().err


def test_modules_load_by_name_or_file_and_missing_ones_are_named(tmp_path: Path) -> None:
    from flinkwin import demo

    assert load_build("flinkwin.demo") is demo.build
    assert load_build("flinkwin.demo:pipelines") is demo.pipelines
    with pytest.raises(JobConfigError, match="no module named 'no_such_pipelines'"):
        load_build("no_such_pipelines")
    with pytest.raises(JobConfigError, match="has no function 'nope'"):
        load_build("flinkwin.demo:nope")
    with pytest.raises(JobConfigError, match="does not exist"):
        load_build(str(tmp_path / "missing.py"))
    module = tmp_path / "my_job.py"
    module.write_text("def make(spark):\n    return spark\n")
    make = load_build(f"{module}:make")
    assert make("session") == "session"


def test_build_functions_with_a_wrong_signature_or_result_are_refused() -> None:
    def spark_only(spark: object) -> object:
        return spark

    with pytest.raises(JobConfigError, match=r"takes no params, but got \['x'\]"):
        build_pipelines(spark_only, object(), {"x": "1"})
    with pytest.raises(TypeError, match="must return a flinkwin.job.Pipeline"):
        build_pipelines(spark_only, object(), {})
    with pytest.raises(TypeError, match="expected a flinkwin.job.Pipeline, got int"):
        build_pipelines(lambda spark, params: {"q": 1}, object(), {})
    with pytest.raises(JobConfigError, match="takes \\(spark, params\\) or \\(spark\\)"):
        build_pipelines(lambda: None, object(), {})
