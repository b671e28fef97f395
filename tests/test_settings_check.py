"""Settings checked where Scrapy reads them (issue #38): ``scrapy crawl census`` and scrapyd refuse what
``feedcensus crawl`` refuses, with the same reason, when the crawler is built (crawler/settingchecks.py,
crawler/extensions/settingscheck.py). Before, ``scrapy crawl census -s DOWNLOAD_TIMEOUT=-1`` crawled and
failed inside Twisted on every request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings
from scrapy.utils.project import get_project_settings

from crawler.settingchecks import settings_problem, value_problem
from tests.conftest import REPO, run_cli


def project() -> Settings:
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "crawler.settings")
    return get_project_settings()


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("DOWNLOAD_TIMEOUT", "-1", "DOWNLOAD_TIMEOUT takes a number above 0, not '-1'"),
        ("CONCURRENT_REQUESTS_PER_DOMAIN", "0", "takes a number of at least 1"),
        ("ROBOTSTXT_OBEY", "maybe", "ROBOTSTXT_OBEY takes true or false"),
        ("DOWNLOAD_DELAY", float("nan"), "DOWNLOAD_DELAY takes a number"),
        ("FEEDCENSUS_CRAWL_DELAY_MAXX", "3", "no feedcensus setting is named FEEDCENSUS_CRAWL_DELAY_MAXX"),
    ],
)
def test_a_setting_given_above_the_project_is_checked_against_its_default(name: str, value: object, says: str) -> None:
    settings = project()
    settings.set(name, value, priority="cmdline")
    problem = settings_problem(settings, project())
    assert problem is not None and says in problem, problem


def test_good_values_typed_or_as_text_pass() -> None:
    settings = project()
    for name, value in (("DOWNLOAD_DELAY", "0.5"), ("ROBOTSTXT_OBEY", False), ("CONCURRENT_REQUESTS", 4)):
        settings.set(name, value, priority="cmdline")
    settings.set("DOWNLOAD_HANDLERS", {"http": "x.Y"}, priority="cmdline")  # a JSON object given as one
    assert settings_problem(settings, project()) is None
    assert value_problem("DOWNLOAD_DELAY", True, 0.0) is not None  # a flag is no number


def test_scrapy_crawl_refuses_a_bad_setting_before_it_crawls(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "census", "-a", "url=http://127.0.0.1:9/",
         "-s", f"FEEDCENSUS_OUT={tmp_path / 'out'}", "-s", "DOWNLOAD_TIMEOUT=-1"],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.endswith("setting refused: DOWNLOAD_TIMEOUT takes a number above 0, not '-1'"), last
    assert not (tmp_path / "out" / "fetch_log").exists()  # nothing was crawled
    # feedcensus crawl says the same, in one line, exit 2
    cli = run_cli("crawl", "--url", "http://127.0.0.1:9/", "--out", str(tmp_path / "o2"), "-s", "DOWNLOAD_TIMEOUT=-1")
    assert cli.returncode == 2 and "DOWNLOAD_TIMEOUT takes a number above 0, not '-1'" in cli.stderr
