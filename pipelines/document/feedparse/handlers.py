"""The handlers that read an element's value into the feed or an item, and the reader they share."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pipelines.document.dates import FallbackBudget, ParsedDate
from pipelines.document.feedparse.lifting import TreeNotes
from pipelines.document.feedparse.model import ParsedFeed, ParsedItem
from pipelines.document.feedparse.names import _MAX_INT32, _RDF_RESOURCE, _name_of, _names_for, _tostring
from pipelines.document.feedparse.text import (
    _TAG_BYTES,
    _TAG_TEXT,
    _add_hreflang,
    _add_lang,
    _atom_kind,
    _atom_plain,
    _atom_text,
    _has_element,
    _int64,
    _join_base,
    _resolve,
    _text,
    _xhtml_markup,
)
from pipelines.document.feedparse.xmlparse import _PARSE_ERRORS
from pipelines.document.identity import item_hashes
from schemas.vocab import ContentKind

if TYPE_CHECKING:
    from pipelines.document.feedparse.formats import _Rules


class _Reader:
    """One document being read: its names, the tally, the rules of its format, and the state of the
    channel or item whose children are being read (the values themselves go straight into the
    :class:`ParsedFeed` or :class:`ParsedItem`)."""

    __slots__ = (
        "acc",
        "base",
        "body",
        "body_alt",
        "creator",
        "date_budget",
        "dates",
        "dc_language",
        "enclosed",
        "entry_langs",
        "feed_dates",
        "generator_agent",
        "hreflangs",
        "items",
        "items_with",
        "kids_of",
        "known_dates",
        "last_date",
        "link_rels",
        "mode",
        "names",
        "notes",
        "rules",
    )

    def __init__(self, rules: _Rules, mode: str, notes: TreeNotes | None) -> None:
        self.rules = rules
        self.mode = mode
        self.names = _names_for(mode)
        self.notes = notes
        self.acc: dict[str, dict[str, int]] = {"channel": {}, "item": {}}
        self.items_with: dict[str, int] = {}
        self.items: list[Any] = []  # the item elements, in document order
        # the children the checks will walk again, with their names: only where they name them the same way
        self.kids_of = notes.children if notes is not None and rules.family == "rss" and not mode else None
        # in those documents the checks also reuse the item dates parsed and the texts read (see TreeNotes)
        self.known_dates: dict[str, ParsedDate] | None = None
        self.date_budget = FallbackBudget()  # the document's share of dateparser, and what it gave each text
        if self.kids_of is not None and notes is not None:
            self.known_dates = notes.dates
            notes.leaf_texts = {}
        self.base = ""  # of the channel or item being read: its links are resolved against it
        self.dc_language: str | None = None  # the channel's, used when it has no language
        # breadth (see "Breadth" in the package docstring): the channel's date texts by key, until the channel is read;
        # admin:generatorAgent, used when there is no generator; the sets of the whole document
        self.feed_dates: dict[str, str | None] = {}
        self.generator_agent: str | None = None
        self.link_rels: set[str] = set()
        self.hreflangs: set[str] = set()
        self.entry_langs: set[str] = set()
        # of the item being read (set for each item by _read_item):
        self.creator: str | None = None  # dc:creator, used when the item has no author
        self.enclosed = False  # an enclosure was read (its URL may still be None)
        self.dates: dict[str, str | None] = {}  # date elements' texts by key, until the item is read
        # the first description element and the first of its fallback (content:encoded, Atom summary)
        self.body: Any = None
        self.body_alt: Any = None
        # the last item date parsed, and what it gave
        self.last_date: tuple[str, ParsedDate] | None = None


_T = TypeVar("_T", ParsedFeed, ParsedItem)
#: Reads an element's value into the feed (the channel's values) or an item.
_Handler = Callable[[_T, Any, _Reader], None]


# the channel and items


def _text_title(t: ParsedFeed | ParsedItem, el: Any, r: _Reader) -> None:
    if t.title is None:
        t.title = _text(el, r.notes)


def _atom_title(t: ParsedFeed | ParsedItem, el: Any, r: _Reader) -> None:
    if t.title is None:
        t.title = _atom_text(el, r.notes)


def _item_text_title(it: ParsedItem, el: Any, r: _Reader) -> None:
    """An RSS item's title, and whether it holds markup: a tag in its text (unescaped by the XML
    parser), or an element child."""
    if it.title is None:
        it.title = _text(el, r.notes)
        if it.title is not None:
            title = it.title
            it.title_has_markup = ("<" in title and _TAG_TEXT.search(title) is not None) or (
                len(el) > 0 and _has_element(el)
            )


def _item_atom_title(it: ParsedItem, el: Any, r: _Reader) -> None:
    """An Atom entry's title, and whether it holds markup: type html with a tag in its text, or
    type xhtml with a tag inside the div (type text shows markup as text: none)."""
    if it.title is None:
        text = _text(el, r.notes)
        it.title = _atom_plain(el, text)
        if it.title is not None and text is not None:
            kind = _atom_kind(el.get("type"))
            if kind == ContentKind.HTML:
                it.title_has_markup = _TAG_TEXT.search(text) is not None
            else:
                it.title_has_markup = kind == ContentKind.XHTML and _xhtml_markup(el)


def _text_link(t: ParsedFeed | ParsedItem, el: Any, r: _Reader) -> None:
    """An RSS link: its text."""
    if t.link is None:
        t.link = _resolve(r.base, _text(el, r.notes))


def _alternate(t: ParsedFeed | ParsedItem, el: Any, r: _Reader) -> None:
    """An Atom link with rel="alternate" (or none, in Atom's own link)."""
    if t.link is None:
        t.link = _resolve(_join_base(r.base, el), el.get("href"))


def _first_text(attr: str, *, fallback: bool = False) -> Callable[[Any, Any, _Reader], None]:
    """The first non-blank text of such elements, into ``attr`` of the feed or item (of the reader
    for a ``fallback``, a value used only when the feed or item has none of its own)."""

    def first_text(t: Any, el: Any, r: _Reader) -> None:
        holder = r if fallback else t
        if getattr(holder, attr) is None:
            setattr(holder, attr, _text(el, r.notes))

    return first_text


def _by_rel(default: str, handlers: Mapping[str, _Handler[_T]]) -> _Handler[_T]:
    """An Atom link: the handler for its ``rel`` (``default`` when it has none), if any."""

    def link(t: _T, el: Any, r: _Reader) -> None:
        handler = handlers.get((el.get("rel") or default).strip())
        if handler is not None:
            handler(t, el, r)

    return link


# the channel only


def _self_link(f: ParsedFeed, el: Any, r: _Reader) -> None:
    if f.self_url is None:
        f.self_url = _resolve(_join_base(r.base, el), el.get("href"))


def _channel_link(inner: _Handler[ParsedFeed]) -> _Handler[ParsedFeed]:
    """A channel-level Atom link: its rel tokens (when it has an href), the first hub, its hreflang; then ``inner``."""

    def link(f: ParsedFeed, el: Any, r: _Reader) -> None:
        href = el.get("href")
        if href is not None and href.strip():
            rels = (el.get("rel") or "").lower().split() or ["alternate"]
            r.link_rels.update(rels)
            if f.hub_url is None and "hub" in rels:
                f.hub_url = _resolve(_join_base(r.base, el), href)
        _add_hreflang(r.hreflangs, el.get("hreflang"))
        inner(f, el, r)

    return link


def _atom_generator(f: ParsedFeed, el: Any, r: _Reader) -> None:
    """Atom's generator: its text, then its ``version`` and its ``(uri)`` (Atom 0.3: ``url``) when given."""
    if f.generator is None:
        text = _text(el, r.notes)
        parts = [text] if text is not None else []
        version = (el.get("version") or "").strip()
        if version:
            parts.append(version)
        uri = (el.get("uri") or el.get("url") or "").strip()
        if uri:
            parts.append(f"({uri})")
        f.generator = " ".join(parts) or None


def _generator_agent(f: ParsedFeed, el: Any, r: _Reader) -> None:
    """RSS 1.0's admin:generatorAgent: its rdf:resource, used when the channel has no generator."""
    if r.generator_agent is None:
        r.generator_agent = (el.get(_RDF_RESOURCE) or "").strip() or None


def _feed_date(key: str) -> _Handler[ParsedFeed]:
    """A channel date element: its text, kept under ``key`` (the first of each) until the channel is read."""

    def date(f: ParsedFeed, el: Any, r: _Reader) -> None:
        if key not in r.feed_dates:
            r.feed_dates[key] = _text(el, r.notes)

    return date


# items only


def _item_link(default: str, handlers: Mapping[str, _Handler[ParsedItem]]) -> _Handler[ParsedItem]:
    """An item's Atom link: its hreflang, then the handler for its ``rel`` (as :func:`_by_rel`; one
    function, not two: this runs for every link of every entry)."""

    def link(it: ParsedItem, el: Any, r: _Reader) -> None:
        lang = el.get("hreflang")
        if lang is not None:
            _add_hreflang(r.hreflangs, lang)
        if handlers:
            handler = handlers.get((el.get("rel") or default).strip())
            if handler is not None:
                handler(it, el, r)

    return link


def _entry_language(it: ParsedItem, el: Any, r: _Reader) -> None:
    """An item's dc:language: one of the feed's entry languages."""
    _add_lang(r.entry_langs, _text(el, r.notes))


def _rss_guid(it: ParsedItem, el: Any, r: _Reader) -> None:
    if it.guid is None:
        it.guid = _text(el, r.notes)
        if it.guid is not None:
            it.guid_is_permalink = (el.get("isPermaLink") or "").strip().lower() != "false"


def _atom_author(it: ParsedItem, el: Any, r: _Reader) -> None:
    """An Atom person: the text of its name."""
    if it.author is not None:
        return
    names, person = r.names, r.rules.person
    for sub in el:
        st = sub.tag
        if st.__class__ is str and (names.get(st) or _name_of(st, r.mode, names)) == person:
            it.author = _text(sub, r.notes)
            return


def _text_category(it: ParsedItem, el: Any, r: _Reader) -> None:
    term = _text(el, r.notes)  # stripped already
    if term is not None:
        it.categories.append(term)


def _atom_category(it: ParsedItem, el: Any, r: _Reader) -> None:
    term = el.get("term")
    if term is not None and (term := term.strip()):
        it.categories.append(term)


def _enclosure(it: ParsedItem, el: Any, url: str | None) -> None:
    it.enclosure_url, it.enclosure_type, it.enclosure_length = url, el.get("type"), _int64(el.get("length"))


def _rss_enclosure(it: ParsedItem, el: Any, r: _Reader) -> None:
    if not r.enclosed:
        r.enclosed = True
        _enclosure(it, el, _resolve(r.base, el.get("url")))


def _atom_enclosure(it: ParsedItem, el: Any, r: _Reader) -> None:
    """An Atom link with rel="enclosure"."""
    if not r.enclosed:
        r.enclosed = True
        _enclosure(it, el, _resolve(_join_base(r.base, el), el.get("href")))


def _date(key: str) -> _Handler[ParsedItem]:
    """A date element: its text, kept under ``key`` (the first of each) until the item is read."""

    def date(it: ParsedItem, el: Any, r: _Reader) -> None:
        if key not in r.dates:
            r.dates[key] = _text(el, r.notes)

    return date


def _body(it: ParsedItem, el: Any, r: _Reader) -> None:
    """The description (RSS description, Atom content): noted, read once the item is read."""
    if r.body is None:
        r.body = el


def _body_alt(it: ParsedItem, el: Any, r: _Reader) -> None:
    """Its fallback (content:encoded, Atom summary)."""
    if r.body_alt is None:
        r.body_alt = el


def _string_value(el: Any) -> bytes | None:
    """An element's string value as UTF-8 (see :mod:`pipelines.document.identity`), with any lifted
    section's placeholder (``TreeNotes.restore_bytes`` restores it); None when libxml2 fails (out of
    memory: no description rather than no feed)."""
    try:
        data: bytes = _tostring(el, method="text", encoding="utf-8", with_tail=False)
    except _PARSE_ERRORS:
        return None
    return data


def _identify(it: ParsedItem, r: _Reader) -> None:
    """The item's content hash and identity, from its values and the description noted while reading it;
    then the lengths and kind of its bodies, from the same string values."""
    notes, body, alt = r.notes, r.body, r.body_alt
    body_raw, body_value = _body_value(body, notes)
    description = body_value if body_value and not body_value.isspace() else None
    alt_raw = None
    if description is None and alt is not None:
        alt_raw, alt_value = _body_value(alt, notes)
        description = alt_value if alt_value and not alt_value.isspace() else None
    it.content_hash, it.identity, it.identity_source = item_hashes(
        it.guid, it.link, it.title, description, it.enclosure_url
    )
    if body is None and alt is None:
        return
    # description_length, content_length, content_kind (see "Breadth" in the package docstring): an ASCII value read already
    # for the hash is its own length (_chars)
    if r.rules.body_is_content:  # Atom: the body is the content, the fallback the summary
        if body is not None:
            it.content_length = _chars(body, body_raw, notes)
        if alt is not None:
            it.description_length = _chars(alt, alt_raw, notes)
        it.content_kind = _atom_kind((body if body is not None else alt).get("type"))
        return
    if body is not None:  # RSS: the body is the description, the fallback content:encoded
        it.description_length = _chars(body, body_raw, notes)
    if alt is not None:
        it.content_length = _chars(alt, alt_raw, notes)
        it.content_kind = ContentKind.HTML  # content:encoded holds HTML by definition
    else:
        has_tag = body_value is not None and b"<" in body_value and _TAG_BYTES.search(body_value) is not None
        it.content_kind = ContentKind.HTML if has_tag else ContentKind.PLAIN


def _body_value(el: Any, notes: TreeNotes | None) -> tuple[bytes | None, bytes | None]:
    """(the string value of a body element as read from the tree, the same with lifted sections restored)."""
    if el is None:
        return None, None
    raw = _string_value(el)
    return raw, raw if notes is None or raw is None else notes.restore_bytes(raw)


def _chars(el: Any, raw: bytes | None, notes: TreeNotes | None) -> int | None:
    """Characters of an element's string value, restored; ``raw`` is its value as read from the tree when
    it was read already. Lifted sections are counted by ``notes``, never decoded again."""
    if raw is None:
        if not len(el):  # only text: reading it is much cheaper than serialising the element
            t = el.text
            if t is None:
                return 0
            if t.isascii():  # constant time; a placeholder never is (its mark is U+E000)
                return len(t)
            return notes.restored_text_length(t) if notes is not None else len(t)
        raw = _string_value(el)
        if raw is None:
            return None
    if raw.isascii():
        return len(raw)
    return notes.restored_length(raw) if notes is not None else len(raw.decode("utf-8", "replace"))


# the channel only: scheduling hints


def _whole(text: str | None) -> int | None:
    """A whole number in ASCII digits (``text`` is stripped already) that fits a 32-bit column; else None."""
    if text is not None and text.isascii() and text.isdigit() and len(text) <= 10:
        n = int(text)
        return n if n <= _MAX_INT32 else None
    return None


def _child_texts(el: Any, name: str, r: _Reader) -> list[str]:
    """The non-blank texts of the children of ``el`` named ``name``."""
    names, mode, notes = r.names, r.mode, r.notes
    texts: list[str] = []
    for ch in el:
        t = ch.tag
        if t.__class__ is str and (names.get(t) or _name_of(t, mode, names)) == name:
            text = _text(ch, notes)
            if text is not None:
                texts.append(text)
    return texts


def _ttl(f: ParsedFeed, el: Any, r: _Reader) -> None:
    if f.ttl is None:
        f.ttl = _whole(_text(el, r.notes))


def _skip_hours(f: ParsedFeed, el: Any, r: _Reader) -> None:
    hours = set(f.skip_hours)
    for text in _child_texts(el, "hour", r):
        hour = _whole(text)
        if hour is not None and hour <= 24:
            hours.add(hour % 24)  # 24 is midnight
    f.skip_hours = tuple(sorted(hours))


_WEEK = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_DAY_OF = {day.lower(): day for day in _WEEK}


def _skip_days(f: ParsedFeed, el: Any, r: _Reader) -> None:
    days = set(f.skip_days)
    for text in _child_texts(el, "day", r):
        day = _DAY_OF.get(text.lower())
        if day is not None:
            days.add(day)
    f.skip_days = tuple(day for day in _WEEK if day in days)


_PERIODS = frozenset({"hourly", "daily", "weekly", "monthly", "yearly"})


def _update_period(f: ParsedFeed, el: Any, r: _Reader) -> None:
    if f.update_period is None:
        text = _text(el, r.notes)
        if text is not None and (period := text.lower()) in _PERIODS:
            f.update_period = period


def _update_frequency(f: ParsedFeed, el: Any, r: _Reader) -> None:
    if f.update_frequency is None:
        f.update_frequency = _whole(_text(el, r.notes)) or None  # 0 is not a frequency


# --------------------------------------------------------------------------- the rules of each format
