"""Parse a feed document and tally the elements it uses, in one pass.

:func:`parse_feed` takes the bytes of a response and returns a
:class:`ParsedFeed`: the format and version recognised from the content
(never from Content-Type), channel fields, the items, and ``usage``: how often
each element and attribute occurs at each level. :func:`sniff` tells a feed
from an OPML list or an HTML page by looking at the first bytes only.

Decisions, written down once:

Formats
    Recognised by the root element's local name: ``rss`` (version from its
    ``version`` attribute as written, ``''`` when absent; a namespaced
    ``<rss>`` writes its namespace bare), ``rdf:RDF`` (``1.0`` or ``0.90``
    from the RSS namespace in use, None when neither), ``feed`` (``1.0`` in
    the Atom namespace, ``0.3`` in Atom 0.3's; without a namespace or in a
    pre-Atom draft namespace the version is None). Anything else, CDF's
    ``<CHANNEL>`` included, is ``unknown`` with the reason in ``error``.

XML safety
    One lxml parser with ``resolve_entities=False, no_network=True,
    load_dtd=False, huge_tree=False``: no external entity is ever read and
    internal entities are not expanded (libxml2 also refuses a billion
    laughs outright, so such a document comes back not well-formed). An
    undeclared entity such as ``&nbsp;`` is an error only when there is no
    external DTD (XML 1.0, WFC: Entity Declared); with RSS 0.91's Netscape
    doctype it is not, and text reads such entities from the HTML table.
    Comments and processing instructions are dropped by the parser. The
    document is parsed strictly first; if that fails it is parsed again with
    ``recover=True``, ``well_formed`` is False and ``error`` is the first
    error, and the recovered items and tally are still returned.

Encodings
    A byte order mark wins. Otherwise the encoding declared in the XML
    declaration is used; the HTTP ``charset`` is used when the document
    declares none (RFC 7303 would let the header win over the declaration,
    but server-wide default charsets are a common misconfiguration, while the
    declaration is written by the program that wrote the bytes). When decoding
    with the first choice fails and the other source names a different
    charset, the document is parsed strictly again with that one; if it then
    parses, it is well-formed and ``encoding`` names the charset that worked.
    ``encoding`` is the lower-cased name actually used (``utf-16le`` for a
    UTF-16 byte order mark...).

Element names
    :func:`schemas.namespaces.element_name`, in every format: an Atom feed's
    own elements carry the fixed prefix like every namespaced element, so
    ``atom:title``, ``atom:entry``, ``atom:link@rel=alternate``, scopes
    ``atom:author`` and ``item/atom:author`` (``atom03:`` for Atom 0.3, and
    its draft-08 alias), the same names as Atom elements inside RSS; an
    element in no namespace inside an Atom feed stays bare (``title``), so
    the two never merge. Written bare are only what has no fixed prefix:
    RSS elements (no namespace, or RSS 1.0 / 0.90's, or a namespaced
    ``<rss>``'s own), and the elements of an Atom feed without a namespace
    or in a pre-Atom draft namespace. Attributes are named the same way and
    written ``element@attribute``. The ``rel`` of a link element (local name
    ``link``, any namespace) is written with its value, one entry per
    distinct value, as written but stripped: ``atom:link@rel=self``,
    ``atom:link@rel=alternate``; a link without ``rel`` records no rel entry
    at all (its ``href`` is still tallied), so nothing is guessed. Namespace
    declarations are not attributes and not tallied.

Scopes of the tally
    ``channel``: the direct children of the RSS ``channel``, the RSS 1.0 /
    0.90 ``channel`` or the Atom ``feed`` (with their attributes; the
    channel's or feed's own attributes are not tallied).
    In RDF, ``image``, ``textinput`` and ``item`` are written beside the
    channel, under ``rdf:RDF``. Such a sibling is added at channel scope,
    with its count and attributes, only when the channel has no child of the
    same name (RSS 0.90, where the channel does not reference them), so that
    presence is recorded once: RSS 1.0's ``<image rdf:resource>`` in the
    channel and the ``<image rdf:about>`` beside it count ``image: 1``. The
    root-level ``item`` elements are the items and never channel elements
    (so an RSS 1.0 feed has no ``item`` at channel scope; an item written
    inside the channel is one, and counted as the channel's child). The
    children of siblings are tallied in their own scope (``image``,
    ``textinput``) whether or not the sibling itself is counted.
    In RSS (``<rss>``), elements written beside the channel are misplaced
    channel elements: they are counted at channel scope as written, items
    included (those are parsed as items too, so the channel-scope ``item``
    count stays the number of items).
    ``item``: the direct children of items and entries; ``count`` is the
    total over all items and ``items_with`` the number of items having the
    element (or attribute). Deeper levels are scoped by the path of element
    names below the channel or item: ``image``, ``skipHours``, ``author``,
    ``item/media:group/media:content``. Attributes are tallied in the scope of
    their element (``enclosure@length`` at scope ``item``, ``cloud@domain``
    at scope ``channel``). The contents of XHTML are not walked: an element
    with ``type="xhtml"`` or whose first child is in the XHTML namespace is
    tallied itself, its children are not.

``defined``
    False for a bare name the format's own specification does not define at
    that scope (the union of RSS 0.91, 0.92 and 2.0 for ``rss``; RSS 1.0
    and 0.90 for ``rdf``; Atom 1.0 or 0.3, under their prefixes when they
    carry one: ``atom:title``); False for an element in no namespace inside
    a namespaced Atom feed; True for namespaced extension elements and
    attributes (``dc:creator``, ``xml:base``, ``atom:link`` in RSS).

Items
    ``guid`` is the RSS guid, the Atom id or the RSS 1.0 ``rdf:about``;
    ``guid_is_permalink`` is only set for an RSS guid (True unless
    ``isPermaLink`` is "false"). Text values are stripped and ``None`` when
    missing or blank. Links are resolved against ``xml:base`` and the feed
    URL. ``categories`` are RSS category texts and Atom category terms.
"""

from __future__ import annotations

import codecs
import re
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from html import unescape
from html.entities import html5
from typing import Any
from urllib.parse import urljoin

from lxml import etree

from pipelines.document.dates import parse_date
from pipelines.document.xmlrefs import fix_surrogate_refs, safe_parser
from schemas.namespaces import ATOM_NS, RDF_NS, URI_TO_PREFIX, element_name

__all__ = ["ParsedFeed", "ParsedItem", "TreeNotes", "Usage", "parse_feed", "sniff"]


@dataclass(slots=True)
class ParsedItem:
    position: int
    guid: str | None
    guid_is_permalink: bool | None
    link: str | None
    title: str | None
    author: str | None
    categories: list[str]
    enclosure_url: str | None
    enclosure_type: str | None
    enclosure_length: int | None
    pub_date_raw: str | None
    pub_date: datetime | None
    date_form: str | None


@dataclass(slots=True)
class Usage:
    scope: str
    element: str
    count: int
    items_with: int | None
    defined: bool


@dataclass(slots=True)
class ParsedFeed:
    format: str  # 'rss' | 'rdf' | 'atom' | 'unknown'
    version: str | None
    well_formed: bool
    error: str | None
    encoding: str | None
    title: str | None
    link: str | None
    language: str | None
    self_url: str | None
    items: list[ParsedItem]
    usage: list[Usage]
    root: Any | None
    #: Only from ``parse_feed(..., with_notes=True)``: pass it to ``check_feed`` with ``root``.
    notes: TreeNotes | None = None


# --------------------------------------------------------------------------- constants

_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_RDF_ABOUT = f"{{{RDF_NS}}}about"
_XHTML_NS = "{http://www.w3.org/1999/xhtml}"
_ATOM03_URIS = frozenset(uri for uri, prefix in URI_TO_PREFIX.items() if prefix == "atom03")
_ENTITY = etree.Entity

_MAX_INT64 = 2**63 - 1


def _names(*groups: str) -> frozenset[str]:
    return frozenset(n for g in groups for n in g.split())


_RSS_DEFINED: dict[str, frozenset[str]] = {
    "channel": _names(
        "title link description language copyright managingEditor webMaster pubDate lastBuildDate category",
        "generator docs cloud ttl image rating textInput textinput skipHours skipDays item",
        "cloud@domain cloud@port cloud@path cloud@registerProcedure cloud@protocol category@domain",
    ),
    "item": _names(
        "title link description author category comments enclosure guid pubDate source",
        "enclosure@url enclosure@length enclosure@type guid@isPermaLink category@domain source@url",
    ),
    "image": _names("url title link width height description"),
    "textInput": _names("title description name link"),
    "textinput": _names("title description name link"),
    "skipHours": _names("hour"),
    "skipDays": _names("day"),
}
_RDF_DEFINED: dict[str, frozenset[str]] = {
    "channel": _names("title link description image items textinput item"),
    "item": _names("title link description"),
    "image": _names("title url link"),
    "textinput": _names("title description name link"),
}
_ATOM_PERSON = _names("name uri email")
_ATOM_FEED_META = _names(
    "author category contributor generator icon id link logo rights subtitle title updated",
    "link@href link@rel link@type link@hreflang link@title link@length category@term category@scheme category@label",
    "generator@uri generator@version title@type subtitle@type rights@type",
)
_ATOM_DEFINED: dict[str, frozenset[str]] = {
    "channel": _ATOM_FEED_META | {"entry"},
    "item": _names(
        "author category content contributor id link published rights source summary title updated",
        "link@href link@rel link@type link@hreflang link@title link@length category@term category@scheme category@label",
        "content@type content@src title@type summary@type rights@type",
    ),
    "author": _ATOM_PERSON,
    "contributor": _ATOM_PERSON,
    "item/author": _ATOM_PERSON,
    "item/contributor": _ATOM_PERSON,
    "item/source": _ATOM_FEED_META,
    "item/source/author": _ATOM_PERSON,
    "item/source/contributor": _ATOM_PERSON,
}
_ATOM03_PERSON = _names("name url email")
_ATOM03_DEFINED: dict[str, frozenset[str]] = {
    "channel": _names(
        "title link author contributor tagline id generator copyright info modified entry",
        "link@rel link@type link@href link@title generator@url generator@version",
        "title@type title@mode tagline@type tagline@mode copyright@type copyright@mode info@type info@mode",
    ),
    "item": _names(
        "title link author contributor id modified issued created summary content",
        "link@rel link@type link@href link@title title@type title@mode summary@type summary@mode",
        "content@type content@mode",
    ),
    "author": _ATOM03_PERSON,
    "contributor": _ATOM03_PERSON,
    "item/author": _ATOM03_PERSON,
    "item/contributor": _ATOM03_PERSON,
}


def _prefix_table(table: dict[str, frozenset[str]], prefix: str) -> dict[str, frozenset[str]]:
    """The same definitions with the format's elements written ``prefix:local`` (scopes too)."""

    def element(name: str) -> str:
        return prefix + name

    def scope(path: str) -> str:
        return "/".join(p if p in ("channel", "item") else element(p) for p in path.split("/"))

    return {scope(k): frozenset(element(n) for n in names) for k, names in table.items()}


#: family -> scope -> names, for documents that write the format's elements
#: bare (RSS, RDF, and Atom without a namespace or in an unknown one) ...
_DEFINED: dict[str, dict[str, frozenset[str]]] = {
    "rss": _RSS_DEFINED,
    "rdf": _RDF_DEFINED,
    "atom": _ATOM_DEFINED,
    "atom03": _ATOM03_DEFINED,
}
#: ... and for Atom documents in a namespace with a fixed prefix (atom:, atom03:).
_DEFINED_PREFIXED: dict[str, dict[str, frozenset[str]]] = {
    "atom": _prefix_table(_ATOM_DEFINED, "atom:"),
    "atom03": _prefix_table(_ATOM03_DEFINED, "atom03:"),
}

#: Channel and item children whose values are read (everything else is only
#: tallied): output name -> the field it feeds, per own prefix ('' = bare).
_CHANNEL_FIELDS_RSS: dict[str, str] = {
    n: n for n in _names("title link language dc:language item atom:link atom03:link")
}
_ITEM_FIELDS_RSS: dict[str, str] = {
    n: n
    for n in _names(
        "title link guid id author dc:creator category enclosure pubDate dc:date",
        "published updated issued modified created",
    )
}


def _atom_fields(prefix: str) -> tuple[dict[str, str], dict[str, str]]:
    channel = {"atom:link": "atom:link", "atom03:link": "atom03:link", "dc:language": "dc:language"}
    channel |= {prefix + n: n for n in _names("title link language")}
    channel[prefix + "entry"] = "item"
    item = {"dc:creator": "dc:creator", "dc:date": "dc:date"}
    item |= {prefix + n: n for n in _names("title link id author category published updated issued modified created")}
    return channel, item


_ATOM_FIELDS: dict[str, tuple[dict[str, str], dict[str, str]]] = {p: _atom_fields(p) for p in ("", "atom:", "atom03:")}
_DATE_ORDER = {
    "rss": ("pubDate", "dc:date"),
    "rdf": ("pubDate", "dc:date"),
    "atom": ("published", "updated", "dc:date"),
    "atom03": ("issued", "modified", "created", "published", "updated", "dc:date"),
}

# --------------------------------------------------------------------------- names

_NAME_CACHE_MAX = 20_000
#: One bounded tag -> name cache per naming mode ("" for plain element_name,
#: or the namespace written bare: a namespaced <rss>, a draft-Atom feed).
_NAME_CACHES: dict[str, dict[str, str]] = {"": {}}
_NAME_CACHE_MODES = 8


def _name_of(tag: str, mode: str, cache: dict[str, str]) -> str:
    """Name a tag (see the module docstring); ``mode`` is the namespace written bare, or ''."""
    name = tag[len(mode) + 2 :] if mode and tag.startswith("{" + mode + "}") else element_name(tag)
    if len(cache) >= _NAME_CACHE_MAX:
        cache.clear()
    cache[tag] = name
    return name


# --------------------------------------------------------------------------- XML parsing

_local = threading.local()


def _parser(encoding: str | None, recover: bool) -> etree.XMLParser:
    """A parser per thread (lxml parsers are not thread-safe), per forced encoding."""
    cache: dict[tuple[str | None, bool], etree.XMLParser] | None = getattr(_local, "parsers", None)
    if cache is None:
        cache = _local.parsers = {}
    key = (encoding, recover)
    parser = cache.get(key)
    if parser is None:
        parser = safe_parser(encoding=encoding, recover=recover)
        if len(cache) < 16:
            cache[key] = parser
    return parser


_DECL_ENCODING = re.compile(rb"""\s*<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z][\w.:+-]{0,40})["']""")
_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^"';,\s]+)""", re.IGNORECASE)
_ERROR_TAIL = re.compile(r"\s*\(<string>, line \d+\)$")
_ENCODING_ERROR = re.compile(r"encoding|UTF-8|UTF-16|bytes|Unsupported|Document labelled", re.IGNORECASE)

_WIDE_ENCODINGS = ("utf-16", "utf16", "utf-32", "utf32", "ucs-2", "ucs2", "ucs-4", "ucs4", "iso-10646-ucs")
_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32le"),
    (b"\x00\x00\xfe\xff", "utf-32be"),
    (b"\xff\xfe", "utf-16le"),
    (b"\xfe\xff", "utf-16be"),
)
_PATTERNS: tuple[tuple[bytes, str], ...] = (
    (b"<\x00\x00\x00", "utf-32le"),
    (b"\x00\x00\x00<", "utf-32be"),
    (b"<\x00?\x00", "utf-16le"),
    (b"\x00<\x00?", "utf-16be"),
)


def _document_encoding(body: bytes) -> tuple[str, str]:
    """(encoding, how): how is 'bom', 'pattern', 'declared' or 'default'."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name, "bom"
    head = body[:4]
    for pattern, name in _PATTERNS:
        if head == pattern:
            return name, "pattern"
    m = _DECL_ENCODING.match(body)
    if m is not None:
        return m.group(1).decode("ascii").lower(), "declared"
    return "utf-8", "default"


def _header_charset(headers: Mapping[str, str] | None) -> str | None:
    if not headers:
        return None
    try:
        for key, value in headers.items():
            k = key.decode("latin-1") if isinstance(key, bytes) else str(key)
            if k.lower() != "content-type":
                continue
            if isinstance(value, list | tuple):
                value = value[0] if value else ""
            v = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            m = _CHARSET.search(v)
            return m.group(1).lower() if m else None
    except Exception:
        return None
    return None


def _same_charset(a: str, b: str) -> bool:
    try:
        return codecs.lookup(a).name == codecs.lookup(b).name
    except LookupError:
        return a == b


def _one_line(exc: BaseException) -> str:
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return _ERROR_TAIL.sub("", msg)


def _parse_xml(
    body: bytes, header_charset: str | None, notes: TreeNotes | None = None
) -> tuple[Any, bool, str | None, str | None]:
    """(root or None, well_formed, first error, encoding used).

    With ``notes``, large CDATA sections may be lifted (the texts of the tree
    then need ``notes.restore``); the results are the same.
    """
    doc_enc, how = _document_encoding(body)
    if (
        notes is not None
        and doc_enc in ("utf-8", "utf8")
        and (how != "default" or not header_charset or _same_charset(header_charset, "utf-8"))
        and _lift_cdata(body, notes)
    ):
        try:
            root = etree.fromstring(notes.body, _parser(None, False))
        except Exception:
            root = None  # the plain path below parses the document itself and reports the error
        notes.body = b""
        if root is not None and (root.getroottree().docinfo.encoding or "").lower() in ("utf-8", "utf8"):
            return root, True, None, doc_enc
        notes._spans = []  # not well-formed, or not read as UTF-8 after all: parse the document itself
    # Candidates: (encoding forced on lxml or None to let it read the document, name to report).
    candidates: list[tuple[str | None, str]] = []
    if how in ("bom", "pattern"):
        candidates.append((None, doc_enc))
    elif how == "declared":
        candidates.append((None, doc_enc))
        if header_charset and not _same_charset(header_charset, doc_enc):
            candidates.append((header_charset, header_charset))
    else:
        if header_charset and not _same_charset(header_charset, "utf-8"):
            candidates.append((header_charset, header_charset))
        candidates.append((None, "utf-8"))

    note: str | None = None  # a problem found before parsing: the document is not well-formed
    if how == "declared" and doc_enc.startswith(_WIDE_ENCODINGS):
        # The declaration was read as single bytes, so it cannot be right: a
        # real UTF-16/32 document starts with a BOM or a 0x00 byte.
        cs = header_charset if header_charset and not header_charset.startswith(_WIDE_ENCODINGS) else "utf-8"
        candidates = [(cs, cs)]
        note = f"encoding declared as {doc_enc} but the document is 8-bit; read as {cs}"
    first_error = note
    first: tuple[str | None, str] | None = None
    for forced, reported in candidates:
        try:
            parser = _parser(forced, False)
        except LookupError:  # a charset lxml does not know
            continue
        if first is None:
            first = (forced, reported)
        try:
            return etree.fromstring(body, parser), note is None, note, reported
        except etree.XMLSyntaxError as exc:
            message = _one_line(exc)
            if first_error is None:
                first_error = message
            if not _ENCODING_ERROR.search(message):
                break  # not an encoding problem: another charset will not help
        except Exception as exc:  # e.g. ValueError on odd input: report it, then recover
            if first_error is None:
                first_error = _one_line(exc)
            break
    if first is None:
        first = (None, "utf-8")
        first_error = first_error or f"unknown encoding {candidates[0][1]!r}"
    forced, reported = first
    if forced is None and how == "declared":
        try:
            codecs.lookup(doc_enc)
        except LookupError:
            reported = "utf-8"  # libxml2 falls back to UTF-8 for an encoding it cannot decode
    try:
        # Surrogate references (&#55357;&#56832;) would survive recovery as invalid UTF-8 and make
        # every later text read raise: rewrite them first (pipelines/document/xmlrefs.py).
        root = etree.fromstring(fix_surrogate_refs(body), _parser(forced, True))
    except Exception:
        root = None
    return root, False, first_error or "not well-formed", reported


# --------------------------------------------------------------------------- lifting large CDATA

#: libxml2 reads a CDATA section one character at a time, several times slower
#: than it reads other text, and feeds put whole articles in CDATA. Sections at
#: least this long are cut out of the bytes before parsing (see _lift_cdata).
_LIFT_MIN_BYTES = 1024
#: Above this size a document is parsed as it is: no text node of a smaller
#: one can reach libxml2's 10 MB limit, so lifting never hides that error.
_LIFT_MAX_DOCUMENT = 9_000_000
_LIFT_MARK = "\ue000"  # a private-use character, then the per-document key
_LIFT_END = "\ue001"
#: Bytes that XML forbids anywhere, CDATA included (tab, LF and CR are allowed).
_XML_FORBIDDEN_BYTES = bytes(range(9)) + b"\x0b\x0c" + bytes(range(14, 32))
_NOT_NEWLINE_OR_FORBIDDEN = bytes(b for b in range(256) if b != 10 and b not in _XML_FORBIDDEN_BYTES)


class TreeNotes:
    """What ``parse_feed(..., with_notes=True)`` knows about its tree that ``check_feed`` can reuse.

    ``restore``: large CDATA sections are cut out of the document before
    parsing (see ``_lift_cdata``). In the tree each one's text is a
    placeholder: a private-use mark, a key random to this document (so no
    document can forge one), the section's number, an end mark, then as many
    newlines as the section had, so that every element keeps its
    ``sourceline``. :meth:`restore` turns a text read from the tree back into
    the text libxml2 would have produced from the document.

    ``children``: for the channel and each item of an RSS document whose
    elements have no namespace, its element children with their names
    (:func:`schemas.namespaces.element_name`), in document order.
    """

    __slots__ = ("_spans", "body", "children", "key", "source")

    #: Every placeholder starts with this character: a text without it needs no :meth:`restore`.
    MARK = _LIFT_MARK

    def __init__(self) -> None:
        self.source = b""  # the document as fetched
        self.key = ""
        self.body = b""  # the document with placeholders, until parsed
        self._spans: list[tuple[int, int, int]] = []  # (start, end, newlines) of each section in source
        self.children: dict[Any, list[tuple[Any, str]]] = {}

    def restore(self, text: str) -> str:
        """``text`` with every placeholder replaced by its section's text."""
        if not self._spans:
            return text
        key = self.key
        i = text.find(key)
        if i < 0:
            return text
        parts: list[str] = []
        pos = 0
        spans = self._spans
        while i >= 0:
            j = text.find(_LIFT_END, i)
            start, end, newlines = spans[int(text[i + len(key) : j])]
            parts.append(text[pos:i])
            section = self.source[start:end].decode("utf-8")
            if "\r" in section:  # XML end-of-line handling, as libxml2 does it
                section = section.replace("\r\n", "\n").replace("\r", "\n")
            parts.append(section)
            pos = j + 1 + newlines
            i = text.find(key, pos)
        parts.append(text[pos:])
        return "".join(parts)


def _lift_cdata(body: bytes, notes: TreeNotes) -> bool:
    """Cut the large CDATA sections out of a UTF-8 document into ``notes``; False when there are none.

    Only sections libxml2 would read without error are lifted (valid UTF-8, no
    character XML forbids), so that the document parses if and only if the
    original does; comments and processing instructions are skipped, since a
    ``<![CDATA[`` in them is not a section, and a document type declaration with
    an internal subset stops the search. Every ``<!`` outside those is a CDATA
    section, a comment or a document type declaration in a well-formed
    document; anything else stops the search too (the document is then not
    well-formed, and its error is found by parsing it as it is).
    """
    find = body.find
    if len(body) > _LIFT_MAX_DOCUMENT or find(b"<![CDATA[") < 0:
        return False
    key = _LIFT_MARK + secrets.token_hex(8)
    spans: list[tuple[int, int, int]] = []
    out: list[bytes] = []
    copied = 0  # body[:copied] is in out
    pos = 0
    # Every "<!" and "<?" is found through its second byte: "!" and "?" are rare
    # in markup, and looking for one byte is many times faster than for two.
    bang = find(b"!")
    quest = find(b"?")
    while bang >= 0 or quest >= 0:
        if quest < 0 or 0 <= bang < quest:
            at = bang
            bang = find(b"!", at + 1)
        else:
            at = quest
            quest = find(b"?", at + 1)
        if body[at - 1 : at] != b"<":
            continue
        lt = at - 1
        if body[at] == 63:  # "<?": a processing instruction (or the XML declaration)
            end = find(b"?>", lt + 2)
            if end < 0:
                break
            pos = end + 2
        elif body.startswith(b"[CDATA[", lt + 2):
            start = lt + 9
            end = start
            while True:  # the first "]]>"; searching for "]" alone is much faster
                end = find(b"]", end)
                if end < 0 or body.startswith(b"]]>", end):
                    break
                end += 1
            if end < 0:
                break
            if end - start >= _LIFT_MIN_BYTES:
                section = body[start:end]
                # one pass: what is left is the newlines, and any byte XML forbids
                newlines = len(kept := section.translate(None, _NOT_NEWLINE_OR_FORBIDDEN))
                if kept.count(b"\n") == newlines and (section.isascii() or _valid_utf8_chars(section)):
                    out.append(body[copied:start])
                    out.append(f"{key}{len(spans)}{_LIFT_END}".encode() + b"\n" * newlines)
                    spans.append((start, end, newlines))
                    copied = end
            pos = end + 3
        elif body.startswith(b"--", lt + 2):
            end = find(b"-->", lt + 4)
            if end < 0:
                break
            pos = end + 3
        elif body.startswith(b"DOCTYPE", lt + 2):
            end = find(b">", lt)
            decl = body[lt:end]
            if end < 0 or b"[" in decl or decl.count(b'"') % 2 or decl.count(b"'") % 2:
                break  # an internal subset, or a quoted ">": not worth reading
            pos = end + 1
        else:
            break
        if 0 <= bang < pos:
            bang = find(b"!", pos)
        if 0 <= quest < pos:
            quest = find(b"?", pos)
    if not spans:
        return False
    out.append(body[copied:])
    notes.source, notes.key, notes.body, notes._spans = body, key, b"".join(out), spans
    return True


def _valid_utf8_chars(section: bytes) -> bool:
    """Whether non-ASCII bytes are UTF-8 that libxml2 accepts (no U+FFFE / U+FFFF)."""
    try:
        text = section.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return "\ufffe" not in text and "\uffff" not in text


# --------------------------------------------------------------------------- text helpers


def _text(el: Any, notes: TreeNotes | None = None) -> str | None:
    """The text of an element, children included, stripped; None when blank."""
    if len(el):
        parts: list[str] = []
        _gather(el, parts)
        t = "".join(parts)
    else:
        t = el.text
        if t is None:
            return None
    if notes is not None and _LIFT_MARK in t:
        t = notes.restore(t)
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


def _atom_text(el: Any, notes: TreeNotes | None) -> str | None:
    """An Atom text construct as plain text: markup of type="html" removed."""
    t = _text(el, notes)
    if t is not None and el.get("type") == "html":
        t = unescape(_TAGS.sub("", t)).strip() or None
    return t


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
    xb = el.get(_XML_BASE)
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


def _walk(el: Any, scope: str, acc: dict[str, dict[str, int]], names: dict[str, str], mode: str) -> None:
    """Tally the children of ``el`` (and their attributes) at ``scope``, then recurse."""
    counts = acc.get(scope)
    if counts is None:
        counts = acc[scope] = {}
    for ch in el:
        tag = ch.tag
        if tag.__class__ is not str:
            continue
        name = names.get(tag) or _name_of(tag, mode, names)
        counts[name] = counts.get(name, 0) + 1
        keys = ch.keys()
        if keys:
            _tally_attrs(ch, name, keys, counts, None, names, mode)
        if len(ch) and not _is_xhtml(ch):
            _walk(ch, f"{scope}/{name}", acc, names, mode)


def _tally_attrs(
    el: Any,
    name: str,
    keys: list[str],
    counts: dict[str, int],
    seen: set[str] | None,
    names: dict[str, str],
    mode: str,
) -> None:
    is_link = name == "link" or name.endswith(":link")
    for key in keys:
        if key[0] == "{":
            key = names.get(key) or _name_of(key, mode, names)
        elif key == "rel" and is_link:
            key = "rel=" + el.get("rel").strip()
        an = f"{name}@{key}"
        counts[an] = counts.get(an, 0) + 1
        if seen is not None:
            seen.add(an)


def _defined(table: dict[str, frozenset[str]], own: str, scope: str, name: str) -> bool:
    """See ``defined`` in the module docstring; ``own`` is the format's prefix ('atom:') or ''."""
    element, _, attr = name.partition("@")
    if ":" in element or element[:1] == "{":
        if not own or not element.startswith(own):
            return True
    elif own:
        return False  # an element in no namespace inside a namespaced Atom feed
    if attr:
        attr = attr.partition("=")[0]
        if ":" in attr or attr[:1] == "{":
            return True
        name = f"{element}@{attr}"
    allowed = table.get(scope)
    return allowed is not None and name in allowed


# --------------------------------------------------------------------------- parse_feed


_RDF_ROOT = f"{{{RDF_NS}}}RDF"
_RSS10_NS = "http://purl.org/rss/1.0/"
_RSS090_NS = "http://my.netscape.com/rdf/simple/0.9/"


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


def _unknown(
    error: str | None, well_formed: bool, encoding: str | None, root: Any, notes: TreeNotes | None = None
) -> ParsedFeed:
    return ParsedFeed("unknown", None, well_formed, error, encoding, None, None, None, None, [], [], root, notes)


def parse_feed(
    body: bytes, url: str = "", headers: Mapping[str, str] | None = None, *, with_notes: bool = False
) -> ParsedFeed:
    """Parse a feed document and tally its elements. Never raises.

    ``with_notes=True`` is for a caller that passes ``root`` on to
    :func:`pipelines.document.checks.check_feed` and nothing else: the results are the
    same, but the document is parsed faster by cutting large CDATA sections
    out first, so the texts of ``root`` hold placeholders, and ``notes``
    (a :class:`TreeNotes`) restores them and keeps what the checks can reuse;
    give it to ``check_feed`` with the root.
    """
    try:
        return _parse_feed(body, url, headers, with_notes)
    except Exception as exc:  # a bug, not bad input: still honour the contract, and say so
        return _unknown(f"internal error: {type(exc).__name__}: {_one_line(exc)}", False, None, None)


def _parse_feed(body: bytes, url: str, headers: Mapping[str, str] | None, with_notes: bool) -> ParsedFeed:
    if not isinstance(body, bytes):
        body = bytes(body)
    notes = TreeNotes() if with_notes else None
    root, well_formed, error, encoding = _parse_xml(body, _header_charset(headers), notes)
    if root is None:
        return _unknown(error or "no root element", well_formed, encoding, None)
    tag = root.tag
    if tag.__class__ is not str:
        return _unknown(error or "no root element", well_formed, encoding, root, notes)
    root_name = element_name(tag)

    # --- recognise the format from the root element, by its local name
    ns, _, local = tag[1:].partition("}") if tag[:1] == "{" else ("", "", tag)
    channel = None
    if local == "rss":
        fmt, family, mode = "rss", "rss", ns  # a namespaced <rss> writes its own namespace bare
        version: str | None = (root.get("version") or "").strip()
    elif tag == _RDF_ROOT:
        fmt, family, mode = "rdf", "rdf", ""
        version = _rdf_version(root)
    elif local == "feed":
        fmt, family, mode = "atom", "atom", ns
        if ns == ATOM_NS:
            version = "1.0"
        elif ns in _ATOM03_URIS or (root.get("version") or "").strip() == "0.3":
            family, version = "atom03", "0.3"
        else:  # no namespace, or a pre-Atom draft namespace (Echo, Pie...)
            version = None
        if ns == ATOM_NS or ns in _ATOM03_URIS:
            mode = ""  # element_name writes them atom:title, atom03:title
    else:
        return _unknown(error or f"root element <{root_name}> is not a feed", well_formed, encoding, root, notes)

    names = _NAME_CACHES.get(mode)
    if names is None:
        names = _NAME_CACHES[mode] = {} if len(_NAME_CACHES) < _NAME_CACHE_MODES else None
        if names is None:
            names = {}
    if family in ("rss", "rdf"):
        for ch in root:
            t = ch.tag
            if t.__class__ is str and (names.get(t) or _name_of(t, mode, names)) == "channel":
                channel = ch
                break
        if family == "rdf" and version is None and channel is None:
            return _unknown(error or "rdf:RDF document without an RSS channel", well_formed, encoding, root, notes)
    acc: dict[str, dict[str, int]] = {"channel": {}, "item": {}}
    ccounts = acc["channel"]
    atom = family in ("atom", "atom03")
    rdf = family == "rdf"
    own = ""  # the prefix of the format's own elements, when they carry one
    if atom:
        own = "" if mode or not ns else ("atom:" if ns == ATOM_NS else "atom03:")
        channel_fields, item_fields = _ATOM_FIELDS[own]
    else:
        channel_fields, item_fields = _CHANNEL_FIELDS_RSS, _ITEM_FIELDS_RSS
    defined_table = _DEFINED_PREFIXED[family] if own else _DEFINED[family]

    # --- channel scope: the channel's children, then the root's other children (rss, rdf)
    feed_base = _join_base(url, root)
    if atom:
        containers = [root]
        chan_base = feed_base
    elif channel is not None:
        containers = [channel, root]
        chan_base = _join_base(feed_base, channel)
    else:
        containers = [root]
        chan_base = feed_base
    items_el: list[Any] = []
    title = link = language = self_url = None
    dc_language = None
    # the children the checks will walk again, with their names: only where they name them the same way
    kids_of = notes.children if notes is not None and family == "rss" and not mode else None
    kids: list[tuple[Any, str]] | None = None
    for container in containers:
        # RDF: the root's items are the items, not channel elements, and a
        # sibling the channel references by name (<image rdf:resource>) is
        # not counted twice; the children of both are still tallied.
        siblings = frozenset(ccounts) if rdf and container is root else None
        kids = None
        if kids_of is not None and container is channel:
            kids = kids_of[channel] = []
        for ch in container:
            t = ch.tag
            if t.__class__ is not str or ch is channel:
                continue
            name = names.get(t) or _name_of(t, mode, names)
            if kids is not None:
                kids.append((ch, name))
            field = channel_fields.get(name)
            if siblings is not None and (field == "item" or name in siblings):
                if field == "item":
                    items_el.append(ch)
                elif len(ch) and not _is_xhtml(ch):
                    _walk(ch, name, acc, names, mode)
                continue
            ccounts[name] = ccounts.get(name, 0) + 1
            keys = ch.keys()
            if keys:
                _tally_attrs(ch, name, keys, ccounts, None, names, mode)
            if field is None:
                pass  # only tallied
            elif field == "item":
                items_el.append(ch)
                continue
            elif field == "title":
                if title is None:
                    title = _atom_text(ch, notes) if atom else _text(ch, notes)
            elif field == "link":
                if atom:
                    rel = (ch.get("rel") or "alternate").strip()
                    if rel == "alternate":
                        if link is None:
                            link = _resolve(_join_base(chan_base, ch), ch.get("href"))
                    elif self_url is None and (rel == "self" or (rel == "start" and family == "atom03")):
                        self_url = _resolve(_join_base(chan_base, ch), ch.get("href"))
                elif link is None:
                    link = _resolve(chan_base, _text(ch, notes))
            elif field == "language":
                if language is None:
                    language = _text(ch, notes)
            elif field == "dc:language":
                if dc_language is None:
                    dc_language = _text(ch, notes)
            else:  # an Atom link in another format (or the other Atom version)
                rel = (ch.get("rel") or "").strip()
                if self_url is None and (rel == "self" or (rel == "start" and field == "atom03:link")):
                    self_url = _resolve(_join_base(chan_base, ch), ch.get("href"))
            if len(ch) and not _is_xhtml(ch):
                _walk(ch, name, acc, names, mode)
    if language is None:
        language = dc_language
    if language is None:
        for el in (channel, root):
            if el is not None and el.get(_XML_LANG):
                language = el.get(_XML_LANG).strip() or None
                break

    # --- items
    icounts = acc["item"]
    iwith: dict[str, int] = {}
    items: list[ParsedItem] = []
    date_order = _DATE_ORDER[family]
    rss = family == "rss"
    person_name = own + "name"
    for position, item in enumerate(items_el):
        seen: set[str] = set()
        base = chan_base if item.get(_XML_BASE) is None else _join_base(chan_base, item)
        guid = ilink = ititle = author = creator = None
        permalink: bool | None = None
        categories: list[str] = []
        enc_url = enc_type = None
        enc_length: int | None = None
        has_enclosure = False
        dates: dict[str, str | None] = {}
        if kids_of is not None:
            kids = kids_of[item] = []
        for ch in item:
            t = ch.tag
            if t.__class__ is not str:
                continue
            name = names.get(t) or _name_of(t, mode, names)
            if kids is not None:
                kids.append((ch, name))
            icounts[name] = icounts.get(name, 0) + 1
            seen.add(name)
            keys = ch.keys()
            if keys:
                _tally_attrs(ch, name, keys, icounts, seen, names, mode)
            if len(ch) and not _is_xhtml(ch):
                _walk(ch, "item/" + name, acc, names, mode)
            field = item_fields.get(name)
            if field is None:
                continue
            if field == "title":
                if ititle is None:
                    ititle = _atom_text(ch, notes) if atom else _text(ch, notes)
            elif field == "link":
                if atom:
                    rel = (ch.get("rel") or "alternate").strip()
                    if rel == "alternate":
                        if ilink is None:
                            ilink = _resolve(_join_base(base, ch), ch.get("href"))
                    elif rel == "enclosure" and not has_enclosure:
                        has_enclosure = True
                        enc_url = _resolve(_join_base(base, ch), ch.get("href"))
                        enc_type = ch.get("type")
                        enc_length = _int64(ch.get("length"))
                elif ilink is None:
                    ilink = _resolve(base, _text(ch, notes))
            elif field == "guid":
                if guid is None and rss:
                    guid = _text(ch, notes)
                    if guid is not None:
                        permalink = (ch.get("isPermaLink") or "").strip().lower() != "false"
            elif field == "id":
                if guid is None and atom:
                    guid = _text(ch, notes)
            elif field == "author":
                if author is None:
                    if atom:
                        for sub in ch:
                            st = sub.tag
                            if st.__class__ is str and (names.get(st) or _name_of(st, mode, names)) == person_name:
                                author = _text(sub, notes)
                                break
                    else:
                        author = _text(ch, notes)
            elif field == "dc:creator":
                if creator is None:
                    creator = _text(ch, notes)
            elif field == "category":
                term = ch.get("term") if atom else _text(ch, notes)
                if term is not None:
                    term = term.strip()
                    if term:
                        categories.append(term)
            elif field == "enclosure":
                if not has_enclosure and not atom:
                    has_enclosure = True
                    enc_url = _resolve(base, ch.get("url"))
                    enc_type = ch.get("type")
                    enc_length = _int64(ch.get("length"))
            elif field not in dates:  # the date elements
                dates[field] = _text(ch, notes)
        for name in seen:
            iwith[name] = iwith.get(name, 0) + 1
        if family == "rdf" and guid is None:
            about = item.get(_RDF_ABOUT)
            guid = about.strip() or None if about is not None else None
        raw = None
        if dates:
            for dname in date_order:
                raw = dates.get(dname)
                if raw is not None:
                    break
        pub_date, form = parse_date(raw) if raw is not None else (None, None)
        items.append(
            ParsedItem(
                position,
                guid,
                permalink,
                ilink,
                ititle,
                author if author is not None else creator,
                categories,
                enc_url,
                enc_type,
                enc_length,
                raw,
                pub_date,
                form,
            )
        )

    # --- usage rows: channel, item, then deeper scopes in order of first appearance
    usage: list[Usage] = []
    for scope, counts in acc.items():
        is_item = scope == "item"
        for element, count in counts.items():
            usage.append(
                Usage(
                    scope,
                    element,
                    count,
                    iwith.get(element, 0) if is_item else None,
                    _defined(defined_table, own, scope, element),
                )
            )

    return ParsedFeed(
        fmt,
        version,
        well_formed,
        error,
        encoding,
        title,
        link,
        language,
        self_url,
        items,
        usage,
        root,
        notes,
    )


# --------------------------------------------------------------------------- sniff

_SNIFF_BYTES = 4096
_FEED_ROOTS = frozenset({"rss", "rdf", "feed", "channel"})
_FEED_TYPES = ("rss", "atom", "rdf", "feed")


def sniff(body: bytes, content_type: str | None = None) -> str:
    """'feed', 'opml', 'html' or 'other', from the first few KB. Never raises.

    Skips a byte order mark, whitespace, the XML declaration, comments,
    processing instructions and a doctype, then looks at the root element:
    rss, rdf:RDF, feed or channel (CDF, pre-RSS) is a feed, opml is OPML,
    html (or an HTML doctype) is HTML. ``content_type`` only decides when the
    first bytes end before any root element.
    """
    try:
        return _sniff(body, content_type)
    except Exception:
        return "other"


def _sniff(body: bytes, content_type: str | None) -> str:
    head = body[:_SNIFF_BYTES]
    enc, how = _document_encoding(head)
    # latin-1 keeps every ASCII-compatible encoding's markup readable
    text = head.decode(enc, errors="ignore").lstrip("\ufeff") if how in ("bom", "pattern") else head.decode("latin-1")
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n\x0c":
            pos += 1
        if pos >= n:
            return _sniff_type(content_type)
        if text[pos] != "<":
            return "other"
        if text.startswith("<?", pos):
            end = text.find("?>", pos + 2)
            if end < 0:
                return _sniff_type(content_type)
            pos = end + 2
        elif text.startswith("<!--", pos):
            end = text.find("-->", pos + 4)
            if end < 0:
                return _sniff_type(content_type)
            pos = end + 3
        elif text.startswith("<!", pos):
            if text[pos + 2 : pos + 9].lower() == "doctype":
                m = re.match(r"\s*([\w:.-]+)", text[pos + 9 : pos + 80])
                if m and m.group(1).lower() == "html":
                    return "html"
            # skip the doctype, internal subset included
            depth, i = 0, pos + 2
            while i < n:
                c = text[i]
                if c == "[":
                    depth += 1
                elif c == "]":
                    depth -= 1
                elif c == ">" and depth <= 0:
                    break
                i += 1
            if i >= n:
                return _sniff_type(content_type)
            pos = i + 1
        else:
            m = re.match(r"<([\w:.-]+)", text[pos : pos + 100])
            if m is None:
                return "other"
            local = m.group(1).rpartition(":")[2].lower()
            if local in _FEED_ROOTS:
                return "feed"
            if local == "opml":
                return "opml"
            if local == "html":
                return "html"
            return "other"


def _sniff_type(content_type: str | None) -> str:
    if not content_type:
        return "other"
    ct = content_type.split(";")[0].strip().lower()
    if "opml" in ct:
        return "opml"
    if "html" in ct and "xhtml" not in ct:
        return "html"
    if any(t in ct for t in _FEED_TYPES):
        return "feed"
    return "other"
