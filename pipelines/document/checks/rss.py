"""4.1 rss: the root element, its version and its one channel."""

from __future__ import annotations

from pipelines.document.checks.channel import CHANNEL
from pipelines.document.checks.context import Acc, Element
from pipelines.document.checks.walk import Section, Walk, at_most_once, walk_inner, walk_scope

__all__ = ["RSS", "RSS_09X", "walk_rss"]


def version_missing(acc: Acc, walk: Walk) -> None:
    """4.1: the rss element must contain a version attribute (RSS 2.0: a mandatory attribute)."""
    if walk.el.get("version") is None:
        acc.add("version-missing", walk.scope, "(missing)")


#: The versions of the rss element other than 2.0: documents of their own, which get the rules of every version.
RSS_09X = frozenset(["0.91", "0.92"])


def version_not_2_0(acc: Acc, walk: Walk) -> None:
    """The version attribute itself is read, so that no normalisation by the parser hides a bad value.

    An RSS 0.91 or 0.92 document is not an RSS 2.0 document with a wrong version: it is one of the earlier
    versions (as the validator reads it, with no ``InvalidRSSVersion``), and the 2.x rules are not run on it.
    """
    version = walk.el.get("version")
    if version is not None and (v := version.strip()) != "2.0" and v not in RSS_09X:
        acc.add("version-not-2-0", walk.scope, version)


def channel_missing(acc: Acc, walk: Walk) -> None:
    if "channel" not in walk.seen:
        acc.add("channel-missing", walk.scope, None)


def walk_channels(acc: Acc, rss: Walk) -> None:
    """Each channel (one that cannot be walked does not stop the rest)."""
    walk_inner(acc, CHANNEL, rss, "channel")


_CHANNEL = frozenset(["channel"])

RSS = Section(
    scope="rss",
    defined=_CHANNEL,
    containers=_CHANNEL,
    scope_rules=(
        ("version-missing", version_missing),
        ("version-not-2-0", version_not_2_0),
        ("channel-missing", channel_missing),
        ("multiple-channels", at_most_once("multiple-channels", _CHANNEL)),
        ("walk:channel", walk_channels),
    ),
    about={"multiple-channels": _CHANNEL, "walk:channel": _CHANNEL},
)


def walk_rss(acc: Acc, root: Element) -> None:
    walk_scope(acc, RSS, root)
