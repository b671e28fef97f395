"""End to end: the real spider crawls the demo web on 127.0.0.1; the Parquet is read back.

The ground truth is crawler/demo/web/EXPECTED.json (written from the fixture
files, not from our parser). One crawl per module; each test checks a table.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, overload
from urllib.parse import urlsplit

import duckdb
import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer, demo_root
from tests.conftest import crawl_demo, read_table, run_cli

EXPECTED = json.loads((demo_root() / "EXPECTED.json").read_text(encoding="utf-8"))


@overload
def path_of(url: str) -> str: ...
@overload
def path_of(url: None) -> None: ...
def path_of(url: str | None) -> str | None:
    if url is None:
        return None
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


#: Feeds parsed in a worker process (the default, auto, gives none on one core: one is asked for), or in the
#: crawl's own.
POOL = {"pool": ("-s", "FEEDCENSUS_WORKERS=1"), "in-process": ("-s", "FEEDCENSUS_WORKERS=0")}


@pytest.fixture(scope="module", params=list(POOL))
def crawl(tmp_path_factory: pytest.TempPathFactory, demo_server: Any, request: pytest.FixtureRequest) -> dict[str, Any]:
    work = tmp_path_factory.mktemp("e2e")
    demo_server.reset_hits()
    out = crawl_demo(work, demo_server, "e2e", *POOL[request.param])
    tables = {
        t: read_table(out, t).to_pylist()
        for t in ("feeds", "items", "element_usage", "links", "fetch_log", "conformance")
    }
    return {"out": out, "tables": tables, "hits": dict(demo_server.hits)}


def test_every_expected_feed_is_fetched_once_and_parsed(crawl: dict[str, Any]) -> None:
    feeds = crawl["tables"]["feeds"]
    by_final = {path_of(f["final_url"]): f for f in feeds}
    assert sorted(by_final) == sorted(EXPECTED["expected_feeds"])
    assert len(feeds) == len(by_final), "a feed document was written twice"
    for path, exp in EXPECTED["feeds"].items():
        row = by_final[path]
        assert (row["format"], row["version"], row["well_formed"], row["item_count"]) == (
            exp["format"],
            exp["version"],
            exp["well_formed"],
            exp["item_count"],
        ), path
        assert row["job_id"] == "e2e"
        assert row["title"] == exp["title"], path


def test_element_usage_matches_the_fixture_tally(crawl: dict[str, Any]) -> None:
    feeds = {f["url"]: path_of(f["final_url"]) for f in crawl["tables"]["feeds"]}
    channel: dict[str, dict[str, int]] = {}
    items_with: dict[str, dict[str, int]] = {}
    counts: dict[str, dict[str, int]] = {}
    for u in crawl["tables"]["element_usage"]:
        path = feeds[u["feed_url"]]
        if "@" in u["element"]:
            continue
        if u["scope"] == "channel":
            channel.setdefault(path, {})[u["element"]] = u["count"]
        elif u["scope"] == "item":
            items_with.setdefault(path, {})[u["element"]] = u["items_with"]
            counts.setdefault(path, {})[u["element"]] = u["count"]
    for path, exp in EXPECTED["feeds"].items():
        got_channel = {
            k: v for k, v in channel.get(path, {}).items() if k not in ("item", "atom:entry", "atom03:entry")
        }
        assert got_channel == exp["channel_elements"], path
        assert items_with.get(path, {}) == exp["item_elements"], path
        assert counts.get(path, {}) == exp["item_element_counts"], path


def test_items_rows_have_parsed_dates(crawl: dict[str, Any]) -> None:
    items = crawl["tables"]["items"]
    per_feed = Counter(path_of(i["feed_url"]) for i in items)
    assert sum(per_feed.values()) == sum(f["item_count"] for f in EXPECTED["feeds"].values())
    dated = [i for i in items if i["pub_date_raw"]]
    assert dated and all(i["date_form"] for i in dated)
    assert any(i["pub_date"] is not None and i["pub_date"].tzinfo is not None for i in dated)
    assert (
        any(i["date_form"] == "unparsed" or i["pub_date"] is None for i in dated)
        or len({i["date_form"] for i in dated}) > 1
    )


def test_links_follow_the_pages_in_order(crawl: dict[str, Any]) -> None:
    links: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(crawl["tables"]["links"], key=lambda r: (r["page_url"], r["position"])):
        links.setdefault(path_of(row["page_url"]), []).append(row)
    for page, exp in EXPECTED["pages"].items():
        got = links.get(page, [])
        assert [(path_of(r["href"]), r["rel"], r["type"], r["in_head"]) for r in got] == [
            (e["href"], e["rel"], e["type"], e["in_head"]) for e in exp["links"]
        ], page
        assert [r["position"] for r in got] == list(range(len(got)))
        # the default crawl follows body links too (EXPECTED's "followed"; --head-only follows in_head only)
        assert [r["followed"] for r in got] == [e["followed"] for e in exp["links"]], page


def first_rows_by_path(log: list[dict[str, Any]]) -> dict[str | None, dict[str, Any]]:
    """The fetch_log rows that are not duplicates, by the path of their URL."""
    return {path_of(r["url"]): r for r in log if r["outcome"] != "duplicate"}


def assert_dead_end_logged(
    log: list[dict[str, Any]], by_path: dict[str | None, dict[str, Any]], path: str, exp: dict[str, Any]
) -> None:
    """Check one EXPECTED["dead_ends"] entry against the fetch_log.

    A redirect only has to show up as some row's URL (that row may be a duplicate); any other
    dead end has its own first row with the expected outcome ("error" in EXPECTED is a
    redirect loop), and an HTTP error also has the expected status.
    """
    if exp["outcome"] == "redirect":
        dup = [r for r in log if path_of(r["url"]) == path]
        assert dup, path
        return
    row = by_path.get(path)
    assert row is not None, path
    expected = {"error": "redirect_loop"}.get(exp["outcome"], exp["outcome"])
    assert row["outcome"] == expected, (path, row)
    if exp["outcome"] == "http_error":
        assert row["status"] == exp["status"]


def test_fetch_log_accounts_for_every_url(crawl: dict[str, Any]) -> None:
    log = crawl["tables"]["fetch_log"]
    final = Counter(r["url"] for r in log if r["outcome"] != "duplicate")
    assert all(n == 1 for n in final.values()), [u for u, n in final.items() if n > 1]
    by_path = first_rows_by_path(log)
    for seed in EXPECTED["seeds"]:
        assert seed in by_path, seed
    for path, exp in EXPECTED["dead_ends"].items():
        if path == "/loop/b":
            continue  # requested only as the redirect target of /loop/a: its row is /loop/a's
        assert_dead_end_logged(log, by_path, path, exp)


def test_robots_denied_feed_is_never_requested(crawl: dict[str, Any]) -> None:
    """robots.txt disallows /private/: a polite crawl never requests it."""
    assert crawl["hits"].get("/private/feed.xml", 0) == 0


def test_opml_lists_are_logged_as_opml(crawl: dict[str, Any]) -> None:
    by_path = first_rows_by_path(crawl["tables"]["fetch_log"])
    for path, exp in EXPECTED["opml"].items():
        assert by_path[path]["outcome"] == "opml"
        if not exp["well_formed"]:
            assert "recovered" in (by_path[path]["error"] or "")


def test_reflexive_and_usm_columns(crawl: dict[str, Any]) -> None:
    feeds = crawl["tables"]["feeds"]
    for f in feeds:
        if f["discovered_via"] in ("opml", "url"):
            assert f["reflexive"] in ("advertises", "does_not_advertise", "page_unreachable", "no_link"), f["url"]
        else:
            assert f["reflexive"] is None
        exp = EXPECTED["feeds"][path_of(f["final_url"])]
        ctype = exp["content_type"].split(";")[0].strip()
        assert f["content_type_ok"] == (ctype in ("application/rss+xml", "application/atom+xml", "application/rdf+xml"))
    episodes = next(f for f in feeds if path_of(f["final_url"]) == "/podcast-d/episodes.rss")
    # Linked only from its page's <body>: found by autodiscovery because body links are followed by default.
    # (It is in no list, so which route finds it first never depends on response order.)
    assert episodes["discovered_via"] == "autodiscovery"
    assert path_of(episodes["source"]) == "/podcast-d/"


def test_duckdb_reads_every_table(crawl: dict[str, Any]) -> None:
    out: Path = crawl["out"]
    con = duckdb.connect()
    for table, rows in crawl["tables"].items():
        n = con.execute(
            f"SELECT count(*) FROM read_parquet('{out}/{table}/**/*.parquet', hive_partitioning=1) WHERE job_id = 'e2e'"
        ).fetchone()
        assert n is not None and n[0] == len(rows), table
    ts = con.execute(f"SELECT typeof(fetched_at) FROM read_parquet('{out}/feeds/**/*.parquet') LIMIT 1").fetchone()
    assert ts is not None and ts[0] == "TIMESTAMP WITH TIME ZONE"


def test_no_hidden_temporary_files_left(crawl: dict[str, Any]) -> None:
    leftovers = [p for p in Path(crawl["out"]).rglob(".*") if p.is_file()]
    assert leftovers == []


def test_survey_prints_the_tables(crawl: dict[str, Any]) -> None:
    proc = run_cli("survey", str(crawl["out"]))
    assert proc.returncode == 0, proc.stderr
    assert "| dc:creator |" in proc.stdout
    assert "RSS channel elements" in proc.stdout
    rss = sum(1 for f in EXPECTED["feeds"].values() if f["format"] == "rss")
    assert f"RSS channel elements ({rss} feeds)" in proc.stdout


def test_a_feed_whose_page_is_still_on_its_way_waits_for_it_without_a_second_row(tmp_path: Path) -> None:
    """The reflexive check asks for a page already requested: the page's one row answers it.

    The page is slow, so the feed (given directly) is read first and its page is asked for
    again while the first request is in flight. That request is dropped; it used to leave a
    duplicate row, so the row count of a crawl depended on timing.
    """
    page = b'<html><head><link rel="alternate" type="application/rss+xml" href="/site/feed.xml"></head></html>'
    feed = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>/site/</link>
        <description>d</description><item><title>i</title></item></channel></rss>"""
    web = Web()
    web.add("/site/", Route(body=page, headers={"Content-Type": "text/html"}, delay=1.5))
    web.add("/site/feed.xml", Route(body=feed, headers={"Content-Type": "application/rss+xml"}))
    out = tmp_path / "out"
    with WebServer(web) as server:
        base = server.url
        proc = run_cli(
            "crawl", "--out", str(out), "--job-id", "t", "--log-level", "INFO",
            "--url", base + "/site/", "--url", base + "/site/feed.xml", "-s", "ROBOTSTXT_OBEY=False",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "'feedcensus/reflexive/page_in_flight': 1" in proc.stderr, "the page was not asked for while in flight"
    log = sorted(
        (r["url"].removeprefix(base), r["outcome"], r["discovered_via"])
        for r in read_table(out, "fetch_log").to_pylist()
    )
    assert log == [
        ("/site/", "page", "url"),
        ("/site/feed.xml", "duplicate", "autodiscovery"),
        ("/site/feed.xml", "feed", "url"),
    ]
    [row] = read_table(out, "feeds").to_pylist()
    assert row["reflexive"] == "advertises"
