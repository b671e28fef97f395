"""Survey breadth (#16), the document side: platform fingerprints, and the new feeds and items columns.

The pure functions on small documents written here (RSS 2.0, RSS 1.0, Atom 1.0
and 0.3), each value checked; the lifted-CDATA path against the plain one; and
one real crawl of a small loopback web whose ``feeds`` and ``items`` are read
back from Parquet.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from pipelines.document.feedparse import ParsedFeed, parse_feed
from pipelines.document.platforms import PAGE_HEAD_CHARS, PLATFORMS, from_generator, from_headers, from_page
from pipelines.document.process import document_rows
from schemas.items import FeedDocument
from schemas.tables import SCHEMA_VERSION, VERSION_KEY
from schemas.vocab import ContentKind
from tests.conftest import QUICK_CRAWL, REPO, read_table, run_cli

# --- platforms ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("Ghost 5.75", {"ghost"}),
        ("Ghostwriter 2.1", set()),  # a whole token only
        ("https://wordpress.org/?v=6.4.2", {"wordpress"}),
        ("WordPress.com", {"wordpress"}),
        ("Blogger", {"blogger"}),
        ("Hugo 0.121.1", {"hugo"}),
        ("Jekyll v4.3.2", {"jekyll"}),
        ("Micro.blog", {"micro.blog"}),
        ("micro-blog", set()),
        ("Eleventy v2.0.1", {"eleventy"}),
        ("Hexo", {"hexo"}),
        ("Movable Type Pro 7.9", {"movabletype"}),
        ("Wix.com Website Builder", {"wix"}),
        ("Drupal 10 (https://www.drupal.org)", {"drupal"}),
        ("Joomla! - Open Source Content Management", {"joomla"}),
        ("Substack", {"substack"}),
        ("Medium", {"medium"}),
        ("FeedBurner", {"feedburner"}),
        ("Hugo, served by Ghost", {"hugo", "ghost"}),
        ("mediumship", set()),
        ("", set()),
        (None, set()),
    ],
)
def test_from_generator_matches_whole_tokens_case_insensitively(text: str | None, labels: set[str]) -> None:
    assert from_generator(text) == frozenset(labels)


def test_from_headers_reads_software_values_and_platform_header_names() -> None:
    assert from_headers({"x-drupal-cache": "HIT"}) == {"drupal"}  # the peer reads no name: nothing there
    assert from_headers({"x-drupal-dynamic-cache": "MISS"}) == {"drupal"}
    assert from_headers({"x-ghost-cache": "hit"}) == {"ghost"}
    assert from_headers({"x-shopify-stage": "production"}) == {"shopify"}
    assert from_headers({"x-shopid": "123"}) == {"shopify"}
    assert from_headers({"x-wix-request-id": "1.2"}) == {"wix"}
    assert from_headers({"x-tumblr-user": "someone"}) == {"tumblr"}
    assert from_headers({"server": "Squarespace"}) == {"squarespace"}
    assert from_headers({"x-powered-by": "WP Engine"}) == {"wordpress"}
    assert from_headers({"x-generator": "Drupal 10 (https://www.drupal.org)"}) == {"drupal"}
    assert from_headers({"link": '<https://example.com/wp-json/>; rel="https://api.w.org/"'}) == {"wordpress"}
    # values of other headers name nothing, nor do names that only start like a platform's
    assert from_headers({"x-note": "made with wordpress", "via": "ghost"}) == frozenset()
    assert from_headers({"x-drupalish": "1", "x-shopidx": "1"}) == frozenset()
    assert from_headers({"server": "nginx/1.25.3", "x-powered-by": "PHP/8.2"}) == frozenset()
    assert from_headers({"server": "Ghostwriter"}) == frozenset()
    assert from_headers({}) == frozenset()
    both = {"server": "cloudflare", "x-drupal-cache": "HIT", "x-powered-by": "WP Engine"}
    assert from_headers(both) == {"drupal", "wordpress"}


def test_from_page_finds_markers_in_the_first_32_kb_only() -> None:
    page = '<html><head><link rel="stylesheet" href="/wp-content/themes/x/style.css"></head></html>'
    assert from_page(page) == {"wordpress"}
    assert from_page('<img src="https://CDN.Shopify.com/s/files/x.png">') == {"shopify"}
    assert from_page('<img src="https://static1.squarespace.com/static/x">') == {"squarespace"}
    assert from_page('<img src="https://substackcdn.com/image/x">') == {"substack"}
    assert from_page('<script src="/sites/default/files/js/x.js"></script>') == {"drupal"}
    assert from_page('<img src="https://static.wixstatic.com/media/x.jpg">') == {"wix"}
    # a link to a platform is not the platform
    assert from_page('<a href="https://example.substack.com/">my newsletter</a>') == frozenset()
    late = " " * PAGE_HEAD_CHARS + '<img src="https://cdn.shopify.com/x.png">'
    assert from_page(late) == frozenset()
    assert from_page("") == frozenset()


def test_the_platform_table_is_documented() -> None:
    labels = [p.label for p in PLATFORMS]
    assert len(labels) == len(set(labels))
    required = {"wordpress", "blogger", "ghost", "hugo", "jekyll", "substack", "medium", "squarespace"}
    required |= {"feedburner", "drupal", "joomla", "shopify", "wix", "tumblr", "typepad", "hexo", "eleventy"}
    assert required | {"micro.blog"} <= set(labels)
    for p in PLATFORMS:
        assert p.tokens, p.label  # every platform can be named by its generator
    doc = (REPO / "docs" / "datasets.md").read_text(encoding="utf-8")
    section = doc.split("## Platform fingerprints", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # the header row first

    def cell(values: tuple[str, ...]) -> str:
        return ", ".join(f"`{v}`" for v in values) or "-"

    # the doc renders the table itself, row for row, in its order
    assert rows == [
        f"| {p.label} | {cell(p.tokens)} | {cell(p.header_names)} | "
        f"{', '.join(f'`{n}: {v}`' for n, v in p.header_values) or '-'} | {cell(p.page_markers)} |"
        for p in PLATFORMS
    ]


# --- RSS 2.0 -------------------------------------------------------------------------

BIG = ("Caf\u00e9 \u2014 <p>long</p>\r\n" * 80).strip()  # > 1 KB: lifted out before parsing when in CDATA

RSS = f"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel>
  <title>t</title><link>http://127.0.0.1/</link><description>d</description>
  <generator> https://wordpress.org/?v=6.4.2 </generator>
  <pubDate>Sun, 01 Jan 2023 00:00:00 GMT</pubDate>
  <lastBuildDate>Tue, 02 Jan 2024 10:00:00 +0100</lastBuildDate>
  <atom:link rel="self" href="http://127.0.0.1/feed.xml" type="application/rss+xml"/>
  <atom:link rel="HUB" href="/hub"/>
  <atom:link rel="hub" href="http://127.0.0.1/second-hub"/>
  <atom:link rel="next prev-archive" href="?page=2" hreflang="EN-gb"/>
  <atom:link href="http://127.0.0.1/"/>
  <atom:link rel="last"/>
  <item xml:lang="FR">
    <title>Bold &lt;b&gt;move&lt;/b&gt;</title>
    <description>Caf\u00e9 &lt;p&gt;x&lt;/p&gt;</description>
    <content:encoded><![CDATA[{BIG}]]></content:encoded>
    <dc:language> de-AT </dc:language>
    <atom:link rel="alternate" href="http://127.0.0.1/1" hreflang="it"/>
  </item>
  <item>
    <title>a &lt; b and c &gt; d</title>
    <description>Plain text, no markup: 3 &lt; 4</description>
    <category xml:lang="es">x</category>
  </item>
  <item>
    <title><![CDATA[Line<br/>break]]></title>
    <description>   </description>
  </item>
  <item><link>http://127.0.0.1/4</link></item>
  <item><title>   </title><content:encoded></content:encoded></item>
</channel>
</rss>
"""


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "lifted"])
def rss(request: pytest.FixtureRequest) -> ParsedFeed:
    """The feed parsed both ways: with notes, the large CDATA section is lifted out and restored."""
    return parse_feed(RSS.encode("utf-8"), "http://127.0.0.1/feed.xml", with_notes=request.param)


def test_rss_channel_values(rss: ParsedFeed) -> None:
    assert rss.generator == "https://wordpress.org/?v=6.4.2"
    assert rss.feed_date == datetime(2024, 1, 2, 9, 0, tzinfo=UTC)  # lastBuildDate wins over pubDate
    assert rss.hub_url == "http://127.0.0.1/hub"  # the first, rel token case-insensitive, resolved
    # a link without href has no rel here ("last"); no rel is alternate
    assert rss.link_rels == ("alternate", "hub", "next", "prev-archive", "self")
    assert rss.hreflangs == ("EN-gb", "it")  # as written
    assert rss.entry_languages == ("de-at", "es", "fr")
    assert rss.self_url == "http://127.0.0.1/feed.xml"  # unchanged


def test_rss_item_values(rss: ParsedFeed) -> None:
    got = [(it.title_has_markup, it.description_length, it.content_length, it.content_kind) for it in rss.items]
    assert got == [
        (True, len("Caf\u00e9 <p>x</p>"), len(BIG.replace("\r\n", "\n")), ContentKind.HTML),
        (False, len("Plain text, no markup: 3 < 4"), None, ContentKind.PLAIN),
        (True, 3, None, ContentKind.PLAIN),  # a blank description is still there: 3 characters
        (None, None, None, None),
        (None, None, 0, ContentKind.HTML),  # a blank title is no title; an empty content:encoded is 0
    ]
    assert rss.items[0].title == "Bold <b>move</b>"  # titles unchanged


def test_rss_lifted_and_plain_parses_agree() -> None:
    fields = ("title_has_markup", "description_length", "content_length", "content_kind")
    plain, lifted = (parse_feed(RSS.encode("utf-8"), "", with_notes=notes) for notes in (False, True))
    assert lifted.notes is not None and lifted.notes.restore("") == ""
    for a, b in zip(plain.items, lifted.items, strict=True):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
        assert (a.content_hash, a.identity) == (b.content_hash, b.identity)


def test_lifting_changes_no_value_on_the_benchmark_corpus(corpus: Path) -> None:
    """Lengths counted from the sections noted when lifted equal those of the restored text, on real feeds."""
    fields = ("title_has_markup", "description_length", "content_length", "content_kind")
    lifted_docs = measured = 0
    for path in sorted((corpus / "benchmark_feeds").iterdir()):
        body = path.read_bytes()
        plain, lifted = parse_feed(body, with_notes=False), parse_feed(body, with_notes=True)
        lifted_docs += lifted.notes is not None and bool(lifted.notes._spans)
        for a, b in zip(plain.items, lifted.items, strict=True):
            assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields], (path.name, a.position)
            measured += a.content_length is not None
        assert (plain.link_rels, plain.entry_languages, plain.hreflangs, plain.generator) == (
            lifted.link_rels,
            lifted.entry_languages,
            lifted.hreflangs,
            lifted.generator,
        )
    assert lifted_docs > 20 and measured > 1000  # the corpus does exercise the lifted path


@pytest.mark.parametrize(
    ("channel", "expected"),
    [
        ("<pubDate>Sun, 01 Jan 2023 00:00:00 GMT</pubDate><dc:date>2022-05-05T00:00:00Z</dc:date>", datetime(2023, 1, 1, tzinfo=UTC)),
        ("<dc:date>2022-05-05T01:02:03+02:00</dc:date>", datetime(2022, 5, 4, 23, 2, 3, tzinfo=UTC)),
        ("<lastBuildDate>not a date</lastBuildDate><pubDate>Sun, 01 Jan 2023 00:00:00 GMT</pubDate>", None),
        ("<lastBuildDate>  </lastBuildDate><pubDate>Sun, 01 Jan 2023 00:00:00 GMT</pubDate>", datetime(2023, 1, 1, tzinfo=UTC)),
        ("", None),
    ],
)  # fmt: skip
def test_rss_feed_date_order(channel: str, expected: datetime | None) -> None:
    body = f'<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel>{channel}</channel></rss>'
    assert parse_feed(body.encode()).feed_date == expected


def test_rss_without_breadth_values_has_none() -> None:
    feed = parse_feed(b'<rss version="2.0"><channel><title>t</title><item><title>x</title></item></channel></rss>')
    assert (feed.generator, feed.feed_date, feed.hub_url) == (None, None, None)
    assert (feed.link_rels, feed.entry_languages, feed.hreflangs) == ((), (), ())
    item = feed.items[0]
    assert (item.title_has_markup, item.description_length, item.content_length, item.content_kind) == (
        False,
        None,
        None,
        None,
    )


def test_rss_title_with_an_element_child_holds_markup() -> None:
    body = b'<rss version="2.0"><channel><item><title>Hi <b>there</b></title></item></channel></rss>'
    item = parse_feed(body).items[0]
    assert (item.title, item.title_has_markup) == ("Hi there", True)


def test_rss_admin_generator_agent_is_a_fallback() -> None:
    head = '<rss version="2.0" xmlns:admin="http://webns.net/mvcb/" xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    agent = '<admin:generatorAgent rdf:resource="http://www.movabletype.org/?v=3.2"/>'
    only = parse_feed(f"{head}<channel>{agent}</channel></rss>".encode())
    assert only.generator == "http://www.movabletype.org/?v=3.2"
    both = parse_feed(f"{head}<channel>{agent}<generator>Other</generator></channel></rss>".encode())
    assert both.generator == "Other"


# --- RSS 1.0 -------------------------------------------------------------------------

RDF = """<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:admin="http://webns.net/mvcb/"
         xmlns:content="http://purl.org/rss/1.0/modules/content/">
  <channel rdf:about="http://127.0.0.1/">
    <title>t</title><link>http://127.0.0.1/</link><description>d</description>
    <dc:date>2004-03-01T12:00:00-05:00</dc:date>
    <admin:generatorAgent rdf:resource="http://www.movabletype.org/?v=2.661"/>
  </channel>
  <item rdf:about="http://127.0.0.1/1">
    <title>One</title><link>http://127.0.0.1/1</link>
    <description>&lt;i&gt;it&lt;/i&gt;</description>
    <dc:language>en-US</dc:language>
  </item>
  <item rdf:about="http://127.0.0.1/2">
    <title>Two</title><link>http://127.0.0.1/2</link>
    <description>plain</description>
    <content:encoded>&lt;p&gt;full&lt;/p&gt;</content:encoded>
  </item>
</rdf:RDF>
"""


def test_rss10_values() -> None:
    feed = parse_feed(RDF.encode())
    assert feed.format == "rdf"
    assert feed.generator == "http://www.movabletype.org/?v=2.661"
    assert feed.feed_date == datetime(2004, 3, 1, 17, 0, tzinfo=UTC)
    assert (feed.hub_url, feed.link_rels, feed.hreflangs) == (None, (), ())
    assert feed.entry_languages == ("en-us",)
    got = [(it.title_has_markup, it.description_length, it.content_length, it.content_kind) for it in feed.items]
    assert got == [
        (False, len("<i>it</i>"), None, ContentKind.HTML),
        (False, len("plain"), len("<p>full</p>"), ContentKind.HTML),  # content:encoded is HTML
    ]


# --- Atom ----------------------------------------------------------------------------

ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">
  <title>t</title><id>urn:x</id>
  <published>2020-01-01T00:00:00Z</published>
  <updated>2024-02-03T04:05:06Z</updated>
  <generator uri="https://gohugo.io/" version="0.121">Hugo</generator>
  <link href="http://127.0.0.1/"/>
  <link rel="self" href="http://127.0.0.1/atom.xml"/>
  <link rel="hub" href="https://hub.example/"/>
  <link rel="first" href="?p=1" hreflang="pt-BR"/>
  <entry xml:lang="nl">
    <title type="html">&lt;em&gt;Escaped&lt;/em&gt; title</title>
    <id>1</id><updated>2024-01-01T00:00:00Z</updated>
    <link rel="alternate" href="http://127.0.0.1/1" hreflang="nl"/>
    <summary>A &lt;b&gt; text summary</summary>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p xml:lang="SV">hej</p> d\u00e5</div></content>
  </entry>
  <entry>
    <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">An <b>XHTML</b> title</div></title>
    <id>2</id><updated>2024-01-01T00:00:00Z</updated>
    <content type="html">&lt;p&gt;html&lt;/p&gt;</content>
  </entry>
  <entry>
    <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Just text</div></title>
    <id>3</id><updated>2024-01-01T00:00:00Z</updated>
    <summary type="html">&lt;p&gt;s&lt;/p&gt;</summary>
  </entry>
  <entry>
    <title>Text with &lt;b&gt; shown</title>
    <id>4</id><updated>2024-01-01T00:00:00Z</updated>
    <content>words</content>
  </entry>
  <entry><title type="html">no tags here</title><id>5</id><updated>2024-01-01T00:00:00Z</updated></entry>
</feed>
"""


def test_atom_channel_values() -> None:
    feed = parse_feed(ATOM.encode(), "http://127.0.0.1/atom.xml")
    assert feed.generator == "Hugo 0.121 (https://gohugo.io/)"
    assert feed.feed_date == datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC)  # updated wins over published
    assert feed.hub_url == "https://hub.example/"
    assert feed.link_rels == ("alternate", "first", "hub", "self")
    assert feed.hreflangs == ("nl", "pt-BR")
    assert feed.entry_languages == ("nl", "sv")  # the feed's own xml:lang is not an entry's
    assert feed.link == "http://127.0.0.1/"  # unchanged


def test_atom_item_values() -> None:
    items = parse_feed(ATOM.encode()).items
    got = [(it.title_has_markup, it.description_length, it.content_length, it.content_kind) for it in items]
    assert got == [
        (True, len("A <b> text summary"), len("hej d\u00e5"), ContentKind.XHTML),
        (True, None, len("<p>html</p>"), ContentKind.HTML),
        (False, len("<p>s</p>"), None, ContentKind.HTML),  # no content: the summary's type decides
        (False, None, len("words"), ContentKind.PLAIN),  # type text shows "<b>" as text: no markup
        (False, None, None, None),
    ]
    assert [it.title for it in items][:2] == ["Escaped title", "An XHTML title"]  # titles unchanged


def test_atom03_values() -> None:
    body = b"""<feed version="0.3" xmlns="http://purl.org/atom/ns#">
      <title>t</title><modified>2005-01-01T00:00:00Z</modified>
      <generator url="http://www.typepad.com/" version="1.0">TypePad</generator>
      <entry><title mode="escaped" type="text/html">&lt;b&gt;x&lt;/b&gt;</title>
        <content type="application/xhtml+xml" mode="xml"><div xmlns="http://www.w3.org/1999/xhtml">c</div></content>
      </entry>
    </feed>"""
    feed = parse_feed(body)
    assert (feed.format, feed.version) == ("atom", "0.3")
    assert feed.generator == "TypePad 1.0 (http://www.typepad.com/)"
    assert from_generator(feed.generator) == {"typepad"}
    assert feed.feed_date == datetime(2005, 1, 1, tzinfo=UTC)
    item = feed.items[0]
    assert (item.title_has_markup, item.content_length, item.content_kind) == (True, 1, ContentKind.XHTML)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not xml",
        b"<rss><channel><item><title>&bogus;</title>",
        b"<feed xmlns='http://www.w3.org/2005/Atom'><entry>",
    ],
)
def test_bad_input_gives_values_or_none(body: bytes) -> None:
    feed = parse_feed(body)
    assert feed.error is not None
    assert feed.feed_date is None and feed.generator is None
    for it in feed.items:
        assert it.content_kind is None


# --- rows, then a real crawl --------------------------------------------------------


def test_document_rows_fill_the_new_columns() -> None:
    doc = FeedDocument(
        url="http://127.0.0.1/feed.xml",
        final_url="http://127.0.0.1/feed.xml",
        status=200,
        headers={"content-type": "application/rss+xml", "x-drupal-cache": "HIT"},
        body=RSS.encode(),
        discovered_via="url",
        source=None,
        depth=0,
    )
    rows, failures = document_rows(doc)
    assert failures == ()
    (feed,) = rows.rows["feeds"]
    assert feed["platforms"] == ["drupal", "wordpress"]  # a header name and the generator
    assert feed["link_rels"] == ["alternate", "hub", "next", "prev-archive", "self"]
    items = rows.rows["items"]
    assert [i["content_kind"] for i in items] == ["html", "plain", "plain", None, "html"]


FEED_HEADERS = {"Content-Type": "application/atom+xml", "X-Ghost-Cache": "hit", "Server": "nginx"}


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp: Path = tmp_path_factory.mktemp("breadth-doc")
    web = Web()
    web.add("/atom.xml", Route(ATOM.encode(), headers=FEED_HEADERS))
    web.add("/rss.xml", Route(RSS.encode(), headers={"Content-Type": "application/rss+xml"}))
    with WebServer(web) as server:
        base = server.url
        proc = run_cli(
            "crawl", "--url", f"{base}/atom.xml", "--url", f"{base}/rss.xml",
            "--out", str(tmp / "out"), *QUICK_CRAWL,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = tmp / "out"
    return {"base": base, "feeds": read_table(out, "feeds"), "items": read_table(out, "items")}


def test_crawl_writes_the_feed_columns(crawled: dict[str, Any]) -> None:
    table: pa.Table = crawled["feeds"]
    assert table.schema.field("feed_date").type == pa.timestamp("us", tz="UTC")
    assert table.schema.field("link_rels").type == pa.list_(pa.string())
    assert table.schema.metadata[VERSION_KEY] == SCHEMA_VERSION.encode() == b"1.9"
    rows = {r["url"].removeprefix(crawled["base"]): r for r in table.to_pylist()}
    atom, rss = rows["/atom.xml"], rows["/rss.xml"]
    assert atom["generator"] == "Hugo 0.121 (https://gohugo.io/)"
    assert atom["platforms"] == ["ghost", "hugo"]  # the generator, and a header name
    assert atom["feed_date"] == datetime(2024, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert (atom["hub_url"], atom["link_rels"]) == ("https://hub.example/", ["alternate", "first", "hub", "self"])
    assert (atom["entry_languages"], atom["hreflangs"]) == (["nl", "sv"], ["nl", "pt-BR"])
    assert rss["platforms"] == ["wordpress"]
    assert rss["hub_url"] == f"{crawled['base']}/hub"
    assert rss["feed_date"] == datetime(2024, 1, 2, 9, 0, tzinfo=UTC)


def test_crawl_writes_the_item_columns(crawled: dict[str, Any]) -> None:
    table: pa.Table = crawled["items"]
    assert table.schema.field("description_length").type == pa.int32()
    assert table.schema.field("title_has_markup").type == pa.bool_()
    by_feed: dict[str, list[tuple[Any, ...]]] = {}
    for r in sorted(table.to_pylist(), key=lambda r: (r["feed_url"], r["position"])):
        by_feed.setdefault(re.sub(r"^http://[^/]+", "", r["feed_url"]), []).append(
            (r["title_has_markup"], r["description_length"], r["content_length"], r["content_kind"])
        )
    assert by_feed["/rss.xml"][0] == (True, len("Caf\u00e9 <p>x</p>"), len(BIG.replace("\r\n", "\n")), "html")
    assert by_feed["/rss.xml"][3] == (None, None, None, None)
    assert [k[3] for k in by_feed["/atom.xml"]] == ["xhtml", "html", "html", "plain", None]
