"""What the spider and the autodiscovery middleware hand to the item pipelines.

Plain dataclasses (Scrapy accepts them as items through itemadapter); none of
them imports Scrapy, so the pipelines' logic can be tested on them directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypedDict

from schemas.pickling import by_fields
from schemas.vocab import Expect, Via


@by_fields
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


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchContext:
    """Why the crawl requests a URL: carried by every request (``meta["fc"]``) and kept in the resume journal."""

    via: Via  # how the URL was found: fetch_log.discovered_via
    source: str | None  # the input, page, list or feed that named it
    depth: int  # hops from an input (inputs are 0)
    kind: Expect  # what the crawl expects there
    include_depth: int = 0  # OPML include nesting (for FEEDCENSUS_OPML_MAX_INCLUDE_DEPTH)
    # The source is a web archive's record (feedcensus commoncrawl), not a fetch of its URL: a distributed
    # job leases it as "archive <source>" (pipelines/dataset/claims.py url_key), beside a live fetch of the URL.
    source_archived: bool = False

    def child(self, via: Via, source: str | None, kind: Expect, **changes: Any) -> FetchContext:
        """The context of a URL found in the document fetched with this context: one hop deeper."""
        changes.setdefault("source_archived", self.via == Via.ARCHIVE)
        return FetchContext(via=via, source=source, depth=self.depth + 1, kind=kind, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "via": str(self.via),
            "source": self.source,
            "depth": self.depth,
            "kind": str(self.kind),
            "include_depth": self.include_depth,
            "source_archived": self.source_archived,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FetchContext:
        """From :meth:`to_json` output (a journal line); unknown keys are ignored, missing ones defaulted."""
        return cls(
            via=Via(data.get("via") or Via.URL),
            source=data.get("source"),
            depth=int(data.get("depth") or 0),
            kind=Expect(data.get("kind") or Expect.ANY),
            include_depth=int(data.get("include_depth") or 0),
            source_archived=bool(data.get("source_archived")),
        )


#: The key of :class:`FetchContext` in a Scrapy request's ``meta``.
CONTEXT_META_KEY = "fc"
#: A request's meta key saying what it waited for before it was sent (a pause of its host): fetch_log.waited_for.
WAITED_META_KEY = "feedcensus_waited_for"


def context_from_meta(meta: Mapping[str, Any]) -> FetchContext | None:
    """The fetch context in a request's ``meta``; None for a request the census did not make (robots.txt)."""
    ctx = meta.get(CONTEXT_META_KEY)
    return ctx if isinstance(ctx, FetchContext) else None


#: The context of a response whose request carried none (``scrapy parse``, a foreign request).
DEFAULT_CONTEXT = FetchContext(via=Via.URL, source=None, depth=0, kind=Expect.ANY)


def utcnow() -> datetime:
    return datetime.now(UTC)


@by_fields
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
    waited_for: str | None = None  # the pause of its host the request waited for (fetch_log.waited_for)
    # Where the response is archived (crawl --warc, or a replay): the columns of the same names.
    warc_filename: str | None = None
    warc_record_offset: int | None = None
    warc_record_length: int | None = None


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
    retry_after: str | None = None  # the Retry-After header of a 429 / 503
    waited_for: str | None = None  # the pause of its host the request waited for before it was sent
    next_due: datetime | None = None  # for a feed: when the schedule next lets it be fetched
    due_hint: str | None = None  # a schemas.vocab.DueHint
    due_reason: str | None = None
    # Where the response is archived (crawl --warc, or a replay): the columns of the same names.
    warc_filename: str | None = None
    warc_record_offset: int | None = None
    warc_record_length: int | None = None
    # Software and language headers of the response, raw (null without a response): see LoggedHeaders.
    server: str | None = None
    x_powered_by: str | None = None
    content_language: str | None = None
    #: Not a column: the response was an HTML page (autodiscovery runs on it).
    html: bool = False

    @classmethod
    def for_context(cls, ctx: FetchContext, url: str, outcome: str, **fields: Any) -> FetchRecord:
        """A record for ``url``, requested with ``ctx``."""
        return cls(url=url, outcome=outcome, source=ctx.source, discovered_via=ctx.via, depth=ctx.depth, **fields)


class LoggedHeaders(TypedDict):
    """The response headers every fetch_log row keeps as sent (FetchRecord keyword arguments)."""

    server: str | None
    x_powered_by: str | None
    content_language: str | None


def logged_headers(headers: Mapping[str, str]) -> LoggedHeaders:
    """The :class:`LoggedHeaders` of a response with these headers (lower-cased names); None when absent or empty."""
    return LoggedHeaders(
        server=headers.get("server") or None,
        x_powered_by=headers.get("x-powered-by") or None,
        content_language=headers.get("content-language") or None,
    )


@dataclass(slots=True)
class NotDue:
    """A known feed the schedule says is not due: its ``not_due`` record and what was known of it.

    ``previous`` is the feed's latest ``feeds`` row from an earlier job (None when the only thing
    known is a refusal with Retry-After); the feed pipeline carries it forward as this job's row.
    """

    record: FetchRecord
    previous: dict[str, Any] | None


@by_fields
@dataclass(frozen=True, slots=True)
class PageFacts:
    """What the autodiscovery pass over an HTML page reads besides its feed links: the ``pages`` columns."""

    html_lang: str | None = None  # <html lang> (else xml:lang), stripped; '' when declared empty
    meta_generator: str | None = None  # the first non-empty <meta name="generator" content>, stripped
    hreflangs: tuple[str, ...] = ()  # distinct hreflang values of <link rel=alternate> in the head, sorted
    platforms: tuple[str, ...] = ()  # pipelines.document.platforms labels, sorted
    rel_alternate: bool = False  # a link with a feed media type has the rel token alternate
    rel_feed: bool = False  # a link with a feed media type has the rel token feed


@dataclass(slots=True)
class PageLinks:
    """The feed links autodiscovery found on one HTML page (possibly none), and what else the page says."""

    page_url: str  # after redirects
    requested_url: str
    links: list[FeedLink]
    followed: list[bool]
    facts: PageFacts = field(default_factory=PageFacts)
    fetched_at: datetime = field(default_factory=utcnow)  # the page's fetch_log fetched_at
    #: The page's own fetch record (its fetch_log row), carried here so that a page is one item, not two.
    record: FetchRecord | None = None
