"""Every table of a real crawl read with pandas and polars, checked against pyarrow.

Analysts reach for pandas and polars first: both are in the ``notebooks``
extra, and both must read each table (hive-partitioned by ``job_id``) with the
same rows and values as pyarrow.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from schemas.tables import PARTITION_KEY, TABLES
from tests.conftest import REPO, crawl_demo, read_table

JOB = "frames"


def test_the_notebooks_extra_has_pandas_and_polars() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    names = {req.split(">")[0].split("=")[0].split("[")[0].strip().lower() for req in extras["notebooks"]}
    assert {"pandas", "polars"} <= names


pd = pytest.importorskip("pandas", reason="the notebooks extra (pandas) is not installed")
pl = pytest.importorskip("polars", reason="the notebooks extra (polars) is not installed")


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory, demo_server: object) -> Path:
    return crawl_demo(tmp_path_factory.mktemp("frames"), demo_server, JOB)


def _plain(value: Any) -> Any:
    """A value as pyarrow, pandas and polars all give it back (NaN/None/NaT/NA are one missing value)."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, bool | int | float | str):
        return value
    return repr(value) if not hasattr(value, "isoformat") else value.isoformat()


def _scalar_columns(table: pa.Table) -> list[str]:
    """Columns holding strings, numbers or flags (nested ones are compared by count only)."""
    return [
        f.name
        for f in table.schema
        if f.name != PARTITION_KEY
        and (pa.types.is_string(f.type) or pa.types.is_integer(f.type) or pa.types.is_boolean(f.type))
    ]


def _sorted_values(values: list[Any]) -> list[Any]:
    plain = [_plain(v) for v in values]
    return sorted(plain, key=lambda v: (v is None, str(type(v)), v if v is not None else 0))


#: The calls docs/datasets.md gives (tests/test_readers.py checks their types), pandas both ways.
JOB_ID = ds.partitioning(pa.schema([(PARTITION_KEY, pa.string())]), flavor="hive")
READERS: dict[str, Callable[[Path], Any]] = {
    "pandas.read_parquet": lambda path: pd.read_parquet(path, partitioning=JOB_ID),
    "pandas.read_parquet(pyarrow dtypes)": lambda path: pd.read_parquet(
        path, dtype_backend="pyarrow", partitioning=JOB_ID
    ),
    "polars.read_parquet": lambda path: pl.read_parquet(
        path / "**" / "*.parquet", hive_partitioning=True, hive_schema={"job_id": pl.String}
    ),
    "polars.scan_parquet": lambda path: pl.scan_parquet(
        path / "**" / "*.parquet", hive_partitioning=True, hive_schema={"job_id": pl.String}
    ).collect(),
}


def _column(frame: Any, name: str) -> list[Any]:
    return list(frame[name].to_list()) if hasattr(frame[name], "to_list") else list(frame[name])


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("table", TABLES)
def test_each_table_reads_the_same_with_pandas_and_polars(crawl: Path, table: str, reader: str) -> None:
    want = read_table(crawl, table)
    assert want.num_rows > 0, f"the demo crawl wrote no {table} rows"
    frame = READERS[reader](crawl / table)
    assert len(frame) == want.num_rows
    assert set(frame.columns) == set(want.column_names)
    assert {str(v) for v in _column(frame, PARTITION_KEY)} == {JOB}
    for name in _scalar_columns(want):
        assert _sorted_values(_column(frame, name)) == _sorted_values(want.column(name).to_pylist()), name


def test_a_few_values_by_name(crawl: Path) -> None:
    """The same feed found by URL gives the same title and item count in all three readers."""
    feeds = read_table(crawl, "feeds").to_pylist()
    urls = [r["final_url"] for r in feeds]
    sample = sorted(
        (r for r in feeds if r["final_url"] and urls.count(r["final_url"]) == 1), key=lambda r: r["final_url"]
    )
    assert len(sample) >= 3
    sample = sample[:3]
    by_pandas = READERS["pandas.read_parquet"](crawl / "feeds").set_index("final_url")
    by_polars = READERS["polars.read_parquet"](crawl / "feeds")
    for row in sample:
        url = row["final_url"]
        assert by_pandas.loc[url, "title"] == row["title"]
        assert int(by_pandas.loc[url, "item_count"]) == row["item_count"]
        hit = by_polars.filter(pl.col("final_url") == url)
        assert hit.height == 1
        assert hit["title"][0] == row["title"] and hit["item_count"][0] == row["item_count"]
