"""Bytes to a tree: the encoding candidates, the strict parse, then recovery (see "XML safety" and
"Encodings" in the package docstring)."""

from __future__ import annotations

import codecs
import re
import threading
from typing import Any

from lxml import etree

from pipelines.document.encoding import How, byte_order_mark, is_wide, same_charset, xml_encoding
from pipelines.document.feedparse.lifting import TreeNotes, _lift_cdata
from pipelines.document.xmlrefs import fix_surrogate_refs, safe_parser

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
