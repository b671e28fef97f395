"""Published figures the survey is compared with, and the element names it knows.

Percentages are shares of feeds, as published:

* RSS Advisory Board, the element-usage survey behind the RSS Best Practices
  Profile (2007): 1,933 feeds taken from OPML lists.
* A 2005 survey of 5,162 RSS feeds.

:data:`KNOWN_NAMES` decides which case variants the element tables merge:
an element name that differs from a known name only by ASCII case
(``wfw:commentRSS``) is counted in the row of the known name
(``wfw:commentRss``), and the row says so.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BOARD_2007",
    "BOARD_2007_NOTE",
    "KNOWN_NAMES",
    "PUBLISHED",
    "SURVEY_2005",
    "Published",
    "known_names",
]


@dataclass(frozen=True, slots=True)
class Published:
    """One published figure: an element at a scope, with the surveys' shares of feeds (percent)."""

    scope: str
    element: str
    board_2007: float | None
    survey_2005: float | None


BOARD_2007 = "RSS Advisory Board 2007 (1,933 feeds)"
SURVEY_2005 = "2005 survey (5,162 RSS feeds)"
BOARD_2007_NOTE = "The RSS Advisory Board found every other core item element in at least 5% of feeds."

#: Every published figure, in the order the sources give them.
PUBLISHED: tuple[Published, ...] = (
    Published("channel", "dc:language", 36.0, None),
    Published("channel", "atom:link", 15.0, None),
    Published("channel", "ttl", 21.0, 11.7),
    Published("channel", "textInput", 0.31, 1.0),
    Published("channel", "rating", 0.26, 0.4),
    Published("channel", "skipDays", 0.10, 0.5),
    Published("skipDays", "day", 0.10, None),
    Published("channel", "skipHours", None, 2.5),
    Published("channel", "cloud", None, 0.7),
    Published("item", "dc:creator", 42.7, None),
    Published("item", "wfw:commentRss", 34.3, None),
    Published("item", "source", 3.0, None),
)


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


#: RSS 0.91 / 0.92 / 2.0 channel and item elements (RSS 2.0 spelling).
_RSS_CORE = _words(
    """title link description language copyright managingEditor webMaster pubDate lastBuildDate
    category generator docs cloud ttl image rating textInput skipHours skipDays item
    author comments enclosure guid source"""
)
#: RSS 1.0 / 0.90 core elements (RSS 1.0 writes ``textinput`` in lower case).
_RDF_CORE = _words("channel title link description image items textinput item url name")
#: Atom 1.0 and 0.3 elements (bare, and with the ``atom:`` / ``atom03:`` prefixes below).
_ATOM_CORE = _words(
    """author category content contributor entry generator icon id link logo published rights
    source subtitle summary title updated copyright created info issued modified tagline"""
)
#: Common extension elements, with the spelling their namespace documents.
_EXTENSIONS = _words(
    """dc:title dc:creator dc:subject dc:description dc:publisher dc:contributor dc:date dc:type
    dc:format dc:identifier dc:source dc:language dc:relation dc:coverage dc:rights
    dcterms:modified dcterms:created dcterms:issued dcterms:license
    content:encoded wfw:comment wfw:commentRss slash:comments slash:department slash:section
    slash:hit_parade sy:updatePeriod sy:updateFrequency sy:updateBase atom:link trackback:ping
    trackback:about feedburner:origLink feedburner:origEnclosureLink feedburner:info
    itunes:author itunes:summary itunes:subtitle itunes:explicit itunes:image itunes:category
    itunes:owner itunes:name itunes:email itunes:duration itunes:keywords itunes:block
    itunes:episode itunes:episodeType itunes:season itunes:type itunes:new-feed-url itunes:complete
    media:content media:thumbnail media:group media:title media:description media:keywords
    media:player media:credit media:category media:rating georss:point geo:lat geo:long
    creativeCommons:license cc:license admin:generatorAgent admin:errorReportsTo thr:total
    thr:in-reply-to opensearch:totalResults opensearch:startIndex opensearch:itemsPerPage"""
)

#: format -> known names whose case variants are merged in that format's element tables.
KNOWN_NAMES: dict[str, tuple[str, ...]] = {
    "rss": _RSS_CORE + _EXTENSIONS,
    "rdf": _RDF_CORE + _EXTENSIONS,
    "atom": _ATOM_CORE
    + tuple(f"atom:{n}" for n in _ATOM_CORE)
    + tuple(f"atom03:{n}" for n in _ATOM_CORE)
    + tuple(n for n in _EXTENSIONS if n != "atom:link"),
}


def known_names(fmt: str) -> tuple[str, ...]:
    """The known names of a format (none for an unknown format)."""
    return KNOWN_NAMES.get(fmt, ())
