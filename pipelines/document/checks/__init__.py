"""Check a parsed feed against the RSS Best Practices Profile (RSS Advisory Board, 2007), and RSS 1.0's structure.

One :class:`Rule` (:data:`RULES`) per requirement or recommendation of the
profile (and of the RSS 2.0 specification it restates) that can be tested
mechanically on the document; :func:`check_feed` walks the element tree once
and returns one :class:`Finding` per (rule, scope) that failed, with the
number of occurrences and the first offending value.

Scope is where the offending element sits: ``rss`` (the root), ``channel``,
``item``, ``image``, ``textInput``, ``skipHours`` or ``skipDays``.

Severity: ``error`` for a *must* / *must not* of the profile or the RSS 2.0
specification, ``warning`` for a *should* / recommendation.

Source (``Rule.source``): ``profile`` for the profile's rules; ``rss2`` and
``namespace`` for the checks the W3C Feed Validator makes on RSS 2.0 and its
common namespaces beyond the profile (a duplicate guid, an empty skipDays,
namespace elements repeated or duplicating a core element...), so that
profile conformance can be reported alone; ``rss1`` for the RSS 1.0
specification's structure rules, the only rules (with the namespace rules that
hold in any feed) an RSS 1.0 document gets. ``Rule.w3c`` lists every validator
message a rule corresponds to; ``docs/conformance.md`` measures the agreement
on the validator's own test cases and lists every case where it differs.

The package follows the profile's sections, one small function per rule:

=================  ==============================================================
``rules``          the rule table (ids, severities, sections, W3C names, titles)
``walk``           the one walk over a scope's children, driven by its
                   :class:`~pipelines.document.checks.walk.Section` table
``rss``            4.1 rss
``channel``        4.1.1 channel and its simple elements
``channel_parts``  cloud, image, skipDays, skipHours, textInput
``item``           4.1.1.20 item, enclosure, guid, source
``namespaces``     5. Atom, Content, Dublin Core, Slash
``rss1``           RSS 1.0 (RDF Site Summary 1.0): rdf:RDF, channel, image, item, textinput
``chardata``       3.1 character data (read from the raw bytes)
``datetimes``      3.2 dates and times (tokenised by ``pipelines.document.dates``)
``values``         3.3 e-mail addresses, 3.4 URLs, integers
``context``        the findings being gathered, rule failures, tree helpers
``atom``           Atom 1.0 (RFC 4287): feed, entry, source, persons, ids, dates, links, types
``atom_html``      what Atom text constructs and content hold (escaped HTML, unsafe HTML; also an RSS
                   item's HTML)
``atom_rules``     the Atom rows of the rule table
=================  ==============================================================

What is deliberately not checked (not decidable on the document alone):
that the channel title matches the web site's name, that a category is a
slash-delimited taxonomy path, that URI schemes are IANA-registered (only the
``scheme:`` syntax is checked), that a feed by one person omits ``author``, and
that namespace elements are not used where a core element would do.

Judgement calls: a second enclosure is only the profile's ``DuplicateEnclosure``
warning (4.1.1.20.5), not also a duplicate item element; ``<hour>24</hour>`` is
an error (4.1.1.16.1 permits 0-23) under its own id so it can be told from other
bad hours; a date more than ``FUTURE_GRACE_SECONDS`` (``datetimes``) ahead of
``now`` is "in the future"; a military time zone is read as ``-0000`` (see
``pipelines.document.dates``); image formats are judged by the file extension
of the URL, when it has one; the 3.1 character-data rule looks only at
plain-text elements (titles, descriptions other than an item's, copyright,
category, generator, author, managingEditor, webMaster, source) in
ASCII-compatible bodies.

The profile is about RSS 2.0: its rules run only for ``format == "rss"`` (any
``version``; a version other than 2.0, 0.91 or 0.92 is itself a finding). The
rules of RSS 2.x alone (``Rule.versions == "2.x"``: the guid, the Atom
self-link, 3.1's character data) are not reported on an RSS 0.91 / 0.92
document (a version attribute that does not start with "2."), as the W3C
validator does not report them there. An RSS 1.0
document (``format == "rdf"``) gets the ``rss1`` rules instead (see ``rss1``),
an Atom document the ``atom`` rules (``atom``, ``atom_html``); RSS 0.90 and
unknown documents get no findings: no rule is defined for them. A document that is no feed (``unknown``) gets no finding here: the census
records it as such (``not_feed``), and the ``conformance`` table stays about
feeds. ``feedcensus lint`` alone names it as a rule (``root-not-feed``, of
:data:`NOT_FEED_RULES`, or ``rss1-channel-missing`` for an ``rdf:RDF`` root;
see ``crawler.cli.documents.not_feed_findings`` and ``docs/conformance.md``).

A rule that raises on an odd document does not stop the others: the
exception is caught where the rule is run (``context.Acc.run``, the one broad
``except`` of the package) and reported on the result
(:attr:`CheckResult.failures`, one :class:`RuleFailure` per rule id), so that a
crawl counts it instead of silently under-counting the census.
"""

from __future__ import annotations

from datetime import datetime

from pipelines.document.checks.atom import walk_atom
from pipelines.document.checks.chardata import check_character_data
from pipelines.document.checks.context import Acc, CheckResult, Element, Notes, RuleFailure
from pipelines.document.checks.rss import walk_rss
from pipelines.document.checks.rss1 import is_rss1, walk_rdf
from pipelines.document.checks.rules import NOT_FEED_RULES, RSS_2X, RULES, Finding, Rule
from schemas.vocab import FeedFormat

__all__ = ["NOT_FEED_RULES", "RULES", "CheckResult", "Finding", "Notes", "Rule", "RuleFailure", "check_feed"]


#: The rules of RSS 2.x alone (``Rule.versions``): not reported on an RSS document of another version.
RSS_2X_RULES = frozenset(rule.id for rule in RULES.values() if rule.versions == RSS_2X)


def check_feed(
    root: Element | None,
    *,
    format: str,
    body: bytes = b"",
    now: datetime | None = None,
    notes: Notes | None = None,
) -> CheckResult:
    """Check one parsed feed against the RSS Best Practices Profile (RSS 2.0) or RSS 1.0's rules.

    ``root`` is the lxml root element (possibly from a recover-mode parse),
    ``format`` the detected format: ``"rss"`` is checked against the profile,
    ``"rdf"`` (RSS 1.0) against RSS 1.0's rules, anything else gets no findings
    (see the module docstring). The version rule reads the root's ``version``
    attribute itself.
    ``body`` (the raw document bytes) is needed only for the 3.1
    character-data rule; ``now`` (default: the current UTC time; naive means
    UTC) is the reference for future item dates. ``notes`` is the ``notes``
    of the ``parse_feed(..., with_notes=True)`` result whose ``root`` this is
    (a ``pipelines.document.feedparse.TreeNotes``).

    Returns the findings in :data:`RULES` order, as a list; its ``failures``
    name the rules that raised instead of deciding. Never raises.
    """
    if root is None:
        return CheckResult()
    if format == FeedFormat.RDF:
        return _check_rss1(root, notes)
    if format == FeedFormat.ATOM:
        return _check_atom(root, notes)
    if format != FeedFormat.RSS:
        return CheckResult()
    acc = Acc(body if isinstance(body, bytes | bytearray) else b"", now, notes)
    acc.guard("walk:rss", walk_rss, acc, root)
    version = root.get("version")
    if version is None or version.strip().startswith("2."):
        acc.guard("character-data-not-hex", check_character_data, acc)
        return acc.result()
    return acc.result(skip=RSS_2X_RULES)


def _check_atom(root: Element, notes: Notes | None) -> CheckResult:
    """The Atom 1.0 rules (``source = "atom"``) on an Atom document."""
    acc = Acc(b"", None, notes)
    acc.guard("walk:feed", walk_atom, acc, root)
    return acc.result()


def _check_rss1(root: Element, notes: Notes | None) -> CheckResult:
    """The RSS 1.0 rules (``source = "rss1"``) on an RSS 1.0 document; nothing for RSS 0.90."""
    acc = Acc(b"", None, notes)
    if is_rss1(root):
        acc.guard("walk:rdf:RDF", walk_rdf, acc, root)
    return acc.result()
