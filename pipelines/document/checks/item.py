"""4.1.1.20 item, with its enclosure (4.1.1.20.5), guid (4.1.1.20.6) and source (4.1.1.20.9).

Judgement call: a second enclosure is only the profile's
``DuplicateEnclosure`` warning (4.1.1.20.5), not also a duplicate item element.
"""

from __future__ import annotations

import re
from html.entities import name2codepoint

from pipelines.document.checks import namespaces as ns
from pipelines.document.checks.atom_html import unsafe_in_html, unsafe_in_xhtml
from pipelines.document.checks.context import Acc, Element, text_of
from pipelines.document.checks.datetimes import check_date, check_future
from pipelines.document.checks.values import check_email, check_url, has_scheme, is_integer
from pipelines.document.checks.walk import Section, Walk, at_most_once, required_attributes

__all__ = ["ITEM", "relative_reference"]

_ITEM_SINGLE = frozenset(["author", "comments", "description", "guid", "link", "pubDate", "source", "title"])
# The W3C validator's reading of HTML in a description (its ``absUrlMixin``): an ``a`` whose first attribute is
# href, an ``img`` with a src, the value quoted or a bare word; decoded, it is relative unless it starts with a
# scheme ("word:"). "#frag", "//host/path" and an empty value are relative; a value with a character no URI has
# (a space...) is the validator's InvalidUriChar, not a relative reference.
_ANCHOR_RE = re.compile(r"""<a\s+href=(?:"(.*?)"|'(.*?)'|([\w-]+))[\s>]""", re.IGNORECASE)
_IMG_RE = re.compile(r"""<img\s+[^>]*src=(?:"(.*?)"|'(.*?)'|([\w-]+))[\s>]""", re.IGNORECASE)
_ABSOLUTE_RE = re.compile(r"\w+:")
_URI_CHARS = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ;/?:@&=+$.-_!~*'()%,#")
_REFERENCE_RE = re.compile(r"&#?(\w+);")
#: What every relative reference those two find starts with, found fast (the scan looks for "=" first): an
#: href= or src= whose value does not start with a scheme. A value that does is absolute however it is decoded
#: (no "&" before its ":"), so a text this finds nothing in has no relative reference.
_MAYBE_RELATIVE_RE = re.compile(r"""=(?:(?<=[hH][rR][eE][fF]=)|(?<=[sS][rR][cC]=))(?:["'](?!\s*\w+:)|(?!\w+:)[\w-])""")


def _decode_html(value: str) -> str:
    """Character and HTML entity references in an attribute value decoded (unknown ones left as they are)."""
    if "&" not in value:
        return value

    def one(m: re.Match[str]) -> str:
        ref = m.group(1)
        if ref.isdigit():
            return chr(int(ref)) if int(ref) < 0x110000 else m.group(0)
        code = name2codepoint.get(ref)
        return m.group(0) if code is None else chr(code)

    return _REFERENCE_RE.sub(one, value)


def relative_reference(html: str) -> str | None:
    """The first relative href / src in the HTML, as the W3C validator finds them (``ContainsRelRef``), or None."""
    if "<" not in html or _MAYBE_RELATIVE_RE.search(html) is None:
        return None
    for pattern in (_IMG_RE, _ANCHOR_RE):
        for m in pattern.finditer(html):
            ref = _decode_html(m.group(1) or m.group(2) or m.group(3) or "").strip()
            if _ABSOLUTE_RE.match(ref) is None and all(ord(c) >= 128 or c in _URI_CHARS for c in ref):
                return ref or "(empty)"
    return None


# ---------------------------------------------------------------- the item's own elements


def description_relative_url(acc: Acc, scope: str, text: str, el: Element) -> None:
    """4.1.1.20.4: HTML in a description should use full URLs in href and src."""
    if (ref := relative_reference(text)) is not None:
        acc.add("description-relative-url", scope, ref)


def content_relative_url(acc: Acc, scope: str, el: Element) -> None:
    """The same for content:encoded, the other HTML of an item (the validator reads both alike)."""
    if (ref := relative_reference(text_of(el, acc))) is not None:
        acc.add("description-relative-url", scope, ref)


def description_unsafe_html(acc: Acc, scope: str, text: str, el: Element) -> None:
    """The validator's security checks on an item's HTML (``SecurityRisk``...): see ``atom_html``."""
    for kind, example in unsafe_in_html(text):
        acc.add(f"html-unsafe-{kind}", scope, example)


def content_unsafe_html(acc: Acc, scope: str, el: Element) -> None:
    """The same for content:encoded."""
    description_unsafe_html(acc, scope, text_of(el, acc), el)


def body_unsafe_html(acc: Acc, scope: str, el: Element) -> None:
    """The same for the inline XHTML of an xhtml:body."""
    for kind, example in unsafe_in_xhtml(el):
        acc.add(f"html-unsafe-{kind}", scope, example)


def guid_is_permalink_invalid(acc: Acc, scope: str, text: str, el: Element) -> None:
    value = el.get("isPermaLink")
    if value is not None and value.strip().lower() not in ("true", "false"):
        acc.add("guid-is-permalink-invalid", scope, value or "(empty)")


def guid_permalink_not_url(acc: Acc, scope: str, text: str, el: Element) -> None:
    """A guid that is a permalink (isPermaLink absent or "true") is a full URL."""
    value = el.get("isPermaLink")
    if (value is None or value.strip().lower() == "true") and not has_scheme(text):
        acc.add("guid-permalink-not-url", scope, text or "(empty)")


def source_missing_url(acc: Acc, scope: str, text: str, el: Element) -> None:
    if el.get("url") is None:
        acc.add("source-missing-url", scope, text)


def source_url_not_absolute(acc: Acc, scope: str, text: str, el: Element) -> None:
    url = el.get("url")
    if url is not None:
        check_url(acc, scope, url, el, "source-url-not-absolute")


# ---------------------------------------------------------------- 4.1.1.20.5 enclosure

_ENCLOSURE_ATTRS = ("url", "length", "type")


def enclosure_url_not_absolute(acc: Acc, scope: str, el: Element) -> None:
    url = el.get("url")
    if url is not None:
        check_url(acc, scope, url, el, "enclosure-url-not-absolute")


def _length_unknown(length: str) -> bool:
    """Empty or negative: the profile's way to say "unknown" is 0."""
    stripped = length.strip()
    return not stripped or (stripped[0] == "-" and stripped[1:].isdigit())


def enclosure_length_unknown(acc: Acc, scope: str, el: Element) -> None:
    length = el.get("length")
    if length is not None and not is_integer(length) and _length_unknown(length):
        acc.add("enclosure-length-unknown", scope, length or "(empty)")


def enclosure_length_not_integer(acc: Acc, scope: str, el: Element) -> None:
    length = el.get("length")
    if length is not None and not is_integer(length) and not _length_unknown(length):
        acc.add("enclosure-length-not-integer", scope, length)


# ---------------------------------------------------------------- the whole item


def item_missing_title_and_description(acc: Acc, walk: Walk) -> None:
    if "title" not in walk.seen and "description" not in walk.seen:
        acc.add("item-missing-title-and-description", walk.scope, None)


def item_missing_guid(acc: Acc, walk: Walk) -> None:
    if "guid" not in walk.seen:
        acc.add("item-missing-guid", walk.scope, None)


_ENCLOSURE = frozenset(["enclosure"])
_CONTENT = frozenset(["content:encoded"])

ITEM = Section(
    scope="item",
    defined=_ITEM_SINGLE | {"category", "enclosure"},
    containers=frozenset(["enclosure"]),
    plain=frozenset(["title", "category", "author", "source"]),
    text_rules={
        "description": (
            ("description-relative-url", description_relative_url),
            ("html-unsafe-element", description_unsafe_html),
        ),
        "pubDate": (("date-invalid", check_date), ("item-date-in-future", check_future)),
        "link": (("url-not-absolute", check_url),),
        "comments": (("url-not-absolute", check_url),),
        "guid": (
            ("guid-permalink-not-url", guid_permalink_not_url),
            ("guid-is-permalink-invalid", guid_is_permalink_invalid),
        ),
        "author": (("email-missing", check_email),),
        "source": (
            ("source-missing-url", source_missing_url),
            ("source-url-not-absolute", source_url_not_absolute),
        ),
    },
    element_rules={
        "enclosure": (
            ("enclosure-missing-attribute", required_attributes("enclosure-missing-attribute", _ENCLOSURE_ATTRS)),
            ("enclosure-length-not-integer", enclosure_length_not_integer),
            ("enclosure-length-unknown", enclosure_length_unknown),
            ("enclosure-url-not-absolute", enclosure_url_not_absolute),
        ),
        "atom:link": (("atom-link-missing-href", ns.atom_link_missing_href),),
        "content:encoded": (
            ("description-relative-url", content_relative_url),
            ("html-unsafe-element", content_unsafe_html),
        ),
        "xhtml:body": (("html-unsafe-element", body_unsafe_html),),
        "itunes:image": (("itunes-missing-attribute", ns.itunes_image_missing_href),),
        "slash:comments": (("slash-comments-not-integer", ns.slash_comments_not_integer),),
        "dc:language": (("dc-language-invalid", ns.dc_language_invalid),),
        "trackback:ping": (("trackback-url-not-absolute", ns.trackback_url_not_absolute),),
        "trackback:about": (("trackback-url-not-absolute", ns.trackback_url_not_absolute),),
    },
    closed=ns.CLOSED,
    namespace_defined=ns.ITEM_DEFINED,
    scope_rules=(
        ("item-missing-title-and-description", item_missing_title_and_description),
        ("duplicate-item-element", at_most_once("duplicate-item-element", _ITEM_SINGLE)),
        ("duplicate-enclosure", at_most_once("duplicate-enclosure", _ENCLOSURE)),
        ("item-missing-guid", item_missing_guid),
        ("content-before-description", ns.content_before_description),
        ("content-without-description", ns.content_without_description),
        ("author-and-dc-creator", ns.author_and_dc_creator),
        ("duplicate-namespace-element", ns.duplicate_item_namespace_element),
        ("namespace-duplicates-core", ns.item_duplicates_core),
    ),
    # the dates of a channel's items are judged together, after the items (no other item rule reports what the
    # date rules do, so the findings are the same; the date reader stays warm: ~8% of the checks' time)
    later=frozenset(["pubDate"]),
    about={
        "duplicate-enclosure": _ENCLOSURE,
        "content-before-description": _CONTENT,
        "content-without-description": _CONTENT,
        "author-and-dc-creator": frozenset(["dc:creator"]),
        "duplicate-namespace-element": ns.ITEM_SINGLE,
        "namespace-duplicates-core": ns.ITEM_SAME_MEANING,
    },
)
