"""Every reader the docs name gives every table the same types, ``job_id`` a string in each.

``job_id`` is no column of the files: readers add it from the folder names, and left to guess
they take the default id (``20261127T211944Z``, a UTC time) for a timestamp (polars) and
``--job-id 2024`` for a number (pyarrow's and pandas' ``partitioning="hive"``, DuckDB without
``hive_types``), after which ``pl.col("job_id") == "20261127T211944Z"`` raises. Two real crawls
of the demo web, one under the default id and one as ``--job-id 2024``, are read with the calls
README.md and docs/datasets.md give, and with ``feedcensus.open_dataset``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from schemas.tables import PARTITION_KEY, TABLES, arrow_schema
from tests.conftest import QUICK_CRAWL, REPO, demo_seeds_file, read_table, run_cli

pd = pytest.importorskip("pandas", reason="the notebooks extra (pandas) is not installed")
pl = pytest.importorskip("polars", reason="the notebooks extra (polars) is not installed")

#: A crawl's default job id is its UTC start time, e.g. 20261127T211944Z.
DEFAULT_ID = re.compile(r"^\d{8}T\d{6}Z$")
JOB_ID_PARTITIONING = ds.partitioning(pa.schema([(PARTITION_KEY, pa.string())]), flavor="hive")


def _crawl(work: Path, server: object, *args: str) -> Path:
    out = work / "out"
    proc = run_cli(
        "crawl", "--seeds", str(demo_seeds_file(work, server)), "--out", str(out), *args,
        *QUICK_CRAWL, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def datasets(tmp_path_factory: pytest.TempPathFactory, demo_server: object) -> dict[str, Path]:
    """``timestamp-like``: one crawl under the default job id; ``number-like``: one as ``--job-id 2024``."""
    found = {
        "timestamp-like": _crawl(tmp_path_factory.mktemp("default-id"), demo_server),
        "number-like": _crawl(tmp_path_factory.mktemp("number-id"), demo_server, "--job-id", "2024"),
    }
    assert DEFAULT_ID.match(job_of(found["timestamp-like"], "fetch_log"))
    return found


def job_of(root: Path, table: str) -> str:
    """The one run's id, as its folder names it."""
    (folder,) = (root / table).glob(f"{PARTITION_KEY}=*")
    return folder.name.removeprefix(f"{PARTITION_KEY}=")


def _duckdb(path: Path) -> pa.Table:
    glob = (path / "**" / "*.parquet").as_posix()
    sql = f"SELECT * FROM read_parquet('{glob}', hive_partitioning = true, hive_types = {{'job_id': VARCHAR}})"
    relation = duckdb.sql(sql)
    assert relation is not None
    table: pa.Table = relation.to_arrow_table()
    return table


def _feedcensus(path: Path, how: str) -> pa.Table:
    """A table's folder read through ``feedcensus.open_dataset`` of its dataset root."""
    import feedcensus

    data, table = feedcensus.open_dataset(path.parent), path.name
    if how == "pandas":
        return pa.Table.from_pandas(data.to_pandas(table), preserve_index=False)
    if how == "polars":
        return data.to_polars(table).to_arrow()
    if how == "duckdb":
        read: pa.Table = data.duckdb().sql(f"SELECT * FROM {table}").to_arrow_table()
        return read
    return data.table(table)


#: The calls docs/datasets.md gives (and README.md's "The datasets"), each read into Arrow to compare.
#: ``path`` is a table's folder; ``open_dataset`` takes the dataset root.
READERS: dict[str, Callable[[Path], pa.Table]] = {
    "pyarrow": lambda path: ds.dataset(path, format="parquet", partitioning=JOB_ID_PARTITIONING).to_table(),
    "duckdb": _duckdb,
    "pandas": lambda path: pa.Table.from_pandas(
        pd.read_parquet(path, dtype_backend="pyarrow", partitioning=JOB_ID_PARTITIONING), preserve_index=False
    ),
    "polars.read_parquet": lambda path: pl.read_parquet(
        path / "**" / "*.parquet", hive_partitioning=True, hive_schema={"job_id": pl.String}
    ).to_arrow(),
    "polars.scan_parquet": lambda path: (
        pl.scan_parquet(path / "**" / "*.parquet", hive_partitioning=True, hive_schema={"job_id": pl.String})
        .collect()
        .to_arrow()
    ),
    **{
        f"open_dataset.{how}": functools.partial(_feedcensus, how=how)
        for how in ("table", "pandas", "polars", "duckdb")
    },
}


def plain_type(t: pa.DataType) -> str:
    """A type as every library means it: string/large_string/string_view are one string, a list is a
    list of its values' type whatever its offsets, a dictionary is its values, UTC is UTC."""
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return f"list<{plain_type(t.value_type)}>"
    if pa.types.is_dictionary(t):
        return plain_type(t.value_type)
    if pa.types.is_timestamp(t):
        tz = "UTC" if t.tz in ("UTC", "Etc/UTC", "+00:00") else t.tz
        return f"timestamp[{t.unit}, tz={tz}]"
    return str(t)


def expected_types(table: str) -> dict[str, str]:
    schema = arrow_schema(table).append(pa.field(PARTITION_KEY, pa.string()))
    return {f.name: plain_type(f.type) for f in schema}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("kind", ["timestamp-like", "number-like"])
@pytest.mark.parametrize("table", TABLES)
def test_every_reader_gives_every_table_the_schema_types(
    datasets: dict[str, Path], kind: str, table: str, reader: str
) -> None:
    root = datasets[kind]
    want = read_table(root, table)
    assert want.num_rows > 0, f"the demo crawl wrote no {table} rows"
    got = READERS[reader](root / table)
    assert got.num_rows == want.num_rows
    assert {f.name: plain_type(f.type) for f in got.schema} == expected_types(table)
    assert set(got.column(PARTITION_KEY).to_pylist()) == {job_of(root, table)}


@pytest.mark.parametrize("kind", ["timestamp-like", "number-like"])
def test_a_polars_user_filters_on_the_job_id_they_see(datasets: dict[str, Path], kind: str) -> None:
    """The issue's own line: ``pl.col("job_id") == "<the folder's id>"`` finds the run's rows."""
    root = datasets[kind]
    job = job_of(root, "feeds")
    frame = pl.read_parquet(
        root / "feeds" / "**" / "*.parquet", hive_partitioning=True, hive_schema={"job_id": pl.String}
    )
    assert frame.filter(pl.col("job_id") == job).height == read_table(root, "feeds").num_rows
    lazy = pl.scan_parquet(
        root / "feeds" / "**" / "*.parquet", hive_partitioning=True, hive_schema={"job_id": pl.String}
    )
    assert lazy.filter(pl.col("job_id") == job).collect().height == frame.height


def test_the_docs_give_the_calls_this_test_makes() -> None:
    """README.md and docs/datasets.md name each reader with the arguments that keep job_id a string."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    datasets_doc = (REPO / "docs" / "datasets.md").read_text(encoding="utf-8")
    for doc in (readme, datasets_doc):
        assert 'hive_schema={"job_id": pl.String}' in doc
        assert "hive_types = {'job_id': VARCHAR}" in doc
        assert 'dtype_backend="pyarrow"' in doc
        assert "feedcensus.open_dataset(" in doc
    assert 'pa.schema([("job_id", pa.string())]), flavor="hive"' in datasets_doc
