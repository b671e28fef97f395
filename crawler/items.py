"""What the spider and the autodiscovery middleware hand to the item pipelines.

Plain dataclasses (Scrapy accepts them as items through itemadapter); none of
them imports Scrapy, so the pipelines' logic can be tested on them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crawler.discovery import FeedLink


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
