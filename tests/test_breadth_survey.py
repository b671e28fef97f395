"""The survey's breadth sections (issue #16), each figure recomputed independently with DuckDB.

A small loopback web built here, varied on purpose: RSS and Atom, generators, languages, hub,
self and paging links, duplicate guids and links, a default title, HTML in a title, undated and
future-dated items, a broken feed, a 404, pages advertising feeds with rel=alternate, rel=feed,
both, and an RSS+Atom pair of one channel. It is crawled for real and surveyed with
``feedcensus survey``; the breadth CSVs are read back by key and every figure checked against
plain SQL over ``read_parquet`` and against what the web was built to hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from crawler.report.breadth import DEFAULT_TITLES, read_measures
from tests.conftest import QUICK_CRAWL, run_cli

NOW = datetime.now(UTC)
RSS = "application/rss+xml"
ATOM = "application/atom+xml"


def rfc(days: float) -> str:
    return format_datetime(NOW - timedelta(days=days), usegmt=True)


def iso(days: float) -> str:
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


def rss(channel: str, items: str, ns: str = "") -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" '
        f'xmlns:content="http://purl.org/rss/1.0/modules/content/"{ns}><channel>{channel}{items}</channel></rss>'
    ).encode()


def item(title: str, link: str, guid: str, date: str | None, extra: str = "") -> str:
    when = f"<pubDate>{date}</pubDate>" if date else ""
    return f"<item><title>{title}</title><link>{link}</link><guid>{guid}</guid>{when}{extra}</item>"


def build(web: Web, base: str) -> None:
    a_items = "".join(
        [
            item("First post", f"{base}/a/1", "g1", rfc(1), "<content:encoded>&lt;p&gt;long body&lt;/p&gt;</content:encoded>"),
            item("Second post", f"{base}/a/1", "g1", rfc(2), "<description>short</description>"),
            item("Untitled", f"{base}/a/3", "g3", None, "<description>undated</description>"),
            item("&lt;b&gt;Bold&lt;/b&gt; news", f"{base}/a/4", "g4", format_datetime(datetime(2099, 1, 1, tzinfo=UTC))),
        ]
    )  # fmt: skip
    a = rss(
        f"<title>Feed A</title><link>{base}/a/</link><description>a</description><language>en</language>"
        f"<generator>https://wordpress.org/?v=6.4</generator><lastBuildDate>{rfc(1)}</lastBuildDate>"
        f'<atom:link rel="self" href="{base}/a.xml"/><atom:link rel="hub" href="https://hub.example/"/>'
        f'<atom:link rel="next" href="{base}/a.xml?page=2"/>',
        a_items,
    )
    b = (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom" xml:lang="de">'
        f'<title>Feed B</title><link href="{base}/b/"/><id>urn:b</id><updated>{iso(3)}</updated>'
        '<generator uri="https://gohugo.io/">Hugo</generator>'
        f'<link rel="self" href="{base}/elsewhere.xml"/><link rel="prev-archive" href="{base}/b-2024.xml"/>'
        + "".join(
            f'<entry><title>Eintrag {k}</title><link href="{base}/b/{k}"/><id>urn:b:{k}</id>'
            f"<updated>{iso(3 + 7 * k)}</updated><summary>kurz {k}</summary></entry>"
            for k in range(4)
        )
        + "</feed>"
    ).encode()
    c = rss(
        f"<title>Feed C</title><link>{base}/c/</link><description>c</description>",
        "".join(item(f"Old {k}", f"{base}/c/{k}", f"c{k}", "Mon, 05 Jan 2015 10:00:00 GMT") for k in range(3)),
    )
    broken = b'<?xml version="1.0"?><rss version="2.0"><channel><title>Broken &nbsp; feed</title></channel></rss>'
    pair_rss = rss(
        f"<title>Pair</title><link>{base}/pair/</link><description>p</description>",
        item("Pair post", f"{base}/pair/1", "p1", rfc(5)),
    )
    pair_atom = (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        f'<title>Pair</title><link href="{base}/pair/"/><id>urn:pair</id><updated>{iso(5)}</updated>'
        f'<entry><title>Pair post</title><link href="{base}/pair/1"/><id>urn:pair:1</id><updated>{iso(5)}</updated>'
        "</entry></feed>"
    ).encode()
    for path, body, ctype in (
        ("/a.xml", a, RSS), ("/b.xml", b, ATOM), ("/c.xml", c, "text/xml"), ("/broken.xml", broken, RSS),
        ("/pair.rss", pair_rss, RSS), ("/pair.atom", pair_atom, ATOM),
    ):  # fmt: skip
        web.add(path, Route(body=body, headers={"Content-Type": ctype}))

    def page(links: str, extra: str = "") -> Route:
        html = f'<!DOCTYPE html><html lang="en"><head><title>p</title>{extra}{links}</head><body>x</body></html>'
        return Route(body=html.encode(), headers={"Content-Type": "text/html; charset=utf-8"})

    web.add(
        "/alt.html",
        page(f'<link rel="alternate" type="{RSS}" href="/a.xml">', '<meta name="generator" content="WordPress 6.4">'),
    )
    web.add("/feed.html", page(f'<link rel="feed" type="{ATOM}" href="/b.xml">'))
    web.add("/both.html", page(f'<link rel="alternate feed" type="{RSS}" href="/c.xml">'))
    web.add(
        "/pair.html",
        page(
            f'<link rel="alternate" type="{RSS}" href="/pair.rss"><link rel="alternate" type="{ATOM}" href="/pair.atom">'
        ),
    )
    web.add("/none.html", page(""))


PAGES = ("alt", "feed", "both", "pair", "none")
FEEDS = ("a.xml", "b.xml", "c.xml", "broken.xml", "pair.rss", "pair.atom", "gone.xml")


@pytest.fixture(scope="module")
def surveyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    work = tmp_path_factory.mktemp("breadth")
    out, report = work / "out", work / "report"
    web = Web()
    with WebServer(web) as server:
        build(web, server.url)
        urls = [server.url_for(f"/{p}.html") for p in PAGES] + [server.url_for(f"/{f}") for f in FEEDS]
        proc = run_cli(
            "crawl", *[a for u in urls for a in ("--url", u)], "--out", str(out), "--job-id", "breadth",
            "--no-reflexive", "--log-level", "WARNING", "-s", "ROBOTSTXT_OBEY=False", *QUICK_CRAWL,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
    proc = run_cli("survey", str(out), "--out", str(report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    con = duckdb.connect()
    for table in ("feeds", "items", "fetch_log", "links", "pages", "element_usage"):
        files = list((out / table).glob("job_id=*/*.parquet"))
        if files:
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{out}/{table}/job_id=*/*.parquet')")
    yield {"m": read_measures(report), "con": con, "report": report, "out": out}
    con.close()


def one(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    assert row is not None
    return row[0]


def test_run_summary(surveyed: dict[str, Any]) -> None:
    m, con = surveyed["m"], surveyed["con"]
    assert m["feed_urls_checked"] == len(FEEDS)
    assert m["html_pages"] == len(PAGES) == one(con, "SELECT count(*) FROM fetch_log WHERE outcome = 'page'")
    strict = one(con, "SELECT count(*) FROM feeds WHERE format IN ('rss', 'atom', 'rdf') AND well_formed")
    assert m["feeds_parsed_strict"] == strict == 5  # a, b, c, and the pair
    assert m["feeds_unparsed_strict"] == 2  # broken, gone
    assert m["feeds_atom"] == 2 and m["feeds_rss_family"] == 3
    assert m["items_total"] == one(con, "SELECT sum(item_count) FROM feeds WHERE well_formed")
    assert m["funnel_active"] == 4  # c is from 2015


def test_autodiscovery_as_the_peer_counts_it(surveyed: dict[str, Any]) -> None:
    m, con = surveyed["m"], surveyed["con"]
    assert m["pages_with_feed_links"] == 4
    assert m["pages_rel_alternate"] == 3  # alt, both, pair
    assert m["pages_rel_feed"] == 2  # feed, both
    assert m["pages_rel_both"] == 1
    assert m["multi_rel_links"] == 1 and m["pages_multi_rel"] == 1
    assert m["pages_multi_feed"] == 1 and m["pages_format_pairs"] == 1
    linked = one(
        con,
        """SELECT count(DISTINCT f.url) FROM feeds f JOIN links l ON l.href = f.url
           WHERE f.well_formed AND f.format <> 'unknown'""",
    )
    assert m["feeds_advertised"] == linked == 4  # b is only behind rel=feed


def test_languages(surveyed: dict[str, Any]) -> None:
    m, con = surveyed["m"], surveyed["con"]
    assert m["lang_feed"] == one(con, "SELECT count(*) FROM feeds WHERE well_formed AND language IS NOT NULL") == 2
    assert m["lang_channel_element"] == 1 and m["lang_xml_lang"] >= 1
    assert m["lang_none"] == 3  # c and the pair


def test_freshness(surveyed: dict[str, Any]) -> None:
    m, con = surveyed["m"], surveyed["con"]
    future = one(
        con,
        """SELECT count(*) FROM items i JOIN feeds f ON f.url = i.feed_url
           WHERE i.pub_date > f.fetched_at + INTERVAL 1 DAY""",
    )
    assert m["items_future"] == future == 1
    assert m["items_undated"] == one(con, "SELECT count(*) FROM items WHERE pub_date IS NULL") == 1
    assert m["feeds_future_items"] == 1 and m["feeds_undated_items"] == 1
    rows = list(csv_rows(surveyed["report"], "breadth_cadence"))
    assert sum(int(r["feeds"]) for r in rows) == m["feeds_parsed_strict"]
    weekly = next(r for r in rows if r["bucket"].startswith("weekly"))
    assert int(weekly["feeds"]) >= 1  # b: an entry a week
    ages = list(csv_rows(surveyed["report"], "breadth_newest_age"))
    assert ages[-1]["feeds"] == str(m["feeds_with_item_dates"])


def test_hygiene(surveyed: dict[str, Any]) -> None:
    m, con = surveyed["m"], surveyed["con"]
    dup = one(
        con,
        """SELECT count(DISTINCT feed_url) FROM (SELECT feed_url, guid FROM items WHERE guid IS NOT NULL
           GROUP BY ALL HAVING count(*) > 1)""",
    )
    assert m["feeds_dup_guids"] == dup == 1
    assert m["feeds_dup_links"] == 1 and m["feeds_repeated_links"] == 1
    titles = ", ".join(f"'{t}'" for t in DEFAULT_TITLES)
    default = one(con, f"SELECT count(DISTINCT feed_url) FROM items WHERE lower(trim(title)) IN ({titles})")
    assert m["feeds_default_titles"] == default == 1
    assert m["feeds_self_link"] == 2
    assert m["feeds_self_link_matches"] == one(con, "SELECT count(*) FROM feeds WHERE self_url_matches") == 1
    assert m["feeds_hub"] == 1 and m["feeds_paging"] == 1 and m["feeds_archive"] == 1
    assert 0 < m["quality_mean"] < 1
    assert m["quality_inactive_stale"] == 1


def test_parse_errors(surveyed: dict[str, Any]) -> None:
    rows = list(csv_rows(surveyed["report"], "breadth_parse_errors"))
    reasons = {r["reason"]: r["grp"] for r in rows}
    assert reasons["HTTP 404"].startswith("HTTP error")
    entity = [g for r, g in reasons.items() if "nbsp" in r]
    assert entity and entity[0].startswith("malformed XML: undefined entity")
    assert sum(int(r["feeds"]) for r in rows) == 2


def csv_rows(report: Path, name: str) -> Iterator[dict[str, str]]:
    import csv

    with (report / f"{name}.csv").open(encoding="utf-8", newline="") as fh:
        yield from csv.DictReader(fh)
