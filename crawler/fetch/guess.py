"""Guessing feed URLs for a page that advertises none (``--guess``, off by default).

What users of feedsearch-crawler expect: feed-looking ``<a href>`` links on
the page, then a short list of common feed paths on the same site. Guessed
URLs are requested with ``discovered_via = guess`` so surveys can keep them
apart from real autodiscovery. Pure: bytes in, URLs out.
"""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree

from crawler.fetch.htmlencoding import decode_html
from crawler.fetch.urls import FETCHED_SCHEMES, url_faults

#: Paths tried on the page's site when it advertises nothing.
COMMON_PATHS = ("/feed", "/rss.xml", "/atom.xml", "/index.xml", "/feed.xml", "/rss")
#: At most this many feed-looking links are taken from one page.
MAX_LINK_GUESSES = 5

_FEEDISH = re.compile(r"(?:^|[/._-])(?:rss|atom|feeds?|rdf)(?:$|[/._?-])|\.(?:rss|atom|rdf|xml)(?:$|\?)", re.IGNORECASE)


def _anchor_hrefs(text: str) -> list[str]:
    """The href of every <a> element, parsed the HTML way (lxml.html)."""
    if not text.strip():
        return []
    try:
        doc = lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return []
    hrefs = doc.xpath("//a/@href")
    if not isinstance(hrefs, list):  # an attribute path always gives a list; the stubs allow more
        return []
    return [h.strip() for h in hrefs if isinstance(h, str) and h.strip()]


def guess_feed_urls(body: bytes, url: str, headers: dict[str, str] | None = None) -> list[str]:
    """Candidate feed URLs for a page at ``url``: feed-looking links first, then common paths."""
    text, _ = decode_html(body, headers)
    site = urlsplit(url)
    if url_faults(site.scheme, site.hostname, 0, 0):  # not an http(s) URL with a host
        return []
    seen: set[str] = set()
    out: list[str] = []

    def add(candidate: str) -> None:
        if candidate not in seen and candidate != url:
            seen.add(candidate)
            out.append(candidate)

    links = 0
    for href in _anchor_hrefs(text):
        try:
            parts = urlsplit(href)
        except ValueError:
            continue
        if not _FEEDISH.search(parts.path + (f"?{parts.query}" if parts.query else "")):
            continue
        absolute = urljoin(url, href)
        parts = urlsplit(absolute)
        if parts.scheme in FETCHED_SCHEMES and parts.hostname == site.hostname:
            add(absolute.split("#", 1)[0])
            links += 1
            if links >= MAX_LINK_GUESSES:
                break
    root = f"{site.scheme}://{site.netloc}"
    for path in COMMON_PATHS:
        add(root + path)
    return out
