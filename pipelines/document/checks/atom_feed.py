"""Atom 1.0: what a feed holds across its entries, and what an entry's content asks of it (RFC 4287 4.1.1, 4.1.2).

* ``atom-self-link-missing`` (4.1.1; ``MissingSelf``, a warning): a feed with
  no ``atom:link`` of ``rel="self"`` (the RFC's *should*: the feed's own
  address, for a reader to subscribe to);
* ``atom-entry-id-duplicate`` (4.1.1; ``DuplicateEntries``, a warning): two
  entries of a feed with the same ``atom:id`` (they are then one entry in two
  versions, which the RFC allows only with different ``updated``; the
  validator flags every repeat);
* ``atom-entry-updated-duplicate`` (4.1.1; ``DuplicateUpdated``, a warning):
  two entries of a feed with the same ``atom:updated``, as the validator reads
  it (a reader that orders by it cannot tell them apart);
* ``atom-summary-missing`` (4.1.2; ``MissingSummary``): an entry whose
  content is out of line (``src``) or base64 (a media type neither XML nor
  text) and that has no ``atom:summary``: the RFC requires one there;
* ``atom-content-or-alternate-missing`` (4.1.2; ``MissingContentOrAlternate``):
  an entry with no ``atom:content`` and no ``rel="alternate"`` link;
* ``atom-textual-content-missing`` (4.1.2; ``MissingTextualContent``, a
  warning): an entry with neither ``atom:content`` nor ``atom:summary``.

The entry rules report in scope ``entry``, the feed's duplicates in scope
``entry`` too (the second entry is at fault), the missing self link in scope
``feed``.
"""

from __future__ import annotations

from pipelines.document.checks.context import Acc, Element, children, text_of

__all__ = ["IANA_RELATIONS", "check_entry_content", "check_feed_entries", "link_rel"]

FEED, ENTRY = "feed", "entry"
#: The validator reads a feed whose ten or more entries all share one id as one mistake, not as duplicates.
_ALL_SAME_ID = 10


#: RFC 4287 4.2.7.2: a relation written as this IRI and a registered name is that name ("self", "alternate").
IANA_RELATIONS = "http://www.iana.org/assignments/relation/"


def link_rel(link: Element) -> str:
    """A link's relation: ``alternate`` when it has none, a registered name for its IANA IRI."""
    rel = (link.get("rel") or "alternate").strip()
    return rel[len(IANA_RELATIONS) :] if rel.startswith(IANA_RELATIONS) else rel


def check_entry_content(acc: Acc, entry: Element) -> None:
    """An entry's content and summary: a summary where the content is not text, content or an alternate link."""
    content: Element | None = None
    summary = alternate = False
    for child, name in children(entry, acc):
        if name == "atom:content" and content is None:
            content = child
        elif name == "atom:summary":
            summary = True
        elif name == "atom:link" and link_rel(child) == "alternate":
            alternate = True
    if content is None:
        if not summary:
            acc.add("atom-textual-content-missing", ENTRY, "atom:content, atom:summary")
        if not alternate:
            acc.add("atom-content-or-alternate-missing", ENTRY, "atom:content, atom:link rel=alternate")
        return
    kind = (content.get("type") or "text").strip().lower()
    binary = "/" in kind and not (kind.endswith("+xml") or kind.endswith("/xml") or kind.startswith("text/"))
    if not summary and (content.get("src") is not None or binary):
        acc.add("atom-summary-missing", ENTRY, "atom:summary")


def check_feed_entries(acc: Acc, feed: Element, entries: list[Element]) -> None:
    """The feed's self link, and no two of its entries with the same id or the same updated."""
    if not any(name == "atom:link" and link_rel(child) == "self" for child, name in children(feed, acc)):
        acc.add("atom-self-link-missing", FEED, "atom:feed")
    ids: set[str] = set()
    dates: set[str] = set()
    id_repeats: list[str] = []
    for entry in entries:
        for child, name in children(entry, acc):
            if name == "atom:id" and (value := text_of(child, acc).strip()):
                if value in ids:
                    id_repeats.append(value)
                ids.add(value)
            elif name == "atom:updated" and (value := text_of(child, acc).strip()):
                if value in dates:
                    acc.add("atom-entry-updated-duplicate", ENTRY, value)
                dates.add(value)
    if id_repeats and not (len(entries) >= _ALL_SAME_ID and len(id_repeats) == len(entries) - 1):
        acc.add("atom-entry-id-duplicate", ENTRY, id_repeats[0], len(id_repeats))
