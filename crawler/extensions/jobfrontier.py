"""The distributed job's frontier, for the components that share a host's state with the job's other
workers (the robots.txt and host-pause middlewares, the downloader's start tickets). One place that finds
it, and only in a distributed crawl: a plain crawl never imports the frontier (redis, scrapy-redis)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def job_frontier(crawler: Crawler) -> Any:
    """The job's :class:`~crawler.frontier.Frontier` (None on a plain crawl, or before the worker has joined
    the job)."""
    if not crawler.settings.get("FEEDCENSUS_FRONTIER"):
        return None
    from crawler.frontier import FrontierWorker

    worker = crawler.get_extension(FrontierWorker)
    return worker.frontier if worker is not None else None
