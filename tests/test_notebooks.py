"""The analysis notebooks: stored clean, and run headless against a dataset the test crawls, chosen
the two ways notebooks/README.md gives: the FEEDCENSUS_DATASET environment variable (nbclient) and
papermill's ``-p DATASET``.

The crawl takes the demo web and one more feed whose values break a naive Markdown table (a
``\r\n`` and a ``|`` in its date, shown in "Examples of failures"): every table the notebooks show
must still parse as a table whose rows have the header's cells.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import QUICK_CRAWL, REPO, run_cli

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
    assert parameters(params.source, {}) == {"DATASET": "../demo-out", "JOB": None}
    chosen = {"FEEDCENSUS_DATASET": "/data/census", "FEEDCENSUS_JOB": "20261127T211944Z"}
    assert parameters(params.source, chosen) == {"DATASET": "/data/census", "JOB": "20261127T211944Z"}
    source = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "open_dataset(DATASET)" in source and "survey_duckdb(JOB)" in source
    assert "markdown_table(" in source and "import duckdb" not in source, "one way in, one table helper"
    assert "matplotlib" in source


def parameters(source: str, environ: dict[str, str]) -> dict[str, Any]:
    """DATASET and JOB as the parameters cell sets them in an environment holding only ``environ``."""
    saved = {k: os.environ.pop(k) for k in ("FEEDCENSUS_DATASET", "FEEDCENSUS_JOB") if k in os.environ}
    os.environ.update(environ)
    try:
        scope: dict[str, Any] = {}
        exec(source, scope)
        return {k: scope[k] for k in ("DATASET", "JOB")}
    finally:
        for k in environ:
            del os.environ[k]
        os.environ.update(saved)


#: A feed whose date holds a CR LF and a pipe (kept by the XML parser as written: ``&#13;&#10;``),
#: and whose title holds Markdown's other special characters.
HOSTILE_FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel>
<title>Pipes | *stars* `ticks` &lt;b&gt;</title><link>{{BASE}}/hostile/</link><description>d</description>
<item><title>one</title><guid>{{BASE}}/hostile/1</guid><pubDate>soon | later&#13;&#10;maybe</pubDate></item>
</channel></rss>
"""
#: How the date reads in a Markdown table cell: the line break a space, the pipe escaped.
HOSTILE_CELL = "soon \\| later maybe"


@pytest.fixture(scope="module")
def hostile_server() -> Iterator[Any]:
    from crawler.demo.routes import Route
    from crawler.demo.webserver import WebServer, demo_web

    web = demo_web()
    web.add("/hostile/feed.xml", Route(HOSTILE_FEED, headers={"Content-Type": "application/rss+xml"}))
    with WebServer(web) as server:
        yield server


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory, hostile_server: Any) -> Path:
    from crawler.demo.webserver import demo_seeds

    work = tmp_path_factory.mktemp("notebooks")
    seeds = work / "seeds.txt"
    seeds.write_text("\n".join(demo_seeds(hostile_server.url)) + "\n", encoding="utf-8")
    out = work / "out"
    proc = run_cli(
        "crawl", "--seeds", str(seeds), "--url", hostile_server.url_for("/hostile/feed.xml"), "--out", str(out),
        "--log-level", "WARNING", *QUICK_CRAWL, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture
def kernel_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel is the test's own interpreter (jupyter_client swaps "python" for sys.executable),
    with the repository importable and Jupyter's runtime files kept in tmp_path."""
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.delenv("FEEDCENSUS_JOB", raising=False)


def texts(output: Any) -> list[str]:
    if output.output_type == "stream":
        return [output.text]
    data = output.get("data", {})
    return [data[k] for k in ("text/markdown", "text/plain", "text/html") if k in data]


def check_outputs(nb: Any, dataset: Path, name: str) -> str:
    """No error, a plot, the expected rows, and every Markdown table intact; the outputs' text."""
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error" or getattr(o, "name", "") == "stderr"]
    assert not errors, [(o.get("ename"), o.get("evalue"), o.get("text")) for o in errors]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert images, "no plot was drawn"
    text = "\n".join(t for o in outputs for t in texts(o))
    assert f"dataset {dataset}" in text
    for needle in EXPECTED[name]:
        assert needle in text, needle
    tables = [o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {})]
    assert tables
    for markdown in tables:
        assert_table_intact(markdown)
    return text


def assert_table_intact(markdown: str) -> None:
    """Each line of the table is one row with the header's number of cells, as a GFM parser reads it."""
    mistune = pytest.importorskip("mistune", reason="the notebooks extra (nbconvert, which brings mistune) is missing")
    parse = mistune.create_markdown(renderer=None, plugins=["table"])
    (table,) = [node for node in parse(markdown) if node["type"] == "table"]
    head, body = table["children"]
    lines = [line for line in markdown.splitlines() if line.startswith("|")]
    assert len(body["children"]) == len(lines) - 2, markdown
    for row in body["children"]:
        assert len(row["children"]) == len(head["children"]), markdown


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.usefixtures("kernel_env")
def test_notebook_runs_headless_on_the_dataset_the_environment_names(
    name: str, dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FEEDCENSUS_DATASET", str(dataset))
    nb = load(name)  # as stored: its parameters cell reads FEEDCENSUS_DATASET
    client = nbclient.NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    client.execute()
    text = check_outputs(nb, dataset, name)
    if name == "conformance":
        assert HOSTILE_CELL in text, "the CR LF and pipe example is not in Examples of failures"


@pytest.mark.usefixtures("kernel_env")
def test_papermill_runs_a_notebook_on_another_dataset(
    dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """notebooks/README.md's command: ``papermill IN OUT -p DATASET DIR`` wins over the environment."""
    monkeypatch.setenv("FEEDCENSUS_DATASET", str(tmp_path / "not-this-one"))
    result = tmp_path / "conformance.ipynb"
    proc = subprocess.run(
        [sys.executable, "-m", "papermill", str(NOTEBOOKS / "conformance.ipynb"), str(result),
         "-p", "DATASET", str(dataset), "--cwd", str(NOTEBOOKS), "--no-progress-bar"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    nb = nbformat.read(result, as_version=4)
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and str(dataset) in injected[0].source
    text = check_outputs(nb, dataset, "conformance")
    assert HOSTILE_CELL in text
