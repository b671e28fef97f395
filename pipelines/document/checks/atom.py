"""Atom 1.0 (RFC 4287): the structure of feed and entry, ids, dates and alternate links (``source = "atom"``).

A first set of the RFC's rules, as the W3C Feed Validator checks them
(``docs/conformance.md``, "Atom 1.0"); scopes ``feed`` and ``entry``:

* ``atom-missing-required`` (4.1.1, 4.1.2): a feed or an entry without
  ``atom:id``, ``atom:title`` or ``atom:updated``; an entry without
  ``atom:author`` in a feed without one (nor one in the entry's
  ``atom:source``);
* ``atom-duplicate-element``: an element the RFC allows once there present
  twice (``id``, ``title``, ``updated``, ``subtitle``, ``rights``, ``icon``,
  ``logo``, ``generator``; an entry's ``published``, ``summary``,
  ``content``, ``source``);
* ``atom-undefined-element``: an element of the Atom namespace the RFC does
  not define there (``published`` in a feed, ``entry`` in an entry);
* ``atom-id-not-iri`` (4.2.6): an ``atom:id`` that is not an absolute IRI
  (no scheme: ``/blog/feed.xml``, ``post-1``);
* ``atom-date-invalid`` (3.3): ``updated`` or ``published`` not an RFC 3339
  date-time (``2007-10-15T14:10:00Z``, seconds and an offset required, a
  fraction allowed) or not a real date;
* ``atom-id-invalid`` (4.2.6): a ``tag:`` id not RFC 4151's, a ``urn:`` one
  not RFC 2141's;
* ``atom-missing-attribute``: a link without ``href``, a category without
  ``term``;
* ``atom-type-invalid``: the ``type`` of a text construct, a content or a
  link that is not one it may have;
* ``atom-xhtml-div-missing`` (3.1.1.3): ``type="xhtml"`` whose content is not
  one ``xhtml:div``;
* ``atom-email-invalid`` (3.2.3): a person's ``atom:email`` not an address;
* ``atom-alternate-duplicate`` (4.1.1): two ``rel="alternate"`` links with
  the same ``type`` and ``hreflang``.

* ``atom-element-blank``, ``atom-attribute-blank``: a text construct, content,
  id, person's name, generator or category term with no text; an empty
  ``type``, or a link's empty ``rel`` / ``title``;
* ``atom-id-not-canonical`` (4.2.6.1): an id not in RFC 3986's normal form
  (``atom_iri``);
* ``atom-value-whitespace``: white space around an id, a date, an icon, a
  logo or a person's uri.

What a feed holds across its entries (a self link, no repeated id or
updated) and what an entry's content asks of it (a summary, content or an
alternate link) is :mod:`~pipelines.document.checks.atom_feed`'s. What text
constructs and content hold (escaped HTML in plain text, the
validator's security checks on HTML) is :mod:`~pipelines.document.checks.atom_html`'s.

Scopes: ``feed``, ``entry``, ``source`` (an entry's ``atom:source``), and
``author`` / ``contributor`` for a person construct's own rules. Elements of
other namespaces are not checked here, nor link relations, IRIs other than
ids (not yet).
"""

from __future__ import annotations

import re
from datetime import date

from pipelines.document.checks.atom_feed import check_entry_content, check_feed_entries, link_rel
from pipelines.document.checks.atom_html import check_html_content, check_plain_value
from pipelines.document.checks.atom_iri import bad_iri_char, id_not_canonical
from pipelines.document.checks.context import Acc, Element, children, is_core, name_of, text_of

__all__ = ["ATOM_NS", "walk_atom"]

ATOM_NS = "http://www.w3.org/2005/Atom"
FEED, ENTRY, SOURCE = "feed", "entry", "source"


def _atom(names: str) -> frozenset[str]:
    return frozenset(f"atom:{name}" for name in names.split())


_FEED_DEFINED = _atom("author category contributor generator icon id link logo rights subtitle title updated entry")
_ENTRY_DEFINED = _atom("author category content contributor id link published rights source summary title updated")
_REQUIRED = ("atom:id", "atom:title", "atom:updated")
_FEED_SINGLE = _atom("generator icon id logo rights subtitle title updated")
_ENTRY_SINGLE = _atom("content id published rights source summary title updated")
_SOURCE_DEFINED = _atom("author category contributor generator icon id link logo rights subtitle title updated")
_PERSON_DEFINED = _atom("name uri email")
_PERSONS = frozenset(["atom:author", "atom:contributor"])
#: Text constructs: plain text or escaped HTML unless type="xhtml" (then one xhtml:div); atom:generator is text.
_TEXTS = _atom("title subtitle summary rights")
_DATES = frozenset(["atom:updated", "atom:published"])
_RFC3339_RE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.\d*)?(?:Z|[+-](\d\d):(\d\d))\Z")
_SCHEME_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:\S")
# RFC 4151 (tag:): an authority (a DNS name or an e-mail address), a date (year, month, day), the specific part
_URI_CHARS = r"[A-Za-z0-9;/?:@&=+$.\-_!~*'()%,]"
_TAG_RE = re.compile(
    rf"tag:(?:[a-z0-9._-]+@)?[a-z0-9.-]+,\d{{4}}(?:-\d\d(?:-\d\d)?)?:{_URI_CHARS}*(?:#{_URI_CHARS}*)?\Z"
)
# RFC 2141 (urn:): a namespace identifier (letter or digit, then up to 31 letters, digits, hyphens), a specific string
_URN_RE = re.compile(r"[Uu][Rr][Nn]:[A-Za-z0-9][A-Za-z0-9-]{1,31}:(?:[A-Za-z0-9()+,.:=@;$_!*'\-]|%[0-9A-Fa-f]{2})+\Z")


def id_problem(value: str) -> str | None:
    """Which rule an atom:id breaks: ``atom-id-not-iri`` (no scheme), ``atom-id-invalid`` (a bad tag: or urn:)."""
    if _SCHEME_RE.match(value) is None:
        return "atom-id-not-iri"
    scheme = value[: value.find(":")].lower()
    if (scheme == "tag" and _TAG_RE.match(value) is None) or (scheme == "urn" and _URN_RE.match(value) is None):
        return "atom-id-invalid"
    return None


def is_rfc3339(value: str) -> bool:
    """An RFC 3339 date-time with a real date, hour < 24, minute and second < 60 (60: a leap second)."""
    v = value.strip()
    m = _RFC3339_RE.match(v)
    if m is None:
        return False
    try:
        date(int(v[0:4]), int(v[5:7]), int(v[8:10]))
    except ValueError:
        return False
    if int(v[11:13]) > 23 or int(v[14:16]) > 59 or int(v[17:19]) > 60:
        return False
    return m.group(7) is None or (int(m.group(7)) < 24 and int(m.group(8)) < 60)


_SECTIONS = {
    FEED: (_FEED_DEFINED, _FEED_SINGLE),
    ENTRY: (_ENTRY_DEFINED, _ENTRY_SINGLE),
    SOURCE: (_SOURCE_DEFINED, _FEED_SINGLE),
}


_ADDRESS_RE = re.compile(r"[^\s@()<>\",;:\[\]]+@[^\s@()<>\",;:\[\]]+\.[^\s@()<>\",;:\[\]]+\Z")
XHTML_DIV = "{http://www.w3.org/1999/xhtml}div"
_MIME_TOKEN = r"[A-Za-z0-9!#$&.+^_\-]+"
_MIME_RE = re.compile(rf"{_MIME_TOKEN}/{_MIME_TOKEN}\s*(?:;.*)?\Z", re.S)
_TEXT_TYPES = frozenset(["text", "html", "xhtml"])


def _person(acc: Acc, el: Element, scope: str) -> None:
    """3.2 Person constructs: one atom:name (required), at most one atom:uri and atom:email, nothing else of Atom's."""
    seen: dict[str, int] = {}
    for child, name in children(el, acc):
        seen[name] = seen.get(name, 0) + 1
        if name.startswith("atom:") and name not in _PERSON_DEFINED:
            acc.add("atom-undefined-element", scope, name)
        elif name == "atom:email" and _ADDRESS_RE.match(value := text_of(child, acc).strip()) is None:
            acc.add("atom-email-invalid", scope, value or "(empty)")
        elif name == "atom:name":
            value = text_of(child, acc)
            if not value.strip():
                acc.add("atom-element-blank", scope, name)
            check_plain_value(acc, value, scope)
        elif name == "atom:uri":
            _whitespace(acc, text_of(child, acc), scope, name)
    if "atom:name" not in seen:
        acc.add("atom-missing-required", scope, "atom:name")
    for name, n in seen.items():
        if n > 1 and name in _PERSON_DEFINED:
            acc.add("atom-duplicate-element", scope, name, n - 1)


def _type_problem(el: Element, name: str) -> str | None:
    """Why the ``type`` of a text construct, a content or a link is not one (None when it is, or is absent)."""
    kind = el.get("type")
    if kind is None:
        return None
    kind = kind.strip()
    if name == "atom:link":
        return None if _MIME_RE.match(kind) else kind or "(empty)"
    if name == "atom:content":
        if el.get("src") is not None:  # out of line: a media type, not text / html / xhtml (4.1.3.2)
            return kind or "(empty)" if kind.lower() in _TEXT_TYPES or not _MIME_RE.match(kind) else None
        if kind.lower() in _TEXT_TYPES:
            return None
        # a media type, not a composite one (4.1.3.1)
        return None if _MIME_RE.match(kind) and not kind.lower().startswith("multipart/") else kind or "(empty)"
    return None if kind.lower() in _TEXT_TYPES else kind or "(empty)"


def _xhtml_div_missing(el: Element) -> bool:
    """type="xhtml": the content is one xhtml:div, with only white space around it (3.1.1.3)."""
    if (el.text or "").strip():
        return True
    kids = [child for child in el if isinstance(child.tag, str)]
    return len(kids) != 1 or kids[0].tag != XHTML_DIV or bool((kids[0].tail or "").strip())


def _text_children(acc: Acc, el: Element, scope: str, name: str) -> None:
    """A text construct or a content: its type, its children, what it holds (``atom_html``), blank or not."""
    if name == "atom:generator":
        _generator(acc, el, scope)
        return
    declared = el.get("type")
    if declared is not None and not declared.strip():
        acc.add("atom-attribute-blank", scope, f"{name} type")
    elif (problem := _type_problem(el, name)) is not None:
        acc.add("atom-type-invalid", scope, problem)
    kind = (declared or "text").strip().lower() or "text"
    if kind == "xhtml":
        if _xhtml_div_missing(el):
            acc.add("atom-xhtml-div-missing", scope, name)
    elif not (name == "atom:content" and (kind.endswith("+xml") or kind.endswith("/xml"))):
        _undefined_child(acc, el, name)
    _iri_attribute(acc, el, "src", scope)
    if el.get("src") is None:
        check_html_content(acc, el, scope, kind)
        if not el.text and not len(el):
            acc.add("atom-element-blank", scope, name)


XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"


def _iri_attribute(acc: Acc, el: Element, attribute: str, scope: str) -> None:
    """An attribute whose value is an IRI reference: no character an IRI may not hold (``atom_iri``)."""
    value = el.get(attribute)
    if value is not None and bad_iri_char(value) is not None:
        acc.add("atom-iri-invalid-char", scope, value)


def _undefined_child(acc: Acc, el: Element, name: str) -> None:
    for child in el:
        if isinstance(tag := child.tag, str):
            acc.add("atom-undefined-element", name[5:], name_of(tag))
            return


def _generator(acc: Acc, el: Element, scope: str) -> None:
    """An atom:generator: plain text, not blank."""
    _undefined_child(acc, el, "atom:generator")
    _iri_attribute(acc, el, "uri", scope)
    value = text_of(el, acc)
    if not value.strip():
        acc.add("atom-element-blank", scope, "atom:generator")
    check_plain_value(acc, value, scope)


def _value_rules(acc: Acc, child: Element, scope: str, name: str) -> None:
    """The rules on one child's value: an id's IRI, a date; white space around an id, a date, an icon, a logo."""
    if name == "atom:id":
        raw = text_of(child, acc)
        value = raw.strip()
        if (rule := id_problem(value)) is not None:
            acc.add(rule, scope, value or "(empty)")
        elif value[:4].lower() not in ("tag:", "urn:") and bad_iri_char(value) is not None:
            acc.add("atom-iri-invalid-char", scope, value)
        elif id_not_canonical(raw):
            acc.add("atom-id-not-canonical", scope, value)
        if not value:
            acc.add("atom-element-blank", scope, name)
        _whitespace(acc, raw, scope, name)
    elif name in _DATES:
        value = text_of(child, acc)
        if not is_rfc3339(value):
            acc.add("atom-date-invalid", scope, value.strip() or "(empty)")
        _whitespace(acc, value, scope, name)
    elif name in _URI_VALUES:
        _whitespace(acc, text_of(child, acc), scope, name)


#: The elements whose value is an IRI or a date, written without white space around it.
_URI_VALUES = frozenset(["atom:icon", "atom:logo"])


def _whitespace(acc: Acc, value: str, scope: str, name: str) -> None:
    if value != value.strip():
        acc.add("atom-value-whitespace", scope, name)


def _link(acc: Acc, link: Element, scope: str, alternates: set[tuple[str | None, str | None]]) -> None:
    """An atom:link: its href, its type, and one alternate per type and hreflang."""
    if link.get("href") is None:
        acc.add("atom-missing-attribute", scope, "atom:link href")
    _iri_attribute(acc, link, "href", scope)
    if (problem := _type_problem(link, "atom:link")) is not None:
        acc.add("atom-type-invalid", scope, problem)
    for attribute in ("rel", "title"):
        if (value := link.get(attribute)) is not None and not value.strip():
            acc.add("atom-attribute-blank", scope, f"atom:link {attribute}")
    if (title := link.get("title")) is not None:
        check_plain_value(acc, title, scope)
    if link_rel(link) == "alternate":
        key = (link.get("type"), link.get("hreflang"))
        if key in alternates:
            acc.add("atom-alternate-duplicate", scope, link.get("href"))
        alternates.add(key)


def _scope(acc: Acc, el: Element, scope: str, feed_has_author: bool) -> None:
    """The rules of one feed, entry or source: each child's, then what the scope as a whole must hold."""
    seen: dict[str, int] = {}
    entries: list[Element] = []
    alternates: set[tuple[str | None, str | None]] = set()
    _iri_attribute(acc, el, XML_BASE, scope)
    for child, name in children(el, acc):
        seen[name] = seen.get(name, 0) + 1
        if name == "atom:entry" and name in _SECTIONS[scope][0]:
            entries.append(child)
        else:
            _child(acc, child, name, scope, alternates)
    _whole_scope(acc, el, scope, seen, feed_has_author)
    if scope == ENTRY:
        check_entry_content(acc, el)
    elif scope == FEED:
        check_feed_entries(acc, el, entries)
    has_author = "atom:author" in seen
    for entry in entries:
        try:
            _scope(acc, entry, ENTRY, has_author)
        except Exception as exc:  # the boundary, as in Acc.run: recorded, the other entries go on
            acc.fail("walk:entry", exc)


def _child(acc: Acc, child: Element, name: str, scope: str, alternates: set[tuple[str | None, str | None]]) -> None:
    """The rules of one child of a feed, entry or source (an entry's own are :func:`_scope`'s)."""
    if not name.startswith("atom:"):
        if is_core(name):  # in no namespace: not Atom's, and no other vocabulary's either
            acc.add("atom-undefined-element", scope, name)
        return
    if name not in _SECTIONS[scope][0]:
        acc.add("atom-undefined-element", scope, name)
    elif name in _PERSONS:
        _person(acc, child, name[5:])
    elif name in _TEXTS or name in ("atom:content", "atom:generator"):
        _text_children(acc, child, scope, name)
    elif name == "atom:source":
        _scope(acc, child, SOURCE, True)
    elif name == "atom:link":
        _link(acc, child, scope, alternates)
    elif name == "atom:category":
        _category(acc, child, scope)
    else:
        _value_rules(acc, child, scope, name)


def _category(acc: Acc, el: Element, scope: str) -> None:
    """An atom:category: a term (not blank), a label that is plain text."""
    term = el.get("term")
    if term is None:
        acc.add("atom-missing-attribute", scope, "atom:category term")
    elif not term.strip():
        acc.add("atom-element-blank", scope, "atom:category term")
    if (label := el.get("label")) is not None:
        check_plain_value(acc, label, scope)
    _iri_attribute(acc, el, "scheme", scope)


def _whole_scope(acc: Acc, el: Element, scope: str, seen: dict[str, int], feed_has_author: bool) -> None:
    """Required elements missing (in one example, "atom:id, atom:author", counted each) and single ones repeated."""
    missing = [name for name in _REQUIRED if name not in seen] if scope != SOURCE else []
    if scope == ENTRY and "atom:author" not in seen and not feed_has_author and not _source_has_author(el, acc):
        missing.append("atom:author")
    if missing:
        acc.add("atom-missing-required", scope, ", ".join(missing), len(missing))
    single = _SECTIONS[scope][1]
    for name, n in seen.items():
        if n > 1 and name in single:
            acc.add("atom-duplicate-element", scope, name, n - 1)


def _source_has_author(entry: Element, acc: Acc) -> bool:
    for child, name in children(entry, acc):
        if name == "atom:source":
            return any(n == "atom:author" for _, n in children(child, acc))
    return False


def walk_atom(acc: Acc, root: Element) -> None:
    """The Atom rules on a ``feed`` root (an ``entry`` document gets them as an entry of no feed)."""
    scope = ENTRY if root.tag == f"{{{ATOM_NS}}}entry" else FEED
    _scope(acc, root, scope, False)
