"""End to end: pages using every link spelling of the Atom draft (7.3) and the RSS Board spec.

A real crawl against a real server on 127.0.0.1: every advertised feed is
found, in page order, requested exactly once, and nothing else is taken for a
feed (stylesheets, icons, hreflang translations, body links).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from tests.conftest import QUICK_CRAWL, read_table, run_cli
from tests.test_discovery import LINK_HTML_7_3

ATOM = b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:x</id><updated>2026-01-01T00:00:00Z</updated></feed>'
RSS = b'<rss version="2.0"><channel><title>t</title><link>http://x/</link><description>d</description></channel></rss>'
HTML = {"Content-Type": "text/html; charset=utf-8"}


def _page(head: str, body: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head><title>p</title>{head}</head><body>{body}</body></html>".encode()


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("disc")
    web = Web()
    server = WebServer(web).start()
    base = server.url
    expected: dict[str, list[str]] = {}
    for i, markup in enumerate(LINK_HTML_7_3):
        markup = markup.replace("http://www.example.com/", f"{base}/p{i}/")
        web.add(f"/p{i}/index.html", Route(_page(markup), headers=HTML))
        web.add(f"/p{i}/xml/index.atom", Route(ATOM, headers={"Content-Type": "application/atom+xml"}))
        target = "/xml/index.atom" if 'href="/xml/index.atom"' in markup else f"/p{i}/xml/index.atom"
        expected[f"/p{i}/index.html"] = [target]
    web.add("/xml/index.atom", Route(ATOM, headers={"Content-Type": "application/atom+xml"}))
    # RSS Board: the preferred feed first; a base element resolves relative hrefs, even when it comes later.
    web.add(
        "/board/",
        Route(
            _page(
                '<link rel="alternate" type="application/rss+xml" title="RSS" href="rss-feed">'
                '<link rel="alternate" type="application/atom+xml" title="Atom" href="atom-feed">'
                '<link rel="stylesheet" href="s.css"><link rel="icon" type="image/png" href="i.png">'
                '<link rel="alternate" hreflang="fr" type="text/html" href="/fr/">'
                f'<base href="{base}/board/feeds/">',
                '<link rel="alternate" type="application/rss+xml" href="/body-feed.xml">',
            ),
            headers=HTML,
        ),
    )
    web.add("/board/feeds/rss-feed", Route(RSS, headers={"Content-Type": "application/rss+xml"}))
    web.add("/board/feeds/atom-feed", Route(ATOM, headers={"Content-Type": "application/atom+xml"}))
    web.add("/body-feed.xml", Route(RSS, headers={"Content-Type": "application/rss+xml"}))
    expected["/board/"] = ["/board/feeds/rss-feed", "/board/feeds/atom-feed", "/body-feed.xml"]
    seeds = tmp / "seeds.txt"
    seeds.write_text("".join(f"{base}{p}\n" for p in expected), encoding="utf-8")
    proc = run_cli(
        "crawl",
        "--seeds",
        str(seeds),
        "--out",
        str(tmp / "out"),
        *QUICK_CRAWL,
        "-s",
        "ROBOTSTXT_OBEY=False",
    )
    hits = dict(server.hits)
    server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {"base": base, "expected": expected, "hits": hits, "out": tmp / "out"}


def _rel(url: str, base: str) -> str:
    return url[len(base) :] if url.startswith(base) else url


def test_every_spelling_is_found_in_order(crawled: dict[str, Any]) -> None:
    base = crawled["base"]
    links = read_table(crawled["out"], "links").to_pylist()
    got: dict[str, list[str]] = {}
    for row in sorted(links, key=lambda r: (r["page_url"], r["position"])):
        got.setdefault(_rel(row["page_url"], base), []).append(_rel(row["href"], base))
    assert got == crawled["expected"]
    board = [r for r in links if r["page_url"].endswith("/board/")]
    assert [(r["in_head"], r["followed"], r["conforms_rss"]) for r in sorted(board, key=lambda r: r["position"])] == [
        (True, True, True),
        (True, True, False),
        (False, True, False),  # a body link: followed by default, recorded as not in the head
    ]
    atom_pages = [r for r in links if "/p" in r["page_url"]]
    assert atom_pages and all(r["conforms_atom"] for r in atom_pages)


def test_each_advertised_feed_is_fetched_exactly_once(crawled: dict[str, Any]) -> None:
    hits = crawled["hits"]
    wanted = {p for targets in crawled["expected"].values() for p in targets}
    assert {p: hits.get(p, 0) for p in wanted} == dict.fromkeys(wanted, 1)
    assert hits.get("/body-feed.xml", 0) == 1  # body links are followed by default (--head-only: not)
    assert not any(p.endswith((".css", ".png", "/fr/")) for p in hits)
    feeds = read_table(crawled["out"], "feeds").to_pylist()
    assert {_rel(f["url"], crawled["base"]) for f in feeds} == wanted
    assert all(f["discovered_via"] == "autodiscovery" for f in feeds)


def test_discover_cli_prints_conformance_fields(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(_page("<LINK REL=ALTERNATE TYPE=application/rss+xml HREF=/feed>"))
    proc = run_cli("discover", "--json", "--base-url", "http://site.example/a/", str(page))
    assert proc.returncode == 0, proc.stderr
    import json

    (line,) = proc.stdout.splitlines()
    doc = json.loads(line)
    assert doc["page"] == str(page)
    (link,) = doc["links"]
    assert link["href"] == "http://site.example/feed"
    assert link["conforms_atom"] is False and link["conforms_rss"] is False
    assert "rss-rel-not-lowercase" in link["reasons"]
    assert set(link) >= {
        "href",
        "href_raw",
        "rel",
        "type",
        "title",
        "position",
        "in_head",
        "conforms_rss",
        "conforms_atom",
        "reasons",
    }
