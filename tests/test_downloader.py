"""The per-host concurrency limit, measured from the server's side (crawler/downloader.py).

Scrapy 2.19 started every queued request of a host at once when the host's slot had no delay
(``AUTOTHROTTLE_ENABLED=False``, ``DOWNLOAD_DELAY=0``): ``CONCURRENT_REQUESTS_PER_DOMAIN`` did not hold.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from crawler.demo.routes import Route, Web
from tests.conftest import QUICK_CRAWL, TimedServer, run_cli

FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.org/</link>'
    b"<description>d</description></channel></rss>"
)


def test_the_per_host_concurrency_limit_holds_without_a_delay(tmp_path: Path) -> None:
    web = Web()
    feeds = [f"/c{n}.xml" for n in range(8)]
    for path in feeds:
        web.add(path, Route(FEED, headers={"Content-Type": "application/rss+xml"}, delay=0.3))
    with TimedServer(web) as server:
        urls = [a for p in feeds for a in ("--url", server.url_for(p))]
        proc = run_cli(
            "crawl", *urls, "--out", str(tmp_path / "out"), "--no-reflexive", *QUICK_CRAWL,
            "-s", "ROBOTSTXT_OBEY=False", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1", "-s", "DOWNLOAD_DELAY=0",
            timeout=120,
        )  # fmt: skip
        arrivals = sorted(t for t, _ in server.log)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len(arrivals) == len(feeds)
    # One at a time: each request arrives after the one before was answered (0.3 s later), not all at once
    # (before: gaps of 2-5 ms after the first).
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert min(gaps) > 0.25, [round(g, 3) for g in gaps]
