"""Which character encoding an XML document is in: read once, for the feed parser, the sniffer and OPML.

No lxml here: :mod:`pipelines.document.sniff` (imported by the spider) uses it too.

Decisions, written down once:

Byte order mark
    Wins over everything else (:func:`byte_order_mark`). UTF-32 marks are
    looked for before UTF-16 ones, since ``FF FE 00 00`` starts with ``FF FE``.
    Names are written as the feed parser reports them (``utf-16le``);
    ``codecs.lookup(name).name`` gives Python's spelling (``utf-16-le``).

The first bytes, without a mark
    :data:`PATTERNS` are the four byte patterns libxml2 itself recognises
    (``<?`` in UTF-16, ``<`` in UTF-32); the feed parser and the sniffer use
    only these, since lxml reads the document. OPML decodes the text itself
    when it repairs a document, so it also takes ``<`` followed by a NUL byte
    (``bare_utf16=True``): UTF-16 without a mark or a declaration.

The XML declaration
    :func:`declared_encoding` reads ``encoding="..."`` from an XML
    declaration at the start of the bytes (after whitespace), as written.
    A declaration of a 16- or 32-bit encoding (:func:`is_wide`) in a document
    that has neither a mark nor a NUL pattern was read as single bytes, so it
    cannot be right.

HTTP
    :func:`header_charset` is the ``charset`` parameter of Content-Type;
    whether it is used, and when, is each caller's decision (the feed parser
    uses it only when the document declares nothing, see
    :mod:`pipelines.document.feedparse`).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Mapping
from enum import StrEnum

__all__ = [
    "BOMS",
    "PATTERNS",
    "How",
    "byte_order_mark",
    "declared_encoding",
    "first_bytes_encoding",
    "header_charset",
    "is_wide",
    "same_charset",
    "xml_encoding",
]


class How(StrEnum):
    """Where :func:`xml_encoding` found the encoding."""

    BOM = "bom"
    PATTERN = "pattern"
    DECLARED = "declared"
    DEFAULT = "default"


#: (mark, encoding), UTF-32 before UTF-16.
BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32le"),
    (codecs.BOM_UTF32_BE, "utf-32be"),
    (codecs.BOM_UTF16_LE, "utf-16le"),
    (codecs.BOM_UTF16_BE, "utf-16be"),
)
#: The first four bytes of a document without a mark, as libxml2 recognises them.
PATTERNS: dict[bytes, str] = {
    b"<\x00\x00\x00": "utf-32le",
    b"\x00\x00\x00<": "utf-32be",
    b"<\x00?\x00": "utf-16le",
    b"\x00<\x00?": "utf-16be",
}
#: UTF-16 from its first two bytes alone (only where the text is decoded in Python).
_BARE_UTF16: dict[bytes, str] = {b"<\x00": "utf-16le", b"\x00<": "utf-16be"}

_DECL_ENCODING = re.compile(rb"""\s*<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z][\w.:+-]{0,40})["']""")
_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([^"';,\s]+)""", re.IGNORECASE)
_WIDE_ENCODINGS = ("utf-16", "utf16", "utf-32", "utf32", "ucs-2", "ucs2", "ucs-4", "ucs4", "iso-10646-ucs")


def byte_order_mark(body: bytes) -> tuple[bytes, str] | None:
    """(mark, encoding) when ``body`` starts with a byte order mark."""
    for bom, name in BOMS:
        if body.startswith(bom):
            return bom, name
    return None


def first_bytes_encoding(body: bytes, *, bare_utf16: bool = False) -> str | None:
    """UTF-16 or UTF-32 recognised from the first bytes of a document without a mark (see the module docstring)."""
    name = PATTERNS.get(body[:4])
    if name is None and bare_utf16:
        name = _BARE_UTF16.get(body[:2])
    return name


def declared_encoding(body: bytes) -> str | None:
    """The encoding named in the XML declaration at the start of ``body``, as written."""
    m = _DECL_ENCODING.match(body)
    return m.group(1).decode("ascii") if m is not None else None


def is_wide(name: str) -> bool:
    """Whether an encoding name is a 16- or 32-bit one (UTF-16, UTF-32, UCS-2, UCS-4)."""
    return name.lower().startswith(_WIDE_ENCODINGS)


def xml_encoding(body: bytes) -> tuple[str, How]:
    """(lower-cased encoding, where it was found): mark, libxml2's patterns, declaration, else UTF-8."""
    bom = byte_order_mark(body)
    if bom is not None:
        return bom[1], How.BOM
    name = first_bytes_encoding(body)
    if name is not None:
        return name, How.PATTERN
    name = declared_encoding(body)
    if name is not None:
        return name.lower(), How.DECLARED
    return "utf-8", How.DEFAULT


def header_charset(headers: Mapping[str, str] | Mapping[bytes, object] | None) -> str | None:
    """The lower-cased ``charset`` of the Content-Type header (str or bytes keys, values or lists of them)."""
    if not headers:
        return None
    for key, value in headers.items():
        k = key.decode("latin-1") if isinstance(key, bytes) else str(key)
        if k.lower() == "content-type":
            m = _CHARSET.search(_first_value(value))
            return m.group(1).lower() if m else None
    return None


def _first_value(value: object) -> str:
    if isinstance(value, list | tuple):
        value = value[0] if value else ""
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def same_charset(a: str, b: str) -> bool:
    """Whether two names are the same codec (compared as written when Python knows either not)."""
    try:
        return codecs.lookup(a).name == codecs.lookup(b).name
    except LookupError:
        return a == b
