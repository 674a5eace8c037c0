"""HotItems and the window join keyed by a function, each with ``set_parallelism(2)`` (a
distributed graph: chained transformWithStateInPandas stages), over a local Spark Connect server
or on ``local[2]``: the drivers of the cluster test (``tests/deploy/graph_driver.py``), two
steps each with a restart from the checkpoint. Writes the sorted results as JSON; equal files
from the two modes mean Connect runs the distributed plan as local Spark does (each
checkpoint's ``flinkwin/pipeline.json`` says ``"stage": "distributed graph"``).

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_31_connect_graph.py local /tmp/local.json
    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_31_connect_graph.py connect /tmp/conn.json
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "tests" / "deploy"), str(REPO / "tests" / "spark")]


def main(mode: str, out: Path) -> None:
    import graph_driver
    import hot_items_driver
    from pyspark import cloudpickle
    from pyspark.sql import SparkSession
    from spark_processes import connect_server

    # the drivers' functions travel by value, as a notebook's do
    cloudpickle.register_pickle_by_value(graph_driver)
    cloudpickle.register_pickle_by_value(hot_items_driver)
    work = Path(tempfile.mkdtemp(prefix="fw-conn-graph-"))
    with contextlib.ExitStack() as stack:
        if mode == "local":
            spark: Any = graph_driver.session("local[2]", graph_driver.free_port())
        else:
            url = stack.enter_context(connect_server(work / "server"))
            spark = SparkSession.builder.remote(url).getOrCreate()
        results = {
            "hot_items": graph_driver.run_hot_items(spark, work / "hot_items"),
            "join": graph_driver.run_join(spark, work / "join"),
            "stages": sorted(
                json.loads(p.read_text()).get("stage")
                for p in work.glob("*/*_ck/flinkwin/pipeline.json")
            ),
        }
        spark.stop()
    out.write_text(json.dumps(results, indent=1))
    print({k: len(v) for k, v in results.items()}, results["stages"])


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
