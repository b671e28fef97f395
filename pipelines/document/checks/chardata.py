"""3.1 Character data: "&", "<" and ">" in plain text should be written as hexadecimal references.

The tree has lost how a text was written, so this rule reads the raw bytes:
during the walk, every plain-text element (titles, descriptions other than an
item's, copyright, category, generator, author, managingEditor, webMaster,
source; see each ``Section.plain``) whose text contains one of the three
characters is noted (``Acc.candidates``); :func:`check_character_data` then
finds each one's content in the body by its source line and looks at how the
characters were written there. Only ASCII-compatible bodies are read: in
UTF-16/32 the byte search would not find ASCII markup.
"""

from __future__ import annotations

import re
from itertools import islice

from pipelines.document.checks.context import Acc, Element

__all__ = ["check_character_data", "raw_offender"]

_NEWLINE_RE = re.compile(rb"\n")
_RAW_ESCAPE_RE = re.compile(rb"&(amp|lt|gt|#0*(?:38|60|62));|<!\[CDATA\[(.*?)\]\]>", re.S | re.I)


def raw_offender(raw: bytes) -> bool:
    """True if the raw content writes "&", "<" or ">" other than as &#x26; / &#x3C; / &#x3E;."""
    for m in _RAW_ESCAPE_RE.finditer(raw):
        if m.group(1) is not None:
            return True
        inner = m.group(2)
        if b"&" in inner or b"<" in inner or b">" in inner:
            return True
    return False


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


def _raw_content(body: bytes, start: int, tag: str) -> bytes | None:
    """The raw bytes between the start and end tags of the first element ``tag`` from ``start`` on."""
    name = tag.encode()
    start = body.find(b"<" + name, start)
    if start < 0:
        return None
    gt = body.find(b">", start)
    if gt < 0 or body[gt - 1 : gt] == b"/":
        return None
    end = body.find(b"</" + name, gt)
    if end < 0:
        return None
    return body[gt + 1 : end]


def check_character_data(acc: Acc) -> None:
    """``character-data-not-hex`` for each noted element whose raw content breaks 3.1."""
    body = acc.body
    if not body or not acc.candidates or not _ascii_compatible(body):
        return
    # (tag, scope, source line) of the candidates the byte search can find: no namespace, a known line
    found = [(tag, scope, line) for el, tag, scope in acc.candidates if (line := _line(el)) and tag[:1] != "{"]
    starts = _line_starts(body, sorted({line for _, _, line in found}))
    for tag, scope, line in found:
        start = starts.get(line)
        raw = None if start is None else _raw_content(body, start, tag)
        if raw is not None and raw_offender(raw):
            acc.add("character-data-not-hex", scope, raw.decode("utf-8", "replace"))


def _ascii_compatible(body: bytes) -> bool:
    """Not UTF-16/32 (by BOM or NUL bytes): the byte search would not find ASCII markup there."""
    head = body[:4]
    return b"\x00" not in head and head[:2] not in (b"\xff\xfe", b"\xfe\xff")


def _line(el: Element) -> int | None:
    line: int | None = el.sourceline  # type: ignore[assignment]  # lxml-stubs leave it untyped
    return line
