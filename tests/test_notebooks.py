"""The analysis notebooks: stored clean, and run headless (nbclient) against a dataset the test crawls."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import QUICK_CRAWL, REPO, demo_seeds_file, run_cli

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra (nbformat, nbclient) is not installed")
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra (nbformat, nbclient) is not installed")
pytest.importorskip("matplotlib", reason="the notebooks extra (matplotlib) is not installed")
pytest.importorskip("ipykernel", reason="the notebooks extra (ipykernel) is not installed")

NOTEBOOKS = REPO / "notebooks"
#: notebook -> text its tables must show when run on the demo web.
EXPECTED = {
    "survey": ["dc:creator", "wfw:commentRss", "RSS Advisory Board 2007", "2005 survey", "RSS item elements"],
    "autodiscovery": ["rss-rel-not-lowercase", "conforms_rss_spec", "does_not_advertise", "application/rss+xml"],
    "conformance": ["item-missing-guid", "rfc822-universal", "rfc822-other-zone", "Examples of failures"],
    "breadth": ["Run summary and availability", "Freshness funnel", "Autodiscovery as the peer counts it", "Platforms"],
}


def load(name: str) -> Any:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def parameters_cell(nb: Any) -> Any:
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, "exactly one cell tagged 'parameters'"
    return cells[0]


def test_every_notebook_is_listed_and_documented() -> None:
    stored = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert stored == sorted(EXPECTED)
    readme = (NOTEBOOKS / "README.md").read_text(encoding="utf-8")
    for name in stored:
        assert f"{name}.ipynb" in readme


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_stored_notebooks_have_no_outputs_and_one_parameter_cell(name: str) -> None:
    nb = load(name)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], "stored with outputs"
            assert cell.execution_count is None
    params = parameters_cell(nb)
    assert params is next(c for c in nb.cells if c.cell_type == "code"), "the parameters cell comes first"
    values = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse(params.source).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    assert values == {"DATASET": "../demo-out", "JOB": None}
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "read_parquet(" in source and "hive_partitioning = true" in source and "import duckdb" in source
    assert "matplotlib" in source


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory, demo_server: Any) -> Path:
    work = tmp_path_factory.mktemp("notebooks")
    seeds = demo_seeds_file(work, demo_server)
    out = work / "out"
    proc = run_cli(
        "crawl", "--seeds", str(seeds), "--out", str(out), "--log-level", "WARNING",
        *QUICK_CRAWL, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def texts(output: Any) -> list[str]:
    if output.output_type == "stream":
        return [output.text]
    data = output.get("data", {})
    return [data[k] for k in ("text/markdown", "text/plain", "text/html") if k in data]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_runs_headless_on_a_crawled_dataset(
    name: str, dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel is the test's own interpreter (jupyter_client swaps "python" for sys.executable),
    # with the repository importable and Jupyter's runtime files kept in tmp_path.
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = load(name)
    parameters_cell(nb).source = f"DATASET = {str(dataset)!r}\nJOB = None"
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error" or getattr(o, "name", "") == "stderr"]
    assert not errors, [(o.get("ename"), o.get("evalue"), o.get("text")) for o in errors]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, "no plot was drawn"
    text = "\n".join(t for o in outputs for t in texts(o))
    assert f"dataset {dataset}" in text
    for needle in EXPECTED[name]:
        assert needle in text, needle
