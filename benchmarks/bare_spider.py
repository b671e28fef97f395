"""The bare Scrapy spider the crawl benchmark compares with: fetch every URL of a list, nothing else.

No parsing, no items, no pipelines: the response callback returns nothing. Settings come from the
command line (``-s NAME=VALUE``) so that the benchmark gives it exactly the concurrency and download
settings it gives ``feedcensus crawl``; ``FEEDCENSUS_SWITCH_INTERVAL`` and ``FEEDCENSUS_GC_THRESHOLD``, the
project's interpreter settings, are applied by the project's extensions (crawler/extensions/switching.py
and gc_threshold.py), as in ``feedcensus crawl``.

    python benchmarks/bare_spider.py URLS_FILE [-s NAME=VALUE]...
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from scrapy import Request, Spider
from scrapy.crawler import CrawlerProcess

import crawler.settings as project

#: Scrapy's own components that crawler/settings.py turns off (set to None there).
OFF_SPIDER_MIDDLEWARES = [n for n, v in project.SPIDER_MIDDLEWARES.items() if v is None and n.startswith("scrapy.")]
#: The same for downloader middlewares, but not those the project replaces with its own (retries, robots.txt).
OFF_DOWNLOADER_MIDDLEWARES = ["scrapy.downloadermiddlewares.offsite.OffsiteMiddleware"]


class BareSpider(Spider):
    """Fetch every URL in a file with Scrapy and do nothing else."""

    name = "bare"

    def __init__(self, urls_file: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.urls_file = urls_file

    async def start(self) -> AsyncIterator[Any]:
        with open(self.urls_file, encoding="utf-8") as f:
            for line in f:
                url = line.strip()
                if url:
                    yield Request(url, callback=self.parse, dont_filter=True)

    def parse(self, response: Any, **kwargs: Any) -> None:
        return None


def main(argv: list[str] | None = None, spider: type[Spider] = BareSpider) -> int:
    parser = argparse.ArgumentParser(description=(spider.__doc__ or "").split("\n\n")[0])
    parser.add_argument("urls_file", type=Path)
    parser.add_argument("-s", "--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args(argv)
    settings: dict[str, Any] = {
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
        "AUTOTHROTTLE_ENABLED": False,
        # The Scrapy components crawler/settings.py turns off because a census never uses them, off here
        # too, so that the references do not pay for what ours does not.
        "TELNETCONSOLE_ENABLED": False,
        "REMOTE_CONTROL_ENABLED": False,
        "EXTENSIONS_BASE": project.EXTENSIONS_BASE,
        # The project's stats collector (crawler/stats.py): Scrapy's own, without the cost of its
        # deprecation shim on every call.
        "STATS_CLASS": project.STATS_CLASS,
        "SPIDER_MIDDLEWARES": {name: None for name in OFF_SPIDER_MIDDLEWARES},
        "DOWNLOADER_MIDDLEWARES": {name: None for name in OFF_DOWNLOADER_MIDDLEWARES},
    }
    for kv in args.set:
        name, _, value = kv.partition("=")
        settings[name] = value
    # The project's interpreter settings, applied by the project's own extensions, so every crawler of the
    # benchmark gets them alike (without helper threads the bare spider has little for the switch interval
    # to change). Unless extensions were given with -s EXTENSIONS=...
    settings.setdefault(
        "EXTENSIONS",
        {
            path: 0
            for name, path in (
                ("FEEDCENSUS_SWITCH_INTERVAL", "crawler.extensions.switching.SwitchInterval"),
                ("FEEDCENSUS_GC_THRESHOLD", "crawler.extensions.gc_threshold.GcThreshold"),
            )
            if name in settings
        },
    )
    # Logging as `feedcensus crawl` sets it up (crawler/cli/crawl.py: crawl_settings, run_crawl,
    # crawl_logging): Scrapy's root handler is not installed, and the root logger's own level is INFO (or
    # LOG_LEVEL, if lower), so Scrapy's DEBUG messages for every response and item ("Crawled", "Scraped
    # from") are never built. Scrapy's root handler would set the root logger to NOTSET and filter at the
    # handler instead: each such record built, then dropped (paired 3,000-site runs: the bare spider 2.27
    # -> 2.20 ms of CPU a response; py-spy: 3 % of the shaped spider's samples).
    settings["LOG_INSTALL_ROOT_HANDLER"] = False
    level = logging.getLevelNamesMapping()[str(settings["LOG_LEVEL"]).upper()]
    handler = logging.StreamHandler()
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(asctime)s [%(name)s] %(levelname)s: %(message)s"))
    logging.root.addHandler(handler)
    logging.root.setLevel(min(logging.INFO, level))
    process = CrawlerProcess(settings)
    logging.getLogger("scrapy").setLevel(logging.NOTSET)  # Scrapy's logging config (just applied) says DEBUG
    crawler = process.create_crawler(spider)
    process.crawl(crawler, urls_file=str(args.urls_file))
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    print(
        f"responses={stats.get('response_received_count', 0)} status_200={stats.get('downloader/response_status_count/200', 0)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
