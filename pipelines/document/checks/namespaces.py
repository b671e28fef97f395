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

import re

from pipelines.document.checks.context import Acc, Element, leaf_text, name_of, text_of
from pipelines.document.checks.values import has_scheme, is_language, positive_int
from pipelines.document.checks.walk import Walk, at_most_once

__all__ = [
    "CHANNEL_DEFINED",
    "CHANNEL_SAME_MEANING",
    "CHANNEL_SINGLE",
    "CLOSED",
    "ITEM_DEFINED",
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
    "itunes_category_missing_text",
    "itunes_image_missing_href",
    "itunes_owner",
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
    " itunes:author itunes:block itunes:complete itunes:explicit itunes:image itunes:keywords itunes:new-feed-url"
    " itunes:owner itunes:subtitle itunes:summary itunes:title itunes:type"
)
#: Namespace elements an item may contain at most once (an item may carry several dc:date, e.g. revisions).
ITEM_SINGLE = _DC_SINGLE | _names(
    "content:encoded atom:id atom:title atom:summary atom:published atom:updated atom:author"
    " itunes:author itunes:block itunes:duration itunes:episode itunes:episodeType itunes:explicit itunes:image"
    " itunes:keywords itunes:season itunes:subtitle itunes:summary itunes:title"
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


# ---------------------------------------------------------------- closed vocabularies (namespace-undefined-element)


def _prefixed(prefix: str, names: str) -> frozenset[str]:
    return frozenset(f"{prefix}:{name}" for name in names.split())


#: Dublin Core's fifteen elements (dc:modified is DCMI Terms', dcterms:modified), allowed anywhere.
_DC = _prefixed("dc", "title creator subject description publisher contributor date type format identifier source"
                " language relation coverage rights")  # fmt: skip
#: Media RSS 1.5.1's elements (media:adult, deprecated in 1.5, still read), in a channel or an item.
_MEDIA = _prefixed("media", "group content rating title description keywords thumbnail category hash player credit"
                   " copyright text restriction community comments embed responses backLinks status price license"
                   " subTitle peerLink location rights scenes adult")  # fmt: skip
#: Apple's podcast tags (and the summary, subtitle and keywords it no longer lists but every podcast app reads).
_ITUNES_BOTH = "author block explicit image keywords subtitle summary title"
_ITUNES_CHANNEL = _prefixed("itunes", _ITUNES_BOTH + " category complete new-feed-url owner type pubDate")
_ITUNES_ITEM = _prefixed("itunes", _ITUNES_BOTH + " duration episode episodeType season isClosedCaptioned order")

#: The prefixes of the namespaces whose every element is known: a child with one of them that the scope's
#: specification does not define there is a ``namespace-undefined-element`` (the W3C validator's
#: ``UndefinedElement`` for a namespace it knows). Atom, DCMI Terms and the rest are open here.
CLOSED = frozenset(["dc", "content", "slash", "sy", "itunes", "media"])
#: The elements of those namespaces a channel may contain: Content's and Slash's are an item's.
CHANNEL_DEFINED = _DC | _MEDIA | _ITUNES_CHANNEL | _prefixed("sy", "updatePeriod updateFrequency updateBase")
#: The elements of those namespaces an item may contain: Syndication's are a channel's.
ITEM_DEFINED = (
    _DC
    | _MEDIA
    | _ITUNES_ITEM
    | _prefixed("content", "encoded items")
    | _prefixed("slash", "section department comments hit_parade")
)


# ---------------------------------------------------------------- iTunes (Apple's podcast tags)

_ADDRESS_RE = re.compile(r"\s*[^\s@()<>\",;:]+@[^\s@()<>\",;:]+\.[^\s@()<>\",;:]+\s*\Z")


def itunes_category_missing_text(acc: Acc, scope: str, el: Element) -> None:
    """An itunes:category names its category in ``text``; so does each itunes:category nested in it."""
    nested = [c for c in el.iterchildren() if isinstance(c.tag, str) and name_of(c.tag) == "itunes:category"]
    for category in (el, *nested):
        if category.get("text") is None:
            acc.add("itunes-missing-attribute", scope, "itunes:category text")
            return


def itunes_image_missing_href(acc: Acc, scope: str, el: Element) -> None:
    """An itunes:image gives its URL in ``href`` (not as text, not as ``url``)."""
    if el.get("href") is None:
        acc.add("itunes-missing-attribute", scope, "itunes:image href")


def itunes_owner(acc: Acc, scope: str, el: Element) -> None:
    """An itunes:owner holds the owner's e-mail address in itunes:email."""
    emails = [c for c in el.iterchildren() if isinstance(c.tag, str) and name_of(c.tag) == "itunes:email"]
    if not emails:
        acc.add("itunes-owner-missing-email", scope, "itunes:owner")
        return
    text = text_of(emails[0], acc)
    if _ADDRESS_RE.match(text) is None:
        acc.add("itunes-owner-email-invalid", scope, text.strip() or "(empty)")
