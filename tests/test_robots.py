"""robots.txt is obeyed by every request, also by those that wait while robots.txt downloads.

Scrapy 2.19's own middleware hands the parser to the first waiting request
only; the others see "no robots.txt" and go ahead (crawler/middlewares/robots.py).
"""

from __future__ import annotations

from pathlib import Path

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from tests.conftest import QUICK_CRAWL, read_table, run_cli

RSS = b'<rss version="2.0"><channel><title>t</title><link>http://x/</link><description>d</description></channel></rss>'


def test_requests_waiting_for_robots_txt_obey_it(tmp_path: Path) -> None:
    web = Web()
    web.add(
        "/robots.txt", Route(b"User-agent: *\nDisallow: /private/\n", headers={"Content-Type": "text/plain"}, delay=0.5)
    )
    for i in range(12):
        web.add(f"/private/f{i}.xml", Route(RSS, headers={"Content-Type": "application/rss+xml"}))
    web.add("/open.xml", Route(RSS, headers={"Content-Type": "application/rss+xml"}))
    with WebServer(web) as server:
        urls = [f"{server.url}/private/f{i}.xml" for i in range(12)] + [f"{server.url}/open.xml"]
        proc = run_cli(
            "crawl",
            "--out",
            str(tmp_path / "out"),
            "--no-reflexive",
            *[a for u in urls for a in ("--url", u)],
            *QUICK_CRAWL,
            "-s",
            "CONCURRENT_REQUESTS_PER_DOMAIN=16",
        )
        hits = dict(server.hits)
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcomes = {r["url"].rsplit("/", 1)[1]: r["outcome"] for r in read_table(tmp_path / "out", "fetch_log").to_pylist()}
    assert {k: v for k, v in outcomes.items() if k.startswith("f")} == {f"f{i}.xml": "robots_denied" for i in range(12)}
    assert outcomes["open.xml"] == "feed" and outcomes["robots.txt"] == "robots"
    assert not [p for p in hits if p.startswith("/private/")]
    assert hits["/robots.txt"] == 1
