"""Feed autodiscovery: the RSS, Atom and RDF feed links an HTML page advertises.

``discover(body, url, headers)`` is a pure function over the bytes of a page.
It decodes them the way a browser would (``decode_html``), tokenizes the HTML
with a small hand-written tokenizer that follows the WHATWG tokenizer for
everything that matters here (tags, attributes, comments, raw-text elements,
character references), tracks the head/body insertion modes of the WHATWG tree
builder without building a tree, and judges each feed link against the two
autodiscovery specs:

* RSS Board, "RSS Autodiscovery" 1.0 (2006) -> ``FeedLink.conforms_rss``
* draft-ietf-atompub-autodiscovery-01 (2005) -> ``FeedLink.conforms_atom``

Every failed rule is reported by a stable id in ``FeedLink.reasons``; ``RULES``
documents each id. Decisions taken where the specs and browsers leave room:

* A feed link is a ``<link>`` whose rel token list (split on ASCII whitespace)
  contains ``alternate`` in any ASCII case, and whose type, trimmed and with any
  ``;parameters`` removed, is ``application/rss+xml``, ``application/atom+xml``
  or ``application/rdf+xml`` in any ASCII case. ``text/xml``,
  ``application/xml``, ``application/feed+json``, ``text/html`` (hreflang
  translations), oEmbed types, icons and stylesheets are not feed links: the
  generic XML types also label sitemaps, oEmbed and OpenSearch documents, and
  neither spec names them. ``<a>`` elements are never feed links.
* ``rel``, ``type``, ``href_raw`` and ``title`` are the attribute values after
  character-reference decoding but before trimming ("as written"); matching and
  URL resolution use the trimmed values (Atom draft 3.2: clients MUST ignore
  leading and trailing spaces).
* Parsing follows a browser with scripting enabled: ``<noscript>`` is raw text,
  so a tracking pixel inside ``<noscript>`` in the head does not end the head,
  and links inside ``<noscript>`` are not elements. Links in ``<script>``,
  ``<style>``, ``<title>``, ``<textarea>``, comments and ``<template>`` contents
  are not found. Links between ``</head>`` and ``<body>`` are put in the head,
  as the HTML parser does; any other content (non-space text, ``<img>``,
  ``<div>``...) ends the head, so later links are body links.
* Base URI: the first ``<base>`` element with an ``href`` attribute anywhere in
  the document (HTML's rule; position relative to the links does not matter),
  resolved against the page URL. A base that cannot be resolved or is not
  hierarchical (``javascript:``, ``mailto:``...) is ignored and the page URL
  is used, as is the page URL when there is no base.
* Resolution is RFC 3986 section 5.2 with two browser habits: leading/trailing
  C0 controls and spaces are stripped and tabs/newlines inside the href are
  removed (WHATWG URL), and ``http:feed`` on an http page is read as a relative
  reference (the RFC's "non-strict" mode, for http/https only). The resolved
  URL gets scheme-based normalisation only: lowercase scheme, ``/`` for an
  empty http(s) path. Nothing else (hosts, escapes) is rewritten.
* Duplicates: links whose resolved URLs are equal after lowercasing scheme and
  host and dropping the fragment are one feed; the first is kept and gets
  ``rss-duplicate-feed`` (the RSS Board spec: each link must identify a
  different feed; the Atom draft only says SHOULD). ``position`` is the index in
  the returned list, so positions are 0..n-1 after duplicates are dropped.
* Atom links are judged against the RSS Board spec too, and fail it with
  ``rss-type-not-rss`` (it names application/rss+xml as the only type, also for
  RSS 1.0); RDF links likewise. RSS and RDF links fail the Atom draft with
  ``atom-type-not-atom``. An RSS type with parameters (``; charset=utf-8``)
  still conforms if the whole value is lowercase ("contain the feed's MIME
  type").
* ``followable``: resolved, http/https with a host, not empty, at most
  ``MAX_HREF_LENGTH`` characters, and in the head (body links only with
  ``follow_body=True``). A syntactically invalid URI (``href-not-uri``, e.g. a
  space) stays followable: the crawler escapes it like a browser would.
"""

from __future__ import annotations

import codecs
import html
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from html.entities import html5 as _HTML5_ENTITIES

from schemas.items import LINK_FIELDS, FeedLink

__all__ = ["LINK_FIELDS", "MAX_HREF_LENGTH", "RULES", "FeedLink", "decode_html", "discover"]

#: Longest resolved href still followed (Scrapy's ``URLLENGTH_LIMIT`` default).
MAX_HREF_LENGTH = (
    8192  # the crawl's URL limit (FEEDCENSUS_MAX_URL_LENGTH default), so a link is judged as a request would be
)

#: How many bytes the ``<meta charset>`` prescan looks at. WHATWG says 1024;
#: Chrome keeps looking further inside the head, so allow a little more.
PRESCAN_BYTES = 4096

RULES: dict[str, str] = {
    "not-in-head": "The link is in the body, not the head (RSS Board: must be placed within the head element; "
    "Atom draft 3.1: MUST NOT appear within <body>).",
    "href-missing": "The link has no href attribute (RSS Board: must have href, rel and type; Atom draft 4.3: href MUST be present).",
    "href-empty": "The href is empty or only whitespace, so it names the page itself, not a feed "
    "(RSS Board: href must be the feed's URL; Atom draft 4.3: MUST be the URI of an Atom feed).",
    "href-not-uri": "The trimmed href is not a valid RFC 3986 URI reference: spaces, non-ASCII, backslashes, bad %-escapes, "
    "two '#'... (Atom draft 4.3: MUST be a URI [RFC3986]; RSS Board: must be the feed's URL).",
    "rss-duplicate-feed": "Another feed link on the page resolves to the same URL (only the first is returned) "
    "(RSS Board: each autodiscovery link must identify a different feed).",
    "rss-rel-not-lowercase": "The alternate keyword is not written in lowercase, e.g. 'Alternate' or '&#65;lternate' "
    '(RSS Board: "alternate" must be lowercase).',
    "rss-rel-extra-tokens": "rel holds keywords besides 'alternate', e.g. 'alternate home' "
    '(RSS Board: the value must not contain keywords other than "alternate").',
    "rss-type-not-rss": "The type is an Atom or RDF media type, not application/rss+xml "
    '(RSS Board: type must be "application/rss+xml", also for RSS 1.0).',
    "rss-type-not-lowercase": "The RSS type is not all lowercase, e.g. 'APPLICATION/RSS+XML' "
    "(RSS Board: the value must be lowercase for autodiscovery).",
    "atom-type-not-atom": 'The type does not contain "application/atom+xml" in any case: an RSS or RDF link (Atom draft 4.2).',
    "href-relative-without-base": "Crawler policy, no spec: a relative href with no usable <base href> and no absolute page URL "
    "to resolve it against; href is None.",
    "href-unsupported-scheme": "Crawler policy, no spec: the resolved URL's scheme is not http or https "
    "(javascript:, data:, file:, mailto:, feed:...); not followed.",
    "href-no-host": "Crawler policy, no spec: an http(s) URL without a host, e.g. 'http:///feed' or 'http:feed' on an "
    "https page; not followed.",
    "href-too-long": f"Crawler policy, no spec: the resolved URL is longer than {MAX_HREF_LENGTH} characters "
    "(the crawl's URL limit); not followed.",
}

_SHARED_RULES = frozenset({"not-in-head", "href-missing", "href-empty", "href-not-uri"})
_RSS_RULES = _SHARED_RULES | {
    "rss-duplicate-feed",
    "rss-rel-not-lowercase",
    "rss-rel-extra-tokens",
    "rss-type-not-rss",
    "rss-type-not-lowercase",
}
_ATOM_RULES = _SHARED_RULES | {"atom-type-not-atom"}
_UNFOLLOWABLE = frozenset(
    {
        "href-missing",
        "href-empty",
        "href-relative-without-base",
        "href-unsupported-scheme",
        "href-no-host",
        "href-too-long",
    }
)

_FEED_TYPES = {"application/rss+xml": "rss", "application/atom+xml": "atom", "application/rdf+xml": "rdf"}


# ---------------------------------------------------------------------------
# Encoding


_WS = "\t\n\f\r "
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")

#: WHATWG Encoding labels whose decoder differs from the Python codec of the same name.
_LABEL_ALIASES: dict[str, str] = {
    **dict.fromkeys(
        (
            "ansi_x3.4-1968",
            "ascii",
            "cp819",
            "csisolatin1",
            "ibm819",
            "iso-8859-1",
            "iso-ir-100",
            "iso8859-1",
            "iso88591",
            "iso_8859-1",
            "iso_8859-1:1987",
            "l1",
            "latin1",
            "us-ascii",
            "x-cp1252",
        ),
        "cp1252",
    ),
    **dict.fromkeys(("iso-8859-9", "iso8859-9", "iso88599", "iso_8859-9", "latin5", "l5", "x-cp1254"), "cp1254"),
    **dict.fromkeys(("iso-8859-11", "iso8859-11", "iso885911", "tis-620", "dos-874", "windows-874"), "cp874"),
    **dict.fromkeys(("gb2312", "gbk", "x-gbk", "chinese", "csgb2312", "gb_2312", "gb_2312-80", "iso-ir-58"), "gb18030"),
    **dict.fromkeys(("big5", "big5-hkscs", "cn-big5", "csbig5", "x-x-big5"), "big5hkscs"),
    **dict.fromkeys(
        ("euc-kr", "ks_c_5601-1987", "ks_c_5601-1989", "ksc5601", "ksc_5601", "korean", "windows-949"), "cp949"
    ),
    **dict.fromkeys(
        ("shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "ms932", "windows-31j", "csshiftjis"), "cp932"
    ),
    **dict.fromkeys(("x-mac-cyrillic", "x-mac-ukrainian"), "mac-cyrillic"),
    **dict.fromkeys(("macintosh", "mac", "x-mac-roman", "csmacintosh"), "mac-roman"),
    "x-user-defined": "cp1252",
}
#: Python codecs no browser decodes HTML with (or that are not charsets at all).
_REFUSED_CODECS = frozenset(
    {
        "utf-7",
        "idna",
        "punycode",
        "unicode-escape",
        "raw-unicode-escape",
        "undefined",
        "utf-32",
        "utf-32-le",
        "utf-32-be",
    }
)


def _ascii_lower(s: str) -> str:
    return s.translate(_ASCII_LOWER)


def _codec_for_label(label: str) -> str | None:
    """The Python codec for an encoding label, or None when it is unknown or refused."""
    name = _ascii_lower(label.strip(_WS + "\"'"))
    if not name:
        return None
    name = _LABEL_ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except (LookupError, ValueError, TypeError):
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _REFUSED_CODECS:
        return None
    return "utf-16-le" if info.name == "utf-16" else info.name


def _charset_param(value: str) -> str | None:
    """The charset named in a Content-Type value or a meta ``content`` (WHATWG "extract a character encoding")."""
    lowered = _ascii_lower(value)
    i = 0
    while True:
        i = lowered.find("charset", i)
        if i < 0:
            return None
        j = i + 7
        while j < len(value) and value[j] in _WS:
            j += 1
        if j >= len(value) or value[j] != "=":
            i = j
            continue
        j += 1
        while j < len(value) and value[j] in _WS:
            j += 1
        if j >= len(value):
            return None
        if value[j] in "\"'":
            end = value.find(value[j], j + 1)
            return None if end < 0 else value[j + 1 : end]
        end = j
        while end < len(value) and value[end] not in _WS + ";":
            end += 1
        return value[j:end]


def _header(headers: Mapping[str, str] | None, wanted: str) -> str | None:
    """A header value by case-insensitive name; tolerates bytes keys/values and list values (Scrapy's Headers)."""
    if not headers:
        return None
    try:
        items = list(headers.items())
    except Exception:
        return None
    for key, value in items:
        k = key.decode("latin-1") if isinstance(key, bytes | bytearray) else str(key)
        if _ascii_lower(k.strip()) != wanted:
            continue
        if isinstance(value, list | tuple):
            value = value[0] if value else ""
        return value.decode("latin-1") if isinstance(value, bytes | bytearray) else str(value)
    return None


def _prescan(data: bytes) -> str | None:
    """The encoding a ``<meta charset>`` or ``<meta http-equiv=content-type>`` near the top of the page names."""
    text = data[:PRESCAN_BYTES].decode("latin-1")
    if "<" not in text:
        return None
    for kind, name, src in _tokens(text):
        if kind != _START or name != "meta":
            continue
        attrs = _parse_attrs(src, decode=False)
        label = attrs.get("charset")
        if label is None and _ascii_lower(attrs.get("http-equiv", "").strip(_WS)) == "content-type":
            label = _charset_param(attrs.get("content", ""))
        if label is None:
            continue
        codec = _codec_for_label(label)
        if codec is None:
            continue
        # A meta found by an ASCII scan cannot describe a UTF-16 page (WHATWG): read it as UTF-8.
        return "utf-8" if codec.startswith("utf-16") else codec
    return None


def decode_html(body: bytes, headers: Mapping[str, str] | None = None) -> tuple[str, str]:
    """Decode an HTML page as a browser would; returns (text, Python codec name used).

    Order: byte order mark, then the HTTP Content-Type charset, then a
    ``<meta>`` charset in the first ``PRESCAN_BYTES`` bytes, else UTF-8.
    Unknown or refused labels are skipped; undecodable bytes become U+FFFD.
    Never raises.
    """
    if isinstance(body, bytes):
        data = body
    elif isinstance(body, bytearray | memoryview):
        data = bytes(body)
    elif isinstance(body, str):  # not the contract, but never worth an exception
        return body, "utf-8"
    else:
        data = b""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", "replace"), "utf-8"
    if data.startswith(b"\xff\xfe"):
        return data[2:].decode("utf-16-le", "replace"), "utf-16-le"
    if data.startswith(b"\xfe\xff"):
        return data[2:].decode("utf-16-be", "replace"), "utf-16-be"
    encoding = None
    content_type = _header(headers, "content-type")
    if content_type:
        label = _charset_param(content_type)
        if label is not None:
            encoding = _codec_for_label(label)
    if encoding is None:
        encoding = _prescan(data) or "utf-8"
    try:
        return data.decode(encoding, "replace"), encoding
    except Exception:  # a codec that misbehaves on odd input must not take discovery down
        return data.decode("utf-8", "replace"), "utf-8"


# ---------------------------------------------------------------------------
# Tokenizer (WHATWG 13.2.5, reduced to what autodiscovery needs)

_START, _END, _TEXT = 0, 1, 2

# One attribute: a name (its first character may be '=' or a quote), then an optional value.
# A quoted value may run to the end of the input: then no '>' can follow and the tag is
# discarded, as "EOF in tag" does.
_ATTR = (
    rf"[^{_WS}/>][^{_WS}/=>]*+"
    rf"(?:[{_WS}]*+=[{_WS}]*+(?:\"[^\"]*+(?:\"|\Z)|'[^']*+(?:'|\Z)|[^{_WS}>\"'][^{_WS}>]*+|))?"
)
_TAG_BODY = rf"(?:[{_WS}/]++|(?>{_ATTR}))*+"
_START_TAG = re.compile(rf"<([a-zA-Z][^{_WS}/>]*+)({_TAG_BODY})>")
_END_TAG = re.compile(rf"</([a-zA-Z][^{_WS}/>]*+){_TAG_BODY}>")
_ATTR_ITEM = re.compile(
    rf"([^{_WS}/>][^{_WS}/=>]*+)(?:([{_WS}]*+=[{_WS}]*+)(?:\"([^\"]*+)\"|'([^']*+)'|([^{_WS}>\"'][^{_WS}>]*+)|))?"
)
_COMMENT_END = re.compile(r"--!?>")
_NON_WS = re.compile(rf"[^{_WS}]")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

#: Elements whose content the tokenizer reads as text up to the matching end tag
#: (RCDATA and RAWTEXT; noscript because browsers run with scripting enabled).
_RAW_TEXT = ("iframe", "noembed", "noframes", "noscript", "script", "style", "textarea", "title", "xmp")
_RAW_TEXT_END = {name: re.compile(rf"</{name}[{_WS}/>]", re.IGNORECASE | re.ASCII) for name in _RAW_TEXT}


def _next_token(text: str, pos: int) -> tuple[int, str, str, int] | None:
    """The next token at or after ``pos``: (kind, lowercase tag name, attribute source, position after it).

    Kinds: ``_START`` and ``_END`` tags, and ``_TEXT`` for a run of non-space
    text (name and source empty). Comments, doctypes and the content of raw-text
    elements are skipped. None at the end of the input, including "EOF in tag"
    (an unterminated tag swallows the rest of the document).
    """
    n = len(text)
    find = text.find
    while pos < n:
        lt = find("<", pos)
        if lt < 0:
            return (_TEXT, "", "", n) if _NON_WS.search(text, pos) else None
        if lt > pos and _NON_WS.search(text, pos, lt):
            return _TEXT, "", "", lt
        nxt = text[lt + 1 : lt + 2]
        if nxt in _LETTERS:
            m = _START_TAG.match(text, lt)
            if m is None:
                return None
            name = _ascii_lower(m.group(1))
            after_tag = m.end()
            end_re = _RAW_TEXT_END.get(name)
            if end_re is not None:
                e = end_re.search(text, after_tag)
                after_tag = n if e is None else e.start()
            elif name == "plaintext":
                after_tag = n
            return _START, name, m.group(2), after_tag
        if nxt == "/":
            after = text[lt + 2 : lt + 3]
            if after in _LETTERS:
                m = _END_TAG.match(text, lt)
                if m is None:
                    return None
                return _END, _ascii_lower(m.group(1)), "", m.end()
            if after == ">":  # '</>' is dropped
                pos = lt + 3
                continue
            if not after:  # '</' at EOF is text
                return _TEXT, "", "", n
            gt = find(">", lt + 2)  # bogus comment
            if gt < 0:
                return None
            pos = gt + 1
        elif nxt == "!":
            if text.startswith("--", lt + 2):
                p = lt + 4
                if text.startswith(">", p):  # '<!-->'
                    pos = p + 1
                elif text.startswith("->", p):  # '<!--->'
                    pos = p + 2
                else:
                    m = _COMMENT_END.search(text, p)
                    if m is None:
                        return None
                    pos = m.end()
            else:  # doctype, CDATA outside foreign content, other markup declarations
                gt = find(">", lt + 2)
                if gt < 0:
                    return None
                pos = gt + 1
        elif nxt == "?":  # processing instruction: a bogus comment in HTML
            gt = find(">", lt + 2)
            if gt < 0:
                return None
            pos = gt + 1
        else:  # a lone '<' is text
            return _TEXT, "", "", lt + 1
    return None


def _tokens(text: str) -> Iterator[tuple[int, str, str]]:
    """All tokens of ``text`` as (kind, name, attribute source)."""
    pos = 0
    while (token := _next_token(text, pos)) is not None:
        kind, name, src, pos = token
        yield kind, name, src


#: Start tags the body fast path must stop at: the ones discovery reads, and the
#: ones that change how the tokenizer reads what follows.
_BODY_STOP = ("base", "link", "plaintext", "template")
_ALT_NAMES = "|".join(_BODY_STOP + _RAW_TEXT)
#: A run of markup that cannot matter once the body has started: text, comments,
#: end tags, declarations, start tags of other elements, raw-text elements
#: whose end tag exists. Stops before anything else, which the tokenizer reads.
_BODY_SKIP = re.compile(
    r"(?:[^<]++"
    r"|<!--(?:>|->|.*?--!?>)"
    r"|<!(?!--)[^>]*+>"
    r"|<\?[^>]*+>"
    r"|</>"
    rf"|</[a-zA-Z][^{_WS}/>]*+{_TAG_BODY}>"
    r"|</[^a-zA-Z>][^>]*+>"
    rf"|<(?!(?i:{_ALT_NAMES})[{_WS}/>])[a-zA-Z][^{_WS}/>]*+{_TAG_BODY}>"
    # One alternative per raw-text element, not a backreference: CPython 3.11's possessive
    # repeats mis-track capturing groups ("The span of capturing group is wrong").
    + "".join(rf"|<(?i:{name})(?=[{_WS}/>]){_TAG_BODY}>.*?(?=</(?i:{name})[{_WS}/>])" for name in _RAW_TEXT)
    + r"|<(?![a-zA-Z!/?])"
    r")*+",
    re.DOTALL | re.ASCII,  # ASCII case-insensitivity only, like the tokenizer's tag names
)


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


def _parse_attrs(src: str, *, decode: bool = True) -> dict[str, str]:
    """Attributes of a tag (names ASCII-lowercased, first occurrence wins, values decoded)."""
    attrs: dict[str, str] = {}
    for m in _ATTR_ITEM.finditer(src):
        name = _ascii_lower(m.group(1))
        if name in attrs:
            continue
        value = m.group(3)
        if value is None:
            value = m.group(4)
            if value is None:
                value = m.group(5) or ""
        attrs[name] = _decode_attr(value) if decode else value
    return attrs


# ---------------------------------------------------------------------------
# Tree-construction modes (WHATWG 13.2.6.4.1-7), without a tree

_BEFORE_HEAD, _IN_HEAD, _AFTER_HEAD, _IN_BODY, _FRAMESET = range(5)
_IN_HEAD_ELEMENTS = frozenset(
    {"base", "basefont", "bgsound", "link", "meta", "noframes", "noscript", "script", "style", "template", "title"}
)
_AFTER_HEAD_ELEMENTS = _IN_HEAD_ELEMENTS - {"noscript"}


@dataclass(frozen=True, slots=True)
class _RawLink:
    attrs: dict[str, str]
    in_head: bool
    feed_type: str


def _feed_type(attrs: Mapping[str, str]) -> str | None:
    rel = attrs.get("rel")
    media = attrs.get("type")
    if rel is None or media is None:
        return None
    if "alternate" not in (_ascii_lower(token) for token in rel.split()):
        return None
    essence = _ascii_lower(media.split(";", 1)[0].strip(_WS))
    return _FEED_TYPES.get(essence)


def _scan(text: str, *, fast: bool = True) -> tuple[list[_RawLink], str | None]:
    """The feed links of a document, in order, and the href of its first ``<base href>``.

    ``fast`` lets ``_BODY_SKIP`` jump over body markup that cannot matter; the
    result is the same without it (a test checks), only slower.
    """
    mode = _BEFORE_HEAD
    template_depth = 0
    base_href: str | None = None
    links: list[_RawLink] = []
    pos = 0
    while True:
        if fast and mode == _IN_BODY and not template_depth:
            skip = _BODY_SKIP.match(text, pos)
            assert skip is not None  # the pattern matches the empty string
            pos = skip.end()
        token = _next_token(text, pos)
        if token is None:
            break
        kind, name, src, pos = token
        if template_depth:  # template contents are not part of the document
            if name == "template":
                template_depth += 1 if kind == _START else -1
            continue
        if kind == _TEXT:
            if mode < _IN_BODY:
                mode = _IN_BODY
            continue
        if kind == _END:
            if mode < _IN_BODY:
                if name == "head" and mode <= _IN_HEAD:
                    mode = _AFTER_HEAD
                elif name in ("body", "html", "br"):
                    mode = _IN_BODY
            continue
        if mode == _BEFORE_HEAD:
            if name == "html":
                continue
            mode = _IN_HEAD  # an implied <head> when the tag is not <head>
            if name == "head":
                continue
        if mode == _IN_HEAD:
            if name in ("html", "head"):
                continue
            if name not in _IN_HEAD_ELEMENTS:
                mode = _AFTER_HEAD
        if mode == _AFTER_HEAD:
            if name in ("html", "head"):
                continue
            if name == "body":
                mode = _IN_BODY
                continue
            if name == "frameset":
                mode = _FRAMESET
                continue
            if name not in _AFTER_HEAD_ELEMENTS:
                mode = _IN_BODY
        if mode == _FRAMESET:  # frameset documents drop every other start tag
            continue
        if name == "link":
            attrs = _parse_attrs(src)
            feed_type = _feed_type(attrs)
            if feed_type is not None:
                links.append(_RawLink(attrs, mode < _IN_BODY, feed_type))
        elif name == "base":
            if base_href is None:
                href = _parse_attrs(src).get("href")
                if href is not None:
                    base_href = href
        elif name == "template":
            template_depth = 1
    return links, base_href


# ---------------------------------------------------------------------------
# RFC 3986 references

_URI_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?\Z", re.DOTALL)
_REL_PARTS = re.compile(r"(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?\Z", re.DOTALL)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*\Z")
_URL_STRIP = "".join(chr(c) for c in range(0x21))
_URL_REMOVE = str.maketrans("", "", "\t\n\r")
_SPECIAL = ("http", "https")

_Parts = tuple[str | None, str | None, str, str | None, str | None]  # scheme, authority, path, query, fragment


def _split(uri: str) -> _Parts:
    m = _URI_PARTS.match(uri)
    assert m is not None  # every part is optional
    scheme, authority, path, query, fragment = m.groups()
    if scheme is not None and not _SCHEME.match(scheme):  # 'a b:c' is a relative path, not a scheme
        r = _REL_PARTS.match(uri)
        assert r is not None
        authority, path, query, fragment = r.groups()
        scheme = None
    return scheme, authority, path, query, fragment


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4, linear in the length of the path."""
    if "." not in path:
        return path
    out: list[str] = []
    i, n = 0, len(path)
    while i < n:
        if path.startswith("../", i):
            i += 3
        elif path.startswith("./", i) or path.startswith("/./", i):
            i += 2
        elif path.startswith("/.", i) and i + 2 == n:
            out.append("/")
            i = n
        elif path.startswith("/../", i):
            i += 3
            if out:
                out.pop()
        elif path.startswith("/..", i) and i + 3 == n:
            if out:
                out.pop()
            out.append("/")
            i = n
        elif (path.startswith(".", i) and i + 1 == n) or (path.startswith("..", i) and i + 2 == n):
            i = n
        else:
            j = path.find("/", i + 1)
            if j < 0:
                j = n
            out.append(path[i:j])
            i = j
    return "".join(out)


def _hierarchical(parts: _Parts) -> bool:
    return parts[0] is not None and (parts[1] is not None or parts[2].startswith("/"))


def _resolve(ref: str, base: _Parts | None) -> _Parts | None:
    """RFC 3986 5.2.2 (with the non-strict same-scheme rule for http/https); None without a usable base."""
    scheme, authority, path, query, fragment = _split(ref)
    if scheme is not None:
        scheme = _ascii_lower(scheme)
        if base is not None and authority is None and scheme == base[0] and scheme in _SPECIAL:
            scheme = None
    if scheme is not None:
        t = (scheme, authority, _remove_dot_segments(path), query)
    else:
        if base is None:
            return None
        b_scheme, b_authority, b_path, b_query, _ = base
        if authority is not None:
            t = (b_scheme, authority, _remove_dot_segments(path), query)
        elif path == "":
            t = (b_scheme, b_authority, b_path, query if query is not None else b_query)
        elif path.startswith("/"):
            t = (b_scheme, b_authority, _remove_dot_segments(path), query)
        else:
            merged = "/" + path if b_authority is not None and b_path == "" else b_path[: b_path.rfind("/") + 1] + path
            t = (b_scheme, b_authority, _remove_dot_segments(merged), query)
    t_scheme, t_authority, t_path, t_query = t
    if t_scheme in _SPECIAL and t_authority is not None and t_path == "":
        t_path = "/"
    return t_scheme, t_authority, t_path, t_query, fragment


def _unsplit(parts: _Parts) -> str:
    scheme, authority, path, query, fragment = parts
    out = [f"{scheme}:" if scheme is not None else ""]
    if authority is not None:
        out.append("//" + authority)
    out.append(path)
    if query is not None:
        out.append("?" + query)
    if fragment is not None:
        out.append("#" + fragment)
    return "".join(out)


def _clean_url(value: str) -> str:
    """What a browser's URL parser reads: outer C0/space stripped, tabs and newlines removed."""
    return value.strip(_URL_STRIP).translate(_URL_REMOVE)


def _base_parts(url: str, base_href: str | None) -> _Parts | None:
    page: _Parts | None = None
    if isinstance(url, str):
        parts = _split(_clean_url(url))
        if _hierarchical(parts):
            page = (_ascii_lower(parts[0] or ""), parts[1], parts[2], parts[3], None)
    if base_href is not None:
        resolved = _resolve(_clean_url(base_href), page)
        if resolved is not None and _hierarchical(resolved):
            return resolved
    return page


def _host(authority: str | None) -> str:
    if authority is None:
        return ""
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        return hostport[: hostport.find("]") + 1]
    return hostport.partition(":")[0]


# ---------------------------------------------------------------------------
# Judging


def _rel_reasons(rel: str) -> set[str]:
    failed = set()
    for token in rel.split():
        if token == "alternate":
            continue
        if _ascii_lower(token) == "alternate":
            failed.add("rss-rel-not-lowercase")
        else:
            failed.add("rss-rel-extra-tokens")
    return failed


def discover(
    body: bytes, url: str, headers: Mapping[str, str] | None = None, *, follow_body: bool = False
) -> list[FeedLink]:
    """The feed links ``body`` (an HTML page fetched from ``url``, after redirects) advertises, in page order.

    Never raises: undecodable bytes, broken markup and unresolvable hrefs end
    up as replacement characters, dropped tags or reasons on the links.
    """
    text, _ = decode_html(body, headers)
    if "<" not in text:
        return []
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    raw_links, base_href = _scan(text)
    if not raw_links:
        return []
    base = _base_parts(url, base_href)

    kept: list[tuple[_RawLink, str | None, set[str]]] = []
    index: dict[object, int] = {}
    for raw in raw_links:
        failed: set[str] = set()
        attrs = raw.attrs
        href_raw = attrs.get("href")
        href: str | None = None
        key: object
        if href_raw is None:
            failed.add("href-missing")
            key = object()  # nothing to compare: never a duplicate
        else:
            trimmed = href_raw.strip(_URL_STRIP)
            if trimmed and not (_URI_CHARS.match(trimmed) and trimmed.count("#") <= 1):
                failed.add("href-not-uri")
            cleaned = trimmed.translate(_URL_REMOVE)
            if not cleaned:
                failed.add("href-empty")
            parts = _resolve(cleaned, base)
            if parts is None:
                failed.add("href-relative-without-base")
                key = ("unresolved", cleaned)
            else:
                href = _unsplit(parts)
                scheme, authority = parts[0], parts[1]
                if scheme not in _SPECIAL:
                    failed.add("href-unsupported-scheme")
                elif not _host(authority):
                    failed.add("href-no-host")
                if len(href) > MAX_HREF_LENGTH:
                    failed.add("href-too-long")
                key = (scheme, _ascii_lower(authority) if authority is not None else None, parts[2], parts[3])
        if key in index:
            kept[index[key]][2].add("rss-duplicate-feed")
            continue
        if not raw.in_head:
            failed.add("not-in-head")
        rel = attrs["rel"]
        media = attrs["type"]
        failed |= _rel_reasons(rel)
        if raw.feed_type != "rss":
            failed.add("rss-type-not-rss")
        elif media.strip(_WS) != _ascii_lower(media.strip(_WS)):
            failed.add("rss-type-not-lowercase")
        if raw.feed_type != "atom":
            failed.add("atom-type-not-atom")
        index[key] = len(kept)
        kept.append((raw, href, failed))

    result = []
    for position, (raw, href, failed) in enumerate(kept):
        attrs = raw.attrs
        result.append(
            FeedLink(
                href=href,
                href_raw=attrs.get("href", ""),
                rel=attrs["rel"],
                type=attrs["type"],
                title=attrs.get("title"),
                position=position,
                in_head=raw.in_head,
                conforms_rss=not (failed & _RSS_RULES),
                conforms_atom=not (failed & _ATOM_RULES),
                reasons=tuple(rule for rule in RULES if rule in failed),
                feed_type=raw.feed_type,
                followable=href is not None and not (failed & _UNFOLLOWABLE) and (raw.in_head or follow_body),
            )
        )
    return result
