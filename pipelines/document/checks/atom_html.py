"""Atom 1.0: the HTML in text constructs and content, as the W3C Feed Validator reads it (RFC 4287 3.1, 4.1.3, 8.1).

A text construct says what it holds (``type``): plain text, escaped HTML, or
inline XHTML in one ``xhtml:div``. These rules check that the text agrees with
its type, and that the HTML an aggregator would render holds nothing that runs
code or restyles the reader's page (RFC 4287 section 8.1: HTML and XHTML
content "could contain markup ... that could be used for an attack"):

* ``atom-text-contains-html`` (3.1.1.1; ``ContainsUndeclaredHTML``,
  ``ContainsHTML``): plain text (``type="text"``, no ``type``, or a ``text/*``
  media type other than HTML) that looks like escaped HTML: an HTML end tag
  (``</b>``) or an HTML entity or character reference (``&nbsp;``, ``&#38;``)
  left in the text once read. The same for a person's ``name``, a
  ``generator``, a category's ``label`` and a link's ``title``;
* ``atom-xhtml-escaped`` (3.1.1.3; ``NotInline``): ``type="xhtml"`` whose
  content is only text (in the ``div`` or without one) that looks like escaped
  HTML: the markup should be inline, not escaped;
* ``atom-markup-not-escaped`` (``NotEscaped``): ``mode="escaped"`` (Atom 0.3)
  with child elements, which that mode says are escaped;
* ``atom-html-fragment`` (4.1.3.3; ``HtmlFragment``): content of type
  ``text/html`` (any ``.../html``) with no ``<html``, or of type
  ``application/xhtml+xml`` whose element is not ``html``: a media type names a
  whole document, ``html`` / ``xhtml`` are the types of fragments;
* ``atom-html-unsafe-element`` (8.1; ``SecurityRisk``): in HTML or XHTML
  content, an element that loads or runs something or replaces the page
  (``script``, ``iframe``, ``object``, ``embed``, ``meta``, ``style``...), an
  ``<?import`` instruction, an SVG or MathML element outside their safe sets;
* ``atom-html-unsafe-attribute`` (8.1; ``SecurityRiskAttr``): an event handler
  attribute (``onclick``...), an SVG or MathML attribute outside their safe
  sets;
* ``atom-html-unsafe-style`` (8.1; ``DangerousStyleAttr``): a ``style``
  attribute that is not a list of ``property: value`` declarations of common
  layout properties with plain values (no ``url(...)``, ``expression(...)``,
  ``position``, ``mso-*``, margins of 99999em...).

The HTML of ``type="html"`` (and ``.../html``, base64 for a non-text media
type) is not parsed: three searches find the start tags of unsafe elements,
event handler attributes and style attributes (comments left out), in lower
case as feeds write them (an upper-case ``<SCRIPT>`` is missed), an
attribute counting inside the start tag of a safe HTML element only. The
item HTML of a feed is most of its bytes, and these searches run in every
crawl worker: each is led by a literal the regex engine finds fast (``<``,
``on``, the "y" of ``style``), the unsafe names are one tree of letters, a
word's "on" is dropped by a look-behind, the style search runs only on HTML
that holds "style" and judges each distinct style once, and ``<!--`` is looked
for only where something was found. Matching upper-case names too would cost
~70 ms more over the 198 benchmark feeds (see ``benchmarks/RESULTS.md``
section 14). Not checked: the validator's ``NotHtml``
(its HTML 5 parser's strict errors, which these searches do not reproduce; where
the validator finds one it checks nothing else in that text, see
``docs/conformance.md``).
"""

from __future__ import annotations

import binascii
import html
import re
from collections.abc import Iterator
from functools import lru_cache
from html.entities import name2codepoint

from pipelines.document.checks.context import Acc, Element, name_of, text_of

__all__ = ["check_html_content", "check_plain_value", "style_problems", "unsafe_in_html", "unsafe_in_xhtml"]

XHTML_NS = "http://www.w3.org/1999/xhtml"
SVG_NS = "http://www.w3.org/2000/svg"
MATHML_NS = "http://www.w3.org/1998/Math/MathML"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: The elements of HTML (4.01, 5 and the old ones browsers still read).
HTML_ELEMENTS = _words(
    """a abbr acronym address applet area article aside audio b base basefont bdi bdo big blockquote body br
    button canvas caption center cite code col colgroup command comment data datagrid datalist dd del details
    dfn dialog dir div dl dt em embed eventsource fieldset figcaption figure font footer form frame frameset
    h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins isindex kbd label legend li link listing
    m main map mark menu meta meter nav noframes noscript object ol optgroup option output p param picture
    plaintext pre progress q rp rt ruby s samp script section select slot small source span strike strong
    style sub summary sup table tbody td template textarea tfoot th thead time title tr track tt u ul var
    video wbr xmp"""
)
#: Of those, the ones a reader must not render inside its own page: they run or load code, or are a document's.
UNSAFE_ELEMENTS = _words(
    """applet base basefont bdo body comment embed frame frameset head html iframe isindex link listing meta
    noframes object param plaintext script slot style title xmp"""
)
#: SVG Tiny's drawing elements (no foreignObject, no image) and MathML's presentation elements.
SVG_ELEMENTS = _words(
    """a animate animateColor animateMotion animateTransform circle defs desc ellipse font-face font-face-name
    font-face-src g glyph hkern linearGradient line marker metadata missing-glyph mpath path polygon polyline
    radialGradient rect set stop svg switch text title tspan use"""
)
MATHML_ELEMENTS = _words(
    """annotation annotation-xml maction math merror mfrac mi mmultiscripts mn mo mover mpadded mphantom
    mprescripts mroot mrow mspace msqrt mstyle msub msubsup msup mtable mtd mtext mtr munder munderover none
    semantics"""
)
SVG_ATTRIBUTES = _words(
    """accent-height accumulate additive alphabetic arabic-form ascent attributeName attributeType baseProfile
    bbox begin by calcMode cap-height class color color-rendering content cx cy d dx dy descent display dur end
    fill fill-opacity fill-rule font-family font-size font-stretch font-style font-variant font-weight from fx
    fy g1 g2 glyph-name gradientUnits hanging height horiz-adv-x horiz-origin-x id ideographic k keyPoints
    keySplines keyTimes lang mathematical marker-end marker-mid marker-start markerHeight markerUnits
    markerWidth max min name offset opacity orient origin overline-position overline-thickness panose-1 path
    pathLength points preserveAspectRatio r refX refY repeatCount repeatDur requiredExtensions
    requiredFeatures restart rotate rx ry slope stemh stemv stop-color stop-opacity strikethrough-position
    strikethrough-thickness stroke stroke-dasharray stroke-dashoffset stroke-linecap stroke-linejoin
    stroke-miterlimit stroke-opacity stroke-width style systemLanguage target text-anchor to transform type u1
    u2 underline-position underline-thickness unicode unicode-range units-per-em values version viewBox
    visibility width widths x x-height x1 x2 y y1 y2 zoomAndPan"""
)
MATHML_ATTRIBUTES = _words(
    """actiontype align columnalign columnlines columnspacing columnspan depth display displaystyle encoding
    equalcolumns equalrows fence fontstyle fontweight frame height linethickness lspace mathbackground
    mathcolor mathvariant maxsize minsize other rowalign rowlines rowspacing rowspan rspace scriptlevel
    selection separator stretchy width"""
)

#: CSS properties of plain layout, text and aural style: nothing that positions, loads or scripts.
SAFE_CSS_PROPERTIES = frozenset(
    [
        *_words("azimuth clear color cursor direction display elevation float height overflow width"),
        *_words("letter-spacing line-height list-style-type unicode-bidi vertical-align white-space"),
        *_words("font font-family font-size font-style font-variant font-weight"),
        *_words("text-align text-decoration text-indent"),
        *_words("pause pause-after pause-before pitch pitch-range richness speak speak-header speak-numeral"),
        *_words("speak-punctuation speech-rate stress voice-family volume"),
        *_words("background background-color border-collapse border-spacing"),
        *(f"{box}{side}" for box in ("margin", "padding") for side in ("", "-top", "-right", "-bottom", "-left")),
        *(f"border{side}{part}" for side in ("", "-top", "-right", "-bottom", "-left") for part in ("", "-color", "-style", "-width")),
    ]
)  # fmt: skip
#: The values a background, border, margin or padding property may take besides a length or a colour.
_CSS_KEYWORDS = _words(
    """aqua auto black block blue bold both bottom brown center collapse dashed dotted fuchsia gray green
    !important italic left lime maroon medium none navy normal nowrap olive pointer purple red right solid
    silver teal top transparent underline white yellow"""
)
#: A number of a few digits (margins of 99999em are no plain value), with a unit or a list's comma or bracket.
_CSS_NUMBER = r"\d{0,2}\.?\d{1,2}(?:cm|em|ex|in|mm|pc|pt|px|%|,|\))?"
#: A plain value: a colour (#hex, a part of an rgb() triple) or such a number.
_CSS_VALUE_RE = re.compile(rf"(?:#[0-9a-f]+|rgb\([\d%,]*\)?|{_CSS_NUMBER})\Z")
#: The characters a harmless style is written with: words, hyphens inside words, punctuation of declarations,
#: quoted names (font families) and digit lists in brackets; no url(...), expression(...), backslash, comment.
_STYLE_CHARS_RE = re.compile(r"""(?:[\w\s:;,.#%!]|(?<=\w)-(?=\w)|'[\w\s]+'|"[\w\s]+"|\([\d\s,]+\))*\Z""", re.ASCII)
_DECLARATION_RE = re.compile(r"[-\w]+\s*:[^:]*")
_BOXES = frozenset(["background", "border", "margin", "padding"])


@lru_cache(maxsize=4096)
def style_problems(style: str) -> tuple[str, ...]:
    """What in a ``style`` attribute is not plain style: the whole value, or its unsafe properties and values.

    Cached: a feed's HTML repeats the same few styles over and over.
    """
    # declarations, each ended by ";" but the last: no empty one, nor white space after the last ";"
    parts = [part.strip() for part in style.split(";")]
    last = () if parts[-1] == style.rpartition(";")[2] == "" else (parts[-1],)
    if _STYLE_CHARS_RE.match(style) is None or any(
        _DECLARATION_RE.fullmatch(part) is None for part in (*parts[:-1], *last)
    ):
        return (style,)
    unsafe: list[str] = []
    for part in parts:
        prop, _, value = part.lower().partition(":")
        prop = prop.strip()
        if not prop:
            continue
        if prop not in SAFE_CSS_PROPERTIES:
            bad = [prop]
        elif prop.split("-", 1)[0] in _BOXES:
            bad = [w for w in value.split() if w not in _CSS_KEYWORDS and _CSS_VALUE_RE.match(w) is None]
        else:
            continue
        unsafe += [b for b in bad if b not in unsafe]
    return tuple(unsafe)


# ---------------------------------------------------------------- escaped HTML in plain text

_END_TAG_RE = re.compile(r"</(\w+)>")
_REFERENCE_RE = re.compile(r"&(#?\w+)")


def looks_like_html(value: str) -> str | None:
    """The first sign that a plain text is escaped HTML (an HTML end tag, an entity or character reference)."""
    if "<" in value:
        for tag in _END_TAG_RE.findall(value):
            if tag.lower() in HTML_ELEMENTS:
                return f"</{tag}>"
    if "&" in value:
        for ref in _REFERENCE_RE.findall(value):
            if ref in name2codepoint or ref == "apos" or not ref.isalpha():
                return f"&{ref};"
    return None


def check_plain_value(acc: Acc, value: str, scope: str) -> None:
    """A text that must not hold HTML (a person's name, a generator, a label, a link title, plain text)."""
    if ("<" in value or "&" in value) and (sign := looks_like_html(value)) is not None:
        acc.add("atom-text-contains-html", scope, sign)


# ---------------------------------------------------------------- unsafe HTML


def _alternation(words: frozenset[str]) -> str:
    """A regex alternation of the words, as a tree on their letters (``b(?:ase(?:font)?|do|ody)|...``).

    The regex engine tries the branches of a plain list one after the other at every ``<`` of the HTML; in the
    tree the first letter picks the only branch to try, and most tags (``</p>``, ``<div``) fail at once.
    """
    heads: dict[str, set[str]] = {}
    for word in words:
        if word:
            heads.setdefault(word[0], set()).add(word[1:])
    branches = [re.escape(head) + _alternation(frozenset(tails)) for head, tails in sorted(heads.items())]
    if not branches:
        return ""
    group = "|".join(branches)
    if "" in words:
        return f"(?:{group})?"
    return group if len(branches) == 1 else f"(?:{group})"


#: The start of an unsafe element (names in lower case, as feeds write them), or an ``<?import`` instruction
#: (Internet Explorer's behaviours, in any case). Led by the literal ``<``, which the regex engine finds fast.
_UNSAFE_TAG_RE = re.compile(r"<(?:(" + _alternation(UNSAFE_ELEMENTS) + r")\b|\?[iI][mM][pP][oO][rR][tT]\s)")
#: An event handler attribute: led by the literal ``on``; the look-behind drops at once the many "on" of words
#: in the text ("one", "content"), an attribute follows white space (the same white space as ``_in_safe_tag``).
_EVENT_RE = re.compile(r"on(?<=[ \t\n\r\f]on)[a-zA-Z]++(?=\s*=)")
#: A style attribute and its value as written (quoted or not). Led by the "y" of "style", two characters into
#: the match: a rarer letter than "s", which the regex engine finds faster (~25% less time on style-heavy HTML).
_STYLE_ATTR_RE = re.compile(r"""y(?<=sty)le\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+)""")
_TAG_NAME_RE = re.compile(r"[A-Za-z][-\w:.]*")
_SPACE = frozenset(" \t\n\r\f")

#: What :func:`unsafe_in_html` and :func:`unsafe_in_xhtml` report: the rule is ``atom-html-unsafe-<kind>`` in
#: Atom content, ``html-unsafe-<kind>`` in an RSS item's description, content:encoded or xhtml:body.
ELEMENT, ATTRIBUTE, STYLE = "element", "attribute", "style"


def _in_safe_tag(markup: str, at: int) -> bool:
    """Whether position ``at`` (an attribute's name) is inside the start tag of an HTML element that is not unsafe.

    The validator checks the attributes of those only (an unsafe element is reported as such, a name that is no
    HTML element's is its NotHtml). The attribute must follow white space, inside a ``<name ...`` not yet closed.
    """
    if at == 0 or markup[at - 1] not in _SPACE:
        return False
    lt = markup.rfind("<", 0, at)
    if lt < 0 or markup.rfind(">", lt, at) >= 0:
        return False
    name = _TAG_NAME_RE.match(markup, lt + 1)
    return name is not None and (tag := name.group().lower()) in HTML_ELEMENTS and tag not in UNSAFE_ELEMENTS


class _Comments:
    """Whether a position of the HTML is inside an HTML comment (Word's conditional comments hold style sheets).

    Asked only where a search found something: most HTML has none, and is not searched for ``<!--`` at all.
    """

    __slots__ = ("any", "markup")

    def __init__(self, markup: str) -> None:
        self.markup = markup
        self.any: bool | None = None

    def around(self, at: int) -> bool:
        if self.any is None:
            self.any = "<!--" in self.markup
        if not self.any:
            return False
        return self.markup.rfind("<!--", 0, at) > self.markup.rfind("-->", 0, at)


def unsafe_in_html(markup: str) -> Iterator[tuple[str, str]]:
    """(kind, example) for each unsafe element, event attribute and style in escaped HTML (``type="html"``).

    Three searches, each for what it reports: an unsafe element's start tag (and ``<?import``), an event
    handler attribute, a style attribute; an attribute counts inside the start tag of a safe HTML element only,
    nothing inside an HTML comment. Each search is led by a literal (``<``, ``on``, the "y" of ``style``)
    found fast; the style search runs only on HTML that holds "style", and judges each distinct style once.
    """
    if "<" not in markup:
        return
    comments = _Comments(markup)
    elements = list(_UNSAFE_TAG_RE.finditer(markup))
    if any(m.group(1) is None for m in elements):  # an <?import: reported once, first, even in a comment
        yield ELEMENT, "?import"
    for m in elements:
        if (name := m.group(1)) is not None and not comments.around(m.start()):
            yield ELEMENT, name
    for m in _EVENT_RE.finditer(markup):
        if _in_safe_tag(markup, m.start()) and not comments.around(m.start()):
            yield ATTRIBUTE, m.group()
    if "style" in markup:
        yield from _unsafe_styles(markup, comments)


def _style_problems_of(raw: str) -> tuple[str, ...]:
    """:func:`style_problems` of a style attribute's value as written (quoted or not, references not decoded)."""
    value = raw[1:-1] if raw[:1] in ("'", '"') else raw
    return style_problems(html.unescape(value) if "&" in value else value)


def _unsafe_styles(markup: str, comments: _Comments) -> Iterator[tuple[str, str]]:
    """The style attributes of :func:`unsafe_in_html`: each distinct value judged once, the unsafe ones placed.

    Most HTML repeats a few styles (code highlighted span by span: thousands of them); each attribute costs a
    dictionary look-up, and only one with a style that is not plain is placed (in a safe start tag? a comment?).
    """
    judged: dict[str, tuple[str, ...]] = {}
    for attr in _STYLE_ATTR_RE.finditer(markup):
        raw = attr.group(1)
        problems = judged.get(raw)
        if problems is None:
            problems = judged[raw] = _style_problems_of(raw)
        if problems and _in_safe_tag(markup, at := attr.start() - 2) and not comments.around(at):
            for problem in problems:
                yield STYLE, problem


def _html_attributes(attributes: Iterator[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    for name, value in attributes:
        lower = name.lower()
        if lower == "style":
            for problem in style_problems(value):
                yield STYLE, problem
        elif lower.startswith("on"):
            yield ATTRIBUTE, name


def unsafe_in_xhtml(div: Element) -> Iterator[tuple[str, str]]:
    """(kind, example) for what is unsafe among the elements inside an XHTML ``div`` (or ``xhtml:body``)."""
    for el in div.iterdescendants():
        tag = el.tag
        if not isinstance(tag, str):
            continue
        ns, _, local = tag[1:].partition("}") if tag[:1] == "{" else ("", "", tag)
        if ns == XHTML_NS:
            if local not in HTML_ELEMENTS:  # the validator's NotHtml, not checked (see the module docstring)
                continue
            if local in UNSAFE_ELEMENTS:
                yield ELEMENT, local
                continue
            yield from _html_attributes((str(k), str(v)) for k, v in el.attrib.items() if str(k)[:1] != "{")
        elif ns in (SVG_NS, MATHML_NS):
            elements, attributes = (
                (SVG_ELEMENTS, SVG_ATTRIBUTES) if ns == SVG_NS else (MATHML_ELEMENTS, MATHML_ATTRIBUTES)
            )
            if local not in elements:
                yield ELEMENT, local
            for key in map(str, el.attrib):
                if key[:1] != "{" and key not in attributes:
                    yield ATTRIBUTE, key


# ---------------------------------------------------------------- a text construct or a content


def _xhtml_text(el: Element) -> str | None:
    """The text of XHTML content that holds no element but its div (None when it holds markup: inline)."""
    kids = [child for child in el if isinstance(child.tag, str)]
    if not kids:
        return el.text or ""
    if len(kids) == 1 and kids[0].tag == f"{{{XHTML_NS}}}div" and not any(isinstance(c.tag, str) for c in kids[0]):
        return (el.text or "") + (kids[0].text or "")
    return None


def _html_value(el: Element, acc: Acc, kind: str) -> str | None:
    """The escaped HTML a content holds: its text for ``html`` / ``.../html``, decoded for base64 (else None)."""
    text = text_of(el, acc)
    if kind == "html" or kind.startswith("text/"):
        return text if kind == "html" or kind.endswith("/html") else None
    if not kind.endswith("/html"):
        return None
    try:
        return binascii.a2b_base64(text.encode("ascii")).decode("utf-8")
    except (ValueError, UnicodeError):  # binascii.Error is a ValueError
        return None


def check_html_content(acc: Acc, el: Element, scope: str, kind: str) -> None:
    """The rules on what a text construct or a content holds, given its type (lower case, ``text`` if none)."""
    if el.get("mode", "").strip() == "escaped" and any(isinstance(c.tag, str) for c in el):
        acc.add("atom-markup-not-escaped", scope, name_of(el.tag))
    if kind == "xhtml":
        _xhtml(acc, el, scope)
        return
    if kind.endswith("+xml") or kind.endswith("/xml"):
        if kind == "application/xhtml+xml" and any(
            isinstance(c.tag, str) and c.tag != f"{{{XHTML_NS}}}html" for c in el
        ):
            acc.add("atom-html-fragment", scope, kind)
        return
    markup = _html_value(el, acc, kind)
    if markup is not None:
        for kind, example in unsafe_in_html(markup):
            acc.add(f"atom-html-unsafe-{kind}", scope, example)
        if kind.endswith("/html") and el.get("src") is None and "<html" not in markup:
            acc.add("atom-html-fragment", scope, kind)
    elif kind == "text" or kind.startswith("text/") or "/" not in kind:
        check_plain_value(acc, text_of(el, acc), scope)


def _xhtml(acc: Acc, el: Element, scope: str) -> None:
    text = _xhtml_text(el)
    if text is not None:
        if (sign := looks_like_html(text)) is not None:
            acc.add("atom-xhtml-escaped", scope, sign)
        return
    for child in el:
        if not isinstance(child.tag, str):
            continue
        for kind, example in unsafe_in_xhtml(child):
            acc.add(f"atom-html-unsafe-{kind}", scope, example)
