"""What the spider and the autodiscovery middleware hand to the item pipelines.

Plain dataclasses (Scrapy accepts them as items through itemadapter); none of
them imports Scrapy, so the pipelines' logic can be tested on them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime


@dataclass(frozen=True, slots=True)
class FeedLink:
    """One feed link found on a page, with its verdict against both specs."""

    href: str | None  # absolute URL after RFC 3986 resolution; None if it could not be resolved
    href_raw: str  # as written (after character-reference decoding), '' if missing
    rel: str  # as written
    type: str  # as written
    title: str | None
    position: int  # index among the feed links returned for the page, from 0
    in_head: bool
    conforms_rss: bool  # meets every MUST of the RSS Board autodiscovery spec
    conforms_atom: bool  # meets every MUST of the Atom autodiscovery draft
    reasons: tuple[str, ...]  # ids of failed rules (keys of RULES), in RULES order
    feed_type: str  # 'rss' | 'atom' | 'rdf'
    followable: bool


#: The FeedLink fields reported to users: `discover --json` and the `links` table.
LINK_FIELDS = (
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
)


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class FeedDocument:
    """A response whose content looks like a feed, not parsed yet."""

    url: str  # as requested (before redirects)
    final_url: str
    status: int
    headers: dict[str, str]  # lower-cased names, decoded values
    body: bytes
    discovered_via: str
    source: str | None
    depth: int
    check_reflexive: bool = False  # fetch the channel's link page and look for this feed there
    fetched_at: datetime = field(default_factory=utcnow)


@dataclass(slots=True)
class FetchRecord:
    """One fetch_log row: what happened to one URL given to or requested by the crawl."""

    url: str
    outcome: str
    final_url: str | None = None
    status: int | None = None
    error: str | None = None
    source: str | None = None
    discovered_via: str | None = None
    depth: int | None = None
    content_type: str | None = None
    bytes: int | None = None
    fetched_at: datetime = field(default_factory=utcnow)
    #: Not a column: the response was an HTML page (autodiscovery ran on it).
    html: bool = False


@dataclass(slots=True)
class PageLinks:
    """The feed links autodiscovery found on one HTML page (possibly none)."""

    page_url: str  # after redirects
    requested_url: str
    links: list[FeedLink]
    followed: list[bool]
