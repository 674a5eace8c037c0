"""Every notebook in notebooks/ runs top to bottom (its cells assert their own results), and is
committed without outputs."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def test_the_notebook_set_is_the_documented_one() -> None:
    assert [p.stem for p in NOTEBOOKS] == [
        "always_current_table",
        "count_and_global_windows",
        "joins_and_top_n",
        "late_data",
        "migrating",
        "notebook_functions",
        "quickstart",
        "triggers",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code, f"{path.name} has no code cells"
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, (
            f"{path.name}: a code cell has outputs (strip them before committing): "
            f"{cell.source[:60]!r}"
        )


#: Kernels running the notebooks side by side; each runs its share one after the other.
LANES = 2


async def _run_lane(notebooks: list[Any], workdir: Path, env: dict[str, str]) -> None:
    """Run ``notebooks`` one after the other in ONE kernel, with a fresh namespace for each.

    Starting local Spark and warming it up (the JVM's first jobs, the Python workers) costs far
    more than these small notebooks themselves, so a kernel keeps its Spark session from one
    notebook to the next (``SparkSession.builder...getOrCreate()`` in each notebook's first cell
    returns it and applies its SQL settings). ``%reset -f`` clears every name in between, so a
    notebook that uses something it does not define itself still fails."""
    import nbclient
    import nbformat

    reset = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("%reset -f")])
    client = nbclient.NotebookClient(notebooks[0], timeout=900, kernel_name="python3",
                                     resources={"metadata": {"path": str(workdir)}})
    async with client.async_setup_kernel(env=env):
        for nb in notebooks:
            client.nb = reset
            await client.async_execute_cell(reset.cells[0], 0)
            client.nb = nb
            client.reset_execution_trackers()
            for index, cell in enumerate(nb.cells):
                await client.async_execute_cell(cell, index,
                                                execution_count=client.code_cells_executed + 1)


async def _execute_all(
    lanes: list[list[Any]], workdirs: list[Path], env: dict[str, str]
) -> list[Any]:
    return await asyncio.gather(*(_run_lane(lane, workdir, env)
                                  for lane, workdir in zip(lanes, workdirs)),
                                return_exceptions=True)


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.beside  # its own kernels and Spark sessions: run beside the rest
@pytest.mark.extended  # ~100 s: make test-extended (and CI) runs it
def test_notebooks_run_top_to_bottom(tmp_path: Path) -> None:
    if shutil.which("java") is None:
        pytest.fail("Java 17 is needed for the Spark cells; no java on PATH", pytrace=False)
    nbformat = pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    notebooks = [nbformat.read(path, as_version=4) for path in NOTEBOOKS]
    lanes = [list(range(i, len(NOTEBOOKS), LANES)) for i in range(LANES)]
    # notebook_functions.ipynb opens its lane: it runs alone in a fresh kernel, which starts
    # its own Spark session, as a user's first notebook does
    alone = NOTEBOOKS.index(NOTEBOOK_DIR / "notebook_functions.ipynb")
    for lane in lanes:
        if alone in lane:
            lane.remove(alone)
            lane.insert(0, alone)
    workdirs = [tmp_path / f"lane-{i}" for i in range(LANES)]
    for workdir in workdirs:
        workdir.mkdir()
    env = dict(os.environ)
    # The kernels run this interpreter (jupyter_client starts "python" as sys.executable), and
    # so do Spark's Python workers (each notebook sets PYSPARK_PYTHON = sys.executable); their
    # temporary files (sources, checkpoints, Delta tables) go under tmp_path.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["TMPDIR"] = str(tmp_path)
    env["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    results = asyncio.run(_execute_all([[notebooks[i] for i in lane] for lane in lanes],
                                       workdirs, env))
    failures = [f"{', '.join(NOTEBOOKS[i].name for i in lane)}: {result}"
                for lane, result in zip(lanes, results) if isinstance(result, BaseException)]
    assert not failures, "\n\n".join(failures)
    for path, nb in zip(NOTEBOOKS, notebooks):
        code = [cell for cell in nb.cells if cell.cell_type == "code"]
        assert all(cell.execution_count is not None for cell in code), f"{path.name} stopped early"
    plots = {path.stem: sum("image/png" in output.get("data", {}) for cell in nb.cells
                            if cell.cell_type == "code" for output in cell.outputs)
             for path, nb in zip(NOTEBOOKS, notebooks)}
    assert plots["quickstart"] >= 1 and plots["triggers"] >= 1, plots
    # notebook_functions.ipynb: an AggregateFunction (and its accumulator class) defined in a
    # cell, on a stream of several micro-batches, then restarted from its checkpoint (its cells
    # assert the results); the classes are the kernel's __main__'s, pickled by value
    functions = notebooks[alone]
    code = [cell for cell in functions.cells if cell.cell_type == "code"]
    printed = "".join(o.get("text", "") for o in code[2].outputs)
    assert printed.split() == ["__main__", "__main__"]
