"""docs/notebook.ipynb runs from top to bottom on a fresh kernel, so it cannot rot.

The kernel is this interpreter (a kernelspec written for the test), importing this checkout's
`matching`; the notebook runs on the shipped models and samples/sample-ranking.csv.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "notebook.ipynb"
KERNEL = "matchlens-test"


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> nbformat.NotebookNode:
    kernels = tmp_path_factory.mktemp("jupyter")
    spec = kernels / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "MatchLens test", "language": "python"}), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(kernels))
        patch.setenv("PYTHONPATH", str(ROOT))  # the kernel imports this checkout, not an installed copy
        notebook = nbformat.read(NOTEBOOK, as_version=4)
        # Each cell fails the run when it raises (allow_errors=False); the file is never written back.
        NotebookClient(notebook, timeout=300, kernel_name=KERNEL, allow_errors=False,
                       resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    return notebook


def outputs(notebook: nbformat.NotebookNode) -> list[dict]:
    return [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]


def test_the_notebook_runs_without_an_error(executed: nbformat.NotebookNode) -> None:
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert code and all(cell.execution_count for cell in code)
    assert not [o for o in outputs(executed) if o.output_type == "error"]
    assert not [o for o in outputs(executed) if o.get("name") == "stderr" and "Traceback" in o.get("text", "")]


def test_the_notebook_shows_charts_and_rich_displays(executed: nbformat.NotebookNode) -> None:
    shown = [o.get("data", {}) for o in outputs(executed) if o.output_type in ("execute_result", "display_data")]
    # An altair chart comes as Vega-Lite: under its own mime type, or (altair's default renderer) as HTML
    # that embeds the spec, where json has written "−" as \u2212.
    vega_lite = [json.dumps(d, ensure_ascii=True) for d in shown
                 if any(kind.startswith("application/vnd.vegalite") for kind in d)]
    charts = vega_lite + [d["text/html"] for d in shown if "vegaEmbed(" in d.get("text/html", "")]
    assert len(charts) >= 2  # the scores chart and the gap waterfall
    assert any("every candidate's score" in chart for chart in charts)
    assert any("score(A) \\u2212 score(B)" in chart for chart in charts)
    rich = [d["text/html"] for d in shown if "class='matchlens'" in d.get("text/html", "")]
    assert len(rich) >= 4  # the ranking, the evaluation, the explanation and the gap split
    assert any("scores this pair" in page for page in rich) and any("gap score(A)" in page for page in rich)


def test_the_notebook_is_stored_without_outputs() -> None:
    """Nothing stale is stored: the outputs come from running it."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    assert all(not cell.get("outputs") and not cell.get("execution_count")
               for cell in notebook.cells if cell.cell_type == "code")
