"""Parse a feed document and tally the elements it uses, in one pass.

:func:`parse_feed` takes the bytes of a response and returns a
:class:`ParsedFeed`: the format and version recognised from the content
(never from Content-Type), channel fields, the items, and ``usage``: how often
each element and attribute occurs at each level. (Telling a feed from an
OPML list or an HTML page by its first bytes is :mod:`pipelines.document.sniff`.)

The package, in the order a document goes through it: ``xmlparse`` turns the
bytes into a tree (the encoding, the strict parse, recovery), helped by
``lifting`` (large CDATA sections cut out first, :class:`TreeNotes`);
``formats`` recognises the format and holds each family's rules; ``read`` is
the single pass over the channel and the items, which tallies (``tally``,
``names``) and hands elements to the handlers (``handlers``, over the text
helpers of ``text``); ``model`` holds what comes out. Only the names in
``__all__`` here are public.

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

from collections.abc import Mapping
from typing import Any

from pipelines.document.encoding import header_charset
from pipelines.document.feedparse.formats import _find_channel, _recognise
from pipelines.document.feedparse.handlers import _Reader
from pipelines.document.feedparse.lifting import TreeNotes
from pipelines.document.feedparse.model import ParsedFeed, ParsedItem, Usage
from pipelines.document.feedparse.read import _read_channel, _read_item, _usage
from pipelines.document.feedparse.xmlparse import _one_line, _parse_xml
from schemas.vocab import FeedFormat

__all__ = ["ParsedFeed", "ParsedItem", "TreeNotes", "Usage", "parse_feed"]


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
