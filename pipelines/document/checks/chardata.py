"""3.1 Character data: markup left in plain text, read as the W3C Feed Validator reads it (``CharacterData``).

The profile (3.1) asks that "&", "<" and ">" in plain text be written as the
hexadecimal references &#x26; / &#x3C; / &#x3E;. Its validator does not flag
every other way of writing them (a title "NYT &gt; Health" or "Sam &#38; Max"
is fine): its ``CharacterData`` message is about text that, once decoded,
still reads as markup, and this rule follows it (``nonhtml.validate`` of the
validator). A plain-text element of an RSS 2.x document breaks it when its
decoded text

* contains "<" followed by a letter or "/" (``<b``, ``</``),
* but no end tag of an HTML element (``</b>``: that is the validator's
  ``ContainsHTML``, no rule of ours) and no "&" followed by a word character
  (an entity left in the text, ``&amp;lt;``: ``ContainsHTML`` too),

unless one of the source lines the element spans contains "&#x" (the
profile's own encoding is in use there). CDATA sections count as any other
text, as in the validator.

The tree has lost the source lines, so this rule reads the raw bytes: during
the walk, every plain-text element (titles, descriptions other than an
item's, copyright, category, generator, author, managingEditor, webMaster,
source; see each ``Section.plain``) whose decoded text contains "<" is noted
(``Acc.candidates``); :func:`check_character_data` then decides on the text
and finds the element's lines in the body by its source line. Only
ASCII-compatible bodies are read: in UTF-16/32 the byte search would not find
ASCII markup.
"""

from __future__ import annotations

import re
from itertools import islice

from pipelines.document.checks.context import Acc, Element

__all__ = ["check_character_data", "markup_left"]

_NEWLINE_RE = re.compile(rb"\n")
_MARKUP_RE = re.compile(r"<[/a-zA-Z]")
_END_TAG_RE = re.compile(r"</(\w+)>")
_ENTITY_RE = re.compile(r"&#?\w")
_HTML_TAG_NAMES = """a abbr acronym address applet area article aside audio b base basefont bdi bdo big blockquote body br
    button canvas caption center cite code col colgroup command data datagrid datalist dd del details dfn dialog
    dir div dl dt em eventsource fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6
    head header hgroup hr html i iframe img input ins isindex kbd label legend li link m main mark map menu meta
    meter nav noframes noscript object ol optgroup option output p param picture pre progress q rp rt ruby s
    samp script section select slot small source span strike strong style sub summary sup table tbody td
    template textarea tfoot th thead time title tr track tt u ul var xmp plaintext embed comment listing video
    wbr"""
#: The elements whose end tag in a text makes it the validator's ContainsHTML (its ``HTMLValidator.htmltags``).
HTML_TAGS = frozenset(_HTML_TAG_NAMES.split())


def markup_left(text: str) -> bool:
    """True if the decoded text still reads as markup the validator calls ``CharacterData`` (see the module)."""
    if _MARKUP_RE.search(text) is None:
        return False
    if any(tag.lower() in HTML_TAGS for tag in _END_TAG_RE.findall(text)):
        return False
    return _ENTITY_RE.search(text) is None


def _line_starts(body: bytes, lines: list[int]) -> dict[int, int]:
    """Byte offset where each of ``lines`` (1-based, ascending) starts; a line after the last one is left out.

    Only as many newlines are read as the last line asks for (the scan stops
    there), one at a time in C.
    """
    starts: dict[int, int] = {}
    newlines = _NEWLINE_RE.finditer(body)
    line, pos = 1, 0
    for target in lines:
        if target > line:
            newline = next(islice(newlines, target - line - 1, None), None)
            if newline is None:
                break
            line, pos = target, newline.end()
        starts[target] = pos
    return starts


def _raw_element(body: bytes, start: int, tag: str) -> tuple[bytes, bytes] | None:
    """The raw content of the first element ``tag`` from ``start`` on, and the whole source lines it spans.

    The lines run from ``start`` (the start of the element's line) to the end of the line its end tag begins on.
    """
    name = tag.encode()
    open_at = body.find(b"<" + name, start)
    if open_at < 0:
        return None
    gt = body.find(b">", open_at)
    if gt < 0 or body[gt - 1 : gt] == b"/":
        return None
    end = body.find(b"</" + name, gt)
    if end < 0:
        return None
    line_end = body.find(b"\n", end)
    return body[gt + 1 : end], body[start : len(body) if line_end < 0 else line_end]


def check_character_data(acc: Acc) -> None:
    """``character-data-not-hex`` for each noted element whose decoded text still reads as markup.

    The example is the element's content as written in the document.
    """
    body = acc.body
    if not body or not acc.candidates or not _ascii_compatible(body):
        return
    # (tag, scope, source line) of the candidates whose text decides it, and the byte search can find
    found = [
        (tag, scope, line)
        for el, text, scope in acc.candidates
        if markup_left(text) and (tag := el.tag)[:1] != "{" and (line := _line(el))
    ]
    if not found:
        return
    starts = _line_starts(body, sorted({line for _, _, line in found}))
    for tag, scope, line in found:
        start = starts.get(line)
        raw = None if start is None else _raw_element(body, start, tag)
        if raw is not None and b"&#x" not in raw[1]:
            acc.add("character-data-not-hex", scope, raw[0].decode("utf-8", "replace"))


def _ascii_compatible(body: bytes) -> bool:
    """Not UTF-16/32 (by BOM or NUL bytes): the byte search would not find ASCII markup there."""
    head = body[:4]
    return b"\x00" not in head and head[:2] not in (b"\xff\xfe", b"\xfe\xff")


def _line(el: Element) -> int | None:
    line: int | None = el.sourceline  # type: ignore[assignment]  # lxml-stubs leave it untyped
    return line
