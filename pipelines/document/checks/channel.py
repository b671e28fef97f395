"""4.1.1 channel: its required and single elements, the order of its items, and its simple elements.

docs (4.1.1.7), language (4.1.1.10), rating (4.1.1.14) and ttl (4.1.1.18)
are checked here; the compound elements are in ``channel_parts``, items in
``item``. Not checked (not decidable on the document alone): that the title
matches the web site's name, that a category is a slash-delimited taxonomy
path, that a feed by one person omits the contact elements.
"""

from __future__ import annotations

import re

from pipelines.document.checks import namespaces as ns
from pipelines.document.checks.channel_parts import (
    CLOUD_RULES,
    text_input_present,
    walk_images,
    walk_skip_days,
    walk_skip_hours,
    walk_text_input,
)
from pipelines.document.checks.context import Acc, Element
from pipelines.document.checks.datetimes import check_date
from pipelines.document.checks.item import ITEM
from pipelines.document.checks.values import check_email, check_url, is_language, positive_int
from pipelines.document.checks.walk import Section, Walk, at_most_once, required, walk_inner

__all__ = ["CHANNEL"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CHANNEL_SINGLE = _words(
    "title link description cloud copyright docs generator image language lastBuildDate managingEditor"
    " pubDate rating skipDays skipHours textInput ttl webMaster"
)
_RSSBOARD_DOCS = "https://www.rssboard.org/rss-specification"
_PICS_RE = re.compile(r"\s*\(\s*PICS-1\.1\b")
# ---------------------------------------------------------------- the channel's simple elements


def docs_not_rssboard(acc: Acc, scope: str, text: str, el: Element) -> None:
    if text.strip() != _RSSBOARD_DOCS:
        acc.add("docs-not-rssboard", scope, text)


def language_invalid(acc: Acc, scope: str, text: str, el: Element) -> None:
    if not is_language(text):
        acc.add("language-invalid", scope, text or "(empty)")


def rating_not_pics(acc: Acc, scope: str, text: str, el: Element) -> None:
    if _PICS_RE.match(text) is None:
        acc.add("rating-not-pics", scope, text or "(empty)")


def ttl_not_positive_integer(acc: Acc, scope: str, text: str, el: Element) -> None:
    n = positive_int(text)
    if n is None or n < 1:
        acc.add("ttl-not-positive-integer", scope, text or "(empty)")


# ---------------------------------------------------------------- the whole channel


def items_before_channel_elements(acc: Acc, walk: Walk) -> None:
    """Items come after every other channel element: the first element after the first item, if any."""
    first_item = walk.position("item")
    if first_item is None:
        return
    for _, name in walk.kids[first_item:]:
        if name != "item":
            acc.add("items-before-channel-elements", walk.scope, name)
            return


def guid_duplicate(acc: Acc, channel: Walk) -> None:
    """Two items of the channel with the same guid value (as read: CDATA and character references decoded)."""
    seen: set[str] = set()
    for item in channel.inner:
        guid = item.texts.get("guid") if item.scope == "item" else None
        if guid is None or not (value := guid.strip()):
            continue
        if value in seen:
            acc.add("guid-duplicate", "item", value)
        seen.add(value)


def walk_items(acc: Acc, channel: Walk) -> None:
    """Each of the channel's items (one that cannot be walked does not stop the rest)."""
    walk_inner(acc, ITEM, channel, "item")


_ITEM = frozenset(["item"])
_URL = ("url-not-absolute", check_url)
_DATE = ("date-invalid", check_date)
_EMAIL = ("email-missing", check_email)

CHANNEL = Section(
    scope="channel",
    defined=_CHANNEL_SINGLE | {"category", "item"},
    containers=frozenset(["cloud", "image", "item", "skipDays", "skipHours", "textInput"]),
    plain=frozenset(["title", "description", "copyright", "category", "generator", "managingEditor", "webMaster"]),
    text_rules={
        "link": (_URL,),
        "docs": (_URL, ("docs-not-rssboard", docs_not_rssboard)),
        "pubDate": (_DATE,),
        "lastBuildDate": (_DATE,),
        "managingEditor": (_EMAIL,),
        "webMaster": (_EMAIL,),
        "language": (("language-invalid", language_invalid),),
        "ttl": (("ttl-not-positive-integer", ttl_not_positive_integer),),
        "rating": (("rating-not-pics", rating_not_pics),),
    },
    element_rules={
        "cloud": CLOUD_RULES,
        "textInput": (("text-input-present", text_input_present), ("walk:textInput", walk_text_input)),
        "skipDays": (("walk:skipDays", walk_skip_days),),
        "skipHours": (("walk:skipHours", walk_skip_hours),),
        "atom:link": (("atom-link-missing-href", ns.atom_link_missing_href),),
        "dc:language": (("dc-language-invalid", ns.dc_language_invalid),),
        "sy:updateFrequency": (("sy-update-frequency-invalid", ns.sy_update_frequency_invalid),),
        "itunes:category": (("itunes-missing-attribute", ns.itunes_category_missing_text),),
        "itunes:image": (("itunes-missing-attribute", ns.itunes_image_missing_href),),
        "itunes:owner": (("itunes-owner-missing-email", ns.itunes_owner),),
    },
    closed=ns.CLOSED,
    namespace_defined=ns.CHANNEL_DEFINED,
    scope_rules=(
        ("channel-missing-required", required("channel-missing-required", ("title", "link", "description"))),
        ("duplicate-channel-element", at_most_once("duplicate-channel-element", _CHANNEL_SINGLE)),
        ("items-before-channel-elements", items_before_channel_elements),
        ("missing-atom-self-link", ns.missing_atom_self_link),
        ("contact-and-dc-creator", ns.contact_and_dc_creator),
        ("duplicate-namespace-element", ns.duplicate_channel_namespace_element),
        ("namespace-duplicates-core", ns.channel_duplicates_core),
        # the channel's images and items, in that order, after the channel's own rules
        ("walk:image", walk_images),
        ("walk:item", walk_items),
        ("guid-duplicate", guid_duplicate),
        ("slash-comments-without-last-build-date", ns.slash_comments_without_last_build_date),
    ),
    about={
        "items-before-channel-elements": _ITEM,
        "contact-and-dc-creator": frozenset(["dc:creator"]),
        "duplicate-namespace-element": ns.CHANNEL_SINGLE,
        "namespace-duplicates-core": ns.CHANNEL_SAME_MEANING,
        "walk:image": frozenset(["image"]),
        "walk:item": _ITEM,
        "guid-duplicate": _ITEM,
        "slash-comments-without-last-build-date": _ITEM,
    },
)
