"""Feed autodiscovery (crawler.fetch.discovery) against both specs' examples, real-world markup and hostile input.

Spec examples come from /work/shared/specs: rss-autodiscovery.txt (RSS Board
1.0) and atom-autodiscovery-draft.txt (draft-ietf-atompub-autodiscovery-01,
sections 7.1-7.4). Golden pages are in tests/data/discovery/: ``x.html`` with
``x.json`` holding the URL, headers and the expected links.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.fetch.discovery import RULES, FeedLink, discover
from crawler.fetch.htmlencoding import decode_html
from crawler.fetch.pagescan import _scan
from crawler.fetch.urls import DEFAULT_MAX_URL_LENGTH, check_url

DATA = Path(__file__).resolve().parent / "data" / "discovery"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"

PAGE = "http://www.example.com/index.html"
FEED = "http://www.example.com/xml/index.atom"


def page(head: str = "", body: str = "<p>Hello</p>") -> bytes:
    return f"<!DOCTYPE html><html><head><title>T</title>{head}</head><body>{body}</body></html>".encode()


def only(body: bytes, url: str = PAGE, **kwargs: object) -> FeedLink:
    links = discover(body, url, **kwargs)  # type: ignore[arg-type]
    assert len(links) == 1, links
    return links[0]


# ---------------------------------------------------------------------------
# Golden pages


GOLDEN = sorted(p.stem for p in DATA.glob("*.html"))


def test_golden_pages_present() -> None:
    assert len(GOLDEN) >= 10
    for stem in GOLDEN:
        assert (DATA / f"{stem}.json").is_file(), stem


@pytest.mark.parametrize("stem", GOLDEN)
def test_golden_page(stem: str) -> None:
    expected = json.loads((DATA / f"{stem}.json").read_text(encoding="utf-8"))
    body = (DATA / f"{stem}.html").read_bytes()
    _, encoding = decode_html(body, expected["headers"])
    assert encoding == expected["encoding"]
    links = discover(body, expected["url"], expected["headers"], follow_body=expected["follow_body"])
    got = [{**asdict(link), "reasons": list(link.reasons)} for link in links]
    assert got == expected["links"]


def test_golden_body_link_followed_with_follow_body() -> None:
    body = (DATA / "wordpress-like.html").read_bytes()
    without = discover(body, "https://example.com/", follow_body=False)
    with_body = discover(body, "https://example.com/", follow_body=True)
    assert discover(body, "https://example.com/") == with_body  # body links are followed by default
    assert [link.followable for link in without] == [True, True, True, False]
    assert [link.followable for link in with_body] == [True, True, True, True]
    assert with_body[3].reasons == ("not-in-head",)


# ---------------------------------------------------------------------------
# Atom draft 7.1: rel attribute variations (all valid)

REL_VALID_ATOM = [
    # (attribute as written, rel after decoding, RSS Board reasons)
    ('rel="alternate"', "alternate", ()),
    ('rel="alternate "', "alternate ", ()),
    ('rel=" alternate"', " alternate", ()),
    ('rel=" alternate "', " alternate ", ()),
    ('rel="foo alternate"', "foo alternate", ("rss-rel-extra-tokens",)),
    ('rel="alternate bar"', "alternate bar", ("rss-rel-extra-tokens",)),
    ('rel="foo alternate bar"', "foo alternate bar", ("rss-rel-extra-tokens",)),
    ('rel="ALTERNATE"', "ALTERNATE", ("rss-rel-not-lowercase",)),
    ('rel="Alternate"', "Alternate", ("rss-rel-not-lowercase",)),
    ('rel="AlTeRnAtE"', "AlTeRnAtE", ("rss-rel-not-lowercase",)),
    ("rel='alternate'", "alternate", ()),
    # The stored copy of the draft reads rel="#65;lternate": the '&' of the original was lost in conversion.
    ('rel="&#65;lternate"', "Alternate", ("rss-rel-not-lowercase",)),
    # "In an HTML document, the following forms are also valid"
    ('REL="alternate"', "alternate", ()),
    ("rel=alternate", "alternate", ()),
]


@pytest.mark.parametrize(("rel_attr", "rel", "rss_reasons"), REL_VALID_ATOM)
def test_atom_7_1_rel_variations(rel_attr: str, rel: str, rss_reasons: tuple[str, ...]) -> None:
    link = only(page(f'<link {rel_attr} type="application/atom+xml" href="{FEED}">'))
    assert link.rel == rel
    assert link.href == FEED
    assert link.feed_type == "atom"
    assert link.conforms_atom is True
    assert link.conforms_rss is False
    assert link.reasons == (*rss_reasons, "rss-type-not-rss")
    assert link.followable is True


@pytest.mark.parametrize(("rel_attr", "rel", "rss_reasons"), REL_VALID_ATOM)
def test_rel_variations_judged_by_rss_board(rel_attr: str, rel: str, rss_reasons: tuple[str, ...]) -> None:
    """The same spellings on an RSS link: the RSS Board wants exactly 'alternate', lowercase, alone."""
    link = only(page(f'<link {rel_attr} type="application/rss+xml" href="/feed">'))
    assert link.rel == rel
    assert link.conforms_rss is (not rss_reasons)
    assert link.reasons == rss_reasons
    assert link.conforms_atom is False


def test_literal_hash_65_is_not_alternate() -> None:
    """Without the '&', '#65;lternate' is just a word: no alternate keyword, no feed link."""
    assert discover(page(f'<link rel="#65;lternate" type="application/atom+xml" href="{FEED}">'), PAGE) == []


# ---------------------------------------------------------------------------
# Atom draft 7.2: type attribute variations (all valid)

TYPE_VALID_ATOM = [
    ('type="application/atom+xml"', "application/atom+xml"),
    ('type="application/atom+xml "', "application/atom+xml "),
    ('type=" application/atom+xml"', " application/atom+xml"),
    ('type=" application/atom+xml "', " application/atom+xml "),
    ('type="APPLICATION/ATOM+XML"', "APPLICATION/ATOM+XML"),
    ('type="Application/Atom+Xml"', "Application/Atom+Xml"),
    ('TYPE="application/atom+xml"', "application/atom+xml"),
]


@pytest.mark.parametrize(("type_attr", "media"), TYPE_VALID_ATOM)
def test_atom_7_2_type_variations(type_attr: str, media: str) -> None:
    link = only(page(f'<link rel="alternate" {type_attr} href="{FEED}">'))
    assert link.type == media
    assert link.feed_type == "atom"
    assert link.conforms_atom is True
    assert link.reasons == ("rss-type-not-rss",)


@pytest.mark.parametrize(
    ("type_attr", "reasons"),
    [
        ('type="application/rss+xml"', ()),
        ('type="application/rss+xml "', ()),
        ('type=" application/rss+xml "', ()),
        ('type="application/rss&#43;xml"', ()),
        ('type="application/rss+xml; charset=utf-8"', ()),
        ('TYPE="application/rss+xml"', ()),
        ('type="APPLICATION/RSS+XML"', ("rss-type-not-lowercase",)),
        ('type="Application/Rss+Xml"', ("rss-type-not-lowercase",)),
        ('type="application/rss+xml; charset=UTF-8"', ("rss-type-not-lowercase",)),
        ('type="application/rdf+xml"', ("rss-type-not-rss",)),
    ],
)
def test_rss_board_type_must_be_lowercase_rss(type_attr: str, reasons: tuple[str, ...]) -> None:
    link = only(page(f'<link rel="alternate" {type_attr} href="/feed">'))
    assert link.reasons == reasons
    assert link.conforms_rss is (not reasons)
    assert link.conforms_atom is False


def test_rdf_type_is_a_feed_of_its_own_kind() -> None:
    link = only(page('<link rel="alternate" type="application/rdf+xml" href="/index.rdf">'))
    assert link.feed_type == "rdf"
    assert link.reasons == ("rss-type-not-rss",)
    assert link.followable is True


# ---------------------------------------------------------------------------
# Atom draft 7.3: link element variations (HTML at index.html, XHTML at index.xhtml)

LINK_HTML_7_3 = [
    '<link rel="alternate" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom">',
    '<link rel="alternate" type="application/atom+xml"\nhref="xml/index.atom">',
    '<link rel="alternate" type="application/atom+xml"\nhref="/xml/index.atom">',
    "<link rel='alternate' type='application/atom+xml'\nhref='http://www.example.com/xml/index.atom'>",
    "<link rel=alternate type='application/atom+xml'\nhref=\"http://www.example.com/xml/index.atom\">",
    '<link rel="AlTeRnAtE" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom">',
    '<link rel="alternate" type="APPLICATION/ATOM+XML"\nhref="http://www.example.com/xml/index.atom">',
    '<LINK REL="alternate" TYPE="application/atom+xml"\nHREF="http://www.example.com/xml/index.atom">',
    '<link href="http://www.example.com/xml/index.atom"\ntype="APPLICATION/ATOM+XML" rel="alternate">',
    '<link rel="alternate foo" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom">',
    '<link rel="foo alternate" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom">',
    '<link rel="foo alternate bar" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom">',
    '<link rel="&#65;lternate" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom">',
    '<link rel="alternate" type="application/atom&#43;xml"\nhref="http://www.example.com/xml/index.atom">',
]
LINK_XHTML_7_3 = [
    '<link rel="alternate" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom" />',
    '<link rel="alternate" type="application/atom+xml"\nhref="xml/index.atom" />',
    '<link rel="alternate" type="application/atom+xml"\nhref="/xml/index.atom" />',
    "<link rel='alternate' type='application/atom+xml'\nhref='http://www.example.com/xml/index.atom' />",
    '<link rel="AlTeRnAtE" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom" />',
    '<link rel="alternate" type="APPLICATION/ATOM+XML"\nhref="http://www.example.com/xml/index.atom" />',
    '<link href="http://www.example.com/xml/index.atom"\ntype="APPLICATION/ATOM+XML" rel="alternate" />',
    '<link rel="alternate foo" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom" />',
    '<link rel="foo alternate" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom" />',
    '<link rel="foo alternate bar" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom" />',
    '<link rel="&#65;lternate" type="application/atom+xml"\nhref="http://www.example.com/xml/index.atom" />',
    '<link rel="alternate" type="application/atom&#43;xml"\nhref="http://www.example.com/xml/index.atom" />',
]


@pytest.mark.parametrize("markup", LINK_HTML_7_3)
def test_atom_7_3_html_link_variations(markup: str) -> None:
    link = only(page(markup), "http://www.example.com/index.html")
    assert link.href == FEED
    assert link.feed_type == "atom"
    assert link.conforms_atom is True
    assert link.in_head is True
    assert link.followable is True


@pytest.mark.parametrize("markup", LINK_XHTML_7_3)
def test_atom_7_3_xhtml_link_variations(markup: str) -> None:
    doc = (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
        '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n<html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>x</title>{markup}</head><body><p>x</p></body></html>"
    ).encode()
    link = only(doc, "http://www.example.com/index.xhtml")
    assert link.href == FEED
    assert link.conforms_atom is True
    assert link.in_head is True


def test_character_references_are_decoded_in_every_attribute() -> None:
    link = only(
        page(
            '<link rel="&#x61;lternate" type="application&#x2F;rss&#43;xml" href="/a?x=1&amp;y=2" title="A &amp; B &lt;3">'
        )
    )
    assert (link.rel, link.type, link.href_raw, link.title) == (
        "alternate",
        "application/rss+xml",
        "/a?x=1&y=2",
        "A & B <3",
    )
    assert link.href == "http://www.example.com/a?x=1&y=2"
    assert link.conforms_rss is True


def test_legacy_entity_without_semicolon_follows_the_attribute_rule() -> None:
    """'&copy=2' stays as written in an attribute (next char '='), '&copy;' and '&copy ' are decoded."""
    link = only(
        page(
            '<link rel=alternate type=application/rss+xml href="/f?a=1&copy=2&lang=en&not_x" title="&copy 2024 &copy;">'
        )
    )
    assert link.href_raw == "/f?a=1&copy=2&lang=en¬_x"
    assert link.title == "© 2024 ©"


# ---------------------------------------------------------------------------
# Both sides of each MUST


def test_must_link_in_head() -> None:
    head = only(page('<link rel="alternate" type="application/rss+xml" href="/feed">'))
    body = only(page(body='<link rel="alternate" type="application/rss+xml" href="/feed">'))
    assert head.in_head is True and head.conforms_rss is True and "not-in-head" not in head.reasons
    assert body.in_head is False
    assert body.conforms_rss is False and body.conforms_atom is False
    assert body.reasons == ("not-in-head",)
    assert body.followable is True  # followed by default, still recorded as not in the head
    assert (
        only(page(body='<link rel="alternate" type="application/rss+xml" href="/feed">'), follow_body=False).followable
        is False
    )


def test_must_have_href() -> None:
    link = only(page('<link rel="alternate" type="application/atom+xml" title="No href">'))
    assert link.href is None and link.href_raw == ""
    assert link.reasons == ("href-missing", "rss-type-not-rss")
    assert link.conforms_atom is False
    assert link.followable is False


def test_must_have_rel_and_type_or_it_is_no_feed_link() -> None:
    assert discover(page('<link type="application/rss+xml" href="/feed">'), PAGE) == []
    assert discover(page('<link rel="alternate" href="/feed.rss">'), PAGE) == []
    assert discover(page('<link rel="" type="application/rss+xml" href="/feed">'), PAGE) == []
    assert discover(page('<link rel="alternates" type="application/rss+xml" href="/feed">'), PAGE) == []
    assert discover(page('<link rel="feed" type="application/rss+xml" href="/feed">'), PAGE) == []


def test_each_link_must_identify_a_different_feed() -> None:
    links = discover(
        page(
            '<link rel="alternate" type="application/rss+xml" title="one" href="/feed">'
            '<link rel="alternate" type="application/rss+xml" title="two" href="http://WWW.EXAMPLE.COM/feed#x">'
            '<link rel="alternate" type="application/atom+xml" title="three" href="/atom">'
        ),
        PAGE,
    )
    assert [(link.title, link.position) for link in links] == [("one", 0), ("three", 1)]
    assert links[0].reasons == ("rss-duplicate-feed",)
    assert links[0].conforms_rss is False
    distinct = discover(page('<link rel="alternate" type="application/rss+xml" href="/feed">'), PAGE)
    assert distinct[0].conforms_rss is True


def test_relative_href_without_base_uses_the_page_url() -> None:
    link = only(
        page('<link rel="alternate" type="application/rss+xml" href="feed.xml">'), "https://example.com/blog/post/"
    )
    assert link.href == "https://example.com/blog/post/feed.xml"
    assert link.conforms_rss is True


# ---------------------------------------------------------------------------
# Base URI


def test_base_after_the_link_still_applies() -> None:
    body = b"""<html><head><link rel="alternate" type="application/rss+xml" href="feed">
<base href="http://cdn.example.net/site/"></head><body></body></html>"""
    assert only(body, "https://example.com/page").href == "http://cdn.example.net/site/feed"


def test_first_base_wins_and_base_may_be_relative() -> None:
    body = page(
        '<base href="/sub/dir/"><base href="http://other.example/">'
        '<link rel="alternate" type="application/rss+xml" href="../feed">'
    )
    assert only(body, "https://example.com/x/y").href == "https://example.com/sub/feed"


def test_base_without_href_is_skipped() -> None:
    body = page(
        '<base target="_blank"><base href="http://b.example/d/"><link rel=alternate type=application/rss+xml href=f>'
    )
    assert only(body).href == "http://b.example/d/f"


def test_base_in_template_is_ignored_and_template_links_are_inert() -> None:
    body = page(
        '<template><base href="http://evil.example/"><link rel=alternate type=application/rss+xml href=/t></template>'
        "<link rel=alternate type=application/rss+xml href=feed>"
    )
    assert only(body).href == "http://www.example.com/feed"


def test_unusable_base_falls_back_to_the_page_url() -> None:
    body = page('<base href="javascript:alert(1)"><link rel="alternate" type="application/rss+xml" href="feed">')
    assert only(body, "https://example.com/a/b").href == "https://example.com/a/feed"


def test_protocol_relative_href() -> None:
    assert only(
        page('<link rel=alternate type=application/rss+xml href="//feeds.example.org/x">'), "https://example.com/"
    ).href == ("https://feeds.example.org/x")


@pytest.mark.parametrize(
    ("ref", "expected"),
    [  # RFC 3986 section 5.4.1 and 5.4.2, base http://a/b/c/d;p?q
        ("g:h", "g:h"),
        ("g", "http://a/b/c/g"),
        ("./g", "http://a/b/c/g"),
        ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"),
        ("//g", "http://g/"),
        ("?y", "http://a/b/c/d;p?y"),
        ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"),
        ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"),
        ("g;x", "http://a/b/c/g;x"),
        ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"),
        ("..", "http://a/b/"),
        ("../", "http://a/b/"),
        ("../g", "http://a/b/g"),
        ("../..", "http://a/"),
        ("../../", "http://a/"),
        ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"),
        ("../../../../g", "http://a/g"),
        ("/./g", "http://a/g"),
        ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."),
        (".g", "http://a/b/c/.g"),
        ("g..", "http://a/b/c/g.."),
        ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"),
        ("./g/.", "http://a/b/c/g/"),
        ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"),
        ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"),
        ("g#s/../x", "http://a/b/c/g#s/../x"),
        ("http:g", "http://a/b/c/g"),  # RFC 3986 non-strict, as browsers do for http
    ],
)
def test_rfc3986_reference_resolution(ref: str, expected: str) -> None:
    link = only(page(f'<link rel="alternate" type="application/rss+xml" href="{ref}">'), "http://a/b/c/d;p?q")
    assert link.href == expected


# ---------------------------------------------------------------------------
# Hostile and odd hrefs


@pytest.mark.parametrize(
    ("href", "resolved", "reason"),
    [
        ("javascript:alert(document.cookie)", "javascript:alert(document.cookie)", "href-unsupported-scheme"),
        ("JavaScript:alert(1)", "javascript:alert(1)", "href-unsupported-scheme"),
        (
            "data:application/rss+xml;base64,PHJzcy8+",
            "data:application/rss+xml;base64,PHJzcy8+",
            "href-unsupported-scheme",
        ),
        ("file:///etc/passwd", "file:///etc/passwd", "href-unsupported-scheme"),
        ("mailto:feeds@example.com", "mailto:feeds@example.com", "href-unsupported-scheme"),
        ("feed://example.com/rss", "feed://example.com/rss", "href-unsupported-scheme"),
        ("ftp://example.com/rss.xml", "ftp://example.com/rss.xml", "href-unsupported-scheme"),
        ("http:///feed", "http:///feed", "href-no-host"),
        ("https:feed", "https:feed", "href-no-host"),
        ("http://example.com:99999/feed", "http://example.com:99999/feed", "href-bad-port"),
        ("http://example.com:-1/feed", "http://example.com:-1/feed", "href-bad-port"),
        ("http://[::1]:8o/feed", "http://[::1]:8o/feed", "href-bad-port"),
    ],
)
def test_non_http_hrefs_are_reported_not_followed(href: str, resolved: str, reason: str) -> None:
    link = only(page(f'<link rel="alternate" type="application/rss+xml" href="{href}">'))
    assert link.href == resolved
    assert reason in link.reasons
    assert link.followable is False
    assert link.conforms_rss is True  # a scheme is crawler policy, not a spec MUST


@pytest.mark.parametrize("href", ['href=""', 'href="   "', 'href="\t\n"', "href=''", "href"])
def test_empty_href_names_the_page_itself(href: str) -> None:
    link = only(page(f'<link rel="alternate" type="application/rss+xml" {href}>'), "https://example.com/p?q=1#frag")
    assert link.href == "https://example.com/p?q=1"
    assert "href-empty" in link.reasons
    assert link.conforms_rss is False and link.followable is False


def test_whitespace_around_and_inside_href() -> None:
    link = only(page('<link rel="alternate" type="application/rss+xml" href="  /fe\ned.xml \t">'))
    assert link.href_raw == "  /fe\ned.xml \t"
    assert link.href == "http://www.example.com/feed.xml"
    assert link.reasons == ("href-not-uri",)  # a newline is not a URI character
    assert link.followable is True


@pytest.mark.parametrize("href", ["/a b.xml", "/caf\u00e9.xml", "\\\\evil.example\\feed", "/f%zz", "/a#b#c"])
def test_href_not_uri(href: str) -> None:
    link = only(page(f'<link rel="alternate" type="application/rss+xml" href="{href}">'))
    assert "href-not-uri" in link.reasons
    assert link.conforms_rss is False and link.conforms_atom is False


def test_very_long_href() -> None:
    long_path = "/" + "a/" * 60_000 + "feed.xml"
    start = time.perf_counter()
    link = only(page(f'<link rel="alternate" type="application/rss+xml" href="{long_path}">'))
    assert time.perf_counter() - start < 2
    assert link.href == "http://www.example.com" + long_path
    assert link.reasons == ("href-too-long",)
    assert link.followable is False
    dots = "/" + "../" * 50_000 + "x/./y"
    assert (
        only(page(f'<link rel="alternate" type="application/rss+xml" href="{dots}">')).href
        == "http://www.example.com/x/y"
    )
    fits = "/" + "b" * (DEFAULT_MAX_URL_LENGTH - len("http://www.example.com/"))
    assert only(page(f'<link rel="alternate" type="application/rss+xml" href="{fits}">')).followable is True


def test_url_limit_is_the_crawls_setting() -> None:
    """``max_url_length`` (FEEDCENSUS_MAX_URL_LENGTH in a crawl) judges a link as its request would be judged."""
    href = "http://www.example.com/" + "f" * 40
    body = page(f'<link rel="alternate" type="application/rss+xml" href="{href}">')
    short = only(body, max_url_length=len(href) - 1)
    assert short.reasons == ("href-too-long",) and short.followable is False
    assert check_url(href, len(href) - 1) is not None  # the request check refuses it too
    assert only(body, max_url_length=len(href)).followable is True
    assert only(body, max_url_length=0).followable is True  # 0: no limit, as for requests
    assert check_url(href, 0) is None


@pytest.mark.parametrize(
    ("href", "reason"),
    [("ftp://example.com/rss.xml", "href-unsupported-scheme"), ("http:///feed", "href-no-host")],
)
def test_link_reasons_and_the_request_check_agree(href: str, reason: str) -> None:
    link = only(page(f'<link rel="alternate" type="application/rss+xml" href="{href}">'))
    assert reason in link.reasons and link.followable is False
    assert check_url(link.href or "") is not None


def test_middleware_reads_the_url_limit_once() -> None:
    from scrapy.utils.test import get_crawler

    from crawler.middlewares.autodiscovery import AutodiscoveryMiddleware

    crawler = get_crawler(settings_dict={"AUTODISCOVERY_ENABLED": True, "FEEDCENSUS_MAX_URL_LENGTH": 40})
    assert AutodiscoveryMiddleware.from_crawler(crawler).max_url_length == 40
    default = get_crawler(settings_dict={"AUTODISCOVERY_ENABLED": True})
    assert AutodiscoveryMiddleware.from_crawler(default).max_url_length == DEFAULT_MAX_URL_LENGTH


def test_relative_href_without_any_base() -> None:
    link = only(page('<link rel="alternate" type="application/rss+xml" href="feed">'), "")
    assert link.href is None
    assert link.reasons == ("href-relative-without-base",)
    assert link.conforms_rss is True and link.followable is False
    absolute = only(page('<link rel="alternate" type="application/rss+xml" href="https://x.example/f">'), "not a url")
    assert absolute.href == "https://x.example/f" and absolute.followable is True


# ---------------------------------------------------------------------------
# HTML parsing the way browsers do


def test_uppercase_unquoted_link() -> None:
    link = only(b"<HTML><HEAD><LINK REL=ALTERNATE TYPE=APPLICATION/RSS+XML HREF=/feed></HEAD><BODY></BODY></HTML>")
    assert (link.rel, link.type, link.href) == ("ALTERNATE", "APPLICATION/RSS+XML", "http://www.example.com/feed")
    assert link.reasons == ("rss-rel-not-lowercase", "rss-type-not-lowercase")
    assert link.conforms_atom is False and link.conforms_rss is False
    assert link.in_head is True


def test_unquoted_value_keeps_its_slash_and_quotes_inside_values() -> None:
    links = discover(
        page(
            "<link rel=alternate type=application/rss+xml href=/feed/>"
            "<link rel=alternate type=application/atom+xml title=\"a > b\" href='/it's'>"
        ),
        PAGE,
    )
    assert [link.href_raw for link in links] == ["/feed/", "/it"]
    assert links[1].title == "a > b"


def test_duplicate_attributes_first_wins_and_attributes_without_spaces() -> None:
    link = only(page('<link rel="alternate"type="application/rss+xml"href="/one" href="/two" rel="stylesheet">'))
    assert link.href_raw == "/one" and link.rel == "alternate"


def test_links_in_script_style_comment_textarea_title_noscript_are_not_elements() -> None:
    feed = '<link rel="alternate" type="application/rss+xml" href="/x">'
    body = page(
        f"<script>var s = '{feed}';</script><style>/* {feed} */</style><!-- {feed} -->"
        f"<noscript>{feed}</noscript><!--->{feed[:-1]}",
        f"<textarea>{feed}</textarea><title>{feed}</title><xmp>{feed}</xmp>",
    )
    links = discover(body, PAGE)
    # the only element is the one after the empty comment '<!--->', which ends at its '>'
    assert len(links) == 1 and links[0].href_raw == "/x"


def test_script_end_tag_is_case_insensitive_and_needs_a_delimiter() -> None:
    body = page('<script>a = "</scripty>"; b = 1</SCRIPT ><link rel=alternate type=application/rss+xml href=/after>')
    assert only(body).href_raw == "/after"


def test_link_between_head_and_body_is_put_in_the_head() -> None:
    body = b"<html><head><title>x</title></head>\n<link rel=alternate type=application/rss+xml href=/f>\n<body></body></html>"
    assert only(body).in_head is True


def test_content_in_head_ends_it_like_a_browser() -> None:
    img = only(
        b"<html><head><img src=x><link rel=alternate type=application/rss+xml href=/f></head><body></body></html>",
        follow_body=False,
    )
    assert img.in_head is False and img.followable is False
    text = only(b"<html><head>stray text<link rel=alternate type=application/rss+xml href=/f></head></html>")
    assert text.in_head is False
    pixel = only(
        b"<html><head><noscript><img src=x></noscript><link rel=alternate type=application/rss+xml href=/f></head></html>"
    )
    assert pixel.in_head is True


def test_document_without_head_or_html_tags() -> None:
    assert only(b"<link rel=alternate type=application/rss+xml href=/f>").in_head is True
    assert only(b"<title>x</title><link rel=alternate type=application/rss+xml href=/f><p>x").in_head is True
    assert only(b"<p>x</p><link rel=alternate type=application/rss+xml href=/f>").in_head is False
    assert only(b"<html><body><link rel=alternate type=application/rss+xml href=/f>").in_head is False
    assert only(b"<html></head><link rel=alternate type=application/rss+xml href=/f>").in_head is True


def test_unterminated_tag_and_comment_drop_the_rest() -> None:
    ok = '<link rel="alternate" type="application/rss+xml" href="/ok">'
    assert [
        link.href_raw
        for link in discover(page(ok + '<meta content="x><link rel=alternate type=application/rss+xml href=/no>'), PAGE)
    ] == ["/ok"]
    assert [
        link.href_raw
        for link in discover((ok + "<!-- <link rel=alternate type=application/rss+xml href=/no>").encode(), PAGE)
    ] == ["/ok"]


def test_order_is_kept() -> None:
    links = discover(
        page(
            "<link rel=alternate type=application/atom+xml href=/a title=A>"
            "<link rel=alternate type=application/rss+xml href=/b title=B>"
            "<link rel=alternate type=application/rdf+xml href=/c title=C>",
            "<link rel=alternate type=application/rss+xml href=/d title=D>",
        ),
        PAGE,
    )
    assert [(link.title, link.position, link.feed_type, link.in_head) for link in links] == [
        ("A", 0, "atom", True),
        ("B", 1, "rss", True),
        ("C", 2, "rdf", True),
        ("D", 3, "rss", False),
    ]


@pytest.mark.parametrize(
    "markup",
    [
        '<link rel="alternate" hreflang="de" type="text/html" href="/de/">',
        '<link rel="alternate" hreflang="fr" href="/fr/">',
        '<link rel="alternate" media="only screen and (max-width: 640px)" href="https://m.example.com/">',
        '<link rel="icon" type="image/png" href="/favicon.png">',
        '<link rel="shortcut icon" href="/favicon.ico">',
        '<link rel="stylesheet" type="text/css" href="/s.css">',
        '<link rel="alternate stylesheet" type="text/css" href="/dark.css" title="Dark">',
        '<link rel="alternate" type="application/xml" href="/sitemap.xml">',
        '<link rel="alternate" type="text/xml" href="/feed.xml">',
        '<link rel="alternate" type="application/feed+json" href="/feed.json">',
        '<link rel="alternate" type="application/json+oembed" href="/oembed">',
        '<link rel="search" type="application/opensearchdescription+xml" href="/os.xml">',
        '<link rel="self" type="application/atom+xml" href="/feed">',
        '<a rel="alternate" type="application/rss+xml" href="/feed">RSS</a>',
        '<link rel="alternate" type="application/rss+xml+foo" href="/feed">',
    ],
)
def test_not_feed_links(markup: str) -> None:
    assert discover(page(markup, markup), PAGE) == []


# ---------------------------------------------------------------------------
# Encodings


def test_meta_charset_windows_1251_title() -> None:
    body = '<meta charset="windows-1251"><title>x</title><link rel=alternate type=application/rss+xml title="Лента новостей" href=/rss>'.encode(
        "cp1251"
    )
    text, encoding = decode_html(body)
    assert encoding == "cp1251" and "Лента новостей" in text
    assert only(body).title == "Лента новостей"


def test_http_charset_beats_meta_and_bom_beats_both() -> None:
    body = '<meta charset="utf-8"><link rel=alternate type=application/rss+xml title="Größe" href=/rss>'.encode(
        "latin-1"
    )
    assert only(body, headers={"Content-Type": "text/html; charset=ISO-8859-1"}).title == "Größe"
    assert (
        decode_html(body, {"content-type": "text/html; charset=ISO-8859-1"})[1] == "cp1252"
    )  # WHATWG: latin1 means windows-1252
    title = only(body).title
    assert title is not None and "\ufffd" in title  # meta says utf-8, bytes are not
    bom = b"\xef\xbb\xbf" + "<title>Größe</title>".encode()
    assert decode_html(bom, {"content-type": "text/html; charset=iso-8859-5"}) == ("<title>Größe</title>", "utf-8")


@pytest.mark.parametrize("key", ["content-type", "Content-Type", "CONTENT-TYPE", " Content-type "])
def test_header_name_any_case(key: str) -> None:
    body = "<title>Ж</title>".encode("koi8-r")
    assert decode_html(body, {key: "text/html; charset=koi8-r"}) == ("<title>Ж</title>", "koi8-r")


def test_bytes_headers_like_scrapy() -> None:
    body = "<title>Ж</title>".encode("cp1251")
    assert decode_html(body, {b"Content-Type": [b"text/html; charset=windows-1251"]}) == ("<title>Ж</title>", "cp1251")  # type: ignore[dict-item]


@pytest.mark.parametrize(
    "label", ["x-unknown-charset", "base64", "rot13", "utf-7", "undefined", "", "\x00", "zlib_codec", "a" * 500]
)
def test_unknown_or_refused_charsets_fall_back_to_utf8(label: str) -> None:
    body = "<title>café</title>".encode()
    assert decode_html(body, {"content-type": f"text/html; charset={label}"}) == ("<title>café</title>", "utf-8")
    assert decode_html(f'<meta charset="{label}"><title>café</title>'.encode())[1] == "utf-8"


def test_meta_utf16_on_ascii_bytes_means_utf8() -> None:
    assert decode_html(b'<meta charset="utf-16"><title>x</title>')[1] == "utf-8"


def test_meta_http_equiv_with_quoted_charset_and_meta_in_comment_ignored() -> None:
    body = b"<!-- <meta charset=koi8-r> --><meta http-equiv=CONTENT-TYPE content='text/html; charset=\"iso-8859-7\"'>"
    assert decode_html(body)[1] == "iso8859-7"


def test_undeclared_invalid_utf8_is_replaced_not_raised() -> None:
    text, encoding = decode_html(b"<title>\x80abc</title>\xc3")
    assert encoding == "utf-8" and "\ufffd" in text


# ---------------------------------------------------------------------------
# Never raise, stay fast


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<",
        b"</",
        b"<!",
        b"<!--",
        b"<a",
        b'<link rel="alternate',
        b"\x00\x01\x02\xff" * 1000,
        bytes(range(256)) * 64,
        b"<link rel=alternate type=application/rss+xml href=\x00>",
        b"<template><template></template>",
    ],
)
def test_odd_input_does_not_raise(body: bytes) -> None:
    links = discover(body, PAGE)
    assert isinstance(links, list)
    assert all(isinstance(link, FeedLink) for link in links)


@pytest.mark.parametrize(
    "body",
    [
        b"<plaintext><link rel=alternate type=application/rss+xml href=/f>",
        b"<frameset><link rel=alternate type=application/rss+xml href=/f>",
        b"<html><head></head><frameset></frameset><link rel=alternate type=application/rss+xml href=/f>",
    ],
)
def test_plaintext_and_frameset_swallow_links(body: bytes) -> None:
    assert discover(body, PAGE) == []


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=3000),
    st.sampled_from([PAGE, "", "javascript:x", "http://[::1]:80/", "%%%"]),
    st.sampled_from([None, {}, {"content-type": "text/html; charset=utf-16"}, {"Content-Type": "charset=shift_jis"}]),
)
def test_random_bytes_never_raise(body: bytes, url: str, headers: dict[str, str] | None) -> None:
    for link in discover(body, url, headers):
        assert set(link.reasons) <= RULES.keys()


HTMLISH = st.lists(
    st.sampled_from(
        [
            "<link rel=alternate type=application/rss+xml href=/a>",
            '<LINK REL="Alternate" TYPE="application/atom+xml" HREF="b">',
            "<base href=http://b.example/x/>",
            "<head>",
            "</head>",
            "<body>",
            "</body>",
            "<html>",
            "<div>",
            "</div>",
            "<p>",
            "text",
            " ",
            "\n",
            "<script>",
            "</script>",
            "<style>",
            "</style >",
            "<title>",
            "</title>",
            "<noscript>",
            "</noscript>",
            "<template>",
            "</template>",
            "<!--",
            "-->",
            "--!>",
            "<!-->",
            "<!DOCTYPE html>",
            "<?php ?>",
            "</>",
            "<",
            ">",
            '"',
            "'",
            "=",
            "/",
            "<img src=x>",
            "<a title='>'>",
            "<textarea>",
            "</textarea>",
            "<plaintext>",
            "<meta charset=utf-8>",
            "&amp;",
            "&#65;",
            "</ br>",
            "<br/>",
            "<frameset>",
            '<x y="',
        ]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(HTMLISH)
def test_body_fast_path_matches_the_tokenizer(doc: str) -> None:
    assert _scan(doc, fast=True) == _scan(doc, fast=False)


@settings(max_examples=200, deadline=None)
@given(HTMLISH)
def test_every_reason_is_documented_and_conformance_follows_reasons(doc: str) -> None:
    for index, link in enumerate(discover(doc.encode(), PAGE, follow_body=True)):
        assert link.position == index
        assert set(link.reasons) <= RULES.keys()
        assert link.conforms_rss == (
            not any(
                r.startswith("rss-") or r in {"not-in-head", "href-missing", "href-empty", "href-not-uri"}
                for r in link.reasons
            )
        )


def test_rules_are_documented_with_their_spec() -> None:
    assert len(RULES) >= 12
    for rule, description in RULES.items():
        assert rule == rule.lower() and " " not in rule
        assert ("RSS Board" in description) or ("Atom draft" in description) or ("policy" in description), rule


def test_one_megabyte_page_is_fast() -> None:
    head = '<!doctype html><html><head><meta charset="utf-8"><title>Big</title>' + "".join(
        f'<link rel="stylesheet" href="/s{i}.css"><script>var s{i} = "<link rel=alternate>";</script>'
        for i in range(50)
    )
    head += '<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body>'
    chunk = '<div class="post" data-x=\'{i}\'><h2><a href="/p/{i}?a=1&amp;b=2">Post {i} &mdash; caf&eacute;</a></h2><p>Lorem <b>ipsum</b> <!-- c --> dolor {i}.</p><img src="/i/{i}.png"></div>\n'
    parts = [head]
    size = len(head)
    i = 0
    while size < 1_000_000:
        parts.append(chunk.format(i=i))
        size += len(parts[-1])
        i += 1
    parts.append('<link rel="alternate" type="application/atom+xml" href="/atom.xml"></body></html>')
    body = "".join(parts).encode()
    best = min(_timed(body) for _ in range(3))
    assert best < 0.5, f"1 MB page took {best * 1000:.0f} ms"


def _timed(body: bytes) -> float:
    start = time.perf_counter()
    links = discover(body, "https://example.com/")
    elapsed = time.perf_counter() - start
    assert [(link.href, link.in_head) for link in links] == [
        ("https://example.com/feed.xml", True),
        ("https://example.com/atom.xml", False),
    ]
    return elapsed


def test_feedparser_corpus_documents_never_raise() -> None:
    folder = CORPUS / "feedparser_tests"
    if not folder.is_dir():
        pytest.skip(f"shared corpus not found at {folder}")
    files = [
        p for p in folder.rglob("*") if p.is_file() and p.suffix in {".xml", ".html", ".htm", ".rss", ".atom", ".rdf"}
    ]
    assert len(files) > 1000
    for path in files:
        for link in discover(path.read_bytes(), "http://example.com/feed"):
            assert set(link.reasons) <= RULES.keys()


def test_raw_text_end_tag_with_space_does_not_trip_the_regex_engine() -> None:
    # Found by hypothesis: CPython 3.11 raised SystemError on a backreference inside a possessive repeat.
    assert discover(b"<body><style></style ><", "http://example.com/") == []
    page = b"<head><style>x</style ></head><link rel=alternate type=application/rss+xml href=/f>"
    assert [link.href for link in discover(page, "http://example.com/", follow_body=True)] == ["http://example.com/f"]


@pytest.mark.parametrize(
    "url", ["http://a.example:99999/", "http://a.example:-1/", "http://a.example:x/", "http://[::1]:70000/"]
)
def test_a_port_no_request_can_be_made_for_is_refused_as_an_invalid_url(url: str) -> None:
    refused = check_url(url)
    assert refused is not None and refused.outcome == "invalid_url"
    assert refused.reason == "URL has a port that is not a number from 0 to 65535"


@pytest.mark.parametrize(
    "url", ["http://a.example:/", "http://a.example:0/", "http://u:p@a.example:65535/", "http://[::1]:8080/"]
)
def test_a_port_a_request_can_be_made_for_passes(url: str) -> None:
    assert check_url(url) is None


# ---------------------------------------------------------------------------
# Which spec each reason belongs to, and the links left out


def test_every_reason_names_its_spec() -> None:
    from crawler.fetch.discovery import LEFT_OUT, REASON_SPECS, SPECS

    assert set(REASON_SPECS) == set(RULES) and set(REASON_SPECS.values()) <= set(SPECS)
    assert {spec for spec, _ in LEFT_OUT.values()} <= set(SPECS)
    assert REASON_SPECS["not-in-head"] == "both"  # RSS Board: within the head; Atom draft 3.1: MUST NOT in <body>
    assert REASON_SPECS["href-missing"] == "both"
    assert {REASON_SPECS[r] for r in RULES if r.startswith("rss-")} == {"rss"}
    assert REASON_SPECS["href-too-long"] == REASON_SPECS["href-unsupported-scheme"] == "crawler"
    # Every reason's text names the spec it belongs to, or says it is the crawler's own.
    for rule, spec in REASON_SPECS.items():
        text = RULES[rule]
        if spec == "crawler":
            assert text.startswith("Crawler policy"), rule
        else:
            assert ("RSS Board" in text) is (spec in ("rss", "both")), rule
            assert ("Atom draft" in text) is (spec == "both"), rule


def test_a_good_rss_link_carries_no_atom_draft_noise() -> None:
    """It was tagged atom-type-not-atom: true of the Atom draft, which judges only Atom links, noise on an RSS one."""
    rss = only(page('<link rel="alternate" type="application/rss+xml" href="/feed">'))
    assert rss.reasons == () and rss.conforms_rss is True
    assert rss.conforms_atom is False  # an RSS link is no Atom autodiscovery element
    rdf = only(page('<link rel="alternate" type="application/rdf+xml" href="/index.rdf">'))
    assert rdf.reasons == ("rss-type-not-rss",) and rdf.conforms_atom is False
    atom = only(page('<link rel="alternate" type="application/atom+xml" href="/atom">'))
    assert atom.conforms_atom is True and atom.reasons == ("rss-type-not-rss",)


def test_links_that_look_like_feed_links_but_are_none_are_listed_with_why() -> None:
    from crawler.fetch.discovery import discover_page

    markup = page(
        '<link rel="alternate" type="text/xml" href="/feed.xml" title="RSS">'
        '<link rel="alternate" type="application/feed+json" href="/feed.json">'
        '<link rel="alternate" type="application/x-rss+xml" href="/x.rss">'
        '<link rel="alternate" href="/comments/feed/">'
        '<link rel="feed" type="application/atom+xml" href="/atom">'
        '<link rel="alternate" type="application/rss+xml" href="/rss">'
        # Not reported: a translation, oEmbed, WordPress's JSON API, an Atom link that is a feed link.
        '<link rel="alternate" hreflang="de" href="/de/">'
        '<link rel="alternate" type="text/xml+oembed" href="/oembed?format=xml">'
        '<link rel="alternate" type="application/json" href="/wp-json/wp/v2/pages/2">'
    )
    found = discover_page(markup, PAGE)
    assert [link.href for link in found.links] == ["http://www.example.com/rss"]
    assert found.links == discover(markup, PAGE)
    assert [(o.href, o.reason) for o in found.left_out] == [
        ("http://www.example.com/feed.xml", "type-generic-xml"),
        ("http://www.example.com/feed.json", "type-json-feed"),
        ("http://www.example.com/x.rss", "type-not-a-feed-type"),
        ("http://www.example.com/comments/feed/", "type-missing"),
        ("http://www.example.com/atom", "rel-feed-not-alternate"),
    ]
    generic = found.left_out[0]
    assert generic.spec == "both" and "application/rss+xml" in generic.why and generic.in_head is True


def test_left_out_links_are_capped() -> None:
    from crawler.fetch.discovery import discover_page

    markup = page("".join(f'<link rel="alternate" type="text/xml" href="/f{i}.xml">' for i in range(5000)))
    assert len(discover_page(markup, PAGE).left_out) == 64
