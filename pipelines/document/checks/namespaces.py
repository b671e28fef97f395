"""5. Namespace elements: Atom (5.1), Content (5.2), Dublin Core (5.3), Slash (5.4).

Namespaced elements are not undefined elements; these are the rules the
profile gives for the four namespaces it names, on the channel and on items.
That a namespace element is used where a core element would do is not
checked.
"""

from __future__ import annotations

from pipelines.document.checks.context import Acc, Element, leaf_text, text_of
from pipelines.document.checks.values import positive_int
from pipelines.document.checks.walk import Walk

__all__ = [
    "atom_link_missing_href",
    "author_and_dc_creator",
    "contact_and_dc_creator",
    "content_before_description",
    "content_without_description",
    "missing_atom_self_link",
    "slash_comments_not_integer",
    "slash_comments_without_last_build_date",
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
    content_at = walk.first_at.get("content:encoded")
    description_at = walk.first_at.get("description")
    if content_at is not None and description_at is not None and content_at < description_at:
        acc.add("content-before-description", walk.scope, "content:encoded")


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
