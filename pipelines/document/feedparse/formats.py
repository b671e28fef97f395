"""The rules of each format family (which handler reads which element) and recognising the format."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipelines.document.feedparse.handlers import (
    _alternate,
    _atom_author,
    _atom_category,
    _atom_enclosure,
    _atom_generator,
    _atom_title,
    _body,
    _body_alt,
    _by_rel,
    _channel_link,
    _date,
    _entry_language,
    _feed_date,
    _first_text,
    _generator_agent,
    _Handler,
    _item_atom_title,
    _item_link,
    _item_text_title,
    _Reader,
    _rss_enclosure,
    _rss_guid,
    _self_link,
    _skip_days,
    _skip_hours,
    _text_category,
    _text_link,
    _text_title,
    _ttl,
    _update_frequency,
    _update_period,
)
from pipelines.document.feedparse.model import ParsedFeed, ParsedItem
from pipelines.document.feedparse.names import _ATOM03_URIS, _DEFINED, _DEFINED_PREFIXED, _name_of
from schemas.namespaces import ATOM_NS, RDF_NS, element_name
from schemas.vocab import FeedFormat


@dataclass(slots=True, frozen=True, kw_only=True)
class _Rules:
    """How one format family reads a document whose own elements carry the prefix ``own`` ('' when bare)."""

    family: str  # rss, rdf, atom or atom03
    own: str
    defined: dict[str, frozenset[str]]
    #: an element of this name among the channel's children is an item
    entry: str
    #: channel / item child name -> the handler that reads its value (everything else is only tallied)
    channel: dict[str, _Handler[ParsedFeed]]
    item: dict[str, _Handler[ParsedItem]]
    #: the dates of an item, most wanted first (the keys of _Reader.dates)
    date_order: tuple[str, ...]
    person: str = ""  # the name of an Atom person's name element
    about_guid: bool = False  # RSS 1.0: rdf:about is the guid when there is none
    #: the channel's dates, most wanted first (the keys of _Reader.feed_dates)
    feed_date_order: tuple[str, ...] = ()
    #: Atom: the item's body (_Reader.body) is its content and the fallback its summary; RSS: the
    #: reverse (description, then content:encoded)
    body_is_content: bool = False
    #: scope -> name -> whether ``defined`` (a bounded cache of _defined)
    _known: dict[str, dict[str, bool]] = field(default_factory=dict)

    def known(self, scope: str) -> dict[str, bool]:
        """The cache of ``defined`` for one scope (emptied when it grows past a bound)."""
        known = self._known.get(scope)
        if known is None or len(known) >= _KNOWN_MAX:
            if len(self._known) >= _KNOWN_MAX:
                self._known.clear()
            known = self._known[scope] = {}
        return known


_KNOWN_MAX = 2_000


#: What the channel of every format may have: Atom links of another format or version (they may
#: give the feed's own URL; their rels, hub and hreflang are noted), dc:language (used when the
#: channel has no language of its own), and admin:generatorAgent (used when it has no generator).
_ANY_CHANNEL: dict[str, _Handler[ParsedFeed]] = {
    "atom:link": _channel_link(_by_rel("", {"self": _self_link})),
    "atom03:link": _channel_link(_by_rel("", {"self": _self_link, "start": _self_link})),
    "dc:language": _first_text("dc_language", fallback=True),
    "sy:updatePeriod": _update_period,
    "sy:updateFrequency": _update_frequency,
    "admin:generatorAgent": _generator_agent,
}
#: ... and every item: dc:creator (used when the item has no author), Atom links (their hreflang),
#: dc:language (an entry language).
_ANY_ITEM: dict[str, _Handler[ParsedItem]] = {
    "dc:creator": _first_text("creator", fallback=True),
    "atom:link": _item_link("", {}),
    "dc:language": _entry_language,
}


def _rss_rules(family: str) -> _Rules:
    date_order = ("pubDate", "dc:date")
    feed_date_order = ("lastBuildDate", "pubDate", "dc:date") if family == "rss" else ("dc:date",)
    item: dict[str, _Handler[ParsedItem]] = {
        "title": _item_text_title,
        "link": _text_link,
        "author": _first_text("author"),
        "category": _text_category,
        "enclosure": _rss_enclosure,
        "description": _body,
        "content:encoded": _body_alt,
    }
    if family == "rss":
        item["guid"] = _rss_guid
    return _Rules(
        family=family,
        own="",
        defined=_DEFINED[family],
        entry="item",
        channel=_ANY_CHANNEL
        | {"title": _text_title, "link": _text_link, "language": _first_text("language")}
        | {"ttl": _ttl, "skipHours": _skip_hours, "skipDays": _skip_days}
        | {"generator": _first_text("generator")}
        | {name: _feed_date(name) for name in feed_date_order},
        item=_ANY_ITEM | item | {name: _date(name) for name in date_order},
        date_order=date_order,
        about_guid=family == "rdf",
        feed_date_order=feed_date_order,
    )


def _atom_rules(family: str, own: str) -> _Rules:
    date_order: tuple[str, ...] = ("published", "updated", "dc:date")
    feed_date_order: tuple[str, ...] = (own + "updated", own + "published")
    self_rels: dict[str, _Handler[ParsedFeed]] = {"self": _self_link}
    if family == "atom03":
        date_order = ("issued", "modified", "created", "published", "updated", "dc:date")
        feed_date_order = (own + "modified",)
        self_rels["start"] = _self_link
    channel: dict[str, _Handler[ParsedFeed]] = {
        own + "title": _atom_title,
        own + "link": _channel_link(_by_rel("alternate", {"alternate": _alternate, **self_rels})),
        own + "language": _first_text("language"),
        own + "generator": _atom_generator,
    } | {name: _feed_date(name) for name in feed_date_order}
    item: dict[str, _Handler[ParsedItem]] = {
        own + "title": _item_atom_title,
        own + "link": _item_link("alternate", {"alternate": _alternate, "enclosure": _atom_enclosure}),
        own + "id": _first_text("guid"),
        own + "author": _atom_author,
        own + "category": _atom_category,
        own + "content": _body,
        own + "summary": _body_alt,
    }
    dates = {(key if ":" in key else own + key): _date(key) for key in date_order}
    return _Rules(
        family=family,
        own=own,
        defined=_DEFINED_PREFIXED[family] if own else _DEFINED[family],
        entry=own + "entry",
        channel=_ANY_CHANNEL | channel,  # the feed's own atom:link wins over the foreign one
        item=_ANY_ITEM | item | dates,
        date_order=date_order,
        person=own + "name",
        feed_date_order=feed_date_order,
        body_is_content=True,
    )


_RSS_RULES = _rss_rules("rss")
_RDF_RULES = _rss_rules("rdf")
_ATOM_RULES = _atom_rules("atom", "atom:")
_ATOM03_RULES = _atom_rules("atom03", "atom03:")
#: Atom without a namespace or in a pre-Atom draft namespace: the elements are written bare.
_BARE_ATOM_RULES = _atom_rules("atom", "")
_BARE_ATOM03_RULES = _atom_rules("atom03", "")


# --------------------------------------------------------------------------- recognising the format


@dataclass(slots=True, frozen=True, kw_only=True)
class _Format:
    format: FeedFormat
    version: str | None
    rules: _Rules
    mode: str = ""  # the namespace written bare (a namespaced <rss>, a draft-Atom feed), or ''


_RDF_ROOT = f"{{{RDF_NS}}}RDF"
_RSS10_NS = "http://purl.org/rss/1.0/"
_RSS090_NS = "http://my.netscape.com/rdf/simple/0.9/"


def _recognise(root: Any) -> _Format | str:
    """The format from the root element, by its local name; why it is not a feed when it is not one."""
    tag = None if root is None else root.tag
    if tag.__class__ is not str:
        return "no root element"
    ns, _, local = tag[1:].partition("}") if tag[:1] == "{" else ("", "", tag)
    if local == "rss":  # a namespaced <rss> writes its own namespace bare
        return _Format(format=FeedFormat.RSS, version=(root.get("version") or "").strip(), rules=_RSS_RULES, mode=ns)
    if tag == _RDF_ROOT:
        return _Format(format=FeedFormat.RDF, version=_rdf_version(root), rules=_RDF_RULES)
    if local == "feed":
        return _atom_format(root, ns)
    return f"root element <{element_name(tag)}> is not a feed"


def _atom_format(root: Any, ns: str) -> _Format:
    if ns == ATOM_NS:
        return _Format(format=FeedFormat.ATOM, version="1.0", rules=_ATOM_RULES)  # element_name writes atom:title
    if ns in _ATOM03_URIS:
        return _Format(format=FeedFormat.ATOM, version="0.3", rules=_ATOM03_RULES)  # ... and atom03:title
    # no namespace, or a pre-Atom draft namespace (Echo, Pie...)
    if (root.get("version") or "").strip() == "0.3":
        return _Format(format=FeedFormat.ATOM, version="0.3", rules=_BARE_ATOM03_RULES, mode=ns)
    return _Format(format=FeedFormat.ATOM, version=None, rules=_BARE_ATOM_RULES, mode=ns)


def _rdf_version(root: Any) -> str | None:
    """'1.0' or '0.90' from the namespaces in use on or under rdf:RDF; None when neither."""
    uris = set(root.nsmap.values())
    if _RSS10_NS in uris:
        return "1.0"
    if _RSS090_NS in uris:
        return "0.90"
    for ch in root:
        t = ch.tag
        if t.__class__ is str:
            if t.startswith("{" + _RSS10_NS):
                return "1.0"
            if t.startswith("{" + _RSS090_NS):
                return "0.90"
    return None


def _find_channel(root: Any, r: _Reader) -> Any:
    """The first ``channel`` child of the root, or None."""
    names, mode = r.names, r.mode
    for ch in root:
        t = ch.tag
        if t.__class__ is str and (names.get(t) or _name_of(t, mode, names)) == "channel":
            return ch
    return None


# --------------------------------------------------------------------------- the single pass
