"""A feedcensus dataset opened for analysis: each table with the same types in pyarrow, DuckDB,
pandas and polars, and the survey's tables as data frames.

Thin by design: the reading is :func:`pipelines.dataset.store.open_table` (which checks every
file's schema version) and the survey is :func:`crawler.report.survey.compute`; this module only
hands their results over in the form each library wants. pandas, polars and DuckDB are imported
when first asked for, so ``import feedcensus`` costs no more than pyarrow.

The one type a reader can get wrong is ``job_id``: it is not stored in the files but read back
from the folder names (``feeds/job_id=20261127T211944Z/``), and readers left to guess take the
default id (a UTC time) for a timestamp and ``--job-id 2024`` for a number. Here it is always a
string.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa

from pipelines.dataset.store import list_jobs, open_table
from schemas.tables import PARTITION_KEY, TABLES, arrow_schema

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    import pyarrow.dataset as ds
    from duckdb import DuckDBPyConnection

    from crawler.report.model import Survey, Table

__all__ = ["Dataset", "DatasetError", "open_dataset", "survey_table_to_arrow"]

#: The Arrow type of each kind of survey column (crawler.report.model.Column.kind), for empty tables.
_KIND_TYPES: dict[str, pa.DataType] = {
    "text": pa.string(),
    "int": pa.int64(),
    "pct": pa.float64(),
    "list": pa.list_(pa.string()),
}


class DatasetError(ValueError):
    """The dataset, a job or a table asked for is not there."""


def _root(path_or_uri: str | os.PathLike[str]) -> str:
    text = os.fspath(path_or_uri)
    return text if "://" in text else os.path.abspath(text)


class Dataset:
    """One dataset root (a folder or a URI ``feedcensus crawl --out`` wrote); see :func:`open_dataset`.

    ``job=None`` means every run (rows carry a ``job_id`` column) in :meth:`arrow`, :meth:`table`,
    :meth:`to_pandas`, :meth:`to_polars` and :meth:`duckdb`; in :meth:`survey`,
    :meth:`survey_frames` and :meth:`survey_duckdb` it means the latest run, as ``feedcensus
    survey`` reads it.
    """

    #: The tables every dataset has (a table no run wrote to reads as empty, with its columns).
    tables: tuple[str, ...] = tuple(TABLES)

    def __init__(self, root: str) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"Dataset({self.root!r})"

    @property
    def jobs(self) -> list[str]:
        """The runs, in the order they started (the latest last), as ``feedcensus survey`` orders them."""
        return list_jobs(self.root)

    @property
    def latest_job(self) -> str:
        jobs = self.jobs
        if not jobs:
            raise DatasetError(f"no crawl found in {self.root} (expected {self.root}/fetch_log/job_id=...)")
        return jobs[-1]

    def _check(self, table: str, job: str | None) -> None:
        if table not in TABLES:
            raise DatasetError(f"no table {table!r}; tables: {', '.join(TABLES)}")
        if job is not None and job not in self.jobs:
            raise DatasetError(f"no job {job!r} in {self.root}; jobs: {', '.join(self.jobs)}")

    def arrow(self, table: str, job: str | None = None) -> ds.Dataset:
        """A ``pyarrow.dataset.Dataset`` of one table (one run, or every run), ``job_id`` a string,
        every file's schema version checked; nothing is read until it is scanned."""
        import pyarrow.dataset as ds

        self._check(table, job)
        try:
            dataset = open_table(self.root, table)
        except FileNotFoundError:  # no run wrote to this table
            schema = arrow_schema(table).append(pa.field(PARTITION_KEY, pa.string()))
            return ds.dataset(schema.empty_table())
        return dataset if job is None else dataset.filter(ds.field(PARTITION_KEY) == job)

    def table(self, table: str, job: str | None = None, columns: list[str] | None = None) -> pa.Table:
        """One table read into memory as a ``pyarrow.Table`` (the schema's types, ``job_id`` a string)."""
        return self.arrow(table, job).to_table(columns=columns)

    def to_pandas(self, table: str, job: str | None = None, columns: list[str] | None = None) -> pd.DataFrame:
        """One table as a pandas DataFrame with Arrow-backed columns (``pd.ArrowDtype``): integers
        with nulls stay integers, flags with nulls stay flags, timestamps keep UTC, lists stay lists."""
        import pandas as pd

        return self.table(table, job, columns).to_pandas(types_mapper=pd.ArrowDtype)

    def to_polars(self, table: str, job: str | None = None, columns: list[str] | None = None) -> pl.DataFrame:
        """One table as a polars DataFrame (``job_id`` a ``pl.String``)."""
        import polars as pl

        return cast("pl.DataFrame", pl.from_arrow(self.table(table, job, columns)))

    def duckdb(self, con: DuckDBPyConnection | None = None) -> DuckDBPyConnection:
        """A DuckDB connection (a new one, or ``con``) with one view per table over every run,
        ``job_id`` a ``VARCHAR``: ``SELECT ... FROM feeds WHERE job_id = '...'``."""
        import duckdb

        con = con if con is not None else duckdb.connect()
        for name in TABLES:
            con.register(name, self.arrow(name))
        return con

    def survey_duckdb(self, job: str | None = None) -> tuple[DuckDBPyConnection, str]:
        """A DuckDB connection with one view per table of one run (default: the latest) as
        ``feedcensus survey`` reads it, with the rows of feeds carried forward unchanged from an
        earlier run, and the run's id. The notebooks query this."""
        from crawler.report.views import SurveyError, connect

        try:
            return connect(self.root, job)
        except SurveyError as exc:
            raise DatasetError(str(exc)) from None

    def survey(self, job: str | None = None, fmt: str = "rss") -> Survey:
        """Every table of ``feedcensus survey`` for one run (default: the latest) and one format."""
        from crawler.report.survey import compute
        from crawler.report.views import SurveyError

        try:
            return compute(self.root, job, fmt=fmt)
        except SurveyError as exc:
            raise DatasetError(str(exc)) from None

    def survey_frames(self, job: str | None = None, fmt: str = "rss") -> dict[str, pd.DataFrame]:
        """The survey's tables by name (``formats``, ``channel_elements``, ``rule_failures``,
        ``breadth_funnel``...), each a pandas DataFrame: the rows of the CSV files ``survey --out`` writes,
        its columns first, then any other key the rows hold (``key`` in the breadth measure tables)."""
        import pandas as pd

        return {
            t.name: survey_table_to_arrow(t).to_pandas(types_mapper=pd.ArrowDtype) for t in self.survey(job, fmt).tables
        }


def survey_table_to_arrow(table: Table) -> pa.Table:
    """One survey table as a ``pyarrow.Table``: its columns in order, then any other keys its rows hold."""
    names = [c.key for c in table.columns]
    names += sorted({k for row in table.rows for k in row} - set(names))
    if not table.rows:
        kinds = {c.key: c.kind for c in table.columns}
        return pa.schema([(n, _KIND_TYPES.get(kinds.get(n, "text"), pa.string())) for n in names]).empty_table()
    return pa.table({n: _column([row.get(n) for row in table.rows]) for n in names})


def _column(values: list[object]) -> pa.Array[Any]:
    """Values as Arrow infers them (ints and floats together become floats); text when they mix kinds."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def open_dataset(path_or_uri: str | os.PathLike[str]) -> Dataset:
    """Open a dataset root: a folder, or any URI pyarrow reads (``s3://bucket/census?region=...``).

    ``DatasetError`` when it holds no crawl. Nothing else is read until a table is asked for.
    """
    dataset = Dataset(_root(path_or_uri))
    dataset.latest_job  # noqa: B018 (raises DatasetError when there is no run)
    return dataset
