"""Scanning a page for its links: the head/body insertion modes of the WHATWG tree builder, without a tree.

One pass over the tokens of ``crawler.fetch.htmltokens`` finds the base URI, every ``<link>`` with the
place it was written (head or body), and the page facts (language, generator metas, hreflang links) that
:mod:`crawler.fetch.discovery` judges and reports. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from crawler.fetch.htmltokens import END, START, TEXT, WS, ascii_lower, body_skipper, next_token, parse_attrs
from schemas.vocab import MEDIA_TYPE_FORMAT, FeedFormat

#: An href or type that looks like a feed's: a link without a feed type but with this is listed as left out.
_FEEDY = re.compile(r"feed|rss|atom|rdf|\.xml\b", re.IGNORECASE)
#: At most this many left-out links are kept per page (a hostile page may have thousands).
_MAX_LEFT_OUT = 64

#: Feed family by media type essence (lowercase, no parameters).
_FORMAT_OF: dict[str, FeedFormat] = {str(media): fmt for media, fmt in MEDIA_TYPE_FORMAT.items()}
#: Generator metas read for the platform fingerprints: a page has one to three; a hostile one may have
#: thousands, and each is matched against every platform's tokens.
_MAX_GENERATORS = 16


# ---------------------------------------------------------------------------
# Tree-construction modes (WHATWG 13.2.6.4.1-7), without a tree

_BEFORE_HEAD, _IN_HEAD, _AFTER_HEAD, _IN_BODY, _FRAMESET = range(5)
_IN_HEAD_ELEMENTS = frozenset(
    {"base", "basefont", "bgsound", "link", "meta", "noframes", "noscript", "script", "style", "template", "title"}
)
_AFTER_HEAD_ELEMENTS = _IN_HEAD_ELEMENTS - {"noscript"}


@dataclass(frozen=True, slots=True)
class _RawLink:
    attrs: dict[str, str]
    in_head: bool
    feed_type: FeedFormat


def _media_format(media: str | None) -> FeedFormat | None:
    """The feed family of a type attribute (trimmed, parameters dropped, any ASCII case); None for any other type."""
    if media is None:
        return None
    return _FORMAT_OF.get(ascii_lower(media.split(";", 1)[0].strip(WS)))


def _left_out_reason(attrs: Mapping[str, str], rel_tokens: set[str]) -> str | None:
    """Why an alternate (or ``rel=feed``) link with no feed type is no feed link, when it looks like one (a key of
    ``LEFT_OUT``); None for the links that are plainly something else (translations, oEmbed, JSON APIs...)."""
    media = attrs.get("type")
    essence = ascii_lower(media.split(";", 1)[0].strip(WS)) if media is not None else ""
    feedy_href = bool(_FEEDY.search(attrs.get("href", "")))
    if essence in ("text/xml", "application/xml"):
        return "type-generic-xml"
    if essence == "application/feed+json" or (essence == "application/json" and feedy_href):
        return "type-json-feed"
    if essence and "oembed" not in essence and _FEEDY.search(essence):
        return "type-not-a-feed-type"
    if not essence and feedy_href:
        return "type-missing"
    if "feed" in rel_tokens and "alternate" not in rel_tokens:
        return "rel-feed-not-alternate"
    return None


# A start tag in each mode: (the mode after it, whether the tag is used up by the mode switch).
def _start_before_head(name: str) -> tuple[int, bool]:
    if name == "html":
        return _BEFORE_HEAD, True
    if name == "head":
        return _IN_HEAD, True
    return _start_in_head(name)  # an implied <head>


def _start_in_head(name: str) -> tuple[int, bool]:
    if name in ("html", "head"):
        return _IN_HEAD, True
    if name in _IN_HEAD_ELEMENTS:
        return _IN_HEAD, False
    return _start_after_head(name)  # the head ends


def _start_after_head(name: str) -> tuple[int, bool]:
    if name in ("html", "head"):
        return _AFTER_HEAD, True
    if name == "body":
        return _IN_BODY, True
    if name == "frameset":
        return _FRAMESET, True
    if name in _AFTER_HEAD_ELEMENTS:  # put in the head, as the HTML parser does
        return _AFTER_HEAD, False
    return _IN_BODY, False  # an implied <body>


def _start_in_body(_name: str) -> tuple[int, bool]:
    return _IN_BODY, False


def _start_in_frameset(_name: str) -> tuple[int, bool]:
    return _FRAMESET, True  # frameset documents drop every other start tag


_START_IN_MODE: tuple[Callable[[str], tuple[int, bool]], ...] = (
    _start_before_head,
    _start_in_head,
    _start_after_head,
    _start_in_body,
    _start_in_frameset,
)


@dataclass(frozen=True, slots=True)
class _Scanned:
    """What one scan found: the feed links in order, the first base href, and the page facts' raw material."""

    links: list[_RawLink]
    base_href: str | None
    lang: str | None  # <html lang>, first one wins
    xml_lang: str | None  # <html xml:lang>, first one wins
    generators: list[str]  # non-empty <meta name=generator> contents, stripped, in order
    hreflangs: frozenset[str]
    rel_feed: bool
    left_out: list[tuple[dict[str, str], bool, str]]  # (attributes, in head, LEFT_OUT reason) per link


class _Scanner:
    """The state of one scan: insertion mode, template nesting, the first base href, what was found so far."""

    __slots__ = (
        "base_href",
        "generators",
        "hreflangs",
        "lang",
        "left_out",
        "links",
        "mode",
        "rel_feed",
        "template_depth",
        "xml_lang",
    )

    def __init__(self) -> None:
        self.mode = _BEFORE_HEAD
        self.template_depth = 0
        self.base_href: str | None = None
        self.links: list[_RawLink] = []
        self.lang: str | None = None
        self.xml_lang: str | None = None
        self.generators: list[str] = []
        self.hreflangs: set[str] = set()
        self.rel_feed = False
        self.left_out: list[tuple[dict[str, str], bool, str]] = []

    def result(self) -> _Scanned:
        return _Scanned(
            self.links,
            self.base_href,
            self.lang,
            self.xml_lang,
            self.generators,
            frozenset(self.hreflangs),
            self.rel_feed,
            self.left_out,
        )

    def take(self, kind: int, name: str, src: str) -> None:
        if self.template_depth:  # template contents are not part of the document
            self._in_template(kind, name)
        elif kind == START:
            self._start(name, src)
        elif kind == END:
            self._end(name)
        elif kind == TEXT and self.mode < _IN_BODY:
            self.mode = _IN_BODY

    def _in_template(self, kind: int, name: str) -> None:
        if name == "template":
            self.template_depth += 1 if kind == START else -1

    def _end(self, name: str) -> None:
        if self.mode >= _IN_BODY:
            return
        if name == "head" and self.mode <= _IN_HEAD:
            self.mode = _AFTER_HEAD
        elif name in ("body", "html", "br"):
            self.mode = _IN_BODY

    def _start(self, name: str, src: str) -> None:
        if name == "html":  # its attributes count in any mode, though the mode switch uses the tag up
            self._html(src)
        self.mode, used_up = _START_IN_MODE[self.mode](name)
        if not used_up:
            element = _ELEMENTS.get(name)
            if element is not None:
                element(self, src)

    def _html(self, src: str) -> None:
        attrs = parse_attrs(src)
        lang, xml_lang = attrs.get("lang"), attrs.get("xml:lang")
        if self.lang is None and lang is not None:
            self.lang = lang.strip(WS)
        if self.xml_lang is None and xml_lang is not None:
            self.xml_lang = xml_lang.strip(WS)

    def _link(self, src: str) -> None:
        attrs = parse_attrs(src)
        rel = attrs.get("rel")
        if rel is None:
            return
        tokens = {ascii_lower(token) for token in rel.split()}
        in_head = self.mode < _IN_BODY
        if in_head and "alternate" in tokens:
            hreflang = attrs.get("hreflang", "").strip(WS)
            if hreflang:
                self.hreflangs.add(hreflang)
        feed_type = _media_format(attrs.get("type"))
        if feed_type is None:
            if ("alternate" in tokens or "feed" in tokens) and (why := _left_out_reason(attrs, tokens)):
                self._leave_out(attrs, in_head, why)
            return
        if "feed" in tokens:
            self.rel_feed = True
        if "alternate" in tokens:
            self.links.append(_RawLink(attrs, in_head, feed_type))
        else:
            self._leave_out(attrs, in_head, "rel-feed-not-alternate")

    def _leave_out(self, attrs: dict[str, str], in_head: bool, why: str) -> None:
        if len(self.left_out) < _MAX_LEFT_OUT:
            self.left_out.append((attrs, in_head, why))

    def _meta(self, src: str) -> None:
        if self.mode >= _IN_BODY or len(self.generators) >= _MAX_GENERATORS:
            return
        attrs = parse_attrs(src)
        name = attrs.get("name")
        if name is None or ascii_lower(name.strip(WS)) != "generator":
            return
        content = attrs.get("content", "").strip(WS)
        if content:
            self.generators.append(content)

    def _base(self, src: str) -> None:
        if self.base_href is None:
            self.base_href = parse_attrs(src).get("href")

    def _template(self, _src: str) -> None:
        self.template_depth = 1


#: The start tags the scan reads.
_ELEMENTS: dict[str, Callable[[_Scanner, str], None]] = {
    "link": _Scanner._link,
    "base": _Scanner._base,
    "meta": _Scanner._meta,
    "template": _Scanner._template,
}
#: Body markup the scan can jump over: everything but the start tags it reads there (``html`` too: see
#: ``_start``). Not ``meta``: generator metas are read in the head only, and stopping at every body meta
#: (schema.org microdata puts hundreds on a page) tripled the scan of such a page.
_BODY_SKIP = body_skipper(("link", "base", "template", "html"))


def _scan(text: str, *, fast: bool = True) -> _Scanned:
    """The feed links of a document, in order, the href of its first ``<base href>``, and the page facts read.

    ``fast`` lets ``_BODY_SKIP`` jump over body markup that cannot matter; the
    result is the same without it (a test checks), only slower.
    """
    scanner = _Scanner()
    pos = 0
    while True:
        if fast and scanner.mode == _IN_BODY and not scanner.template_depth:
            skip = _BODY_SKIP.match(text, pos)
            assert skip is not None  # the pattern matches the empty string
            pos = skip.end()
        token = next_token(text, pos)
        if token is None:
            return scanner.result()
        kind, name, src, pos = token
        scanner.take(kind, name, src)
