"""A small HTML tokenizer: start tags with their attributes, end tags and text, the WHATWG way.

It follows the WHATWG tokenizer (HTML 13.2.5) for everything autodiscovery and
the ``<meta charset>`` prescan need, and nothing more:

* tag names and attribute names are ASCII-lowercased; the first of two
  attributes with the same name wins; attribute values get character-reference
  decoding with the attribute rules (``&copy=2`` stays as written);
* comments (including ``<!-->`` and ``<!--->``), doctypes, other ``<!...>``
  declarations, ``<?...>`` and ``</...>`` that is not an end tag are skipped,
  as is the content of raw-text elements (``script``, ``style``, ``title``,
  ``textarea``, ``noscript``... up to their end tag) and everything after
  ``<plaintext>``;
* a lone ``<`` is text; a tag or comment that is not closed swallows the rest
  of the document ("EOF in tag").

:func:`next_token` returns one token at a time and dispatches on the character
after ``<`` through a table, one small function per kind of markup.
:func:`body_skipper` builds a regular expression that jumps over markup that
cannot matter to a caller once the body has started.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Iterator
from html.entities import html5 as _HTML5_ENTITIES

__all__ = [
    "END",
    "RAW_TEXT",
    "START",
    "TEXT",
    "WS",
    "Token",
    "ascii_lower",
    "body_skipper",
    "next_token",
    "parse_attrs",
    "tokens",
]

#: ASCII whitespace as HTML defines it.
WS = "\t\n\f\r "
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

#: Token kinds.
START, END, TEXT = 0, 1, 2

#: (kind, lowercase tag name, attribute source, position after the token); TEXT has an empty name and source.
Token = tuple[int, str, str, int]
#: What a markup handler returns: a token, the position to go on from (markup skipped), or None (end of input).
_Step = Token | int | None


def ascii_lower(s: str) -> str:
    """Lower-case ASCII letters only, as HTML compares names."""
    return s.translate(_ASCII_LOWER)


# One attribute: a name (its first character may be '=' or a quote), then an optional value.
# A quoted value may run to the end of the input: then no '>' can follow and the tag is
# discarded, as "EOF in tag" does.
_ATTR = (
    rf"[^{WS}/>][^{WS}/=>]*+"
    rf"(?:[{WS}]*+=[{WS}]*+(?:\"[^\"]*+(?:\"|\Z)|'[^']*+(?:'|\Z)|[^{WS}>\"'][^{WS}>]*+|))?"
)
_TAG_BODY = rf"(?:[{WS}/]++|(?>{_ATTR}))*+"
_START_TAG = re.compile(rf"<([a-zA-Z][^{WS}/>]*+)({_TAG_BODY})>")
_END_TAG = re.compile(rf"</([a-zA-Z][^{WS}/>]*+){_TAG_BODY}>")
_ATTR_ITEM = re.compile(
    rf"([^{WS}/>][^{WS}/=>]*+)(?:([{WS}]*+=[{WS}]*+)(?:\"([^\"]*+)\"|'([^']*+)'|([^{WS}>\"'][^{WS}>]*+)|))?"
)
_COMMENT_END = re.compile(r"--!?>")
_NON_WS = re.compile(rf"[^{WS}]")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

#: Elements whose content the tokenizer reads as text up to the matching end tag
#: (RCDATA and RAWTEXT; noscript because browsers run with scripting enabled).
RAW_TEXT = ("iframe", "noembed", "noframes", "noscript", "script", "style", "textarea", "title", "xmp")
_RAW_TEXT_END = {name: re.compile(rf"</{name}[{WS}/>]", re.IGNORECASE | re.ASCII) for name in RAW_TEXT}


# ---------------------------------------------------------------------------
# Tokens


def next_token(text: str, pos: int) -> Token | None:
    """The next token at or after ``pos``: (kind, lowercase tag name, attribute source, position after it).

    Kinds: ``START`` and ``END`` tags, and ``TEXT`` for a run of non-space
    text (name and source empty). Comments, doctypes and the content of raw-text
    elements are skipped. None at the end of the input, including "EOF in tag"
    (an unterminated tag swallows the rest of the document).
    """
    n = len(text)
    while pos < n:
        lt = text.find("<", pos)
        if lt < 0:
            return (TEXT, "", "", n) if _NON_WS.search(text, pos) else None
        if lt > pos and _NON_WS.search(text, pos, lt):
            return TEXT, "", "", lt
        step = _AFTER_LT.get(text[lt + 1 : lt + 2], _lone_lt)(text, lt)
        if not isinstance(step, int):
            return step
        pos = step
    return None


def tokens(text: str) -> Iterator[tuple[int, str, str]]:
    """All tokens of ``text`` as (kind, name, attribute source)."""
    pos = 0
    while (token := next_token(text, pos)) is not None:
        kind, name, src, pos = token
        yield kind, name, src


def _start_tag(text: str, lt: int) -> _Step:
    m = _START_TAG.match(text, lt)
    if m is None:
        return None
    name = ascii_lower(m.group(1))
    return START, name, m.group(2), _content_end(text, name, m.end())


def _content_end(text: str, name: str, after_tag: int) -> int:
    """Where tokenizing goes on after a start tag: past the text content of raw-text elements."""
    end_re = _RAW_TEXT_END.get(name)
    if end_re is not None:
        end = end_re.search(text, after_tag)
        return len(text) if end is None else end.start()
    return len(text) if name == "plaintext" else after_tag


def _end_tag(text: str, lt: int) -> _Step:
    after = text[lt + 2 : lt + 3]
    if after in _LETTERS:
        m = _END_TAG.match(text, lt)
        return None if m is None else (END, ascii_lower(m.group(1)), "", m.end())
    if after == ">":  # '</>' is dropped
        return lt + 3
    if not after:  # '</' at EOF is text
        return TEXT, "", "", len(text)
    return _past_gt(text, lt + 2)  # a bogus comment


def _markup_declaration(text: str, lt: int) -> _Step:
    if text.startswith("--", lt + 2):
        return _comment(text, lt + 4)
    return _past_gt(text, lt + 2)  # doctype, CDATA outside foreign content, other markup declarations


def _comment(text: str, start: int) -> int | None:
    if text.startswith(">", start):  # '<!-->'
        return start + 1
    if text.startswith("->", start):  # '<!--->'
        return start + 2
    m = _COMMENT_END.search(text, start)
    return None if m is None else m.end()


def _processing_instruction(text: str, lt: int) -> _Step:
    return _past_gt(text, lt + 2)  # a bogus comment in HTML


def _lone_lt(_text: str, lt: int) -> _Step:
    return TEXT, "", "", lt + 1


def _past_gt(text: str, start: int) -> int | None:
    gt = text.find(">", start)
    return None if gt < 0 else gt + 1


#: What the character after '<' starts; anything else makes the '<' text.
_AFTER_LT: dict[str, Callable[[str, int], _Step]] = {
    **dict.fromkeys(_LETTERS, _start_tag),
    "/": _end_tag,
    "!": _markup_declaration,
    "?": _processing_instruction,
}


# ---------------------------------------------------------------------------
# Skipping body markup


def body_skipper(stop_tags: Iterable[str]) -> re.Pattern[str]:
    """A pattern matching (possibly empty) runs of markup that cannot matter once the body has started.

    It matches text, comments, end tags, declarations, start tags other than
    ``stop_tags`` (and ``plaintext``), and raw-text elements whose end tag
    exists. It stops before anything else, which :func:`next_token` then reads.
    """
    alternatives = "|".join((*stop_tags, "plaintext", *RAW_TEXT))
    return re.compile(
        r"(?:[^<]++"
        r"|<!--(?:>|->|.*?--!?>)"
        r"|<!(?!--)[^>]*+>"
        r"|<\?[^>]*+>"
        r"|</>"
        rf"|</[a-zA-Z][^{WS}/>]*+{_TAG_BODY}>"
        r"|</[^a-zA-Z>][^>]*+>"
        rf"|<(?!(?i:{alternatives})[{WS}/>])[a-zA-Z][^{WS}/>]*+{_TAG_BODY}>"
        # One alternative per raw-text element, not a backreference: CPython 3.11's possessive
        # repeats mis-track capturing groups ("The span of capturing group is wrong").
        + "".join(rf"|<(?i:{name})(?=[{WS}/>]){_TAG_BODY}>.*?(?=</(?i:{name})[{WS}/>])" for name in RAW_TEXT)
        + r"|<(?![a-zA-Z!/?])"
        r")*+",
        re.DOTALL | re.ASCII,  # ASCII case-insensitivity only, like the tokenizer's tag names
    )


# ---------------------------------------------------------------------------
# Attributes

_CHAR_REF = re.compile(r"&(?:#[xX][0-9a-fA-F]+;?|#[0-9]+;?|[A-Za-z][A-Za-z0-9]*;?)")


def _char_ref(m: re.Match[str]) -> str:
    ref = m.group(0)
    if ref[1] == "#":
        return html.unescape(ref)  # numeric: html.unescape applies the WHATWG replacements (0, surrogates, C1...)
    name = ref[1:]
    if name.endswith(";"):
        # '&ampfoo;' or '&notit;': a legacy prefix followed by an alphanumeric is left alone in attributes
        return _HTML5_ENTITIES.get(name, ref)
    # No semicolon: only legacy names, and in attributes not when followed by '=' (e.g. '?a=1&copy=2').
    if name in _HTML5_ENTITIES:
        following = m.string[m.end() : m.end() + 1]
        if following != "=":
            return _HTML5_ENTITIES[name]
    return ref


def _decode_attr(value: str) -> str:
    """Decode character references in an attribute value (WHATWG "character reference in attribute value")."""
    return _CHAR_REF.sub(_char_ref, value) if "&" in value else value


def parse_attrs(src: str, *, decode: bool = True) -> dict[str, str]:
    """Attributes of a tag (names ASCII-lowercased, first occurrence wins, values decoded unless ``decode=False``)."""
    attrs: dict[str, str] = {}
    for m in _ATTR_ITEM.finditer(src):
        name = ascii_lower(m.group(1))
        if name in attrs:
            continue
        value = m.group(3)
        if value is None:
            value = m.group(4)
            if value is None:
                value = m.group(5) or ""
        attrs[name] = _decode_attr(value) if decode else value
    return attrs
