"""Parse a feed document and tally the elements it uses, in one pass.

:func:`parse_feed` takes the bytes of a response and returns a
:class:`ParsedFeed`: the format and version recognised from the content
(never from Content-Type), channel fields, the items, and ``usage``: how often
each element and attribute occurs at each level. (Telling a feed from an
OPML list or an HTML page by its first bytes is :mod:`pipelines.document.sniff`.)

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
    error, and the recovered items and tally are still returned. ``error``
    is one line ending in the position, said once (``..., line 4, column
    17``); where libxml2 also names the line an open tag started on, that is
    written ``(started on line 3)``, or left out when it is the same line.

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
    UTF-16 byte order mark...). How the mark, the first bytes, the declaration
    and the header are read is :mod:`pipelines.document.encoding`, shared with
    the sniffer and the OPML reader.

One pass, handlers by name
    The tree is walked once: every child of the channel and of each item is
    tallied, and those whose values are read go to a small handler found by
    name in a table of the format family (``_Rules``: RSS, RDF, Atom 1.0 and
    0.3, bare or prefixed). A handler writes straight into the
    :class:`ParsedFeed` (the channel's values) or the :class:`ParsedItem`;
    title and link handlers are the same for both, and an Atom link goes on
    to a handler by its ``rel`` (``alternate`` for both, ``self`` for the
    channel, ``enclosure`` for an item). Everything else is only tallied.
    A field keeps the first non-blank value found (categories: all of
    them; an item's enclosure: the first enclosure, whatever it holds).

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
    ``rss``: in RSS (``<rss>``), the elements written beside the channel,
    directly under the root (real feeds put ``<meta>`` there), with their
    attributes: the ``channel`` scope counts only what is in the channel.
    An ``item`` there is still parsed as an item (and counted at ``rss``
    scope, not at ``channel`` scope); a misplaced ``title``, ``link``,
    ``language`` or scheduling hint is still read when the channel has none
    (a misplaced ``skipHours`` or ``skipDays`` adds to the channel's). Their children
    are tallied at ``rss/<name>``. Only ``channel`` is defined at this scope.
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
    ``identity``, ``identity_source`` and ``content_hash`` are made by
    :mod:`pipelines.document.identity` from the item's guid, link, title and
    enclosure URL and its description (the rule is written there). The
    description is not kept: while an item's children are read, the first
    element of each candidate kind is noted, and once the item is read the
    chosen one's text is taken as UTF-8 bytes, hashed and dropped.

Scheduling hints
    The channel's: ``ttl`` (RSS ``<ttl>``: a whole number of minutes, ASCII
    digits after stripping; None when absent or anything else, or when it does
    not fit the 32-bit column; the first valid one when there are several),
    ``skip_hours`` (the ``<hour>`` children of every ``<skipHours>``: whole
    numbers 0-24, 24 read as 0 as the RSS Best Practices Profile allows;
    others dropped; sorted, each once), ``skip_days`` (the ``<day>`` children
    of every ``<skipDays>``: Monday ... Sunday matched case-insensitively after
    stripping and written capitalised; others dropped; in week order, each
    once). These three are read in RSS 0.9x/2.0 and also in an RSS 1.0 / 0.90
    channel. In every format, at channel or feed level: ``update_period``
    (``sy:updatePeriod``, lower-cased: hourly, daily, weekly, monthly or
    yearly, else ignored; the first valid one) and ``update_frequency``
    (``sy:updateFrequency``, the first positive whole number that fits 32
    bits; 1 when there is a period but no valid frequency; None whenever there
    is no period).

Breadth (the values the peer survey, mnot's feed-survey, reports; read in the same pass)
    The channel's: ``generator`` (RSS ``generator`` text; Atom ``generator``
    text, then its ``version`` and its ``(uri)`` when given, Atom 0.3's
    ``url`` alike, since the version is what surveys of generators count;
    else RSS 1.0's ``admin:generatorAgent/@rdf:resource``, in any format).
    ``feed_date``: the first present of Atom ``updated``, ``published``
    (Atom 0.3 ``modified``), RSS ``lastBuildDate``, ``pubDate``, ``dc:date``,
    RSS 1.0 ``dc:date``, parsed by :mod:`pipelines.document.dates` (None when
    it does not parse: the first present decides, as for an item's date).
    From the channel-level Atom links (``atom:link`` in RSS, an Atom feed's
    own ``link``): ``link_rels``, the distinct rel tokens, lower-cased, of
    those with a non-blank href (no rel is ``alternate``), and ``hub_url``,
    the first href with the token ``hub``, resolved. ``hreflangs``: the
    ``hreflang`` values of Atom links, channel and items (direct children),
    stripped but not lower-cased (as the ``pages`` table has them).
    ``entry_languages``: the ``xml:lang`` values on an item and on every
    element the tally meets inside it, XHTML content included (read apart,
    since the tally does not walk it), and item ``dc:language`` (in Atom too).
    Entry languages are stripped and lower-cased; the three lists are sorted.
    An item's: ``title_has_markup``, whether the first non-blank title holds
    HTML: in RSS, a tag (``_TAG``: ``<``, an optional ``/``, a name,
    attributes, ``>``) in its text after the XML parser's unescaping, or an
    element child; in Atom, type ``html`` with a tag in its text, or type
    ``xhtml`` with an element inside the wrapping ``div``; type ``text``
    shows markup as text, so never. ``description_length`` (RSS
    ``description``, Atom ``summary``) and ``content_length``
    (``content:encoded``, Atom ``content``): characters of the first such
    element's string value, unstripped, as restored after lifting (0 when
    empty, None when absent). ``content_kind`` of the main body (content,
    else description): Atom by ``type`` (``html``/``text/html``,
    ``xhtml``/``application/xhtml+xml``, anything else ``plain``, as the
    peer); RSS ``content:encoded`` is ``html``; an RSS description is
    ``html`` when its text holds a tag (the peer: both ``<`` and ``>``).
    Cost: the string value of the description noted for the content hash is
    reused; the other body is measured from its text, and a lifted CDATA
    section by the length noted when it was lifted (never decoded again).
"""

from __future__ import annotations

import codecs
import re
import secrets
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from html import unescape
from html.entities import html5
from typing import Any, TypeVar
from urllib.parse import urljoin

from lxml import etree

from pipelines.document.dates import FallbackBudget, ParsedDate, parse_date
from pipelines.document.encoding import How, byte_order_mark, header_charset, is_wide, same_charset, xml_encoding
from pipelines.document.identity import item_hashes
from pipelines.document.xmlrefs import fix_surrogate_refs, safe_parser
from schemas.namespaces import ATOM_NS, RDF_NS, URI_TO_PREFIX, element_name
from schemas.vocab import ContentKind, DateForm, FeedFormat

__all__ = ["ParsedFeed", "ParsedItem", "TreeNotes", "Usage", "parse_feed"]


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
    #: the title as written holds HTML markup (see "Breadth" above); None without a title
    title_has_markup: bool | None = None
    #: characters of the description (RSS description, Atom summary) and of the full content
    #: (content:encoded, Atom content), as written; None when the element is absent
    description_length: int | None = None
    content_length: int | None = None
    #: a :class:`schemas.vocab.ContentKind` value: the main body's kind; None without a body
    content_kind: str | None = None


@dataclass(slots=True)
class Usage:
    """How often one element or attribute occurs at one scope (see "Scopes of the tally" above).

    Positional (five fields, built in one place, once per tally row: keywords cost ~2.5x a positional call).
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
    #: scheduling hints (see "Scheduling hints" above)
    ttl: int | None = None
    skip_hours: tuple[int, ...] = ()
    skip_days: tuple[str, ...] = ()
    update_period: str | None = None
    update_frequency: int | None = None
    #: the survey's breadth values (see "Breadth" above)
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

_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_RDF_ABOUT = f"{{{RDF_NS}}}about"
_RDF_RESOURCE = f"{{{RDF_NS}}}resource"
_XHTML_NS = "{http://www.w3.org/1999/xhtml}"
_ATOM03_URIS = frozenset(uri for uri, prefix in URI_TO_PREFIX.items() if prefix == "atom03")
_ENTITY = etree.Entity
_tostring = etree.tostring

_MAX_INT64 = 2**63 - 1
_MAX_INT32 = 2**31 - 1


def _names(*groups: str) -> frozenset[str]:
    return frozenset(n for g in groups for n in g.split())


_RSS_DEFINED: dict[str, frozenset[str]] = {
    "rss": _names("channel"),
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


def _names_for(mode: str) -> dict[str, str]:
    """The name cache of a naming mode (a fresh one, not kept, once there are enough modes)."""
    names = _NAME_CACHES.get(mode)
    if names is None:
        names = {}
        if len(_NAME_CACHES) < _NAME_CACHE_MODES:
            _NAME_CACHES[mode] = names
    return names


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


_ERROR_TAIL = re.compile(r"\s*\(<string>, line \d+\)$")
_ENCODING_ERROR = re.compile(r"encoding|UTF-8|UTF-16|bytes|Unsupported|Document labelled", re.IGNORECASE)
#: What lxml raises on a document it cannot read (ValueError: e.g. odd input lxml refuses outright).
_PARSE_ERRORS = (etree.LxmlError, ValueError)

#: (encoding forced on lxml, or None to let it read the document; the name to report)
_Candidate = tuple[str | None, str]
#: (root or None, well_formed, first error, encoding used)
_Parsed = tuple[Any, bool, str | None, str | None]


#: libxml2 names the line an open tag started on ("tag channel line 2"), then lxml adds the error's position.
_STARTED_ON = re.compile(
    r"(?P<head>.*?[\w.:-]) line (?P<started>\d+)(?P<rest>(?: and [^,]*)?), line (?P<line>\d+), column (?P<col>\d+)"
)


def _one_line(exc: BaseException) -> str:
    """The first line of an error, its position said once: "..., line L, column C"."""
    msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return _position_once(_ERROR_TAIL.sub("", msg))


def _position_once(msg: str) -> str:
    """ "tag channel line 2, line 2, column 29" -> "tag channel, line 2, ..."; another line is "(started on line N)"."""
    m = _STARTED_ON.fullmatch(msg)
    if m is None:
        return msg
    started = "" if m["started"] == m["line"] else f" (started on line {m['started']})"
    return f"{m['head']}{started}{m['rest']}, line {m['line']}, column {m['col']}"


def _parse_xml(body: bytes, charset: str | None, notes: TreeNotes | None = None) -> _Parsed:
    """(root or None, well_formed, first error, encoding used); ``charset`` is the HTTP one.

    With ``notes``, large CDATA sections may be lifted (the texts of the tree
    then need ``notes.restore``); the results are the same.

    A byte order mark written twice or more (an editor or a template adding its own to a file that had
    one) is read as one, as browsers and the sniffer do; the document is then not well-formed (the extra
    marks are characters before the XML declaration), and the error says so.
    """
    body, extra = _without_repeated_bom(body)
    root, well_formed, error, encoding = _parse_xml_once(body, charset, notes)
    if extra:
        marks = "mark" if extra == 1 else "marks"
        return root, False, error or f"{extra} extra byte order {marks} before the document", encoding
    return root, well_formed, error, encoding


def _without_repeated_bom(body: bytes) -> tuple[bytes, int]:
    """``body`` with one byte order mark where it starts with the same mark repeated; how many were dropped."""
    bom = byte_order_mark(body)
    if bom is None or not body.startswith(bom[0], len(bom[0])):
        return body, 0
    mark = bom[0]
    end = 0
    while body.startswith(mark, end):  # an index, not a copy a mark: a body of a million marks is linear
        end += len(mark)
    return body[end - len(mark) :], end // len(mark) - 1


def _parse_xml_once(body: bytes, charset: str | None, notes: TreeNotes | None) -> _Parsed:
    doc_enc, how = xml_encoding(body)
    if notes is not None and _read_as_utf8(doc_enc, how, charset) and _lift_cdata(body, notes):
        root = _parse_lifted(notes)
        if root is not None:
            return root, True, None, doc_enc
    candidates, note = _candidates(doc_enc, how, charset)
    return _parse_strict(body, candidates, note, doc_enc, how)


def _read_as_utf8(doc_enc: str, how: How, charset: str | None) -> bool:
    """Whether the first candidate is UTF-8 read by lxml itself (large CDATA may then be lifted)."""
    return doc_enc in ("utf-8", "utf8") and (how != How.DEFAULT or not charset or same_charset(charset, "utf-8"))


def _parse_lifted(notes: TreeNotes) -> Any:
    """The tree of ``notes.body``; None (and nothing lifted) unless it is well-formed and read as UTF-8."""
    try:
        root = etree.fromstring(notes.body, _parser(None, False))
    except _PARSE_ERRORS:
        root = None  # the plain path parses the document itself and reports the error
    notes.body = b""
    if root is not None and (root.getroottree().docinfo.encoding or "").lower() in ("utf-8", "utf8"):
        return root
    notes._spans, notes._lengths, notes._whole = (
        [],
        [],
        {},
    )  # not well-formed, or not read as UTF-8 after all: parse the document itself
    return None


def _candidates(doc_enc: str, how: How, charset: str | None) -> tuple[list[_Candidate], str | None]:
    """The encodings to try strictly, in order, and a problem found before parsing (then not well-formed)."""
    if how in (How.BOM, How.PATTERN):
        return [(None, doc_enc)], None
    if how == How.DECLARED and is_wide(doc_enc):
        # The declaration was read as single bytes, so it cannot be right: a
        # real UTF-16/32 document starts with a BOM or a 0x00 byte.
        cs = charset if charset and not is_wide(charset) else "utf-8"
        return [(cs, cs)], f"encoding declared as {doc_enc} but the document is 8-bit; read as {cs}"
    if how == How.DECLARED:
        other = [(charset, charset)] if charset and not same_charset(charset, doc_enc) else []
        return [(None, doc_enc), *other], None
    first = [(charset, charset)] if charset and not same_charset(charset, "utf-8") else []
    return [*first, (None, "utf-8")], None


def _parse_strict(body: bytes, candidates: list[_Candidate], note: str | None, doc_enc: str, how: How) -> _Parsed:
    """Parse with each candidate until one works or an error is not about the encoding; else recover."""
    first_error = note
    first: _Candidate | None = None
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
        except _PARSE_ERRORS as exc:  # e.g. ValueError on odd input: report it, then recover
            if first_error is None:
                first_error = _one_line(exc)
            break
    if first is None:
        first = (None, "utf-8")
        first_error = first_error or f"unknown encoding {candidates[0][1]!r}"
    return _parse_recover(body, first, first_error, doc_enc, how)


def _parse_recover(body: bytes, first: _Candidate, error: str | None, doc_enc: str, how: How) -> _Parsed:
    """The document parsed with ``recover=True`` by the first usable candidate: not well-formed."""
    forced, reported = first
    if forced is None and how == How.DECLARED:
        try:
            codecs.lookup(doc_enc)
        except LookupError:
            reported = "utf-8"  # libxml2 falls back to UTF-8 for an encoding it cannot decode
    try:
        # Surrogate references (&#55357;&#56832;) would survive recovery as invalid UTF-8 and make
        # every later text read raise: rewrite them first (pipelines/document/xmlrefs.py).
        root = etree.fromstring(fix_surrogate_refs(body), _parser(forced, True))
    except _PARSE_ERRORS:
        root = None
    return root, False, error or "not well-formed", reported


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
_LIFT_END_BYTES = _LIFT_END.encode()
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

    ``dates``: in such a document, each item date the parser read (its text,
    stripped) and what :func:`~pipelines.document.dates.parse_date` gave for it.

    ``leaf_texts``: in such a document, each element without children whose text
    the parser read, and that text as in the document (restored, not stripped).

    :meth:`restored_length` counts the characters of ``restore_bytes(data)``
    without building it: each section's length in characters is noted when it
    is lifted (the lifter decodes a non-ASCII section anyway, to check it).
    """

    __slots__ = ("_lengths", "_spans", "_whole", "body", "children", "dates", "key", "leaf_texts", "source")

    #: Every placeholder starts with this character: a text without it needs no :meth:`restore`.
    MARK = _LIFT_MARK

    def __init__(self) -> None:
        self.source = b""  # the document as fetched
        self.key = ""
        self.body = b""  # the document with placeholders, until parsed
        self._spans: list[tuple[int, int, int]] = []  # (start, end, newlines) of each section in source
        self._lengths: list[int] = []  # each section's length in characters, once restored
        self._whole: dict[str, int] = {}  # a text that is one placeholder -> its section's length
        self.children: dict[Any, list[tuple[Any, str]]] = {}
        self.dates: dict[str, ParsedDate] = {}
        self.leaf_texts: dict[Any, str] | None = None  # None: not kept (the document is not such a one)

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

    def restored_text_length(self, text: str) -> int:
        """``len(self.restore(text))``: the text counted, each placeholder by its section's noted length.

        The key is looked for whole: a search for its first character alone, U+E000, would crawl
        through a UCS-2 text (CPython looks for the character's low byte, 0, with memchr)."""
        if text[:1] == _LIFT_MARK:  # the common case: an element whose text is one section
            whole = self._whole.get(text)
            if whole is not None:
                return whole
        i = text.find(self.key) if self._spans else -1
        total = len(text)
        while i >= 0:
            j = text.find(_LIFT_END, i)
            index = int(text[i + len(self.key) : j])
            end = j + 1 + self._spans[index][2]
            total += self._lengths[index] - (end - i)
            i = text.find(self.key, end)
        return total

    def restored_length(self, data: bytes) -> int:
        """``len(self.restore_bytes(data).decode())`` for UTF-8 bytes read from the tree: the text
        around the placeholders is counted, each section by the length noted when it was lifted."""
        key = self.key.encode() if self._spans else b""
        i = data.find(key) if key else -1
        if i < 0:
            return _utf8_chars(data)
        spans, lengths = self._spans, self._lengths
        total = 0
        pos = 0
        while i >= 0:
            j = data.find(_LIFT_END_BYTES, i)
            index = int(data[i + len(key) : j])
            total += lengths[index] + (_utf8_chars(data[pos:i]) if i > pos else 0)
            pos = j + len(_LIFT_END_BYTES) + spans[index][2]
            i = data.find(key, pos)
        return total + (_utf8_chars(data[pos:]) if pos < len(data) else 0)

    def restore_bytes(self, data: bytes) -> bytes:
        """:meth:`restore` for UTF-8 bytes read from the tree: the sections are copied from the source
        as they are (they were lifted only if valid UTF-8), never decoded."""
        if not self._spans:
            return data
        key = self.key.encode()
        i = data.find(key)
        if i < 0:
            return data
        source = self.source
        view = memoryview(source)
        parts: list[bytes | memoryview] = []
        pos = 0
        while i >= 0:
            j = data.find(_LIFT_END_BYTES, i)
            start, end, newlines = self._spans[int(data[i + len(key) : j])]
            parts.append(data[pos:i])
            if source.find(b"\r", start, end) < 0:
                parts.append(view[start:end])
            else:  # XML end-of-line handling, as libxml2 does it
                parts.append(source[start:end].replace(b"\r\n", b"\n").replace(b"\r", b"\n"))
            pos = j + len(_LIFT_END_BYTES) + newlines
            i = data.find(key, pos)
        parts.append(data[pos:])
        return b"".join(parts)


class _Lifter:
    """The document being cut: what is copied so far, and the sections lifted."""

    __slots__ = ("body", "copied", "key", "lengths", "out", "spans", "whole")

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.key = _LIFT_MARK + secrets.token_hex(8)
        self.spans: list[tuple[int, int, int]] = []
        self.lengths: list[int] = []
        self.whole: dict[str, int] = {}
        self.out: list[bytes] = []
        self.copied = 0  # body[:copied] is in out

    def lift(self, start: int, end: int) -> None:
        """Replace ``body[start:end]`` (a section's text) by a placeholder, if libxml2 would read it without error."""
        section = self.body[start:end]
        # one pass: what is left is the newlines, and any byte XML forbids
        newlines = len(kept := section.translate(None, _NOT_NEWLINE_OR_FORBIDDEN))
        if kept.count(b"\n") == newlines and (length := _utf8_length(section)) >= 0:
            placeholder = f"{self.key}{len(self.spans)}{_LIFT_END}" + "\n" * newlines
            self.out.append(self.body[self.copied : start])
            self.out.append(placeholder.encode())
            self.spans.append((start, end, newlines))
            # restored, each CR LF is one LF (TreeNotes.restore)
            self.lengths.append(length - section.count(b"\r\n") if b"\r" in section else length)
            self.whole[placeholder] = self.lengths[-1]
            self.copied = end

    def finish(self, notes: TreeNotes) -> bool:
        if not self.spans:
            return False
        self.out.append(self.body[self.copied :])
        notes.source, notes.key, notes.body, notes._spans = self.body, self.key, b"".join(self.out), self.spans
        notes._lengths, notes._whole = self.lengths, self.whole
        return True


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
    lifter = _Lifter(body)
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
        # a CDATA section, the common case, first
        pos = _skip_cdata(lifter, at + 8) if body.startswith(b"![CDATA[", at) else _skip_markup(lifter, at - 1)
        if pos < 0:
            break
        if 0 <= bang < pos:
            bang = find(b"!", pos)
        if 0 <= quest < pos:
            quest = find(b"?", pos)
    return lifter.finish(notes)


def _after(body: bytes, end_mark: bytes, start: int) -> int:
    """The position after the first ``end_mark`` from ``start``; -1 when there is none."""
    end = body.find(end_mark, start)
    return -1 if end < 0 else end + len(end_mark)


def _skip_markup(lifter: _Lifter, lt: int) -> int:
    """The position after the ``<?`` or ``<!`` markup at ``lt`` (not a CDATA section); -1 to stop."""
    body = lifter.body
    if body[lt + 1] == 63:  # "<?": a processing instruction (or the XML declaration)
        return _after(body, b"?>", lt + 2)
    skip = _BANG_MARKUP.get(body[lt + 2 : lt + 3])
    return skip(body, lt) if skip is not None else -1


def _skip_cdata(lifter: _Lifter, start: int) -> int:
    """The position after the CDATA section whose text starts at ``start``, lifted if large; -1 to stop."""
    body = lifter.body
    end = start
    while True:  # the first "]]>"; searching for "]" alone is much faster
        end = body.find(b"]", end)
        if end < 0:
            return -1
        if body.startswith(b"]]>", end):
            break
        end += 1
    if end - start >= _LIFT_MIN_BYTES:
        lifter.lift(start, end)
    return end + 3


def _skip_comment(body: bytes, lt: int) -> int:
    if not body.startswith(b"--", lt + 2):
        return -1
    return _after(body, b"-->", lt + 4)


def _skip_doctype(body: bytes, lt: int) -> int:
    if not body.startswith(b"DOCTYPE", lt + 2):
        return -1
    end = body.find(b">", lt)
    decl = body[lt:end]
    if end < 0 or b"[" in decl or decl.count(b'"') % 2 or decl.count(b"'") % 2:
        return -1  # an internal subset, or a quoted ">": not worth reading
    return end + 1


#: "<!" markup other than CDATA, by the byte after the "!"; anything else stops the search.
_BANG_MARKUP: dict[bytes, Callable[[bytes, int], int]] = {
    b"-": _skip_comment,
    b"D": _skip_doctype,
}


#: UTF-8 continuation bytes: every character but these starts with one byte outside them.
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))


def _utf8_chars(data: bytes) -> int:
    """Characters of UTF-8 bytes read from the tree (valid UTF-8: libxml2 wrote them): the bytes that
    start one. Deleting the continuation bytes is about 2.3x faster than decoding (measured on 3 MB)."""
    return len(data) if data.isascii() else len(data.translate(None, _UTF8_CONTINUATION))


def _utf8_length(section: bytes) -> int:
    """Characters of a section that is ASCII, or UTF-8 that libxml2 accepts (no U+FFFE / U+FFFF); else -1."""
    if section.isascii():
        return len(section)
    try:
        text = section.decode("utf-8")
    except UnicodeDecodeError:
        return -1
    return -1 if "\ufffe" in text or "\uffff" in text else len(text)


# --------------------------------------------------------------------------- text helpers


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


def _walk(
    el: Any,
    scope: str,
    acc: dict[str, dict[str, int]],
    names: dict[str, str],
    mode: str,
    langs: set[str] | None = None,
) -> None:
    """Tally the children of ``el`` (and their attributes) at ``scope``, then recurse.

    ``langs``: inside an item, where the ``xml:lang`` values met are noted (the tally sees every attribute).
    """
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
            _tally_attrs(ch, name, keys, counts, None, names, mode, langs)
        if len(ch) and not _is_xhtml(ch):
            _walk(ch, f"{scope}/{name}", acc, names, mode, langs)


def _tally_attrs(
    el: Any,
    name: str,
    keys: list[str],
    counts: dict[str, int],
    seen: set[str] | None,
    names: dict[str, str],
    mode: str,
    langs: set[str] | None = None,
) -> None:
    for key in keys:
        if key[0] == "{":
            if key == _XML_LANG and langs is not None:
                _add_lang(langs, el.get(key))
            key = names.get(key) or _name_of(key, mode, names)
        elif key == "rel" and (name == "link" or name.endswith(":link")):
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


# --------------------------------------------------------------------------- reading values: the handlers


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
        # breadth (see "Breadth" above): the channel's date texts by key, until the channel is read;
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
    # description_length, content_length, content_kind (see "Breadth" above): an ASCII value read already
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


def _unknown(
    error: str | None, well_formed: bool, encoding: str | None, root: Any, notes: TreeNotes | None = None
) -> ParsedFeed:
    return ParsedFeed(
        format=FeedFormat.UNKNOWN,
        version=None,
        well_formed=well_formed,
        error=error,
        encoding=encoding,
        root=root,
        notes=notes,
    )


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
    except Exception as exc:  # a bug, not bad input: still honour the contract, and say so in the error
        return _unknown(f"internal error: {type(exc).__name__}: {_one_line(exc)}", False, None, None)


def _parse_feed(body: bytes, url: str, headers: Mapping[str, str] | None, with_notes: bool) -> ParsedFeed:
    if not isinstance(body, bytes):
        body = bytes(body)
    notes = TreeNotes() if with_notes else None
    root, well_formed, error, encoding = _parse_xml(body, header_charset(headers), notes)
    form = _recognise(root)
    if isinstance(form, str):  # why it is not a feed
        return _unknown(error or form, well_formed, encoding, root, None if root is None else notes)
    r = _Reader(form.rules, form.mode, notes)
    channel = _find_channel(root, r) if form.format != FeedFormat.ATOM else None
    if form.format == FeedFormat.RDF and form.version is None and channel is None:
        return _unknown(error or "rdf:RDF document without an RSS channel", well_formed, encoding, root, notes)
    feed = ParsedFeed(format=form.format, version=form.version, well_formed=well_formed, error=error, encoding=encoding)
    _read_channel(r, feed, root, channel, url)
    base = r.base
    feed.items = [_read_item(r, el, position, base) for position, el in enumerate(r.items)]
    feed.usage = _usage(r)
    feed.link_rels = tuple(sorted(r.link_rels))
    feed.entry_languages = tuple(sorted(r.entry_langs))
    feed.hreflangs = tuple(sorted(r.hreflangs))
    feed.root, feed.notes = root, notes
    return feed
