"""Every crawl's settings checked when the crawler is built (``SettingsCheck``), as ``feedcensus crawl``
checks its ``-s`` values, so ``scrapy crawl census`` and scrapyd refuse the same values with the same
one-line reason (crawler/settingchecks.py) instead of failing in an odd way mid-crawl."""

from __future__ import annotations

from typing import TYPE_CHECKING

from crawler.settingchecks import settings_problem

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class SettingsError(ValueError):
    """A setting holds what it cannot: the message is one line naming the setting and what it takes."""


class SettingsCheck:
    """Refuses, before anything is crawled, a setting given a value it cannot hold."""

    def __init__(self, crawler: Crawler) -> None:
        import os

        from scrapy.utils.project import get_project_settings

        os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "crawler.settings")
        problem = settings_problem(crawler.settings, get_project_settings())
        if problem is not None:
            raise SettingsError(f"setting refused: {problem}")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)
