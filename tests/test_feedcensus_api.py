"""``import feedcensus``: the analysts' way in, on a real crawl of the demo web.

``feedcensus.open_dataset`` hands every table to pyarrow, DuckDB, pandas and polars (the types are
checked reader by reader in tests/test_readers.py), and the survey's tables as data frames, the
same rows ``feedcensus survey`` computes.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions, version
from pathlib import Path
from typing import cast

import pyarrow as pa
import pytest

from crawler.report.survey import compute
from schemas.tables import PARTITION_KEY, TABLES
from tests.conftest import REPO, crawl_demo, read_table

pd = pytest.importorskip("pandas", reason="the notebooks extra (pandas) is not installed")
pl = pytest.importorskip("polars", reason="the notebooks extra (polars) is not installed")

import feedcensus  # noqa: E402 (after the skips: the test needs pandas and polars)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory, demo_server: object) -> Path:
    """Two runs of the demo web into one dataset: ``first``, then ``second`` (incremental)."""
    work = tmp_path_factory.mktemp("api")
    crawl_demo(work, demo_server, "first")
    return crawl_demo(work, demo_server, "second")


def test_version_is_the_distributions() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert feedcensus.__version__ == version("feedcensus") == project["version"]


def test_the_package_is_installed_and_no_other_distribution_ships_our_top_level_names() -> None:
    """docs/datasets.md, "The package names": a collision needs another distribution with one of these."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "feedcensus*" in project["tool"]["setuptools"]["packages"]["find"]["include"]
    owners = packages_distributions()
    for name in ("feedcensus", "crawler", "pipelines", "schemas"):
        assert set(owners.get(name, [])) == {"feedcensus"}, (name, owners.get(name))


def test_import_feedcensus_loads_no_data_frame_library() -> None:
    """Importing the package costs pyarrow only: pandas, polars and DuckDB load when first asked for."""
    code = (
        "import sys, feedcensus; print(sorted(m for m in ('pandas', 'polars', 'duckdb', 'scrapy') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/", check=True)
    assert proc.stdout.strip() == "[]"


def test_open_dataset_lists_the_runs_and_every_table(crawl: Path) -> None:
    data = feedcensus.open_dataset(crawl)
    assert data.root == str(crawl)
    assert data.jobs == ["first", "second"]
    assert data.latest_job == "second"
    assert data.tables == tuple(TABLES)
    assert feedcensus.open_dataset(str(crawl)).jobs == data.jobs


@pytest.mark.parametrize("table", TABLES)
def test_each_table_in_each_library_has_the_rows_pyarrow_reads(crawl: Path, table: str) -> None:
    data = feedcensus.open_dataset(crawl)
    want = read_table(crawl, table)
    assert want.num_rows > 0
    arrow = data.table(table)
    assert arrow.num_rows == want.num_rows
    assert arrow.schema.field(PARTITION_KEY).type == pa.string()
    frame = data.to_pandas(table)
    assert len(frame) == want.num_rows
    assert str(frame[PARTITION_KEY].dtype) == "string[pyarrow]"
    polars = data.to_polars(table)
    assert polars.height == want.num_rows and polars.schema[PARTITION_KEY] == pl.String
    counts = dict(data.duckdb().sql(f"SELECT job_id, count(*) FROM {table} GROUP BY ALL").fetchall())
    assert counts == dict(pd.Series(want.column(PARTITION_KEY).to_pylist()).value_counts())


def test_one_run_and_some_columns(crawl: Path) -> None:
    data = feedcensus.open_dataset(crawl)
    second = read_table(crawl, "fetch_log").filter(pa.compute.field(PARTITION_KEY) == "second")
    got = data.table("fetch_log", job="second", columns=["url", "outcome", PARTITION_KEY])
    assert got.column_names == ["url", "outcome", PARTITION_KEY]
    assert got.num_rows == second.num_rows > 0
    urls = cast("list[str]", got.column("url").to_pylist())  # pyarrow's stubs make every value Optional
    assert sorted(urls) == sorted(cast("list[str]", second.column("url").to_pylist()))
    frame = data.to_polars("fetch_log", job="first")
    assert set(frame[PARTITION_KEY]) == {"first"}
    assert frame.filter(pl.col("job_id") == "first").height == frame.height


def test_pandas_keeps_integer_and_flag_columns_with_nulls(crawl: Path) -> None:
    """pandas' NumPy types would make ``feeds.status`` (null for a failed fetch) a float."""
    frame = feedcensus.open_dataset(crawl).to_pandas("feeds")
    assert str(frame["item_count"].dtype) == "int32[pyarrow]"
    assert str(frame["content_type_ok"].dtype) == "bool[pyarrow]"
    assert str(frame["fetched_at"].dtype) == "timestamp[us, tz=UTC][pyarrow]"


def test_the_survey_tables_as_data_frames(crawl: Path) -> None:
    data = feedcensus.open_dataset(crawl)
    survey = compute(str(crawl))
    frames = data.survey_frames()
    assert list(frames) == [t.name for t in survey.tables]
    for t in survey.tables:
        frame = frames[t.name]
        assert len(frame) == len(t.rows), t.name
        assert list(frame.columns[: len(t.columns)]) == [c.key for c in t.columns], t.name
    rules = frames["rule_failures"]
    assert set(rules["rule"]) == {r["rule"] for r in survey.table("rule_failures").rows}
    assert frames["formats"]["feeds"].sum() == survey.totals["feeds"]
    first = data.survey(job="first")
    assert first.job_id == "first" and data.survey().job_id == "second"
    con, job = data.survey_duckdb("first")
    assert job == "first"
    assert con.sql("SELECT count(*) FROM fetch_log").fetchall() == [(len(data.table("fetch_log", job="first")),)]


def test_survey_tables_convert_empty_and_mixed_columns() -> None:
    from crawler.report.model import Column, Table

    empty = Table("t", "T", (Column("name", "name"), Column("feeds", "feeds", "int"), Column("pct", "%", "pct")), ())
    arrow = feedcensus.dataset.survey_table_to_arrow(empty)
    assert arrow.num_rows == 0
    assert arrow.schema.types == [pa.string(), pa.int64(), pa.float64()]
    mixed = Table(
        "m", "M", (Column("value", "value"),), ({"value": 1}, {"value": 2.5}, {"value": "n/a"}, {"value": None})
    )
    assert feedcensus.dataset.survey_table_to_arrow(mixed).column("value").to_pylist() == ["1", "2.5", "n/a", None]
    numbers = Table("n", "N", (Column("value", "value"),), ({"value": 1}, {"value": 2.5}))
    assert feedcensus.dataset.survey_table_to_arrow(numbers).column("value").type == pa.float64()


def test_what_is_not_there_is_one_clear_error(crawl: Path, tmp_path: Path) -> None:
    with pytest.raises(feedcensus.DatasetError, match=r"no crawl found in .*empty"):
        feedcensus.open_dataset(tmp_path / "empty")
    data = feedcensus.open_dataset(crawl)
    with pytest.raises(feedcensus.DatasetError, match=r"no table 'feed'; tables: feeds, items"):
        data.table("feed")
    with pytest.raises(feedcensus.DatasetError, match=r"no job 'third' in .*; jobs: first, second"):
        data.to_polars("feeds", job="third")
    with pytest.raises(feedcensus.DatasetError, match=r"no job 'third'"):
        data.survey_frames(job="third")


def test_a_table_no_run_wrote_reads_empty_with_its_columns(crawl: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(crawl, copy)
    shutil.rmtree(copy / "workers")
    data = feedcensus.open_dataset(copy)
    assert data.table("workers").num_rows == 0
    assert data.to_polars("workers").schema[PARTITION_KEY] == pl.String
    assert data.duckdb().sql("SELECT count(*) FROM workers").fetchall() == [(0,)]
