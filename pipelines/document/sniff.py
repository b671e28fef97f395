"""Tell a feed from an OPML list or an HTML page by its first bytes: light enough for the spider.

:func:`sniff` looks at the first 4 KB only and imports neither lxml nor the
parser, so the spider can decide what a response is without loading them.

Decisions, written down once:

* The bytes decide. A byte order mark or a UTF-16/32 pattern
  (:mod:`pipelines.document.encoding`) says how to read them; anything else is
  read as latin-1, which keeps the markup of every ASCII-compatible encoding
  readable.
* Skipped before the root element: whitespace, the XML declaration and other
  processing instructions, comments, and a doctype with its internal subset.
  An HTML doctype is HTML.
* The root element's local name, case-insensitive: ``rss``, ``rdf`` (of
  ``rdf:RDF``), ``feed`` and ``channel`` (CDF, pre-RSS) are feeds, ``opml`` is
  OPML, ``html`` is HTML, anything else is other.
* ``content_type`` decides only when the first bytes end before any root
  element (a long comment, a truncated body).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum
from typing import TypeAlias

from pipelines.document.encoding import How, xml_encoding
from schemas.vocab import FeedFormat

__all__ = ["Sniffed", "sniff"]


class Sniffed(StrEnum):
    """What :func:`sniff` says a document is."""

    FEED = "feed"
    OPML = "opml"
    HTML = "html"
    OTHER = "other"


_SNIFF_BYTES = 4096
_ROOTS: dict[str, Sniffed] = {
    "rss": Sniffed.FEED,
    "rdf": Sniffed.FEED,
    "feed": Sniffed.FEED,
    "channel": Sniffed.FEED,
    "opml": Sniffed.OPML,
    "html": Sniffed.HTML,
}
#: Substrings of a Content-Type that name a feed.
_FEED_TYPES = (FeedFormat.RSS, FeedFormat.ATOM, FeedFormat.RDF, "feed")
_SPACE = re.compile(r"[ \t\r\n\x0c]*")
_DOCTYPE_NAME = re.compile(r"\s*([\w:.-]+)")
_ROOT_NAME = re.compile(r"<([\w:.-]+)")

#: What one step of the prolog gives: the position after what it skipped, a verdict, or None when the head ends first.
_Step: TypeAlias = int | Sniffed | None


def sniff(body: bytes, content_type: str | None = None) -> Sniffed:
    """What ``body`` is: feed, opml, html or other (see the module docstring). Never raises."""
    try:
        return _sniff(body, content_type)
    except (LookupError, ValueError):  # not expected: every name decoded with is a known codec, errors ignored
        return Sniffed.OTHER


def _sniff(body: bytes, content_type: str | None) -> Sniffed:
    text = _head_text(body[:_SNIFF_BYTES])
    pos, n = 0, len(text)
    while True:
        pos = _skip_space(text, pos)
        step = _step(text, pos) if pos < n else None
        if step is None:
            return _from_type(content_type)
        if isinstance(step, Sniffed):
            return step
        pos = step


def _skip_space(text: str, pos: int) -> int:
    m = _SPACE.match(text, pos)
    return m.end() if m is not None else pos


def _head_text(head: bytes) -> str:
    enc, how = xml_encoding(head)
    if how in (How.BOM, How.PATTERN):
        return head.decode(enc, errors="ignore").lstrip("\ufeff")
    return head.decode("latin-1")


def _step(text: str, pos: int) -> _Step:
    """Read what starts at ``pos``: markup to skip, or the root element."""
    if text[pos] != "<":
        return Sniffed.OTHER
    for prefix, read in _PROLOG:
        if text.startswith(prefix, pos):
            return read(text, pos)
    return _root(text, pos)


def _skip_to(text: str, end_mark: str, start: int) -> _Step:
    end = text.find(end_mark, start)
    return None if end < 0 else end + len(end_mark)


def _pi(text: str, pos: int) -> _Step:
    return _skip_to(text, "?>", pos + 2)


def _comment(text: str, pos: int) -> _Step:
    return _skip_to(text, "-->", pos + 4)


def _doctype(text: str, pos: int) -> _Step:
    """An HTML doctype is HTML; any other ``<!...>`` is skipped, internal subset included."""
    if text[pos + 2 : pos + 9].lower() == "doctype":
        m = _DOCTYPE_NAME.match(text[pos + 9 : pos + 80])
        if m and m.group(1).lower() == "html":
            return Sniffed.HTML
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


def _root(text: str, pos: int) -> Sniffed:
    m = _ROOT_NAME.match(text[pos : pos + 100])
    if m is None:
        return Sniffed.OTHER
    return _ROOTS.get(m.group(1).rpartition(":")[2].lower(), Sniffed.OTHER)


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
