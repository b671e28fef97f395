"""feedcensus for analysts: ``feedcensus.open_dataset(path_or_uri)`` and the dataset's tables in
pyarrow, DuckDB, pandas and polars, with the same types in each (docs/datasets.md).

::

    import feedcensus

    data = feedcensus.open_dataset("demo-out")  # or "s3://bucket/census?region=eu-west-1"
    data.jobs                                    # the runs, oldest first
    feeds = data.to_polars("feeds", job=data.latest_job)
    items = data.to_pandas("items")              # every run, with a job_id column
    con = data.duckdb()                          # one view per table: con.sql("SELECT ... FROM feeds")
    frames = data.survey_frames()                # the survey's tables as pandas DataFrames

The crawler itself lives in the top-level packages ``crawler``, ``pipelines`` and ``schemas``
(why they keep those names: docs/datasets.md); this package only imports from them.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from feedcensus.dataset import Dataset, DatasetError, open_dataset
from feedcensus.markdown import markdown_cell, markdown_table

__all__ = ["Dataset", "DatasetError", "__version__", "markdown_cell", "markdown_table", "open_dataset"]

try:
    __version__: str = version("feedcensus")
except PackageNotFoundError:  # a source tree that was never installed (pip install -e . installs it)
    __version__ = "0+unknown"
