"""Feed autodiscovery: the RSS, Atom and RDF feed links an HTML page advertises.

``discover(body, url, headers)`` is a pure function over the bytes of a page.
It decodes them the way a browser would (``crawler.fetch.htmlencoding``),
tokenizes the HTML with a small tokenizer that follows the WHATWG tokenizer for
everything that matters here (``crawler.fetch.htmltokens``: tags, attributes,
comments, raw-text elements, character references), tracks the head/body
insertion modes of the WHATWG tree builder without building a tree (one small
function per mode, through a table: ``crawler.fetch.pagescan``), resolves hrefs as RFC 3986 and browsers do
(``crawler.fetch.urirefs``), and judges each feed link against the two
autodiscovery specs:

* RSS Board, "RSS Autodiscovery" 1.0 (2006) -> ``FeedLink.conforms_rss``
* draft-ietf-atompub-autodiscovery-01 (2005) -> ``FeedLink.conforms_atom``

Every failed rule is reported by a stable id in ``FeedLink.reasons``; ``RULES``
documents each id. Decisions taken where the specs and browsers leave room:

* A feed link is a ``<link>`` whose rel token list (split on ASCII whitespace)
  contains ``alternate`` in any ASCII case, and whose type, trimmed and with any
  ``;parameters`` removed, is ``application/rss+xml``, ``application/atom+xml``
  or ``application/rdf+xml`` in any ASCII case (``schemas.vocab.FeedMediaType``;
  ``feed_type`` is its ``MEDIA_TYPE_FORMAT``). ``text/xml``,
  ``application/xml``, ``application/feed+json``, ``text/html`` (hreflang
  translations), oEmbed types, icons and stylesheets are not feed links: the
  generic XML types also label sitemaps, oEmbed and OpenSearch documents, and
  neither spec names them. ``<a>`` elements are never feed links.
* ``rel``, ``type``, ``href_raw`` and ``title`` are the attribute values after
  character-reference decoding but before trimming ("as written"); matching and
  URL resolution use the trimmed values (Atom draft 3.2: clients MUST ignore
  leading and trailing spaces).
* Parsing follows a browser with scripting enabled: ``<noscript>`` is raw text,
  so a tracking pixel inside ``<noscript>`` in the head does not end the head,
  and links inside ``<noscript>`` are not elements. Links in ``<script>``,
  ``<style>``, ``<title>``, ``<textarea>``, comments and ``<template>`` contents
  are not found. Links between ``</head>`` and ``<body>`` are put in the head,
  as the HTML parser does; any other content (non-space text, ``<img>``,
  ``<div>``...) ends the head, so later links are body links.
* Base URI: the first ``<base>`` element with an ``href`` attribute anywhere in
  the document (HTML's rule; position relative to the links does not matter),
  resolved against the page URL. A base that cannot be resolved or is not
  hierarchical (``javascript:``, ``mailto:``...) is ignored and the page URL
  is used, as is the page URL when there is no base.
* Resolution is RFC 3986 section 5.2 with two browser habits: leading/trailing
  C0 controls and spaces are stripped and tabs/newlines inside the href are
  removed (WHATWG URL), and ``http:feed`` on an http page is read as a relative
  reference (the RFC's "non-strict" mode, for http/https only). The resolved
  URL gets scheme-based normalisation only: lowercase scheme, ``/`` for an
  empty http(s) path. Nothing else (hosts, escapes) is rewritten
  (``crawler.fetch.urirefs``).
* Duplicates: links whose resolved URLs are equal after lowercasing scheme and
  host and dropping the fragment are one feed; the first is kept and gets
  ``rss-duplicate-feed`` (the RSS Board spec: each link must identify a
  different feed; the Atom draft only says SHOULD). ``position`` is the index in
  the returned list, so positions are 0..n-1 after duplicates are dropped.
* Each reason belongs to one spec, or to both, or to neither (crawler
  policy): ``REASON_SPECS``. Atom links are judged against the RSS Board spec
  too, and fail it with ``rss-type-not-rss``: it speaks of autodiscovery as
  such ("a site's syndication feed", Atom among the formats it names) and names
  application/rss+xml as the type, also for RSS 1.0; RDF links likewise. The
  Atom draft speaks only of "an Atom autodiscovery element", a link to an Atom
  feed: an RSS or RDF link is outside it, so ``conforms_atom`` is false and no
  reason says so (its ``feed_type`` does; until 2026-11 every such link carried
  the reason ``atom-type-not-atom``, noise on every good RSS link).
  An RSS type with parameters (``; charset=utf-8``)
  still conforms if the whole value is lowercase ("contain the feed's MIME
  type").
* ``<link rel=alternate>`` elements that are no feed link but look like one (a
  generic XML or JSON type, a type naming RSS or Atom otherwise, no type on a
  feed-looking href, or ``rel="feed"`` without ``alternate``) are not followed;
  :func:`discover_page` lists them with why (``LEFT_OUT``), for ``feedcensus
  discover``.
* ``followable``: resolved, not empty, passing the crawl's one URL check
  (``crawler.fetch.urls.url_faults``: http/https, a host, at most
  ``max_url_length`` characters, which the crawl sets from
  ``FEEDCENSUS_MAX_URL_LENGTH``, so a link is judged as its request would be;
  the faults are the reasons ``href-unsupported-scheme``, ``href-no-host``,
  ``href-bad-port`` and ``href-too-long``), and in the head or, with ``follow_body=True`` (the
  default, as the crawl's ``FEEDCENSUS_FOLLOW_BODY_LINKS``), in the body: major
  sites put their feed link there, and a body link still has ``in_head``
  false and the reason ``not-in-head``; ``follow_body=False`` is the strict
  reading (``--head-only``). A syntactically invalid URI (``href-not-uri``, e.g. a
  space) stays followable: the crawler escapes it like a browser would.

``read_page(body, url, headers)`` returns the same links and, from the same
tokenizer pass (no second parse), what else the page says: the ``pages``
table's ``schemas.items.PageFacts``. Decisions:

* ``html_lang``: the ``lang`` attribute of the ``<html>`` start tag, else its
  ``xml:lang``, stripped of ASCII whitespace ('' when declared empty). As the
  HTML parser merges the attributes of a later ``<html>`` tag into the root
  element, the first tag that has the attribute gives it.
* ``meta_generator``: the first ``<meta name="generator">`` (name in any ASCII
  case, trimmed) with a non-empty ``content``, stripped, in the head (where
  every generator we know writes it, and where a meta after ``</head>`` but
  before the body still goes). A generator meta in the body is not read: the
  body fast path would have to stop at every body ``<meta>`` (microdata), which
  is much slower on such pages (benchmarks/RESULTS.md, section 11); the page markers still see the
  platform. Pages often carry several (``WordPress 6.4`` then a page
  builder's); all of them, up to ``_MAX_GENERATORS``, go to the platform
  fingerprints, the first is the column.
* ``hreflangs``: the distinct ``hreflang`` values, stripped, non-empty, of the
  ``<link>`` elements in the head whose rel has the token ``alternate`` (the
  translations of the page, and feed links in a language), sorted. Body links
  are left out: search engines read hreflang in the head only.
* ``platforms``: ``pipelines.document.platforms`` over the generator metas, the
  first ``PAGE_HEAD_CHARS`` characters of the decoded page and the response
  headers, sorted.
* ``rel_alternate`` / ``rel_feed``: whether any ``<link>`` with a feed media
  type (the type test of a feed link above) has the rel token ``alternate`` /
  ``feed`` in any ASCII case, in the head or the body. ``rel_alternate`` is true exactly when the page has feed
  links; ``rel_feed`` also sees ``rel="feed"`` alone, which is no feed link
  here (neither spec names it) but is one for mnot's feed-survey, so the
  survey can report both readings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from crawler.fetch.htmlencoding import decode_html
from crawler.fetch.htmltokens import WS, ascii_lower
from crawler.fetch.pagescan import _RawLink, _scan, _Scanned
from crawler.fetch.urirefs import (
    UriParts,
    base_parts,
    clean_url,
    host_and_port,
    is_uri_reference,
    resolve,
    strip_url,
    unsplit,
)
from crawler.fetch.urls import DEFAULT_MAX_URL_LENGTH, UrlFault, url_faults
from pipelines.document.platforms import from_generator, from_headers, from_page
from schemas.items import LINK_FIELDS, FeedLink, PageFacts
from schemas.pickling import by_fields
from schemas.vocab import FeedFormat

__all__ = [
    "LEFT_OUT",
    "LINK_FIELDS",
    "REASON_SPECS",
    "RULES",
    "SPECS",
    "FeedLink",
    "LeftOutLink",
    "PageFacts",
    "PageLinks",
    "PageRead",
    "decode_html",
    "discover",
    "discover_page",
    "read_page",
]

RULES: dict[str, str] = {
    "not-in-head": "The link is in the body, not the head (RSS Board: must be placed within the head element; "
    "Atom draft 3.1: MUST NOT appear within <body>).",
    "href-missing": "The link has no href attribute (RSS Board: must have href, rel and type; Atom draft 4.3: href MUST be present).",
    "href-empty": "The href is empty or only whitespace, so it names the page itself, not a feed "
    "(RSS Board: href must be the feed's URL; Atom draft 4.3: MUST be the URI of an Atom feed).",
    "href-not-uri": "The trimmed href is not a valid RFC 3986 URI reference: spaces, non-ASCII, backslashes, bad %-escapes, "
    "two '#'... (Atom draft 4.3: MUST be a URI [RFC3986]; RSS Board: must be the feed's URL).",
    "rss-duplicate-feed": "Another feed link on the page resolves to the same URL (only the first is returned) "
    "(RSS Board: each autodiscovery link must identify a different feed).",
    "rss-rel-not-lowercase": "The alternate keyword is not written in lowercase, e.g. 'Alternate' or '&#65;lternate' "
    '(RSS Board: "alternate" must be lowercase).',
    "rss-rel-extra-tokens": "rel holds keywords besides 'alternate', e.g. 'alternate home' "
    '(RSS Board: the value must not contain keywords other than "alternate").',
    "rss-type-not-rss": "The type is an Atom or RDF media type, not application/rss+xml "
    '(RSS Board: type must be "application/rss+xml", also for RSS 1.0).',
    "rss-type-not-lowercase": "The RSS type is not all lowercase, e.g. 'APPLICATION/RSS+XML' "
    "(RSS Board: the value must be lowercase for autodiscovery).",
    "href-relative-without-base": "Crawler policy, no spec: a relative href with no usable <base href> and no absolute page URL "
    "to resolve it against; href is None.",
    "href-unsupported-scheme": "Crawler policy, no spec: the resolved URL's scheme is not http or https "
    "(javascript:, data:, file:, mailto:, feed:...); not followed.",
    "href-no-host": "Crawler policy, no spec: an http(s) URL without a host, e.g. 'http:///feed' or 'http:feed' on an "
    "https page; not followed.",
    "href-bad-port": "Crawler policy, no spec: the resolved URL's port is not a number from 0 to 65535, e.g. "
    "'http://example.com:99999/feed'; no request can be made for it, so it is not followed.",
    "href-too-long": "Crawler policy, no spec: the resolved URL is longer than the crawl's URL limit "
    f"(FEEDCENSUS_MAX_URL_LENGTH, {DEFAULT_MAX_URL_LENGTH} characters by default); not followed.",
}

_SHARED_RULES = frozenset({"not-in-head", "href-missing", "href-empty", "href-not-uri"})
_RSS_RULES = _SHARED_RULES | {
    "rss-duplicate-feed",
    "rss-rel-not-lowercase",
    "rss-rel-extra-tokens",
    "rss-type-not-rss",
    "rss-type-not-lowercase",
}
_ATOM_RULES = _SHARED_RULES
#: The specs: "rss" the RSS Board's RSS Autodiscovery 1.0, "atom" the Atom autodiscovery draft.
SPECS: dict[str, str] = {
    "rss": "RSS Autodiscovery (RSS Board, 2006)",
    "atom": "Atom autodiscovery draft (draft-ietf-atompub-autodiscovery-01)",
    "both": "both autodiscovery specs",
    "crawler": "crawler policy (no spec)",
}
#: Which spec each reason of ``RULES`` belongs to: a key of ``SPECS``.
REASON_SPECS: dict[str, str] = {
    rule: "both" if rule in _SHARED_RULES else "rss" if rule in _RSS_RULES else "crawler" for rule in RULES
}
_UNFOLLOWABLE = frozenset(
    {
        "href-missing",
        "href-empty",
        "href-relative-without-base",
        "href-unsupported-scheme",
        "href-no-host",
        "href-too-long",
        "href-bad-port",
    }
)

#: The link reason for each fault of the crawl's URL check.
_FAULT_RULE: dict[UrlFault, str] = {
    UrlFault.UNSUPPORTED_SCHEME: "href-unsupported-scheme",
    UrlFault.NO_HOST: "href-no-host",
    UrlFault.TOO_LONG: "href-too-long",
    UrlFault.BAD_PORT: "href-bad-port",
}

#: Why a ``<link rel=alternate>`` (or ``rel=feed``) that looks like a feed link is none: reason id -> (spec, text).
LEFT_OUT: dict[str, tuple[str, str]] = {
    "type-generic-xml": (
        "both",
        "text/xml or application/xml, a generic XML type neither spec names (RSS Autodiscovery: application/rss+xml; "
        "Atom draft 4.2: application/atom+xml); sitemaps, OpenSearch and oEmbed documents carry it too",
    ),
    "type-json-feed": (
        "crawler",
        "a JSON Feed (application/feed+json): neither RSS nor Atom, which is what the census reads",
    ),
    "type-not-a-feed-type": (
        "both",
        "a type that names RSS, Atom, RDF or a feed but is none of application/rss+xml, application/atom+xml, "
        "application/rdf+xml (e.g. application/x-rss+xml, text/rss)",
    ),
    "type-missing": (
        "both",
        "no type attribute, on an href that looks like a feed's (both specs: the type must be present)",
    ),
    "rel-feed-not-alternate": (
        "both",
        'rel="feed" without "alternate": both specs name rel="alternate" only (HTML\'s "feed" keyword is no '
        "autodiscovery)",
    ),
}


# ---------------------------------------------------------------------------
# Judging


@dataclass(slots=True)
class _Judged:
    raw: _RawLink
    href: str | None
    failed: set[str]


def discover(
    body: bytes,
    url: str | None,
    headers: Mapping[str, str] | None = None,
    *,
    follow_body: bool = True,
    max_url_length: int = DEFAULT_MAX_URL_LENGTH,
) -> list[FeedLink]:
    """The feed links ``body`` (an HTML page fetched from ``url``, after redirects) advertises, in page order.

    ``url`` None: a page without a URL of its own (a local file). Its relative hrefs then resolve only
    against an absolute ``<base href>``; without one they stay unresolved (``href`` None,
    ``href-relative-without-base``), rather than being read against a made-up ``file:`` URL.
    ``max_url_length``: the crawl's URL limit (``FEEDCENSUS_MAX_URL_LENGTH``; 0 means none): a longer
    resolved href gets ``href-too-long`` and is not followed. Never raises: undecodable bytes, broken
    markup and unresolvable hrefs end up as replacement characters, dropped tags or reasons on the links.
    """
    text = _document_text(body, headers)
    if text is None:
        return []
    return _judge_links(_scan(text), url, follow_body, max_url_length)


@dataclass(frozen=True, slots=True)
class LeftOutLink:
    """A ``<link>`` that looks like a feed link and is none, so it is not followed: why (a key of ``LEFT_OUT``)."""

    href: str | None  # resolved as a feed link's would be; None when it cannot be
    href_raw: str
    rel: str
    type: str | None
    in_head: bool
    reason: str

    @property
    def spec(self) -> str:
        return LEFT_OUT[self.reason][0]

    @property
    def why(self) -> str:
        return LEFT_OUT[self.reason][1]


@dataclass(frozen=True, slots=True)
class PageLinks:
    """:func:`discover_page`'s answer: the feed links, and the links that look like feed links but are none."""

    links: list[FeedLink]
    left_out: list[LeftOutLink]


def discover_page(
    body: bytes,
    url: str | None,
    headers: Mapping[str, str] | None = None,
    *,
    follow_body: bool = True,
    max_url_length: int = DEFAULT_MAX_URL_LENGTH,
) -> PageLinks:
    """:func:`discover`'s links, and the ``<link>`` elements left out of them that a reader might take for feed
    links (a ``text/xml`` alternate, a JSON Feed, ``rel="feed"``...), with why; never raises."""
    text = _document_text(body, headers)
    if text is None:
        return PageLinks([], [])
    scanned = _scan(text)
    base = base_parts(url or "", scanned.base_href)
    left_out = [
        LeftOutLink(
            href=_judge_href(attrs["href"], base, 0)[0] if "href" in attrs else None,
            href_raw=attrs.get("href", ""),
            rel=attrs.get("rel", ""),
            type=attrs.get("type"),
            in_head=in_head,
            reason=why,
        )
        for attrs, in_head, why in scanned.left_out
    ]
    return PageLinks(_judge_links(scanned, url, follow_body, max_url_length), left_out)


@by_fields
@dataclass(frozen=True, slots=True)
class PageRead:
    """What :func:`read_page` reads from one HTML page: its feed links and its facts."""

    links: list[FeedLink]
    facts: PageFacts


def read_page(
    body: bytes,
    url: str | None,
    headers: Mapping[str, str] | None = None,
    *,
    follow_body: bool = True,
    max_url_length: int = DEFAULT_MAX_URL_LENGTH,
) -> PageRead:
    """:func:`discover`'s links and, from the same pass, the page's facts (``pages`` columns; see the module docstring).

    ``headers``: the response's headers, names lower-cased (their platform fingerprints count too).
    Never raises, like :func:`discover`.
    """
    header_platforms = from_headers(headers or {})
    text = _document_text(body, headers)
    if text is None:
        return PageRead([], PageFacts(platforms=tuple(sorted(header_platforms))))
    scanned = _scan(text)
    platforms = set(header_platforms) | from_page(text)
    for generator in scanned.generators:
        platforms |= from_generator(generator)
    facts = PageFacts(
        html_lang=scanned.lang if scanned.lang is not None else scanned.xml_lang,
        meta_generator=scanned.generators[0] if scanned.generators else None,
        hreflangs=tuple(sorted(scanned.hreflangs)),
        platforms=tuple(sorted(platforms)),
        rel_alternate=bool(scanned.links),
        rel_feed=scanned.rel_feed,
    )
    return PageRead(_judge_links(scanned, url, follow_body, max_url_length), facts)


@by_fields
@dataclass(frozen=True, slots=True)
class PageTask:
    """:func:`read_page` for one page, as a task for the crawl's document workers
    (``pipelines.document.jobs.Task``): what it needs, picklable, and ``run``."""

    body: bytes
    url: str | None
    headers: dict[str, str]
    follow_body: bool = True
    max_url_length: int = DEFAULT_MAX_URL_LENGTH

    def run(self) -> PageRead:
        return read_page(
            self.body, self.url, self.headers, follow_body=self.follow_body, max_url_length=self.max_url_length
        )


def _judge_links(scanned: _Scanned, url: str | None, follow_body: bool, max_url_length: int) -> list[FeedLink]:
    """The feed links of a scan, resolved, judged and with duplicates dropped, in page order."""
    raw_links = scanned.links
    if not raw_links:
        return []
    base = base_parts(url or "", scanned.base_href)
    kept: dict[object, _Judged] = {}  # by what makes two links the same feed, in page order
    for raw in raw_links:
        href, failed, key = _judge_href(raw.attrs.get("href"), base, max_url_length)
        if key in kept:
            kept[key].failed.add("rss-duplicate-feed")
            continue
        kept[key] = _Judged(raw, href, failed | _markup_reasons(raw))
    return [_feed_link(position, judged, follow_body) for position, judged in enumerate(kept.values())]


def _document_text(body: bytes, headers: Mapping[str, str] | None) -> str | None:
    """The decoded page with newlines normalised and NULs replaced, as the tokenizer's input stream; None without markup."""
    text, _ = decode_html(body, headers)
    if "<" not in text:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    return text


def _judge_href(
    href_raw: str | None, base: UriParts | None, max_url_length: int
) -> tuple[str | None, set[str], object]:
    """(resolved href or None, failed rules, duplicate key) for a link's href attribute."""
    if href_raw is None:
        return None, {"href-missing"}, object()  # nothing to compare: never a duplicate
    failed: set[str] = set()
    trimmed = strip_url(href_raw)
    if trimmed and not is_uri_reference(trimmed):
        failed.add("href-not-uri")
    cleaned = clean_url(trimmed)
    if not cleaned:
        failed.add("href-empty")
    parts = resolve(cleaned, base)
    if parts is None:
        failed.add("href-relative-without-base")
        return None, failed, ("unresolved", cleaned)
    href = unsplit(parts)
    scheme, authority = parts.scheme, parts.authority
    host, port = host_and_port(authority)
    faults = url_faults(scheme, host, len(href), max_url_length, port)
    failed.update(_FAULT_RULE[fault] for fault in faults)
    key = (scheme, ascii_lower(authority) if authority is not None else None, parts.path, parts.query)
    return href, failed, key


def _markup_reasons(raw: _RawLink) -> set[str]:
    """The rules a link fails by where it is and how rel and type are written."""
    failed = _rel_reasons(raw.attrs["rel"]) | _type_reasons(raw.feed_type, raw.attrs["type"])
    if not raw.in_head:
        failed.add("not-in-head")
    return failed


def _rel_reasons(rel: str) -> set[str]:
    failed = set()
    for token in rel.split():
        if token == "alternate":
            continue
        if ascii_lower(token) == "alternate":
            failed.add("rss-rel-not-lowercase")
        else:
            failed.add("rss-rel-extra-tokens")
    return failed


def _type_reasons(feed_type: FeedFormat, media: str) -> set[str]:
    """The RSS Board's type rules. The Atom draft's (4.2: the type contains application/atom+xml) holds for
    every Atom link, and an RSS or RDF link is outside the draft (``conforms_atom`` false, no reason)."""
    failed = set()
    if feed_type != FeedFormat.RSS:
        failed.add("rss-type-not-rss")
    elif media.strip(WS) != ascii_lower(media.strip(WS)):
        failed.add("rss-type-not-lowercase")
    return failed


def _feed_link(position: int, judged: _Judged, follow_body: bool) -> FeedLink:
    raw, href, failed = judged.raw, judged.href, judged.failed
    attrs = raw.attrs
    return FeedLink(
        href=href,
        href_raw=attrs.get("href", ""),
        rel=attrs["rel"],
        type=attrs["type"],
        title=attrs.get("title"),
        position=position,
        in_head=raw.in_head,
        conforms_rss=not (failed & _RSS_RULES),
        conforms_atom=raw.feed_type == FeedFormat.ATOM and not (failed & _ATOM_RULES),
        reasons=tuple(rule for rule in RULES if rule in failed),
        feed_type=raw.feed_type,
        followable=href is not None and not (failed & _UNFOLLOWABLE) and (raw.in_head or follow_body),
    )
