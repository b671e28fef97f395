"""4.1.1.20 item, with its enclosure (4.1.1.20.5), guid (4.1.1.20.6) and source (4.1.1.20.9).

Judgement call: a second enclosure is only the profile's
``DuplicateEnclosure`` warning (4.1.1.20.5), not also a duplicate item element.
"""

from __future__ import annotations

import re

from pipelines.document.checks import namespaces as ns
from pipelines.document.checks.context import Acc, Element
from pipelines.document.checks.datetimes import check_date, check_future
from pipelines.document.checks.values import check_email, check_url, has_scheme, is_integer
from pipelines.document.checks.walk import Section, Walk, at_most_once, required_attributes

__all__ = ["ITEM"]

_ITEM_SINGLE = frozenset(["author", "comments", "description", "guid", "link", "pubDate", "source", "title"])
# an href= or src= attribute (after whitespace or "/") whose value does not start with a scheme or "#";
# a literal "=" first keeps the scan fast. &quot; covers descriptions escaped twice.
_REL_REF_RE = re.compile(
    r"""=(?:(?<=[\s/][hH][rR][eE][fF]=)|(?<=[\s/][sS][rR][cC]=))\s*(?:["']|&quot;|&#0*3[49];|&apos;)?\s*"""
    r"""(?![A-Za-z][A-Za-z0-9+.\-]*:|#)([^"'\s<>&][^"'\s<>&]*)"""
)


# ---------------------------------------------------------------- the item's own elements


def description_relative_url(acc: Acc, scope: str, text: str, el: Element) -> None:
    """4.1.1.20.4: HTML in a description should use full URLs in href and src."""
    if (m := _REL_REF_RE.search(text)) is not None:
        acc.add("description-relative-url", scope, m.group(1))


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
        "description": (("description-relative-url", description_relative_url),),
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
        "slash:comments": (("slash-comments-not-integer", ns.slash_comments_not_integer),),
        "dc:language": (("dc-language-invalid", ns.dc_language_invalid),),
        "trackback:ping": (("trackback-url-not-absolute", ns.trackback_url_not_absolute),),
        "trackback:about": (("trackback-url-not-absolute", ns.trackback_url_not_absolute),),
    },
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
