"""An item's identity and content hash: how an incremental crawl knows an item again, and knows it changed.

Pure functions over the values the parser already read (:class:`pipelines.document.feedparse.ParsedItem`),
so the rules live in one place and a caller can recompute either value from a row.

Identity (:func:`item_identity`)
    The item's guid (RSS ``guid``, Atom ``id``, RSS 1.0 ``rdf:about``), stripped, when it is not blank;
    else its link (absolute, as the item's ``link`` already is: resolved against ``xml:base`` and the
    feed URL), stripped, when not blank; else ``"sha256:"`` and the SHA-256 (lower-case hex) of the
    title, the description and the enclosure URL joined with U+001F (a missing part is ``""``). The
    second value says which it was (:class:`schemas.vocab.IdentitySource`).

Content hash (:func:`content_hash`)
    The SHA-256 (lower-case hex) of the UTF-8 of title, link, description and enclosure URL joined
    with U+001F, a missing part as ``""``. Title, link and enclosure URL are the item's values (text
    stripped, link and enclosure URL resolved). The date is deliberately left out: some publishers
    rewrite ``pubDate`` on every request, and an item is not changed by that.

The description
    The item's text content: in RSS (0.9x, 1.0, 2.0) the text of the item's first ``description``
    element, or when it has none or that text is empty or only XML whitespace (space, tab, CR, LF),
    the text of its first ``content:encoded`` on the same condition; in Atom (1.0, 0.3) likewise the
    first ``content``, then the first ``summary``. The text is the element's string value as the XML
    parser reports it (XPath ``string(.)``): the text and CDATA of the element and all its
    descendants in document order, markup dropped (escaped HTML is text and stays as written; the
    tags of Atom ``type="xhtml"`` content are dropped, their text kept), character references and
    the predefined entities resolved, an entity the document declares replaced by its text, one it
    does not declare (``&nbsp;`` under RSS 0.91's Netscape doctype) giving nothing. It is not stripped. None when the item has no such element with a non-blank text.

Both functions take the description as text or as its UTF-8 bytes (the parser hands over bytes, so
that a large text is never decoded only to be encoded again); the two give the same hash. Text that
is not valid Unicode (a lone surrogate) is encoded with ``surrogatepass``: odd input never raises.
"""

from __future__ import annotations

from hashlib import sha256

from schemas.vocab import IdentitySource

__all__ = ["HASH_PREFIX", "SEPARATOR", "content_hash", "item_hashes", "item_identity"]

#: Between the parts of a hash (written literally in the f-strings below).
SEPARATOR = "\x1f"
#: Before the hex digest in an identity made from a hash (identity_source "hash").
HASH_PREFIX = "sha256:"


def _digest(first: str, description: str | bytes | None, last: str, errors: str = "strict") -> str:
    """SHA-256 hex of the UTF-8 of ``first + description + last``, the description given as text or UTF-8 bytes.

    Kept to a few C calls: it runs for every item of every feed.
    """
    try:
        if isinstance(description, bytes):  # possibly large: hashed where it is, not copied
            h = sha256(first.encode("utf-8", errors))
            h.update(description)
            h.update(last.encode("utf-8", errors))
            return h.hexdigest()
        return sha256(f"{first}{description or ''}{last}".encode("utf-8", errors)).hexdigest()
    except UnicodeEncodeError:  # a lone surrogate: still a hash
        return _digest(first, description, last, "surrogatepass")


def content_hash(
    title: str | None, link: str | None, description: str | bytes | None, enclosure_url: str | None
) -> str:
    """SHA-256 (hex) of title, link, description and enclosure URL joined with U+001F; None parts as ""."""
    return _digest(f"{title or ''}\x1f{link or ''}\x1f", description, f"\x1f{enclosure_url or ''}")


def item_identity(
    guid: str | None,
    link: str | None,
    title: str | None,
    description: str | bytes | None,
    enclosure_url: str | None,
) -> tuple[str, IdentitySource]:
    """The item's identity and what it was taken from: its guid, else its link, else a hash (see above)."""
    if guid is not None and (guid := guid.strip()):
        return guid, IdentitySource.GUID
    if link is not None and (link := link.strip()):
        return link, IdentitySource.LINK
    digest = _digest(f"{title or ''}\x1f", description, f"\x1f{enclosure_url or ''}")
    return HASH_PREFIX + digest, IdentitySource.HASH


def item_hashes(
    guid: str | None,
    link: str | None,
    title: str | None,
    description: str | bytes | None,
    enclosure_url: str | None,
) -> tuple[str, str, IdentitySource]:
    """(content hash, identity, identity source): :func:`content_hash` and :func:`item_identity` in one call.

    The parser's, for every item (two calls fewer per item).
    """
    title, enclosure_url = title or "", enclosure_url or ""
    hashed = _digest(f"{title}\x1f{link or ''}\x1f", description, f"\x1f{enclosure_url}")
    if guid is not None and (guid := guid.strip()):
        return hashed, guid, IdentitySource.GUID
    if link is not None and (link := link.strip()):
        return hashed, link, IdentitySource.LINK
    return hashed, HASH_PREFIX + _digest(f"{title}\x1f", description, f"\x1f{enclosure_url}"), IdentitySource.HASH
