"""What :func:`~pipelines.document.feedparse.parse_feed` returns: the feed, its items, the tally rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from schemas.vocab import DateForm, FeedFormat

if TYPE_CHECKING:
    from pipelines.document.feedparse.lifting import TreeNotes


@dataclass(slots=True, kw_only=True)
class ParsedItem:
    """One item or entry. The parser fills it in place as it reads the item's children."""

    position: int
    guid: str | None = None
    guid_is_permalink: bool | None = None
    link: str | None = None
    title: str | None = None
    author: str | None = None
    categories: list[str] = field(default_factory=list)
    enclosure_url: str | None = None
    enclosure_type: str | None = None
    enclosure_length: int | None = None
    pub_date_raw: str | None = None
    pub_date: datetime | None = None
    date_form: DateForm | None = None
    #: guid, else link, else "sha256:<hex>" (see :mod:`pipelines.document.identity`)
    identity: str | None = None
    #: what ``identity`` was taken from: an :class:`schemas.vocab.IdentitySource` value
    identity_source: str | None = None
    #: SHA-256 hex of title, link, description and enclosure URL (not the date)
    content_hash: str | None = None
    #: the title as written holds HTML markup (see "Breadth" in the package docstring); None without a title
    title_has_markup: bool | None = None
    #: characters of the description (RSS description, Atom summary) and of the full content
    #: (content:encoded, Atom content), as written; None when the element is absent
    description_length: int | None = None
    content_length: int | None = None
    #: a :class:`schemas.vocab.ContentKind` value: the main body's kind; None without a body
    content_kind: str | None = None


@dataclass(slots=True)
class Usage:
    """How often one element or attribute occurs at one scope (see "Scopes of the tally" in the package docstring).

    Positional: it is built in one place, once per tally row, and keywords are slower
    (benchmarks/RESULTS.md, section 11).
    """

    scope: str
    element: str
    count: int
    items_with: int | None
    defined: bool


@dataclass(slots=True, kw_only=True)
class ParsedFeed:
    """A parsed document; the channel's values are filled in place as its children are read."""

    format: FeedFormat
    version: str | None
    well_formed: bool
    error: str | None
    encoding: str | None
    title: str | None = None
    link: str | None = None
    language: str | None = None
    self_url: str | None = None
    #: scheduling hints (see "Scheduling hints" in the package docstring)
    ttl: int | None = None
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[str, ...] = ()
    update_period: str | None = None
    update_frequency: int | None = None
    #: the survey's breadth values (see "Breadth" in the package docstring)
    generator: str | None = None
    feed_date: datetime | None = None
    hub_url: str | None = None
    link_rels: tuple[str, ...] = ()
    entry_languages: tuple[str, ...] = ()
    hreflangs: tuple[str, ...] = ()
    items: list[ParsedItem] = field(default_factory=list)
    usage: list[Usage] = field(default_factory=list)
    root: Any | None = None
    #: Only from ``parse_feed(..., with_notes=True)``: pass it to ``check_feed`` with ``root``.
    notes: TreeNotes | None = None


# --------------------------------------------------------------------------- constants
