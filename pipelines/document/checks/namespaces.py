"""5. Namespace elements: Atom (5.1), Content (5.2), Dublin Core (5.3), Slash (5.4), and the common others.

Namespaced elements are not undefined elements; these are the rules the
profile gives for the four namespaces it names, on the channel and on items,
and (``source = "namespace"`` in :data:`~pipelines.document.checks.rules.RULES`)
the rules the namespaces' own specifications give, as the W3C Feed Validator
reads them: an element allowed once present twice (``duplicate-namespace-element``),
a core element and a namespace element with the same meaning side by side
(``namespace-duplicates-core``, after 5.1: "when a namespace element
duplicates the functionality of an element defined in RSS, the core element
should be used"), an invalid ``dc:language``, a ``sy:updateFrequency`` that
is not a positive integer and a Trackback URL that is not a full URL. That a namespace element is used where a core
element would do, with no core element beside it, is not checked.
"""

from __future__ import annotations

from pipelines.document.checks.context import Acc, Element, leaf_text, text_of
from pipelines.document.checks.values import has_scheme, is_language, positive_int
from pipelines.document.checks.walk import Walk, at_most_once

__all__ = [
    "CHANNEL_SAME_MEANING",
    "CHANNEL_SINGLE",
    "ITEM_SAME_MEANING",
    "ITEM_SINGLE",
    "atom_link_missing_href",
    "author_and_dc_creator",
    "channel_duplicates_core",
    "contact_and_dc_creator",
    "content_before_description",
    "content_without_description",
    "dc_language_invalid",
    "duplicate_channel_namespace_element",
    "duplicate_item_namespace_element",
    "item_duplicates_core",
    "missing_atom_self_link",
    "slash_comments_not_integer",
    "slash_comments_without_last_build_date",
    "sy_update_frequency_invalid",
    "trackback_url_not_absolute",
]

# ---------------------------------------------------------------- 5.1 Atom


def atom_link_missing_href(acc: Acc, scope: str, el: Element) -> None:
    if el.get("href") is None:
        acc.add("atom-link-missing-href", scope, "atom:link")


def missing_atom_self_link(acc: Acc, walk: Walk) -> None:
    """A channel identifies its feed's own URL with an ``atom:link rel="self"`` (and an href)."""
    for el, name in walk.kids:
        if name == "atom:link" and el.get("href") is not None and el.get("rel") == "self":
            return
    acc.add("missing-atom-self-link", walk.scope, None)


# ---------------------------------------------------------------- 5.2.1 content:encoded


def content_before_description(acc: Acc, walk: Walk) -> None:
    """The first content:encoded comes before the first description (when there is one)."""
    if "description" not in walk.seen:
        return  # content-without-description
    for _, name in walk.kids:
        if name == "description":
            return
        if name == "content:encoded":
            acc.add("content-before-description", walk.scope, "content:encoded")
            return


def content_without_description(acc: Acc, walk: Walk) -> None:
    if "content:encoded" in walk.seen and "description" not in walk.seen:
        acc.add("content-without-description", walk.scope, "content:encoded")


# ---------------------------------------------------------------- 5.3.1 dc:creator


def author_and_dc_creator(acc: Acc, walk: Walk) -> None:
    if "dc:creator" in walk.seen and "author" in walk.seen:
        acc.add("author-and-dc-creator", walk.scope, "author")


def contact_and_dc_creator(acc: Acc, walk: Walk) -> None:
    seen = walk.seen
    if "dc:creator" in seen and ("managingEditor" in seen or "webMaster" in seen):
        acc.add("contact-and-dc-creator", walk.scope, "managingEditor" if "managingEditor" in seen else "webMaster")


# ---------------------------------------------------------------- 5.4.1 slash:comments


def slash_comments_not_integer(acc: Acc, scope: str, el: Element) -> None:
    if positive_int(leaf_text(el, acc)) is None:
        acc.add("slash-comments-not-integer", scope, text_of(el, acc) or "(empty)")


def slash_comments_without_last_build_date(acc: Acc, walk: Walk) -> None:
    """A channel whose items use slash:comments has a lastBuildDate (counted once per slash:comments)."""
    slash = sum(item.seen.get("slash:comments", 0) for item in walk.inner if item.scope == "item")
    if slash and "lastBuildDate" not in walk.seen:
        acc.add("slash-comments-without-last-build-date", walk.scope, "slash:comments", slash)


# ---------------------------------------------------------------- the namespaces' own rules (source "namespace")


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Dublin Core and DCMI Terms elements the validator allows once per channel or item (title, language...);
#: creator, contributor, subject, publisher, relation, coverage and identifier may repeat.
_DC_SINGLE = _names(
    "dc:title dc:description dc:type dc:format dc:source dc:language dc:rights"
    " dcterms:abstract dcterms:created dcterms:issued dcterms:modified dcterms:extent dcterms:mediator"
)
#: Namespace elements a channel may contain at most once (a channel's dc:date is its one date).
CHANNEL_SINGLE = _DC_SINGLE | _names(
    "dc:date atom:id atom:title atom:subtitle atom:rights atom:updated atom:icon atom:logo atom:generator"
    " admin:generatorAgent admin:errorReportsTo sy:updatePeriod sy:updateFrequency sy:updateBase"
)
#: Namespace elements an item may contain at most once (an item may carry several dc:date, e.g. revisions).
ITEM_SINGLE = _DC_SINGLE | _names(
    "content:encoded atom:id atom:title atom:summary atom:published atom:updated atom:author"
)

duplicate_channel_namespace_element = at_most_once("duplicate-namespace-element", CHANNEL_SINGLE)
duplicate_item_namespace_element = at_most_once("duplicate-namespace-element", ITEM_SINGLE)

#: (core element, namespace element with the same meaning) on a channel; managingEditor and dc:creator
#: is the profile's own rule (``contact-and-dc-creator``).
_CHANNEL_SAME_MEANING = (
    ("generator", "admin:generatorAgent"),
    ("copyright", "dc:rights"),
    ("pubDate", "dc:date"),
    ("language", "dc:language"),
    ("webMaster", "dc:publisher"),
    ("lastBuildDate", "dcterms:modified"),
    ("category", "dc:subject"),
    ("creativeCommons:license", "cc:license"),
)
#: The same on an item; author and dc:creator is the profile's own rule (``author-and-dc-creator``).
_ITEM_SAME_MEANING = (
    ("guid", "atom:id"),
    ("pubDate", "atom:published"),
    ("pubDate", "dc:date"),
    ("category", "dc:subject"),
    ("source", "dc:source"),
    ("creativeCommons:license", "cc:license"),
)


#: The namespace elements of those pairs: ``namespace-duplicates-core`` is about them (``Section.about``).
CHANNEL_SAME_MEANING = frozenset(ext for _, ext in _CHANNEL_SAME_MEANING)
ITEM_SAME_MEANING = frozenset(ext for _, ext in _ITEM_SAME_MEANING)


def _duplicates_core(acc: Acc, walk: Walk, pairs: tuple[tuple[str, str], ...]) -> None:
    seen = walk.seen
    for core, ext in pairs:
        if core in seen and ext in seen:
            acc.add("namespace-duplicates-core", walk.scope, f"{core} and {ext}")


def channel_duplicates_core(acc: Acc, walk: Walk) -> None:
    _duplicates_core(acc, walk, _CHANNEL_SAME_MEANING)


def item_duplicates_core(acc: Acc, walk: Walk) -> None:
    _duplicates_core(acc, walk, _ITEM_SAME_MEANING)


def dc_language_invalid(acc: Acc, scope: str, el: Element) -> None:
    """dc:language: "a language tag" (RFC 1766 / ISO 639), as the core language element."""
    text = text_of(el, acc)
    if not is_language(text):
        acc.add("dc-language-invalid", scope, text or "(empty)")


def sy_update_frequency_invalid(acc: Acc, scope: str, el: Element) -> None:
    """sy:updateFrequency: "a positive integer" (Syndication module), how often per sy:updatePeriod."""
    text = text_of(el, acc)
    n = positive_int(text)
    if n is None or n < 1:
        acc.add("sy-update-frequency-invalid", scope, text or "(empty)")


def trackback_url_not_absolute(acc: Acc, scope: str, el: Element) -> None:
    """trackback:ping / trackback:about in RSS 2.0 hold the URL as text (RSS 1.0's rdf:resource form is not read)."""
    text = text_of(el, acc)
    if not has_scheme(text):
        acc.add("trackback-url-not-absolute", scope, text.strip() or "(empty)")
