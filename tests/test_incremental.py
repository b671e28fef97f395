"""Incremental crawls, for real: the same web crawled again and again into one dataset.

A loopback web serves feeds with and without validators, with a ttl and
without; a crawl runs, then runs again into the same ``--out``. What must
hold: known feeds are asked conditionally and cost a 304 and no parse; a
feed without validators whose body did not change is not parsed either; a
feed whose ttl has not passed is not fetched at all and says when it is due;
a survey of the latest job still covers every feed; and after one feed
gains an item, exactly that item is new.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from crawler.report.survey import compute
from crawler.report.views import connect
from tests.conftest import QUICK_CRAWL, read_table, run_cli

RSS = "application/rss+xml"


def rss(items: list[tuple[str, str]], *, ttl: int | None = None) -> bytes:
    ttl_el = f"<ttl>{ttl}</ttl>" if ttl is not None else ""
    entries = "".join(
        f"<item><title>{title}</title><link>https://example.org/{guid}</link><guid>{guid}</guid>"
        f"<description>About {title}</description><pubDate>Sun, 22 Nov 2026 08:00:00 GMT</pubDate></item>"
        for guid, title in items
    )
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>https://example.org/</link>'
        f"<description>D</description>{ttl_el}{entries}</channel></rss>"
    ).encode()


ITEMS = [("a1", "First"), ("a2", "Second")]


@pytest.fixture
def web() -> Iterator[tuple[Web, WebServer]]:
    web = Web()
    web.add("/ttl.xml", Route(rss(ITEMS, ttl=120), headers={"Content-Type": RSS}))
    web.add("/plain.xml", Route(rss([("p1", "Plain")]), headers={"Content-Type": RSS}))
    web.add("/bare.xml", Route(rss([("b1", "Bare")]), headers={"Content-Type": RSS}, validators=False))
    with WebServer(web) as server:
        yield web, server


def crawl(server: WebServer, out: Path, job: str, *flags: str) -> str:
    urls = [a for p in ("/ttl.xml", "/plain.xml", "/bare.xml") for a in ("--url", server.url_for(p))]
    proc = run_cli(
        "crawl", *urls, "--out", str(out), "--job-id", job, "--no-reflexive",
        *QUICK_CRAWL, *flags,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def rows(out: Path, table: str, job: str) -> list[dict[str, Any]]:
    return [r for r in read_table(out, table).to_pylist() if r["job_id"] == job]


def by_path(records: list[dict[str, object]], key: str = "url") -> dict[str, dict[str, object]]:
    return {str(r[key]).rsplit("/", 1)[-1]: r for r in records}


def test_second_run_revalidates_and_parses_nothing(web: tuple[Web, WebServer], tmp_path: Path) -> None:
    _, server = web
    out = tmp_path / "out"
    crawl(server, out, "j1")
    first = by_path(rows(out, "feeds", "j1"))
    assert {k: first[k]["changed"] for k in first} == {"ttl.xml": True, "plain.xml": True, "bare.xml": True}
    assert first["ttl.xml"]["ttl"] == 120 and first["ttl.xml"]["new_items"] == 2
    assert first["plain.xml"]["etag"] and not first["bare.xml"]["etag"]

    summary = crawl(server, out, "j2", "--ignore-hints")
    log = by_path(rows(out, "fetch_log", "j2"))
    assert log["ttl.xml"]["outcome"] == "not_modified" and log["ttl.xml"]["status"] == 304
    assert log["plain.xml"]["outcome"] == "not_modified" and log["plain.xml"]["bytes"] == 0
    assert log["bare.xml"]["outcome"] == "feed"  # no validators: downloaded in full, but its hash is the same
    feeds = by_path(rows(out, "feeds", "j2"))
    assert all(f["changed"] is False and f["parsed_job"] == "j1" for f in feeds.values()), feeds
    assert feeds["ttl.xml"]["item_count"] == 2 and feeds["ttl.xml"]["ttl"] == 120  # facts carried forward
    assert rows(out, "items", "j2") == [] and rows(out, "element_usage", "j2") == []  # nothing parsed
    assert "not modified 2, unchanged 1, new items 0" in summary

    # The survey of the latest job still covers every feed, through parsed_job.
    con, job = connect(str(out))
    assert job == "j2"
    assert con.execute("SELECT count(DISTINCT feed_url) FROM element_usage").fetchone() == (3,)
    assert con.execute("SELECT count(*) FROM items").fetchone() == (4,)
    identity = compute(str(out)).table("item_identity")
    assert [(r["source"], r["feeds"], r["items"]) for r in identity.rows] == [("guid", 3, 4)]


def test_ttl_not_passed_means_not_due_and_recorded(web: tuple[Web, WebServer], tmp_path: Path) -> None:
    _, server = web
    out = tmp_path / "out"
    crawl(server, out, "j1")
    server.reset_hits()
    crawl(server, out, "j2")
    log = by_path(rows(out, "fetch_log", "j2"))
    due = log["ttl.xml"]
    assert due["outcome"] == "not_due" and due["due_hint"] == "ttl"
    assert due["next_due"] is not None and "120" in str(due["due_reason"])
    assert server.hits.get("/ttl.xml", 0) == 0  # never requested
    carried = by_path(rows(out, "feeds", "j2"))["ttl.xml"]
    first = by_path(rows(out, "feeds", "j1"))["ttl.xml"]
    assert carried["changed"] is False and carried["fetched_at"] == first["fetched_at"]


def test_a_changed_feed_reports_exactly_its_new_item(web: tuple[Web, WebServer], tmp_path: Path) -> None:
    web_, server = web
    out = tmp_path / "out"
    crawl(server, out, "j1")
    crawl(server, out, "j2", "--ignore-hints")
    web_.add("/ttl.xml", Route(rss([("a3", "Third"), *ITEMS], ttl=120), headers={"Content-Type": RSS}))
    crawl(server, out, "j3", "--ignore-hints")
    feeds = by_path(rows(out, "feeds", "j3"))
    assert feeds["ttl.xml"]["changed"] is True and feeds["ttl.xml"]["new_items"] == 1
    assert feeds["plain.xml"]["changed"] is False
    items = rows(out, "items", "j3")
    assert [(i["guid"], i["is_new"]) for i in items] == [("a3", True), ("a1", False), ("a2", False)]
    assert {i["guid"]: i["first_seen_job"] for i in items} == {"a3": "j3", "a1": "j1", "a2": "j1"}


def test_refetch_parses_everything_anew(web: tuple[Web, WebServer], tmp_path: Path) -> None:
    _, server = web
    out = tmp_path / "out"
    crawl(server, out, "j1")
    crawl(server, out, "j2", "--refetch")
    feeds = by_path(rows(out, "feeds", "j2"))
    assert all(f["changed"] is True and f["parsed_job"] == "j2" for f in feeds.values())
    assert all(f["new_items"] == 0 for f in feeds.values())  # parsed again, but nothing new
    assert {r["outcome"] for r in feed_fetches(out, "j2")} == {"feed"}


def feed_fetches(out: Path, job: str) -> list[dict[str, object]]:
    return [r for r in rows(out, "fetch_log", job) if str(r["url"]).endswith(".xml")]


def test_incremental_off_is_a_full_crawl(web: tuple[Web, WebServer], tmp_path: Path) -> None:
    _, server = web
    out = tmp_path / "out"
    crawl(server, out, "j1")
    crawl(server, out, "j2", "-s", "FEEDCENSUS_INCREMENTAL=False")
    assert {r["outcome"] for r in feed_fetches(out, "j2")} == {"feed"}
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{out}/items/job_id=j2/*.parquet')").fetchone()
    assert n == (4,)


def test_a_feed_carried_forward_under_an_alias_stays_in_the_survey(tmp_path: Path) -> None:
    """Reached next time through a URL that redirects to it, the feed's rows are still found."""
    web = Web()
    web.add("/a.xml", Route(rss(ITEMS), headers={"Content-Type": RSS}))
    web.add("/alias", Route(status=301, headers={"Location": "{{BASE}}/a.xml"}))
    out = tmp_path / "out"
    with WebServer(web) as server:
        for job, path, flags in (("j1", "/a.xml", ()), ("j2", "/alias", ("--ignore-hints",))):
            proc = run_cli(
                "crawl", "--url", server.url_for(path), "--out", str(out), "--job-id", job, "--no-reflexive",
                *QUICK_CRAWL, *flags,
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr[-3000:]
    (feed,) = rows(out, "feeds", "j2")
    assert feed["url"].endswith("/alias") and feed["changed"] is False and feed["parsed_job"] == "j1"
    con, _ = connect(str(out), "j2")
    assert con.execute("SELECT count(*) FROM items").fetchone() == (2,)
    assert con.execute("SELECT count(DISTINCT feed_url) FROM element_usage").fetchone() == (1,)


def test_the_url_a_known_feed_redirected_to_stands_for_it_while_it_is_not_due(tmp_path: Path) -> None:
    """Known through ``/alias`` (which redirects to ``/a.xml``), the feed is not due; a page now names ``/a.xml``.

    Before: ``/a.xml`` had no state of its own, so it was fetched as a new feed with every item new (the
    second ``feedcensus demo`` into one folder showed it: its OPML names ``/blog-a/rss``, which redirects to
    the ``/blog-a/feed.xml`` its page advertises). Now the feed is recorded not due, once, under its known URL.
    """
    web = Web()
    web.add("/a.xml", Route(rss(ITEMS, ttl=120), headers={"Content-Type": RSS}))
    web.add("/alias", Route(status=301, headers={"Location": "{{BASE}}/a.xml"}))
    out = tmp_path / "out"
    with WebServer(web) as server:
        runs = (("j1", ["/alias"]), ("j2", ["/a.xml"]), ("j3", ["/a.xml", "/alias"]))
        for job, paths in runs:
            urls = [a for path in paths for a in ("--url", server.url_for(path))]
            proc = run_cli("crawl", *urls, "--out", str(out), "--job-id", job, "--no-reflexive", *QUICK_CRAWL)
            assert proc.returncode == 0, proc.stderr[-3000:]
        assert server.hits["/a.xml"] == 1  # j1's redirect only
        alias = server.url_for("/alias")
    for job in ("j2", "j3"):
        (feed,) = rows(out, "feeds", job)
        assert feed["url"] == alias and feed["changed"] is False, feed
        assert rows(out, "items", job) == []
        log = sorted((r["outcome"], r["url"].rsplit("/", 1)[-1]) for r in rows(out, "fetch_log", job))
        # j3 names both: the one looked at second (the order of --url is not kept) is a duplicate
        assert log[-1] == ("not_due", "alias") and [o for o, _ in log] == (
            ["not_due"] if job == "j2" else ["duplicate", "not_due"]
        ), log


def test_a_channel_page_that_is_a_feed_not_due_is_recorded_not_fetched(tmp_path: Path) -> None:
    """Feed A's <link> names feed B, which is not due: B gets its not_due row, A a verdict, nothing crashes."""
    web = Web()
    web.add("/b.xml", Route(rss([("b1", "B")], ttl=120), headers={"Content-Type": RSS}))
    out = tmp_path / "out"
    with WebServer(web) as server:
        b = server.url_for("/b.xml")
        a_body = rss(ITEMS).replace(b"<link>https://example.org/</link>", f"<link>{b}</link>".encode(), 1)
        always = {"Content-Type": RSS, "Cache-Control": "no-cache"}  # A is due at every run; B has a ttl
        web.add("/a.xml", Route(a_body, headers=always))
        for job in ("j1", "j2"):
            if job == "j2":  # A changes, so it is parsed again and its channel page looked at again
                web.add("/a.xml", Route(a_body.replace(b"First", b"First, edited"), headers=always))
            proc = run_cli(
                "crawl", "--url", server.url_for("/a.xml"), "--url", b, "--out", str(out), "--job-id", job,
                *QUICK_CRAWL, "--min-interval", "0",
            )  # fmt: skip
            assert proc.returncode == 0, proc.stderr[-3000:]
            assert "Traceback" not in proc.stderr
    log = [(r["url"].rsplit("/", 1)[-1], r["outcome"]) for r in rows(out, "fetch_log", "j2")]
    assert log.count(("b.xml", "not_due")) == 1 and ("b.xml", "feed") not in log, log
    feeds = by_path(rows(out, "feeds", "j2"))
    assert feeds["a.xml"]["changed"] is True and feeds["a.xml"]["reflexive"] == "does_not_advertise"
