"""What a crawl imports: not the libraries only other commands need.

A scheduled job on a short list spends much of its life starting up. ``pyarrow.dataset`` imports
pandas (0.4 s here) and DuckDB takes 0.1 s; a crawl needs neither unless it reads an earlier job
(incremental state) or an archive index, so they are imported where those are read. Each check runs
in a fresh interpreter, so what the test session imported before does not count. (What a document
worker imports is checked in a real worker: tests/test_pool.py.)
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Import what `feedcensus crawl` loads before crawling: the CLI, every component the settings name,
#: and every spider module (Scrapy's spider loader imports them all), then list what was imported.
_CRAWL_IMPORTS = """
import json, sys
import crawler.cli.crawl
import crawler.settings as project
from scrapy.settings import Settings
from scrapy.spiderloader import SpiderLoader
from scrapy.utils.misc import load_object
for table in (project.SPIDER_MIDDLEWARES, project.DOWNLOADER_MIDDLEWARES, project.ITEM_PIPELINES, project.EXTENSIONS):
    for path, order in table.items():
        if order is not None:
            load_object(path)
SpiderLoader.from_settings(Settings({"SPIDER_MODULES": project.SPIDER_MODULES}))
print(json.dumps(sorted(sys.modules)))
"""


@functools.cache  # two tests read what a crawl imports: one interpreter for both
def imported_by(code: str) -> frozenset[str]:
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return frozenset(json.loads(out.strip().splitlines()[-1]))


def test_a_crawl_starts_without_pandas_or_duckdb() -> None:
    modules = imported_by(_CRAWL_IMPORTS)
    assert (
        "crawler.spiders.archive" in modules and "crawler.extensions.dataset" in modules
    )  # the check saw a crawl's imports
    assert {"pandas", "duckdb", "pyarrow.dataset"} & modules == set()


def test_a_crawl_starts_without_the_parser_and_the_checks() -> None:
    """With document workers (the default) only they parse; they import the document code themselves."""
    modules = imported_by(_CRAWL_IMPORTS)
    assert "pipelines.feed" in modules and "pipelines.document.pool" in modules  # the feed pipeline was imported
    assert {
        "pipelines.document.process",
        "pipelines.document.feedparse",
        "pipelines.document.checks",
    } & modules == set()


def test_a_crawl_on_one_machine_does_not_import_the_shared_frontier() -> None:
    """crawler.frontier imports redis and scrapy_redis (85 ms): only a distributed crawl lists it."""
    modules = imported_by(_CRAWL_IMPORTS)
    assert "crawler.spiders.census" in modules
    assert {"crawler.frontier", "redis", "scrapy_redis"} & modules == set()


#: What Scrapy does with the extension list when a crawler starts: it imports every class named in
#: EXTENSIONS (one set to None too, to normalise the names), then every class left in the list with
#: EXTENSIONS_BASE (to ask it whether it is configured).
_EXTENSION_LIST = """
import json, sys
import crawler.settings as project
from scrapy.settings import Settings
from scrapy.utils.misc import load_object
settings = Settings()
settings.setmodule(project, priority="project")
for path in settings.get_component_priority_dict_with_base("EXTENSIONS"):
    load_object(path)
print(json.dumps(sorted(sys.modules)))
"""


def test_a_crawl_does_not_import_the_remote_control_it_turns_off() -> None:
    """Scrapy's remote control imports aiohttp (0.2 s of every crawl's start) even when it is disabled."""
    modules = imported_by(_EXTENSION_LIST)
    assert "scrapy.extensions.corestats" in modules  # Scrapy's own extensions were listed and imported
    assert {"scrapy.extensions.remote_control", "aiohttp"} & modules == set()


#: The dataset writer's conversion of a commit's dict rows (pipelines/dataset/commits.py: arrow_table),
#: after what `feedcensus crawl` does first (crawler/cli/crawl.py: run_crawl).
_COMMIT_CONVERSION = """
import json, sys
from pipelines.dataset.nopandas import pyarrow_without_pandas
pyarrow_without_pandas()
from pipelines.dataset.commits import arrow_table
table = arrow_table("fetch_log", [{"url": "http://a.example/", "outcome": "ok", "status": 200}], [])
converted = table.num_rows == 1 and "pandas" not in sys.modules
import pandas  # code of the user's own still can
print(json.dumps([converted, pandas.DataFrame({"a": [1]}).shape[0]]))
"""


def test_a_crawl_converts_its_rows_to_arrow_without_pyarrow_importing_pandas() -> None:
    """pyarrow imports pandas at its first conversion of Python values (0.3 s and 45 MiB a crawl)."""
    pytest.importorskip("pandas")  # without pandas there is nothing to keep out
    out = subprocess.run(
        [sys.executable, "-c", _COMMIT_CONVERSION], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True, 1]
