"""--guess: candidate feed URLs for pages that advertise none (pure function), and in a real crawl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from crawler.fetch.guess import COMMON_PATHS, guess_feed_urls
from tests.conftest import QUICK_CRAWL, read_table, run_cli


def test_feed_looking_links_come_first_then_common_paths() -> None:
    page = b"""<html><body>
      <a href="/about">About</a>
      <A HREF='/blog/feed/'>Subscribe</A>
      <a href=/news.rss>News</a>
      <a href="https://elsewhere.example/rss.xml">offsite</a>
      <a href="javascript:void(0)">rss</a>
    </body></html>"""
    got = guess_feed_urls(page, "http://site.example/index.html")
    assert got[:2] == ["http://site.example/blog/feed/", "http://site.example/news.rss"]
    assert got[2:] == [f"http://site.example{p}" for p in COMMON_PATHS]


def test_no_guesses_for_non_http_pages_and_garbage_is_harmless() -> None:
    assert guess_feed_urls(b"<a href=/feed>", "file:///tmp/x.html") == []
    assert guess_feed_urls(b"\x00\xff" * 100, "http://h.example/")[-1] == "http://h.example/rss"


def test_guess_finds_a_feed_on_a_page_that_advertises_none(tmp_path: Path) -> None:
    web = Web()
    rss = b'<rss version="2.0"><channel><title>t</title><link>http://x/</link><description>d</description></channel></rss>'
    web.add(
        "/",
        Route(
            b"<html><head><title>no links</title></head><body>hello</body></html>",
            headers={"Content-Type": "text/html"},
        ),
    )
    web.add("/feed.xml", Route(rss, headers={"Content-Type": "application/rss+xml"}))
    with WebServer(web) as server:
        base = server.url
        args: list[Any] = [
            "crawl",
            "--url",
            f"{base}/",
            "--out",
            str(tmp_path / "out"),
            "--guess",
            *QUICK_CRAWL,
            "-s",
            "ROBOTSTXT_OBEY=False",
        ]
        proc = run_cli(*args)
        assert proc.returncode == 0, proc.stderr[-2000:]
        off = run_cli(
            *[a for a in args if a != "--guess"][:-4],
            "--out",
            str(tmp_path / "off"),
            *QUICK_CRAWL,
            "-s",
            "ROBOTSTXT_OBEY=False",
        )
        assert off.returncode == 0
    feeds = read_table(tmp_path / "out", "feeds").to_pylist()
    assert [(f["url"], f["discovered_via"]) for f in feeds] == [(f"{base}/feed.xml", "guess")]
    log = read_table(tmp_path / "out", "fetch_log").to_pylist()
    guessed = {r["url"] for r in log if r["discovered_via"] == "guess"}
    assert guessed == {f"{base}{p}" for p in COMMON_PATHS}
    assert not (tmp_path / "off" / "feeds").exists()
