"""The single pass: the channel's children, then each item's, tallied and read; the usage rows."""

from __future__ import annotations

from typing import Any

from pipelines.document.dates import parse_date
from pipelines.document.feedparse.handlers import _identify, _Reader
from pipelines.document.feedparse.model import ParsedFeed, ParsedItem, Usage
from pipelines.document.feedparse.names import _RDF_ABOUT, _XML_BASE, _XML_LANG, _defined, _name_of
from pipelines.document.feedparse.tally import _tally_attrs, _walk
from pipelines.document.feedparse.text import _add_lang, _is_xhtml, _join_base, _xhtml_langs


def _read_channel(r: _Reader, feed: ParsedFeed, root: Any, channel: Any, url: str) -> None:
    """Channel scope: the channel's children, then the root's other children (rss, rdf)."""
    r.base = _join_base(url, root)
    if channel is not None:
        r.base = _join_base(r.base, channel)
        kids: list[tuple[Any, str]] | None = None
        if r.kids_of is not None:
            kids = r.kids_of[channel] = []
        _read_children(r, feed, channel, None, None, kids)
    # RDF: the root's items are the items, not channel elements, and a sibling
    # the channel references by name (<image rdf:resource>) is not counted
    # twice; the children of both are still tallied.
    siblings = frozenset(r.acc["channel"]) if r.rules.family == "rdf" else None
    _read_children(r, feed, root, channel, siblings, None, "rss" if r.rules.family == "rss" else "channel")
    if feed.language is None:
        feed.language = r.dc_language
    if feed.language is None:
        feed.language = _xml_lang(channel, root)
    feed.update_frequency = None if feed.update_period is None else feed.update_frequency or 1
    if feed.generator is None:
        feed.generator = r.generator_agent
    for key in r.rules.feed_date_order:  # the first present in the format's order, parsed (None if it does not parse)
        raw = r.feed_dates.get(key)
        if raw is not None:
            feed.feed_date = parse_date(raw, r.date_budget)[0]
            break


def _xml_lang(channel: Any, root: Any) -> str | None:
    for el in (channel, root):
        if el is not None:
            lang = el.get(_XML_LANG)
            if lang:
                return lang.strip() or None
    return None


def _read_children(
    r: _Reader,
    feed: ParsedFeed,
    container: Any,
    skip: Any,
    siblings: frozenset[str] | None,
    kids: list[tuple[Any, str]] | None,
    scope: str = "channel",
) -> None:
    """Tally the children of a channel-level container (but ``skip``) at ``scope``, read values, collect the items.

    ``scope`` is ``channel``, or ``rss`` for the children of an RSS root beside its channel (whose own
    children are then tallied at ``rss/<name>``).
    """
    names, mode, acc = r.names, r.mode, r.acc
    counts = acc.get(scope)
    if counts is None:
        counts = acc[scope] = {}
    below = "" if scope == "channel" else scope + "/"
    entry, handlers, items = r.rules.entry, r.rules.channel, r.items
    for ch in container:
        t = ch.tag
        if t.__class__ is not str or ch is skip:
            continue
        name = names.get(t) or _name_of(t, mode, names)
        if kids is not None:
            kids.append((ch, name))
        if siblings is not None and (name == entry or name in siblings):
            _rdf_sibling(r, ch, name)
            continue
        counts[name] = counts.get(name, 0) + 1
        keys = ch.keys()
        if keys:  # an item's own xml:lang is one of the entry languages (noted as its attributes are tallied)
            _tally_attrs(ch, name, keys, counts, None, names, mode, r.entry_langs if name == entry else None)
        if name == entry:
            items.append(ch)
            continue
        handler = handlers.get(name)
        if handler is not None:
            handler(feed, ch, r)
        if len(ch) and not _is_xhtml(ch):
            _walk(ch, below + name, acc, names, mode)


def _rdf_sibling(r: _Reader, el: Any, name: str) -> None:
    """An RDF item, or an element the channel already has: not counted at channel scope."""
    if name == r.rules.entry:
        r.items.append(el)
        _add_lang(r.entry_langs, el.get(_XML_LANG))
    elif len(el) and not _is_xhtml(el):
        _walk(el, name, r.acc, r.names, r.mode)


def _read_item(r: _Reader, item: Any, position: int, base: str) -> ParsedItem:
    """Tally an item's children and read its values (kept inline: this runs for every item)."""
    it = ParsedItem(position=position)
    r.base = base if item.get(_XML_BASE) is None else _join_base(base, item)
    r.creator, r.enclosed, r.dates, r.body, r.body_alt = None, False, {}, None, None
    names, mode, acc, rules, langs = r.names, r.mode, r.acc, r.rules, r.entry_langs
    counts, handlers = acc["item"], rules.item
    seen: set[str] = set()
    kids: list[tuple[Any, str]] | None = None
    if r.kids_of is not None:
        kids = r.kids_of[item] = []
    for ch in item:
        t = ch.tag
        if t.__class__ is not str:
            continue
        name = names.get(t) or _name_of(t, mode, names)
        if kids is not None:
            kids.append((ch, name))
        counts[name] = counts.get(name, 0) + 1
        seen.add(name)
        keys = ch.keys()
        if keys:
            _tally_attrs(ch, name, keys, counts, seen, names, mode, langs)
        if len(ch):
            if not _is_xhtml(ch):
                _walk(ch, "item/" + name, acc, names, mode, langs)
            else:  # not tallied, but its languages are the item's
                _xhtml_langs(ch, langs)
        handler = handlers.get(name)
        if handler is not None:
            handler(it, ch, r)
    iwith = r.items_with
    for name in seen:
        iwith[name] = iwith.get(name, 0) + 1
    # what is known once all the children are read: the fallbacks, and the date
    if it.author is None:
        it.author = r.creator
    if it.guid is None and rules.about_guid:
        it.guid = _rdf_about(item)
    if r.dates:
        _read_date(it, r)
    _identify(it, r)
    return it


def _rdf_about(item: Any) -> str | None:
    about: str | None = item.get(_RDF_ABOUT)
    return about.strip() or None if about is not None else None


def _read_date(it: ParsedItem, r: _Reader) -> None:
    """The item's date: the first in the format's order of those it has (parsed once for items in a row
    with the same date, as a feed often gives them)."""
    dates = r.dates
    for key in r.rules.date_order:
        raw = dates.get(key)
        if raw is not None:
            it.pub_date_raw = raw
            last = r.last_date
            if last is None or last[0] != raw:
                last = r.last_date = (raw, parse_date(raw, r.date_budget))
                if r.known_dates is not None:
                    r.known_dates[raw] = last[1]
            it.pub_date, it.date_form = last[1]
            return


def _usage(r: _Reader) -> list[Usage]:
    """Usage rows: channel, item, then deeper scopes in order of first appearance."""
    rules, iwith = r.rules, r.items_with
    rows: list[Usage] = []
    for scope, counts in r.acc.items():
        known = rules.known(scope)
        for element, count in counts.items():
            defined = known.get(element)
            if defined is None:
                defined = known[element] = _defined(rules.defined, rules.own, scope, element)
            items_with = iwith.get(element, 0) if scope == "item" else None
            rows.append(Usage(scope, element, count, items_with, defined))
    return rows


# --------------------------------------------------------------------------- parse_feed
