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
from pipelines.document.checks.values import check_email, check_url, positive_int
from pipelines.document.checks.walk import Section, Walk, at_most_once, required, walk_scope

__all__ = ["CHANNEL"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CHANNEL_SINGLE = _words(
    "title link description cloud copyright docs generator image language lastBuildDate managingEditor"
    " pubDate rating skipDays skipHours textInput ttl webMaster"
)
_RSSBOARD_DOCS = "https://www.rssboard.org/rss-specification"
_PICS_RE = re.compile(r"\s*\(\s*PICS-1\.1\b")
_LANG_RE = re.compile(r"\s*([A-Za-z]{1,8})((?:-[A-Za-z0-9]{1,8})*)\s*\Z")

#: ISO 639-1 codes (plus the withdrawn iw, in, ji, mo, sh still seen in RSS language lists).
_ISO639_1 = _words(
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv
    dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii
    ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk
    ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc
    sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve
    vi vo wa wo xh yi yo za zh zu iw in ji mo sh"""
)


# ---------------------------------------------------------------- the channel's simple elements


def docs_not_rssboard(acc: Acc, scope: str, text: str, el: Element) -> None:
    if text.strip() != _RSSBOARD_DOCS:
        acc.add("docs-not-rssboard", scope, text)


def is_language(text: str) -> bool:
    """An ISO 639 code (two letters from the list, or any three letters), or an RFC 1766 i- / x- tag."""
    m = _LANG_RE.match(text)
    if m is None:
        return False
    primary = m.group(1).lower()
    return (
        primary in _ISO639_1
        or (len(primary) == 3 and primary.isalpha())
        or (primary in ("i", "x") and bool(m.group(2)))
    )


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
    first_item = walk.first_at.get("item")
    if first_item is None:
        return
    for _, name in walk.kids[first_item:]:
        if name != "item":
            acc.add("items-before-channel-elements", walk.scope, name)
            return


def walk_items(acc: Acc, channel: Walk) -> None:
    """Each of the channel's items (one that cannot be walked does not stop the rest)."""
    for item in channel.named("item"):
        acc.guard("walk:item", walk_scope, acc, ITEM, item, channel)


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
    },
    scope_rules=(
        ("channel-missing-required", required("channel-missing-required", ("title", "link", "description"))),
        ("duplicate-channel-element", at_most_once("duplicate-channel-element", _CHANNEL_SINGLE)),
        ("items-before-channel-elements", items_before_channel_elements),
        ("missing-atom-self-link", ns.missing_atom_self_link),
        ("contact-and-dc-creator", ns.contact_and_dc_creator),
        # the channel's images and items, in that order, after the channel's own rules
        ("walk:image", walk_images),
        ("walk:item", walk_items),
        ("slash-comments-without-last-build-date", ns.slash_comments_without_last_build_date),
    ),
)
