"""Lifting large CDATA sections out of a UTF-8 document before parsing, and restoring their text
(:class:`TreeNotes`)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from pipelines.document.dates import ParsedDate

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
    start one. Deleting the continuation bytes is faster than decoding (benchmarks/RESULTS.md, section 11)."""
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
