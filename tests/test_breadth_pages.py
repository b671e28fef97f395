"""Survey breadth (#16), the page and fetch side: sites, response headers in fetch_log, the pages table.

``site_of`` on the hosts that make registrable domains hard; ``read_page`` on
HTML written here (language, generator, hreflang, platforms, rel tokens); and
one real crawl of a small loopback web whose ``pages`` and ``fetch_log`` are
read back from Parquet.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from crawler.fetch.discovery import discover, read_page
from crawler.fetch.pagescan import _scan
from pipelines.document.rows import fetch_row, page_rows
from pipelines.document.sites import site_of
from schemas.items import FetchRecord, PageFacts, PageLinks, logged_headers
from schemas.tables import arrow_schema
from schemas.vocab import Outcome
from tests.conftest import QUICK_CRAWL, REPO, read_table, run_cli

# --- sites ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "site"),
    [
        ("http://a.b.example.co.uk/x", "example.co.uk"),
        ("https://WWW.Example.COM:8443/a?b#c", "example.com"),
        ("http://user:secret@news.example.org/", "example.org"),
        ("https://example.com./", "example.com"),  # the root's trailing dot
        ("https://x.blogspot.com/feeds/posts/default", "x.blogspot.com"),  # a private suffix: its own site
        ("https://a.b.y.github.io/", "y.github.io"),
        ("https://blogspot.com/", "blogspot.com"),  # a host that is a suffix is its own site
        ("http://co.uk/", "co.uk"),
        ("http://x.y.z.kobe.jp/", "y.z.kobe.jp"),  # *.kobe.jp
        ("http://city.kobe.jp/", "city.kobe.jp"),  # !city.kobe.jp
        ("http://127.0.0.1:8080/feed", "127.0.0.1"),
        ("http://[::1]:8080/feed", "::1"),
        ("http://[2001:DB8:0::1]/", "2001:db8::1"),
        ("http://localhost:5000/", "localhost"),
        ("http://intranet/feed", "intranet"),
        ("http://foo.bar.unknowntld/", "bar.unknowntld"),  # an unknown TLD is one label
        ("http://Bücher.example.DE/", "example.de"),
        ("http://www.Bücher.de/", "xn--bcher-kva.de"),  # IDN: the ASCII form
        ("http://xn--bcher-kva.de/", "xn--bcher-kva.de"),  # the same site written in ASCII
        ("http://faß.de/", "fass.de"),  # IDNA 2003, as w3lib encodes the hosts Scrapy requests
        ("http://my_host.example.com/", "example.com"),
    ],
)
def test_site_of(url: str, site: str) -> None:
    assert site_of(url) == site


@pytest.mark.parametrize(
    "url",
    [
        "",
        None,
        "/just/a/path",
        "feeds.txt",
        "mailto:someone@example.com",
        "file:///tmp/list.opml",
        "http://",
        "http://[::1",  # urllib refuses it
        "http://a..b/",
        "http://exa mple.com/",
        "http://*.example.com/",
        "http://ex%41mple.com/",
        "http://\udcff.com/",  # a lone surrogate: IDNA refuses it
        "not a url at all \x00",
    ],
)
def test_site_of_without_a_usable_host_is_none(url: str | None) -> None:
    assert site_of(url) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60).map(lambda s: "http://" + s))
def test_site_of_never_raises(url: str) -> None:
    site = site_of(url)
    assert site is None or (site and site.isascii() and site == site.lower())


def test_the_suffix_list_is_read_from_disk_without_the_network() -> None:
    """publicsuffixlist bundles the list: loading it and answering opens no socket and resolves no name."""
    code = textwrap.dedent(
        """
        import sys
        events = []
        sys.addaudithook(lambda event, args: events.append(event) if event.startswith("socket.") else None)
        from pipelines.document.sites import site_of
        assert site_of("https://x.blogspot.com/") == "x.blogspot.com"
        assert site_of("http://www.example.co.uk/") == "example.co.uk"
        print(sorted(set(events)))
        """
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --- the page pass ----------------------------------------------------------------

WP_PAGE = b"""<!DOCTYPE html>
<html lang=" en-GB " class="no-js">
<head>
<meta charset="utf-8">
<title>A blog</title>
<meta NAME="Generator" content="  WordPress 6.4.2 ">
<meta name="generator" content="Elementor 3.18; features: e_dom_optimization">
<meta name="generator" content="Site Kit by Google 1.2">
<link rel="alternate" type="application/rss+xml" title="Feed" href="/feed/">
<link rel="alternate feed" type="application/atom+xml" href="/feed/atom/">
<link rel="alternate" hreflang="fr" href="/fr/">
<link rel="Alternate" hreflang=" de-DE " href="/de/">
<link rel="alternate" hreflang="fr" href="/fr/again/">
<link rel="alternate" hreflang="" href="/none/">
<link rel="canonical" hreflang="es" href="/es/">
<link rel="stylesheet" href="/wp-content/themes/x/style.css">
</head>
<body>
<link rel="alternate" hreflang="it" href="/it/">
<meta name="generator" content="Ghost 5.2">
<p>Hello</p>
</body></html>"""


def test_a_page_s_language_generator_hreflangs_and_platforms() -> None:
    read = read_page(WP_PAGE, "https://blog.example.com/", {"content-type": "text/html", "x-powered-by": "PHP/8.2"})
    facts = read.facts
    assert facts.html_lang == "en-GB"
    assert facts.meta_generator == "WordPress 6.4.2"
    # head only: the body's hreflang and generator are not read; duplicates and empty values drop out
    assert facts.hreflangs == ("de-DE", "fr")
    assert facts.platforms == ("wordpress",)  # from the generator and the /wp-content/ marker; no ghost
    assert facts.rel_alternate is True
    assert facts.rel_feed is True  # the Atom link also says feed
    assert [link.href for link in read.links] == [
        "https://blog.example.com/feed/",
        "https://blog.example.com/feed/atom/",
    ]
    # the same pass: discover() gives exactly the links read_page gives
    assert discover(WP_PAGE, "https://blog.example.com/") == read.links


def test_platforms_come_from_markers_and_headers_too() -> None:
    page = b"<html><head><title>shop</title><script src='//cdn.shopify.com/s/x.js'></script></head><body></body></html>"
    facts = read_page(page, "https://shop.example/", {"x-drupal-cache": "HIT", "server": "nginx"}).facts
    assert facts.platforms == ("drupal", "shopify")  # shopify from the page's marker, drupal from a header name
    assert facts.meta_generator is None and facts.html_lang is None and facts.hreflangs == ()


def test_every_generator_meta_counts_for_platforms_the_first_is_the_column() -> None:
    page = b'<html><head><meta name=generator content=""><meta name=generator content="Hugo 0.120"><meta name=generator content="Jekyll v4"></head></html>'
    facts = read_page(page, "https://x.example/").facts
    assert facts.meta_generator == "Hugo 0.120"  # the first non-empty one
    assert facts.platforms == ("hugo", "jekyll")


@pytest.mark.parametrize(
    ("markup", "lang"),
    [
        ('<html xml:lang="fr-CA"><head>', "fr-CA"),  # xml:lang when there is no lang
        ('<html lang="pt" xml:lang="fr"><head>', "pt"),  # lang wins
        ('<html lang=""><head>', ""),  # declared empty: recorded as such
        ('<!-- x --><html><head></head><html lang="nl">', "nl"),  # a later <html> adds what the first lacked
        ('<html lang="en"><body><html lang="de">', "en"),  # the first one to have it
        ("<p>no html tag</p>", None),
        ('<template><html lang="xx"></template><html lang="yy">', "yy"),  # template contents are no document
        ('<html lang="&#101;n">', "en"),  # character references decoded, as for every attribute
    ],
)
def test_html_lang(markup: str, lang: str | None) -> None:
    assert read_page(markup.encode(), "https://x.example/").facts.html_lang == lang


def test_rel_feed_alone_is_no_feed_link_but_is_recorded() -> None:
    page = b'<html><head><link rel="feed" type="application/rss+xml" href="/f"><link rel="feed" href="/page"></head></html>'
    read = read_page(page, "https://x.example/")
    assert read.links == []
    assert read.facts.rel_feed is True and read.facts.rel_alternate is False


def test_a_page_without_markup_still_has_its_header_platforms() -> None:
    read = read_page(b"just text", "https://x.example/", {"x-powered-by": "WordPress.com VIP"})
    assert read.links == [] and read.facts == PageFacts(platforms=("wordpress",))


FRAGMENTS = st.lists(
    st.sampled_from(
        [
            '<html lang="en">',
            "<html xml:lang=fr>",
            "<head>",
            "</head>",
            "<body>",
            "<p>text</p>",
            "<template>",
            "</template>",
            '<meta name="generator" content="WordPress 6">',
            "<meta name=GENERATOR content='Hugo'>",
            '<meta itemprop="x" content="y">',
            '<link rel="alternate" hreflang="de" href="/de/">',
            '<link rel="alternate feed" type="application/rss+xml" href="/f">',
            '<link rel="feed" type="application/atom+xml" href="/a">',
            "<noscript><img src=x></noscript>",
            "<script>'<meta name=generator content=ghost>'</script>",
            "<!--",
            "-->",
            "<",
            '"',
            "<plaintext>",
            "/wp-content/",
        ]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(FRAGMENTS)
def test_the_body_fast_path_reads_the_same_facts(doc: str) -> None:
    assert _scan(doc, fast=True) == _scan(doc, fast=False)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_read_page_never_raises(body: bytes) -> None:
    read = read_page(body, "http://127.0.0.1/p", {"content-type": "text/html", "server": body[:20].decode("latin-1")})
    assert list(read.facts.platforms) == sorted(read.facts.platforms)
    assert read.facts.rel_alternate == bool(read.links)


# --- rows ---------------------------------------------------------------------------


def test_fetch_row_has_the_site_and_the_logged_headers() -> None:
    headers = {"server": "nginx", "x-powered-by": "", "content-language": "en, fr"}
    rec = FetchRecord(url="https://a.x.blogspot.com/feed", outcome=Outcome.FEED, **logged_headers(headers))
    row = fetch_row(rec)
    assert (row["site"], row["server"], row["x_powered_by"], row["content_language"]) == (
        "x.blogspot.com",
        "nginx",
        None,  # an empty header is no value
        "en, fr",
    )
    assert fetch_row(FetchRecord(url="garbage line", outcome=Outcome.INPUT_ERROR))["site"] is None
    assert set(row) == {f.name for f in arrow_schema("fetch_log")}


def test_page_rows_match_the_schema() -> None:
    read = read_page(WP_PAGE, "https://blog.example.com/")
    page = PageLinks("https://blog.example.com/", "http://blog.example.com/", read.links, [True, True], read.facts)
    (row,) = page_rows(page)
    table = pa.Table.from_pylist([row], schema=arrow_schema("pages"))  # raises on a missing or mistyped column
    assert table.column("feed_links").to_pylist() == [2]
    assert row["site"] == "example.com" and row["url"] == "http://blog.example.com/"


# --- a real crawl -------------------------------------------------------------------

HTML = {"Content-Type": "text/html; charset=utf-8"}
RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://x/</link>
<description>d</description><item><title>i</title><guid>urn:1</guid></item></channel></rss>"""
FEED_HEADERS = {
    "Content-Type": "application/rss+xml",
    "Server": "nginx/1.25.3",
    "X-Powered-By": "PHP/8.2",
    "Content-Language": "en-GB",
}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("breadth")
    web = Web()
    web.add(
        "/index.html",
        Route(
            b'<!DOCTYPE html><html lang="en-GB"><head><title>i</title>'
            b'<meta name="generator" content="WordPress 6.4.2">'
            b'<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
            b'<link rel="alternate" type="application/atom+xml" href="/not-a-feed.html">'
            b'<link rel="alternate" hreflang="fr" href="/fr/"><link rel="alternate" hreflang="de" href="/de/">'
            b"</head><body><p>hi</p></body></html>",
            headers={**HTML, "X-Powered-By": "PHP/8.2"},
        ),
    )
    web.add("/feed.xml", Route(RSS, headers=FEED_HEADERS))
    # A feed link that leads to a page: autodiscovery reads that page too.
    web.add(
        "/not-a-feed.html",
        Route(b'<html xml:lang="fr"><head><title>n</title></head><body>no feeds</body></html>', headers=HTML),
    )
    # A page reached through a redirect, with only a rel=feed link and a platform's own header.
    web.add("/moved", Route(status=301, headers={"Location": "/plain.html"}))
    web.add(
        "/plain.html",
        Route(
            b'<html><head><link rel="feed" type="application/rss+xml" href="/feed.xml"></head><body></body></html>',
            headers={**HTML, "X-Shopify-Stage": "production", "Content-Language": "de"},
        ),
    )
    web.add("/gone.html", Route(b"gone", status=410, headers={**HTML, "X-Powered-By": "Express"}))
    server = WebServer(web).start()
    base = server.url
    seeds = tmp / "seeds.txt"
    seeds.write_text(f"{base}/index.html\n{base}/moved\n{base}/gone.html\nnot a url\n", encoding="utf-8")
    proc = run_cli(
        "crawl", "--seeds", str(seeds), "--out", str(tmp / "out"), *QUICK_CRAWL
    )  # fmt: skip
    server.stop()
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = tmp / "out"
    return {
        "base": base,
        "pages": read_table(out, "pages"),
        "log": read_table(out, "fetch_log").to_pylist(),
        "links": read_table(out, "links").to_pylist(),
    }


def test_the_pages_table_has_one_row_per_page_read(crawled: dict[str, Any]) -> None:
    base = crawled["base"]
    table: pa.Table = crawled["pages"]
    assert table.schema.field("platforms").type == pa.list_(pa.string())
    assert table.schema.field("feed_links").type == pa.int32()
    rows = {r["page_url"].removeprefix(base): r for r in table.to_pylist()}
    assert sorted(rows) == ["/index.html", "/not-a-feed.html", "/plain.html"]
    index, other, plain = rows["/index.html"], rows["/not-a-feed.html"], rows["/plain.html"]
    assert (index["html_lang"], index["meta_generator"], index["hreflangs"]) == (
        "en-GB",
        "WordPress 6.4.2",
        ["de", "fr"],
    )
    assert index["platforms"] == ["wordpress"]
    assert (index["feed_links"], index["rel_alternate"], index["rel_feed"]) == (2, True, False)
    assert (other["html_lang"], other["feed_links"], other["platforms"]) == ("fr", 0, [])
    assert plain["url"] == base + "/moved"  # as requested; page_url is after the redirect
    assert (plain["feed_links"], plain["rel_alternate"], plain["rel_feed"]) == (0, False, True)
    assert plain["platforms"] == ["shopify"]  # from its header name alone
    assert {r["site"] for r in rows.values()} == {"127.0.0.1"}
    assert {r["job_id"] for r in rows.values()} == {table.column("job_id")[0].as_py()}  # the partition column
    # feed_links counts the page's links rows; fetched_at is its fetch_log row's
    per_page = {
        u: sum(1 for link in crawled["links"] if link["page_url"] == u) for u in (r["page_url"] for r in rows.values())
    }
    assert {u.removeprefix(base): n for u, n in per_page.items()} == {
        "/index.html": 2,
        "/not-a-feed.html": 0,
        "/plain.html": 0,
    }
    log_times = {r["url"]: r["fetched_at"] for r in crawled["log"]}
    assert all(log_times[r["url"]] == r["fetched_at"] for r in rows.values())


def test_fetch_log_keeps_the_software_headers_and_the_site(crawled: dict[str, Any]) -> None:
    base = crawled["base"]
    log = {r["url"].removeprefix(base): r for r in crawled["log"]}
    feed = log["/feed.xml"]
    assert feed["outcome"] == Outcome.FEED
    # The test server sends its own Server header first; a repeated header is kept joined, as sent.
    assert feed["server"].endswith("nginx/1.25.3") and feed["server"].startswith("feedcensus-testweb/1.0")
    assert (feed["x_powered_by"], feed["content_language"]) == ("PHP/8.2", "en-GB")
    assert log["/index.html"]["x_powered_by"] == "PHP/8.2" and log["/index.html"]["content_language"] is None
    assert log["/moved"]["content_language"] == "de"  # the final response's headers
    gone = log["/gone.html"]
    assert (gone["outcome"], gone["x_powered_by"]) == (Outcome.HTTP_ERROR, "Express")  # an error status has headers too
    robots = log["/robots.txt"]
    assert robots["outcome"] == Outcome.ROBOTS and robots["server"].startswith("feedcensus-testweb/1.0")
    bad = log["not a url"]
    assert (bad["outcome"], bad["site"], bad["server"]) == (Outcome.INPUT_ERROR, None, None)
    assert {r["site"] for r in crawled["log"] if r["url"] != "not a url"} == {"127.0.0.1"}
