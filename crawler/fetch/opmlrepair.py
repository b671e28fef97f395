"""Decoding and repairing an OPML body that is not well-formed XML, before its ``recover=True`` parse.

:func:`crawler.fetch.opml.parse_opml` calls these when the strict parse fails (or the DOCTYPE
declares entities); the module docstring there lists the repairs. Each repair adds a warning
("line N: ...") to the list it is given, and keeps the line numbers of the text as they were.
"""

from __future__ import annotations

import bisect
import codecs
import html.entities
import re

from lxml import etree

from pipelines.document.encoding import byte_order_mark, declared_encoding, first_bytes_encoding, is_wide

__all__ = ["WRAPPER", "decode", "drop_entity_declarations", "log_parser_errors", "one_line", "repair", "wrap"]

_MAX_LISTED_WARNINGS = 20
#: The private element the repaired text is wrapped in (a second root or junk after it is not fatal).
WRAPPER = "feedcensus-opml-wrapper"
_XML_PREDEFINED = frozenset({"amp", "lt", "gt", "quot", "apos"})


def decode(body: bytes, warnings: list[str]) -> str:
    """The text of a document to repair (encoding rules: pipelines/document/encoding.py).

    A byte order mark, then UTF-16/32 from the first bytes (a bare ``<`` and NUL
    too: Python decodes it even where libxml2 would not), then the declared
    encoding, UTF-8, windows-1252 and latin-1: the first that decodes.
    """
    bom = byte_order_mark(body)
    if bom is not None:
        mark, encoding = bom[0], codecs.lookup(bom[1]).name
        text = body[len(mark) :].decode(encoding, "replace")
        if "\ufffd" in text and "\ufffd".encode(encoding) not in body:
            warnings.append(f"bytes not valid {encoding} despite the byte order mark; replaced")
        return text
    wide = first_bytes_encoding(body, bare_utf16=True)  # UTF-16/32 without a byte order mark
    if wide is not None:
        return body.decode(wide, "replace")
    declared: str | None = None
    name = declared_encoding(body[:512])
    if name is not None:
        try:
            declared = codecs.lookup(name).name
        except LookupError:
            warnings.append(f"unknown encoding {name!r} declared; decoded as UTF-8 or windows-1252")
        if declared is not None and is_wide(declared):
            declared = None  # no BOM and no NUL pattern: the bytes are not UTF-16/32 whatever the declaration says
    candidates = [enc for enc in (declared, "utf-8", "cp1252", "latin-1") if enc]
    for encoding in candidates:
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError:
            continue
        if encoding != (declared or "utf-8"):
            said = f"declared {declared}" if declared else "no declared encoding"
            warnings.append(f"bytes do not match the encoding ({said}); decoded as {encoding}")
        return text
    return body.decode("latin-1")  # unreachable: latin-1 decodes any bytes


_INTERNAL_SUBSET = re.compile(r"<!DOCTYPE[^\[>]*\[(.*?)\]\s*>", re.DOTALL | re.IGNORECASE)


def drop_entity_declarations(text: str, warnings: list[str]) -> str:
    """Blank out a DOCTYPE's internal subset when it declares entities: their references stay text."""
    match = _INTERNAL_SUBSET.search(text)
    if match is None or "<!ENTITY" not in match.group(1):
        return text
    subset = match.group(1)
    declared = subset.count("<!ENTITY")
    warnings.append(f"DOCTYPE declares {declared} entities: declarations ignored, references kept as text")
    blank = "\n" * subset.count("\n")
    return text[: match.start(1)] + blank + text[match.end(1) :]


_XML_DECL = re.compile(r"\s*<\?xml\s[^>]*\?>", re.IGNORECASE)
_AMP_OR_SKIP = re.compile(
    r"<!\[CDATA\[.*?(?:\]\]>|$)|<!--.*?(?:-->|$)|&(?:([A-Za-z_][\w.\-]*);|#[0-9]+;|#[xX][0-9A-Fa-f]+;)?",
    re.DOTALL,
)
_FORBIDDEN_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def repair(text: str, warnings: list[str]) -> str:
    """Escape bare ``&``, HTML entities and broken outline attributes; drop a misplaced XML declaration and forbidden characters."""
    if text.startswith("\ufeff"):
        text = text[1:]
    decl = _XML_DECL.match(text)
    if decl:  # drop it (encoding is now known; a misplaced one is fatal) but keep the line count
        text = "\n" * decl.group(0).count("\n") + text[decl.end() :]

    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(pos: int) -> int:
        return bisect.bisect_left(newlines, pos) + 1

    text, fixed_tags = _repair_outline_tags(text)
    _summarise(
        warnings, [line_of(pos) for pos in fixed_tags], "quotes or '<' inside an outline attribute value escaped"
    )
    if fixed_tags:  # escaping moved the offsets (not the lines)
        newlines = [m.start() for m in re.finditer("\n", text)]
    bare_lines: list[int] = []
    html_lines: list[int] = []
    unknown: list[tuple[int, str]] = []

    def fix(match: re.Match[str]) -> str:
        token = match.group(0)
        if not token.startswith("&"):
            return token  # CDATA section or comment: left alone
        if token == "&":
            bare_lines.append(line_of(match.start()))
            return "&amp;"
        name = match.group(1)
        if name is None or name in _XML_PREDEFINED:
            return token
        chars = html.entities.html5.get(name + ";")
        if chars is not None:
            html_lines.append(line_of(match.start()))
            return "".join(f"&#{ord(ch)};" for ch in chars)
        unknown.append((line_of(match.start()), name))
        return "&amp;" + token[1:]

    text = _AMP_OR_SKIP.sub(fix, text)
    _summarise(warnings, bare_lines, "unescaped '&' escaped")
    _summarise(warnings, html_lines, "HTML entity turned into a character reference")
    for line, name in unknown[:_MAX_LISTED_WARNINGS]:
        warnings.append(f"line {line}: undefined entity '&{name};' kept as text")
    if len(unknown) > _MAX_LISTED_WARNINGS:
        warnings.append(f"{len(unknown) - _MAX_LISTED_WARNINGS} more undefined entities kept as text")

    forbidden = len(_FORBIDDEN_CHARS.findall(text))
    if forbidden:
        text = _FORBIDDEN_CHARS.sub("", text)
        warnings.append(f"{forbidden} characters not allowed in XML removed")
    return text


def _summarise(warnings: list[str], lines: list[int], what: str) -> None:
    """One warning per line (the first twenty), then how many more lines."""
    if not lines:
        return
    distinct = sorted(set(lines))
    for line in distinct[:_MAX_LISTED_WARNINGS]:
        warnings.append(f"line {line}: {what}")
    if len(distinct) > _MAX_LISTED_WARNINGS:
        warnings.append(f"{len(distinct) - _MAX_LISTED_WARNINGS} more lines: {what}")


_OUTLINE_START = re.compile(r"<outline(?=[\s/>])", re.IGNORECASE)
_OUTLINE_LIMIT = re.compile(r"<outline[\s/>]|</body", re.IGNORECASE)
_TAG_END = re.compile(r"\s*/?>")
_ATTR_START = re.compile(r"(\s*)([^\s=/>\"'<]+)(\s*=\s*)?")
_UNQUOTED_VALUE = re.compile(r"[^\s>\"']*?(?=\s|/?>)")
_VALUE_BOUNDARY = re.compile(r"\s+[^\s=/>\"'<]+\s*=\s*[\"']|\s*/?>\s*(?:<|\Z)")


def _repair_outline_tags(text: str) -> tuple[str, list[int]]:
    """Re-quote the attributes of ``<outline>`` start tags whose values hold raw quotes or markup.

    Real lists carry HTML descriptions (``description="<p>..."``) and titles with
    unescaped quotes (``text="The "Daily" News"``); libxml2 drops the rest of such
    a tag, ``xmlUrl`` included. A value ends at the first closing quote followed by
    another attribute or by the end of the tag (then whitespace and ``<``), and,
    when possible, not inside an HTML tag written in the value. The values are
    re-written with ``<`` and ``"`` escaped; a tag that cannot be read this way is
    left as it is. Newlines are kept, so line numbers do not change.
    """
    out: list[str] = []
    fixed: list[int] = []
    done = 0
    for match in _OUTLINE_START.finditer(text):
        start = match.start()
        if start < done:
            continue
        limit_match = _OUTLINE_LIMIT.search(text, match.end())
        limit = limit_match.start() if limit_match else len(text)
        rewritten, end = _rewrite_tag(text, match.end(), limit)
        if rewritten is None:
            continue
        original = text[start:end]
        new = "<outline" + rewritten
        if new != original:
            out.append(text[done:start])
            out.append(new)
            fixed.append(start)
            done = end
    out.append(text[done:])
    return "".join(out), fixed


def _rewrite_tag(text: str, pos: int, limit: int) -> tuple[str | None, int]:
    parts: list[str] = []
    while pos < limit:
        end = _TAG_END.match(text, pos)
        if end:
            parts.append(end.group(0))
            return "".join(parts), end.end()
        attr = _ATTR_START.match(text, pos)
        if attr is None or attr.end() == pos:
            return None, pos
        space, name, equals = attr.groups()
        pos = attr.end()
        if not equals:
            parts.append(f'{space}{name}=""')
            continue
        quote = text[pos : pos + 1]
        if quote in ('"', "'"):
            value_end = _value_end(text, pos + 1, limit, quote)
            if value_end is None:
                return None, pos
            value = text[pos + 1 : value_end]
            pos = value_end + 1
        else:
            unquoted = _UNQUOTED_VALUE.match(text, pos, limit)
            if unquoted is None:
                return None, pos
            value = unquoted.group(0)
            pos = unquoted.end()
        escaped = value.replace("<", "&lt;").replace('"', "&quot;")
        parts.append(f'{space}{name}{equals}"{escaped}"')
    return None, pos


def _value_end(text: str, start: int, limit: int, quote: str) -> int | None:
    candidates: list[int] = []
    index = text.find(quote, start, limit)
    while index != -1:
        if _VALUE_BOUNDARY.match(text, index + 1):
            value = text[start:index]
            if value.count("<") <= value.count(">"):
                return index
            candidates.append(index)
        index = text.find(quote, index + 1, limit)
    return candidates[0] if candidates else None


_PROLOG_ITEM = re.compile(
    r"\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*(?:\[.*?\]\s*)?>",
    re.DOTALL | re.IGNORECASE,
)


def wrap(text: str) -> str:
    """Put a private element around everything after the prolog (same line numbers)."""
    pos = 0
    while True:
        match = _PROLOG_ITEM.match(text, pos)
        if match is None or match.end() == pos:
            break
        pos = match.end()
    return f"{text[:pos]}<{WRAPPER}>{text[pos:]}</{WRAPPER}>"


def log_parser_errors(parser: etree.XMLParser, warnings: list[str]) -> None:
    """What libxml2 reported during the recover parse, as warnings (the first twenty, then a count)."""
    errors = list(parser.error_log)
    for entry in errors[:_MAX_LISTED_WARNINGS]:
        message = one_line(entry.message).replace(WRAPPER, "document")
        warnings.append(f"line {entry.line}: {message} (recovered; content near here may be lost)")
    if len(errors) > _MAX_LISTED_WARNINGS:
        warnings.append(f"{len(errors) - _MAX_LISTED_WARNINGS} more XML errors recovered")


def one_line(message: str) -> str:
    """``message`` with every run of whitespace, newlines included, made one space."""
    return " ".join(message.split())
