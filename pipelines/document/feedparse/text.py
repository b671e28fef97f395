"""Reading texts from the tree: plain and Atom text constructs, markup, languages, links and numbers."""

from __future__ import annotations

import re
from html import unescape
from html.entities import html5
from typing import Any
from urllib.parse import urljoin

from pipelines.document.feedparse.lifting import _LIFT_MARK, TreeNotes
from pipelines.document.feedparse.names import _ENTITY, _MAX_INT64, _XHTML_NS, _XML_BASE, _XML_LANG
from schemas.vocab import ContentKind


def _text(el: Any, notes: TreeNotes | None = None) -> str | None:
    """The text of an element, children included, stripped; None when blank.

    The text of an element without children is noted in ``notes.leaf_texts`` when those are kept.
    """
    if len(el):
        parts: list[str] = []
        _gather(el, parts)
        t = "".join(parts)
        if notes is not None and _LIFT_MARK in t:
            t = notes.restore(t)
        return t.strip() or None
    t = el.text
    if t is None:
        return None
    if notes is not None:
        if _LIFT_MARK in t:
            t = notes.restore(t)
        if notes.leaf_texts is not None:
            notes.leaf_texts[el] = t
    return t.strip() or None


def _gather(el: Any, parts: list[str]) -> None:
    if el.text and el.tag is not _ENTITY:
        parts.append(el.text)
    for ch in el:
        if ch.tag is _ENTITY:
            parts.append(html5.get(ch.name + ";", ch.text or ""))
        elif isinstance(ch.tag, str):
            _gather(ch, parts)
        if ch.tail:
            parts.append(ch.tail)


_TAGS = re.compile(r"<[^>]*>")
#: An HTML tag in a text: "<", an optional "/", a name, attributes, ">" ("<br>", "</a>", '<a href="x">';
#: not "a < b" nor "<3"). Names are not checked against HTML's: "Vector<int>" counts, as a reader would see it.
_TAG = r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>"
_TAG_TEXT = re.compile(_TAG)
_TAG_BYTES = re.compile(_TAG.encode())


def _atom_text(el: Any, notes: TreeNotes | None) -> str | None:
    """An Atom text construct as plain text: markup of type="html" removed."""
    return _atom_plain(el, _text(el, notes))


def _atom_plain(el: Any, t: str | None) -> str | None:
    """:func:`_atom_text` of a text already read."""
    if t is not None and el.get("type") == "html":
        t = unescape(_TAGS.sub("", t)).strip() or None
    return t


#: Atom text and content ``type`` values (lower-cased; Atom 0.3's MIME types too) -> the kind; others are plain.
_ATOM_KINDS: dict[str | None, ContentKind] = {
    "html": ContentKind.HTML,
    "text/html": ContentKind.HTML,
    "xhtml": ContentKind.XHTML,
    "application/xhtml+xml": ContentKind.XHTML,
}


#: ... and the values as written most often, looked up first (no type is text).
_ATOM_KINDS_AS_WRITTEN: dict[str | None, ContentKind] = {
    **_ATOM_KINDS,
    "text": ContentKind.PLAIN,
    None: ContentKind.PLAIN,
}


def _atom_kind(type_: str | None) -> ContentKind:
    kind = _ATOM_KINDS_AS_WRITTEN.get(type_)
    return kind if kind is not None else _ATOM_KINDS.get((type_ or "").strip().lower(), ContentKind.PLAIN)


def _has_element(el: Any) -> bool:
    """Whether an element has an element child (not only entity references)."""
    return any(ch.tag.__class__ is str for ch in el)


def _xhtml_markup(el: Any) -> bool:
    """Whether an Atom XHTML construct holds a tag inside its wrapping ``div``."""
    kids = [ch for ch in el if ch.tag.__class__ is str]
    if len(kids) == 1 and kids[0].tag == _XHTML_NS + "div":
        return _has_element(kids[0])
    return bool(kids)


def _add_lang(langs: set[str], value: str | None) -> None:
    if value and (value := value.strip().lower()):
        langs.add(value)


def _add_hreflang(langs: set[str], value: str | None) -> None:
    """hreflang values are kept as written, stripped (as the pages table keeps them)."""
    if value and (value := value.strip()):
        langs.add(value)


def _xhtml_langs(el: Any, langs: set[str]) -> None:
    """The ``xml:lang`` values inside XHTML content (which the tally does not walk)."""
    for sub in el.iter():
        if sub.tag.__class__ is str:
            _add_lang(langs, sub.get(_XML_LANG))


def _resolve(base: str, href: str | None) -> str | None:
    if href is None:
        return None
    href = href.strip()
    if not href:
        return None
    if href.startswith(("http://", "https://")) or not base:
        return href
    try:
        return urljoin(base, href)
    except ValueError:
        return href


def _join_base(base: str, el: Any) -> str:
    xb: str | None = el.get(_XML_BASE)
    if xb is None:
        return base
    try:
        return urljoin(base, xb.strip()) if base else xb.strip()
    except ValueError:
        return base


def _int64(value: str | None) -> int | None:
    if value is None:
        return None
    v = value.strip()
    if v.isascii() and v.isdigit() and len(v) <= 19:
        n = int(v)
        return n if n <= _MAX_INT64 else None
    return None


def _is_xhtml(el: Any) -> bool:
    """Whether an element holds XHTML that the tally must not walk."""
    if el.get("type") == "xhtml":
        return True
    first = el[0].tag
    return isinstance(first, str) and first.startswith(_XHTML_NS)


# --------------------------------------------------------------------------- the tally
