"""Tell a feed from an OPML list or an HTML page by its first bytes: light enough for the spider.

:func:`sniff` looks at the first 4 KB only and imports neither lxml nor the
parser, so the spider can decide what a response is without loading them.
It is the one sniffer of the crawl and of ``lint``: a document it calls a
feed is exactly one :func:`pipelines.document.feedparse.parse_feed`
recognises (format not ``unknown``), and the reverse
(``tests/test_sniff_agreement.py`` checks it on every file of the shared
corpus).

Decisions, written down once:

* The bytes decide. A byte order mark or a UTF-16/32 pattern
  (:mod:`pipelines.document.encoding`) says how to read them; anything else is
  read as latin-1, which keeps the markup of every ASCII-compatible encoding
  readable.
* Skipped before the root element: whitespace, the XML declaration and other
  processing instructions, comments, and a doctype with its internal subset.
* The root element decides, named as the feed parser names it: XML names
  are case-sensitive and a prefix means its declared namespace. ``rss`` and
  ``feed`` (in any namespace, or none) are feeds; ``rdf:RDF`` in the RDF
  namespace is a feed when it declares the RSS 1.0 or 0.90 namespace or has
  a ``channel`` in no namespace (when the first bytes are not the whole
  document and show neither, it is a feed too: the parser decides). A prefix
  the root's start tag does not declare is not a feed (the parser keeps
  ``x:rss`` as the name). CDF's ``<CHANNEL>`` is not a feed (the parser does
  not read it). ``opml`` is OPML and ``html`` is HTML (any case); anything
  else is other.
* An HTML doctype does not decide: a feed or OPML root after it wins (real
  feeds are served with a stray ``<!DOCTYPE html>``), any other root, or
  none, is HTML.
* ``content_type`` decides only when the first bytes end before any root
  element (a long comment, a truncated body).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import TypeAlias

from pipelines.document.encoding import How, xml_encoding
from schemas.namespaces import RDF_NS
from schemas.vocab import FeedFormat

__all__ = ["Sniffed", "sniff"]


class Sniffed(StrEnum):
    """What :func:`sniff` says a document is."""

    FEED = "feed"
    OPML = "opml"
    HTML = "html"
    OTHER = "other"


_SNIFF_BYTES = 4096
#: Roots named the same in any case (HTML is case-insensitive; OPML readers are lenient).
_NAMED_ROOTS: dict[str, Sniffed] = {"opml": Sniffed.OPML, "html": Sniffed.HTML}
#: Local names of the roots the feed parser recognises (case-sensitive, as XML is).
_FEED_ROOTS = frozenset({"rss", "feed", "RDF"})
#: Substrings of a Content-Type that name a feed.
_FEED_TYPES = (FeedFormat.RSS, FeedFormat.ATOM, FeedFormat.RDF, "feed")
_SPACE = re.compile(r"[ \t\r\n\x0c]*")
_DOCTYPE_NAME = re.compile(r"\s*([\w:.-]+)")
_ROOT_NAME = re.compile(r"<([\w:.-]+)")
#: The rest of a start tag after its name: attributes, then ``>`` or ``/>``.
_START_TAG_REST = re.compile(r"""(?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*/?>""")
_XMLNS = re.compile(r"""\sxmlns(?::([\w.-]+))?\s*=\s*(?:"([^"]*)"|'([^']*)')""")
#: A declaration of the RSS 1.0 or 0.90 namespace (what gives an rdf:RDF feed its version).
_RSS_NS_DECL = re.compile(
    r"""\sxmlns(?::[\w.-]+)?\s*=\s*["'](?:http://purl\.org/rss/1\.0/|http://my\.netscape\.com/rdf/simple/0\.9/)["']"""
)
_BARE_CHANNEL = re.compile(r"<channel[\s/>]")

#: What one step of the prolog gives: the position after what it skipped, or None when the head ends first.
_Step: TypeAlias = int | None


def sniff(body: bytes, content_type: str | None = None) -> Sniffed:
    """What ``body`` is: feed, opml, html or other (see the module docstring). Never raises."""
    try:
        return _sniff(body, content_type)
    except (LookupError, ValueError):  # not expected: every name decoded with is a known codec, errors ignored
        return Sniffed.OTHER


def _sniff(body: bytes, content_type: str | None) -> Sniffed:
    text = _head_text(body[:_SNIFF_BYTES])
    pos, html_doctype = _prolog_end(text)
    verdict = _from_type(content_type) if pos is None else _root(text, pos, whole=len(body) <= _SNIFF_BYTES)
    return Sniffed.HTML if html_doctype and verdict == Sniffed.OTHER else verdict


def _head_text(head: bytes) -> str:
    enc, how = xml_encoding(head)
    if how in (How.BOM, How.PATTERN):
        return head.decode(enc, errors="ignore").lstrip("\ufeff")
    return head.decode("latin-1")


# --------------------------------------------------------------------------- the prolog


def _prolog_end(text: str) -> tuple[int | None, bool]:
    """(where the root element, or text that is not markup, starts; None when the head ends first), and
    whether an HTML doctype was skipped."""
    pos, n, html_doctype = 0, len(text), False
    while True:
        m = _SPACE.match(text, pos)
        pos = m.end() if m is not None else pos
        if pos >= n:
            return None, html_doctype
        read = _prolog_reader(text, pos)
        if read is None:
            return pos, html_doctype
        html_doctype = html_doctype or (read is _doctype and _is_html_doctype(text, pos))
        step = read(text, pos)
        if step is None:
            return None, html_doctype
        pos = step


def _prolog_reader(text: str, pos: int) -> Callable[[str, int], _Step] | None:
    """The reader of the prolog markup starting at ``pos``; None for anything else (the root element)."""
    for prefix, read in _PROLOG:
        if text.startswith(prefix, pos):
            return read
    return None


def _skip_to(text: str, end_mark: str, start: int) -> _Step:
    end = text.find(end_mark, start)
    return None if end < 0 else end + len(end_mark)


def _pi(text: str, pos: int) -> _Step:
    return _skip_to(text, "?>", pos + 2)


def _comment(text: str, pos: int) -> _Step:
    return _skip_to(text, "-->", pos + 4)


def _is_html_doctype(text: str, pos: int) -> bool:
    if text[pos + 2 : pos + 9].lower() != "doctype":
        return False
    m = _DOCTYPE_NAME.match(text[pos + 9 : pos + 80])
    return m is not None and m.group(1).lower() == "html"


def _doctype(text: str, pos: int) -> _Step:
    """Skip a doctype (or any other ``<!...>``), internal subset included."""
    depth = 0
    for i in range(pos + 2, len(text)):
        c = text[i]
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == ">" and depth <= 0:
            return i + 1
    return None


#: Tried in order: "<!--" before "<!".
_PROLOG: tuple[tuple[str, Callable[[str, int], _Step]], ...] = (("<?", _pi), ("<!--", _comment), ("<!", _doctype))


# --------------------------------------------------------------------------- the root element


def _root(text: str, pos: int, *, whole: bool) -> Sniffed:
    """What the root element starting at ``pos`` makes the document (``whole``: the head is all of it)."""
    m = _ROOT_NAME.match(text, pos)
    if m is None:
        return Sniffed.OTHER
    prefix, _, local = m.group(1).rpartition(":")
    named = _NAMED_ROOTS.get(local.lower())
    if named is not None:
        return named
    if local not in _FEED_ROOTS:
        return Sniffed.OTHER
    if not prefix and local != "RDF":
        return Sniffed.FEED  # no prefix to check and not RDF: the namespaces it declares cannot change the verdict
    decls = _declarations(text, m.end())
    if decls is not None and prefix and prefix not in decls:
        return Sniffed.OTHER  # an undeclared prefix: the parser's root is named "x:rss", not rss
    if local == "RDF":
        return _rdf(text, m.end(), prefix, decls, whole=whole)
    return Sniffed.FEED


def _declarations(text: str, start: int) -> dict[str, str] | None:
    """The namespaces the start tag whose name ends at ``start`` declares ('' for the default one);
    None when the head ends inside it or it cannot be read (then any prefix may be declared)."""
    m = _START_TAG_REST.match(text, start)
    if m is None:
        return None
    return {d.group(1) or "": d.group(2) if d.group(2) is not None else d.group(3) for d in _XMLNS.finditer(m.group())}


def _rdf(text: str, start: int, prefix: str, decls: dict[str, str] | None, *, whole: bool) -> Sniffed:
    """``RDF`` as the parser reads it: in the RDF namespace, with an RSS namespace or a bare channel."""
    if decls is not None and decls.get(prefix) != RDF_NS:
        return Sniffed.OTHER
    if _RSS_NS_DECL.search(text, start - 1):
        return Sniffed.FEED
    if (decls is None or "" not in decls) and _BARE_CHANNEL.search(text, start):
        return Sniffed.FEED
    return Sniffed.OTHER if whole else Sniffed.FEED


def _from_type(content_type: str | None) -> Sniffed:
    if not content_type:
        return Sniffed.OTHER
    ct = content_type.split(";")[0].strip().lower()
    if "opml" in ct:
        return Sniffed.OPML
    if "html" in ct and "xhtml" not in ct:
        return Sniffed.HTML
    if any(t in ct for t in _FEED_TYPES):
        return Sniffed.FEED
    return Sniffed.OTHER
