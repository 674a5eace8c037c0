"""The walkthrough notebook runs top to bottom (its cells assert their own results)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "walkthrough.ipynb"


@pytest.mark.spark
@pytest.mark.slow
def test_walkthrough_notebook_runs() -> None:
    if shutil.which("java") is None:
        pytest.skip("Java 17 is needed for the Spark cells")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    env_python = os.path.dirname(sys.executable)
    os.environ["PATH"] = env_python + os.pathsep + os.environ.get("PATH", "")
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    outputs = "".join(
        o.get("text", "") for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs
    )
    assert "[3, 8] [3, 5]" in outputs
    assert "FlatMapGroupsInPandasWithState" in outputs or "FlatMapGroupsInPandas" in outputs
