"""Item identity and content hash: the pure functions, and what parse_feed fills in with them."""

from __future__ import annotations

import hashlib
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipelines.document.feedparse import ParsedFeed, ParsedItem, parse_feed
from pipelines.document.identity import HASH_PREFIX, content_hash, item_hashes, item_identity
from schemas.vocab import FeedFormat, IdentitySource

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
BENCHMARK = CORPUS / "benchmark_feeds"
BENCH_FILES = sorted(p.name for p in BENCHMARK.iterdir() if p.name != "manifest.tsv") if BENCHMARK.is_dir() else []
HEX64 = re.compile(r"[0-9a-f]{64}")


def sha(*parts: str) -> str:
    """The rule written out independently: SHA-256 hex of the parts joined with U+001F."""
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- content_hash


def test_content_hash_is_sha256_of_the_four_parts() -> None:
    got = content_hash("Title", "http://example.com/1", "<p>Body</p>", "http://example.com/1.mp3")
    assert got == sha("Title", "http://example.com/1", "<p>Body</p>", "http://example.com/1.mp3")
    assert HEX64.fullmatch(got)


def test_content_hash_missing_parts_are_empty_strings() -> None:
    assert content_hash(None, None, None, None) == sha("", "", "", "")
    assert content_hash("T", None, None, None) == sha("T", "", "", "")
    # the separator keeps the parts apart: the same text in another field is another hash
    assert content_hash("T", None, None, None) != content_hash(None, "T", None, None)


def test_content_hash_text_and_its_utf8_bytes_agree() -> None:
    text = "Grüße, 東京 \U0001f600 & <b>x</b>"
    as_text = content_hash("Titre é", "http://example.com/é", text, None)
    assert as_text == content_hash("Titre é", "http://example.com/é", text.encode("utf-8"), None)
    assert as_text == sha("Titre é", "http://example.com/é", text, "")


@pytest.mark.parametrize("part", range(4))
def test_content_hash_changes_with_every_part(part: int) -> None:
    parts: list[str | None] = ["t", "http://example.com/l", "d", "http://example.com/e"]
    before = content_hash(parts[0], parts[1], parts[2], parts[3])
    parts[part] = (parts[part] or "") + "!"
    assert content_hash(parts[0], parts[1], parts[2], parts[3]) != before


def test_content_hash_of_a_lone_surrogate_does_not_raise() -> None:
    got = content_hash("\ud800", None, "x\udfff", None)
    assert HEX64.fullmatch(got)
    assert got == content_hash("\ud800", None, "x\udfff".encode("utf-8", "surrogatepass"), None)


@pytest.mark.parametrize("guid", [None, "", "  ", " urn:1 "])
@pytest.mark.parametrize("link", [None, " ", "http://example.com/1"])
@pytest.mark.parametrize("description", [None, "Grüße <b>x</b>", "Grüße <b>x</b>".encode(), "x\udfff"])
def test_item_hashes_is_content_hash_then_item_identity(
    guid: str | None, link: str | None, description: str | bytes | None
) -> None:
    """The parser's one call gives what the two documented functions give."""
    expected = (
        content_hash("T", link, description, "http://example.com/e.mp3"),
        *item_identity(guid, link, "T", description, "http://example.com/e.mp3"),
    )
    assert item_hashes(guid, link, "T", description, "http://example.com/e.mp3") == expected


# --------------------------------------------------------------------------- item_identity


def test_identity_is_the_stripped_guid_first() -> None:
    assert item_identity("  urn:uuid:1  ", "http://example.com/1", "T", "D", None) == (
        "urn:uuid:1",
        IdentitySource.GUID,
    )


@pytest.mark.parametrize("guid", [None, "", "   \n"])
def test_identity_falls_back_to_the_link(guid: str | None) -> None:
    assert item_identity(guid, " http://example.com/1 ", "T", None, None) == ("http://example.com/1", "link")


@pytest.mark.parametrize("link", [None, " "])
def test_identity_falls_back_to_a_hash_of_title_description_and_enclosure(link: str | None) -> None:
    identity, source = item_identity(None, link, "T", "D", "http://example.com/e.mp3")
    assert source is IdentitySource.HASH
    assert identity == HASH_PREFIX + sha("T", "D", "http://example.com/e.mp3")
    assert item_identity(None, link, None, None, None)[0] == "sha256:" + sha("", "", "")
    assert item_identity(None, link, "T", b"D", "http://example.com/e.mp3")[0] == identity  # bytes: the same
    assert item_identity(None, link, "T2", "D", "http://example.com/e.mp3")[0] != identity


# --------------------------------------------------------------------------- what parse_feed fills in


def rss(items: str, extra_ns: str = "") -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n'
        f'<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"{extra_ns}><channel>\n'
        "<title>T</title><link>http://example.com/</link><description>D</description>\n"
        f"{items}\n</channel></rss>"
    ).encode()


IDENTITY_FEED = rss(
    """
<item><title>With guid</title><guid isPermaLink="false"> tag:example.com,2024:1 </guid><link>/one</link></item>
<item><title>Link only</title><link>/two?x=1</link><description>two</description></item>
<item><title>Neither</title><description>three</description><enclosure url="/3.mp3" type="audio/mpeg"/></item>
<item><title>  </title><guid>  </guid><link> </link></item>
"""
)


def test_parse_feed_identity_from_guid_link_and_hash() -> None:
    feed = parse_feed(IDENTITY_FEED, "http://example.com/feed.xml")
    guid, link, neither, empty = feed.items
    assert (guid.identity, guid.identity_source) == ("tag:example.com,2024:1", IdentitySource.GUID)
    assert (link.identity, link.identity_source) == ("http://example.com/two?x=1", IdentitySource.LINK)  # absolute
    assert neither.identity_source == IdentitySource.HASH
    assert neither.identity == HASH_PREFIX + sha("Neither", "three", "http://example.com/3.mp3")
    # nothing at all: still an identity, the hash of three empty parts
    assert (empty.identity, empty.identity_source) == (HASH_PREFIX + sha("", "", ""), IdentitySource.HASH)
    for it in feed.items:
        assert it.content_hash == content_hash(it.title, it.link, _rss_description(it, feed), it.enclosure_url)


def _rss_description(it: ParsedItem, feed: ParsedFeed) -> str | None:
    assert feed.root is not None
    el = feed.root.findall("channel/item")[it.position].find("description")
    return None if el is None else "".join(el.itertext())


def test_parse_feed_identity_is_stable_and_follows_the_title() -> None:
    first = parse_feed(IDENTITY_FEED, "http://example.com/feed.xml").items
    again = parse_feed(IDENTITY_FEED, "http://example.com/feed.xml").items
    assert [(i.identity, i.identity_source, i.content_hash) for i in first] == [
        (i.identity, i.identity_source, i.content_hash) for i in again
    ]
    retitled = parse_feed(IDENTITY_FEED.replace(b"Neither", b"Neither, edited"), "http://example.com/feed.xml").items
    assert retitled[2].identity != first[2].identity and retitled[2].identity_source == IdentitySource.HASH
    assert retitled[2].content_hash != first[2].content_hash
    # the other items keep their identity and hash
    assert [i.identity for i in retitled[:2]] == [i.identity for i in first[:2]]
    assert retitled[0].content_hash == first[0].content_hash


def test_the_item_url_changes_the_link_identity_only_through_the_feed_url() -> None:
    a = parse_feed(IDENTITY_FEED, "http://example.com/feed.xml").items[1]
    b = parse_feed(IDENTITY_FEED, "http://mirror.example.net/feed.xml").items[1]
    assert (a.identity, b.identity) == ("http://example.com/two?x=1", "http://mirror.example.net/two?x=1")


ONE = """<item><title>One</title><link>http://example.com/1</link><guid>g1</guid>
<pubDate>Thu, 04 Oct 2007 23:59:45 GMT</pubDate><description>{description}</description>{more}</item>"""


def _one(description: str = "Body", more: str = "", date: str = "Thu, 04 Oct 2007 23:59:45 GMT") -> ParsedItem:
    body = rss(ONE.format(description=description, more=more).replace("Thu, 04 Oct 2007 23:59:45 GMT", date))
    (item,) = parse_feed(body, "http://example.com/feed").items
    return item


def test_content_hash_follows_the_description_not_the_date() -> None:
    base = _one()
    assert base.content_hash == content_hash("One", "http://example.com/1", "Body", None)
    assert _one("Body, corrected").content_hash != base.content_hash
    redated = _one(date="Fri, 05 Oct 2007 00:00:00 GMT")
    assert redated.pub_date != base.pub_date
    assert redated.content_hash == base.content_hash
    assert (redated.identity, _one("Body, corrected").identity) == ("g1", "g1")


def test_rss_description_wins_over_content_encoded() -> None:
    both = _one("Short", "<content:encoded><![CDATA[<p>Long</p>]]></content:encoded>")
    assert both.content_hash == content_hash("One", "http://example.com/1", "Short", None)
    # no description (or a blank one): content:encoded, its CDATA as written
    for description in ("", " \n\t "):
        only = _one(description, "<content:encoded><![CDATA[<p>Long</p>]]></content:encoded>")
        assert only.content_hash == content_hash("One", "http://example.com/1", "<p>Long</p>", None)


def test_description_text_is_the_string_value_as_written() -> None:
    written = "\n  <![CDATA[<p>a &amp; b</p>]]> &lt;i&gt;c&#233;&lt;/i&gt; \n"
    item = _one(written)
    expected = "\n  <p>a &amp; b</p> <i>cé</i> \n"  # CDATA as is, references resolved, not stripped
    assert item.content_hash == content_hash("One", "http://example.com/1", expected, None)


def test_large_cdata_description_hashes_the_same_with_notes() -> None:
    big = "<p>Long & winding</p>\r\nline two\rline three\n" * 200  # lifted by with_notes; CR and CRLF read as LF
    body = rss(ONE.format(description=f"<![CDATA[{big}]]>", more=""))
    plain = parse_feed(body, "http://example.com/feed").items[0]
    noted = parse_feed(body, "http://example.com/feed", with_notes=True)
    assert noted.notes is not None and noted.root is not None
    assert noted.notes.MARK in (noted.root.find("channel/item/description").text or "")  # lifted
    expected = big.replace("\r\n", "\n").replace("\r", "\n")
    assert plain.content_hash == content_hash("One", "http://example.com/1", expected, None)
    assert noted.items[0].content_hash == plain.content_hash


ATOM = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom"><title>F</title><id>urn:f</id><updated>2024-01-01T00:00:00Z</updated>
{entries}</feed>"""
ENTRY = """<entry><title>E</title><id>urn:e:{n}</id><link href="http://example.com/e{n}"/>
<updated>2024-01-01T00:00:00Z</updated>{body}</entry>"""


def _atom(*bodies: str) -> list[ParsedItem]:
    entries = "".join(ENTRY.format(n=n, body=b) for n, b in enumerate(bodies))
    return parse_feed(ATOM.format(entries=entries).encode(), "http://example.com/atom").items


def test_atom_content_wins_over_summary() -> None:
    both, summary_only, content_by_src, xhtml = _atom(
        '<summary>Short</summary><content type="html">&lt;p&gt;Full&lt;/p&gt;</content>',
        "<summary>Short</summary>",
        '<content src="http://example.com/full" type="text/html"/><summary>Short</summary>',
        '<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Full <b>bold</b></p></div></content>',
    )
    assert both.content_hash == content_hash("E", "http://example.com/e0", "<p>Full</p>", None)
    assert summary_only.content_hash == content_hash("E", "http://example.com/e1", "Short", None)
    assert content_by_src.content_hash == content_hash("E", "http://example.com/e2", "Short", None)  # empty content
    assert xhtml.content_hash == content_hash("E", "http://example.com/e3", "Full bold", None)  # tags dropped
    assert [(i.identity, i.identity_source) for i in (both, xhtml)] == [("urn:e:0", "guid"), ("urn:e:3", "guid")]


def test_atom_summary_change_does_not_change_the_hash_when_there_is_content() -> None:
    a, b = _atom("<summary>One</summary><content>Full</content>", "<summary>Two</summary><content>Full</content>")
    assert a.content_hash == content_hash("E", "http://example.com/e0", "Full", None)
    assert b.content_hash == content_hash("E", "http://example.com/e1", "Full", None)


def test_rss10_identity_is_rdf_about() -> None:
    body = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel rdf:about="http://example.com/"><title>T</title><link>http://example.com/</link><description>D</description></channel>
<item rdf:about="http://example.com/a"><title>A</title><link>http://example.com/a</link>
  <content:encoded>Encoded</content:encoded></item>
<item><title>B</title><description>Plain</description></item>
</rdf:RDF>"""
    a, b = parse_feed(body).items
    assert (a.identity, a.identity_source) == ("http://example.com/a", IdentitySource.GUID)
    assert a.content_hash == content_hash("A", "http://example.com/a", "Encoded", None)
    assert (b.identity, b.identity_source) == (HASH_PREFIX + sha("B", "Plain", ""), IdentitySource.HASH)


def test_odd_documents_still_give_every_item_an_identity() -> None:
    recovered = parse_feed(b"<rss><channel><item><title>A &bogus; b</title><description>x<b>y</description></item>")
    assert not recovered.well_formed and recovered.items
    for it in recovered.items:
        assert it.identity and it.identity_source == IdentitySource.HASH and HEX64.fullmatch(it.content_hash or "")
    assert parse_feed(b"not xml").items == []


# --------------------------------------------------------------------------- real feeds


def _independent_descriptions(body: bytes, fmt: str) -> list[str | None] | None:
    """Each item's description by the rule, read with the standard library (None: it cannot read the document)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    if fmt == FeedFormat.ATOM:
        atom = "{http://www.w3.org/2005/Atom}"
        entries = [el for el in root if el.tag == atom + "entry"]
        return [_first_text(e, (atom + "content", atom + "summary")) for e in entries]
    own = root.tag[: root.tag.index("}") + 1] if root.tag.startswith("{") and root.tag.endswith("}rss") else ""
    rss1 = "{http://purl.org/rss/1.0/}"
    encoded = "{http://purl.org/rss/1.0/modules/content/}encoded"
    channel = next((el for el in root if el.tag in (own + "channel", rss1 + "channel")), None)
    level = ([*channel] if channel is not None else []) + [el for el in root if el is not channel]
    items = [el for el in level if el.tag in (own + "item", rss1 + "item")]
    return [_first_text(i, ((own + "description", rss1 + "description"), encoded)) for i in items]


def _first_text(item: ET.Element, kinds: tuple[str | tuple[str, ...], ...]) -> str | None:
    for kind in kinds:
        tags = kind if isinstance(kind, tuple) else (kind,)
        el = next((ch for ch in item if ch.tag in tags), None)
        if el is not None:
            text = "".join(el.itertext())
            if text.strip(" \t\r\n"):
                return text
    return None


@pytest.mark.skipif(not BENCH_FILES, reason=f"shared corpus not found at {BENCHMARK}")
def test_every_real_item_has_an_identity_and_the_hash_of_its_description() -> None:
    checked = 0
    sources: dict[str, int] = {}
    for name in BENCH_FILES:
        body = (BENCHMARK / name).read_bytes()
        url = f"https://bench.example/{name}"
        feed = parse_feed(body, url)
        for it in feed.items:
            assert it.identity and HEX64.fullmatch(it.content_hash or ""), (name, it.position)
            sources[str(it.identity_source)] = sources.get(str(it.identity_source), 0) + 1
            expected = {"guid": it.guid, "link": it.link}.get(str(it.identity_source), it.identity)
            assert it.identity == expected, (name, it.position)
        assert [i.content_hash for i in parse_feed(body, url, with_notes=True).items] == [
            i.content_hash for i in feed.items
        ], name
        descriptions = _independent_descriptions(body, feed.format)
        if descriptions is None or not feed.well_formed:
            continue
        assert len(descriptions) == len(feed.items), name
        for it, description in zip(feed.items, descriptions, strict=True):
            where = (name, it.position)
            assert it.content_hash == content_hash(it.title, it.link, description, it.enclosure_url), where
            identity = item_identity(it.guid, it.link, it.title, description, it.enclosure_url)
            assert (it.identity, it.identity_source) == identity, where
            checked += 1
    assert checked > 5000  # the corpus has ~6,500 items: nearly all are checked independently
    assert sources.get("guid", 0) > 5000 and sources.get("link", 0) > 0
