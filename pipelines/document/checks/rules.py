"""The rules of the RSS Best Practices Profile that are checked, and what a failed one looks like.

:data:`RULES` is the table every other module of the package refers to by rule
id: the id (kebab-case, stable: it is written to the ``conformance`` table),
the severity (``error`` for a *must* / *must not* of the profile or the RSS
2.0 specification, ``warning`` for a *should* / recommendation), the
profile's section, every W3C Feed Validator message for the same problem (a
tuple, empty when it has none), a one-line title and the rule's source
(``profile``, or ``rss2`` / ``namespace`` for the validator's checks beyond
the profile, or ``rss1`` for the RSS 1.0 specification's structure, whose
section is then the RSS 1.0 specification's; see ``docs/conformance.md``).
Its order is the order findings are reported in. The rules of
:data:`NOT_FEED_RULES` are ``feedcensus lint``'s alone, for documents that are
no feed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipelines.document.checks.atom_rules import ATOM_ROWS

__all__ = [
    "ANY_VERSION",
    "ATOM",
    "NAMESPACE",
    "NOT_FEED_RULES",
    "PROFILE",
    "RSS1",
    "RSS2",
    "RSS_2X",
    "RULES",
    "RULE_ORDER",
    "SOURCES",
    "Finding",
    "Rule",
]


@dataclass(frozen=True, slots=True)
class Rule:
    """One checkable requirement (``error``) or recommendation (``warning``) of the profile."""

    id: str
    severity: str
    section: str
    #: every W3C Feed Validator message this rule corresponds to (the validator often uses one message for
    #: many elements, and sometimes one problem of ours is two of its messages); empty when it has none
    w3c: tuple[str, ...]
    title: str
    #: where the requirement comes from: ``profile`` (the RSS Best Practices Profile), ``rss2`` (the RSS 2.0
    #: specification alone), ``namespace`` (a namespace's own specification, as the validator reads it) or
    #: ``rss1`` (the RSS 1.0 specification, for RSS 1.0 documents; ``section`` is then that specification's)
    source: str = "profile"
    #: the RSS versions (of an ``rss`` document) the rule applies to: ``any``, or ``2.x`` for a rule of RSS 2.0
    #: alone, which an RSS 0.91 / 0.92 document does not break (a version attribute that starts "2.", or none)
    versions: str = "any"


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule that failed in one scope of a feed: how often, and the first offending value."""

    rule: str
    severity: str
    scope: str
    count: int
    example: str | None

    @property
    def source(self) -> str:
        """The rule's source (``profile``, ``rss2``, ``namespace`` or ``rss1``)."""
        return RULES[self.rule].source

    @property
    def w3c(self) -> tuple[str, ...]:
        """The W3C Feed Validator messages the rule corresponds to."""
        return RULES[self.rule].w3c


#: Where a rule comes from (``Rule.source``).
PROFILE, RSS2, NAMESPACE, RSS1, ATOM = "profile", "rss2", "namespace", "rss1", "atom"
SOURCES = (PROFILE, RSS2, NAMESPACE, RSS1, ATOM)

#: A row of the table: (id, severity, section, W3C message(s), title) or the same and a source.
_Row = (
    tuple[str, str, str, str | tuple[str, ...] | None, str]
    | tuple[str, str, str, str | tuple[str, ...] | None, str, str]
)


#: Rule.versions: every RSS version, or RSS 2.x alone.
ANY_VERSION, RSS_2X = "any", "2.x"
#: The rules of RSS 2.0 alone: the validator makes none of these checks on an RSS 0.91 / 0.92 document (a guid,
#: an atom:link to the feed itself and the profile's character-data encoding came with 2.0).
_RSS_2X_ONLY = frozenset(["item-missing-guid", "missing-atom-self-link", "character-data-not-hex"])


def _rules(*rows: _Row) -> dict[str, Rule]:
    out = {}
    for row in rows:
        rule_id, severity, section, w3c, title = row[:5]
        names = () if w3c is None else (w3c,) if isinstance(w3c, str) else w3c
        source = row[5] if len(row) > 5 else PROFILE
        versions = RSS_2X if rule_id in _RSS_2X_ONLY else ANY_VERSION
        out[rule_id] = Rule(rule_id, severity, section, names, title, source, versions)
    return out


E, W = "error", "warning"

RULES: dict[str, Rule] = _rules(
    # 1. Introduction / 4.1 rss
    (
        "undefined-element",
        E,
        "1",
        "UndefinedElement",
        "element without a namespace that the RSS specification does not define here",
    ),
    ("version-missing", E, "4.1", "MissingAttribute", "rss element has no version attribute"),
    (
        "version-not-2-0",
        E,
        "4.1",
        "InvalidRSSVersion",
        'rss element\'s version attribute is not "2.0" (nor "0.91" / "0.92", RSS versions of their own)',
    ),
    ("channel-missing", E, "4.1", "MissingElement", "rss element contains no channel"),
    (
        "root-not-feed",
        E,
        "4.1",
        "UndefinedElement",
        "root element is not rss, rdf:RDF or an Atom feed: the document is not a feed (reported by lint only)",
        RSS2,
    ),
    ("multiple-channels", E, "4.1", "DuplicateElement", "rss element contains more than one channel"),
    # 3.1 Character data
    (
        "text-element-has-children",
        E,
        "3.1",
        "UndefinedElement",
        "character-data element contains child elements (markup not escaped: <time> in a pubDate, <em> in a"
        " description); the example is the child's name",
    ),
    (
        "character-data-not-hex",
        W,
        "3.1",
        "CharacterData",
        'plain text still reads as markup once decoded ("<" and a letter or "/"), and &#x3C; is not used',
    ),
    # 3.2 Dates and times
    ("date-invalid", E, "3.2", "InvalidRFC2822Date", "date-time is not an RFC 822 date-time (four-digit year allowed)"),
    (
        "date-weekday-mismatch",
        E,
        "3.2",
        ("IncorrectDOW", "InvalidRFC2822Date"),
        "day of the week does not match the date",
    ),
    ("date-two-digit-year", W, "3.2", "ProblematicalRFC822Date", "date-time uses a two-digit year"),
    (
        "date-comment-or-extra-space",
        W,
        "3.2",
        "ProblematicalRFC822Date",
        "date-time contains a comment or more than one space between components",
    ),
    ("date-military-zone", W, "3.2", "ProblematicalRFC822Date", 'date-time uses a military time zone other than "Z"'),
    (
        "date-not-universal-form",
        W,
        "3.2",
        None,
        'date-time is not in one of the three forms that worked in every tested aggregator ("Thu, 04 Oct 2007 23:59:45 +0000/-0000/GMT")',
    ),
    # 3.3 E-mail addresses
    ("email-missing", E, "3.3", "InvalidContact", "author, managingEditor or webMaster contains no e-mail address"),
    ("email-missing-real-name", W, "3.3", "MissingRealName", 'e-mail address without "(Real Name)"'),
    ("email-format", W, "3.3", "EmailFormat", 'e-mail address not in the form "username@hostname.tld (Real Name)"'),
    # 3.4 URLs
    (
        "url-not-absolute",
        E,
        "3.4",
        "InvalidFullLink",
        "link, url, docs or comments value does not begin with a URI scheme (relative or scheme-less URL)",
    ),
    ("url-not-ascii", E, "3.4", None, "URL contains non-ASCII characters or spaces (an IRI not converted to a URL)"),
    # 4.1.1 channel
    (
        "channel-missing-required",
        E,
        "4.1.1",
        ("MissingTitle", "MissingLink", "MissingDescription", "MissingElement"),
        "channel lacks title, link or description",
    ),
    (
        "duplicate-channel-element",
        E,
        "4.1.1",
        "DuplicateElement",
        "channel element other than category or item present more than once",
    ),
    (
        "items-before-channel-elements",
        W,
        "4.1.1",
        "MisplacedItem",
        "item elements should come after all other channel elements",
    ),
    (
        "cloud-missing-attribute",
        E,
        "4.1.1.5",
        "MissingAttribute",
        "cloud lacks one of domain, path, port, protocol, registerProcedure",
    ),
    (
        "cloud-attribute-invalid",
        E,
        "4.1.1.5",
        "InvalidIntegerAttribute",
        "cloud port is not a TCP port number or protocol is not xml-rpc, soap or http-post",
    ),
    ("docs-not-rssboard", W, "4.1.1.7", None, 'docs is not "https://www.rssboard.org/rss-specification"'),
    # 4.1.1.9 image
    (
        "image-missing-required",
        E,
        "4.1.1.9",
        ("MissingTitle", "MissingLink", "MissingElement"),
        "image lacks link, title or url",
    ),
    ("duplicate-image-element", E, "4.1.1.9", "DuplicateElement", "image child element present more than once"),
    ("image-link-mismatch", W, "4.1.1.9", "ImageLinkDoesntMatch", "image link is not the channel's link"),
    ("image-title-mismatch", W, "4.1.1.9.2", "ImageTitleDoesntMatch", "image title is not the channel's title"),
    ("image-url-format", E, "4.1.1.9.3", "ImageUrlFormat", "image url names a file that is not GIF, JPEG or PNG"),
    ("image-too-tall", E, "4.1.1.9.5", "InvalidHeight", "image height is over 400"),
    ("image-too-wide", E, "4.1.1.9.6", "InvalidWidth", "image width is over 144"),
    (
        "image-size-not-integer",
        E,
        "4.1.1.9.6",
        ("InvalidHeight", "InvalidWidth"),
        "image width or height is not a positive integer",
    ),
    # 4.1.1.10 .. 4.1.1.18
    ("language-invalid", E, "4.1.1.10", "InvalidLanguage", "language is not an ISO 639 / RFC 1766 language code"),
    ("rating-not-pics", E, "4.1.1.14", None, "rating is not a PICS label"),
    ("skip-day-invalid", E, "4.1.1.15.1", "InvalidDay", "skipDays day is not one of Monday..Sunday"),
    ("skip-day-duplicate", E, "4.1.1.15.1", "DuplicateValue", "skipDays day repeated"),
    ("skip-days-empty", E, "4.1.1.15", "MissingElement", "skipDays contains no day element", RSS2),
    ("skip-hour-invalid", E, "4.1.1.16.1", "InvalidHour", "skipHours hour is not an integer from 0 to 23"),
    ("skip-hour-24", E, "4.1.1.16.1", "UseZeroForMidnight", "skipHours uses 24 (RSS 0.91) for midnight instead of 0"),
    ("skip-hour-duplicate", E, "4.1.1.16.1", "DuplicateValue", "skipHours hour repeated"),
    ("text-input-present", W, "4.1.1.17", "AvoidTextInput", "textInput is ignored by most aggregators"),
    (
        "text-input-missing-required",
        E,
        "4.1.1.17",
        ("MissingTitle", "MissingLink", "MissingDescription", "MissingElement"),
        "textInput lacks description, link, name or title",
    ),
    (
        "duplicate-text-input-element",
        E,
        "4.1.1.17",
        "DuplicateElement",
        "textInput child element present more than once",
    ),
    (
        "text-input-name-invalid",
        E,
        "4.1.1.17.3",
        "InvalidFormComponentName",
        "textInput name does not start with a letter or contains characters other than A-Z a-z 0-9 : - . _",
    ),
    ("ttl-not-positive-integer", E, "4.1.1.18", "InvalidInteger", "ttl is not a positive integer number of minutes"),
    # 4.1.1.20 item
    (
        "item-missing-title-and-description",
        E,
        "4.1.1.20",
        "ItemMustContainTitleOrDescription",
        "item has neither title nor description",
    ),
    (
        "duplicate-item-element",
        E,
        "4.1.1.20",
        "DuplicateElement",
        "item element other than category or enclosure present more than once",
    ),
    (
        "description-relative-url",
        W,
        "4.1.1.20.4",
        "ContainsRelRef",
        "item description or content:encoded contains a relative URL (or #fragment, //host, empty) in href or src",
    ),
    ("enclosure-missing-attribute", E, "4.1.1.20.5", "MissingAttribute", "enclosure lacks url, length or type"),
    ("enclosure-length-not-integer", E, "4.1.1.20.5", "InvalidIntegerAttribute", "enclosure length is not an integer"),
    (
        "enclosure-length-unknown",
        W,
        "4.1.1.20.5",
        ("UseZeroForUnknown", "InvalidIntegerAttribute", "InvalidNonNegativeInteger"),
        "enclosure length is empty or negative; use 0 for an unknown size",
    ),
    (
        "enclosure-url-not-absolute",
        E,
        "4.1.1.20.5",
        "InvalidURLAttribute",
        "enclosure url does not begin with a URI scheme",
    ),
    ("duplicate-enclosure", W, "4.1.1.20.5", "DuplicateEnclosure", "item contains more than one enclosure"),
    (
        "guid-permalink-not-url",
        E,
        "4.1.1.20.6",
        "InvalidHttpGUID",
        "guid is a permalink (isPermaLink absent or true) but not a full URL",
    ),
    (
        "guid-is-permalink-invalid",
        E,
        "4.1.1.20.6",
        "InvalidBooleanAttribute",
        'guid isPermaLink is neither "true" nor "false"',
    ),
    ("item-missing-guid", W, "4.1.1.20.6", "MissingGuid", "item has no guid"),
    ("guid-duplicate", E, "4.1.1.20.6", "DuplicateValue", "two items of the channel have the same guid value", RSS2),
    ("item-date-in-future", W, "4.1.1.20.8", None, "item pubDate is in the future"),
    ("source-missing-url", E, "4.1.1.20.9", "MissingAttribute", "source lacks its url attribute"),
    (
        "source-url-not-absolute",
        E,
        "4.1.1.20.9",
        ("InvalidURLAttribute", "InvalidFullLink"),
        "source url does not begin with a URI scheme",
    ),
    # 5. namespaces
    ("missing-atom-self-link", W, "5.1", "MissingAtomSelfLink", 'channel has no atom:link rel="self"'),
    ("atom-link-missing-href", E, "5.1", "MissingHref", "atom:link has no href attribute"),
    (
        "content-before-description",
        W,
        "5.2.1",
        "NeedDescriptionBeforeContent",
        "item has content:encoded before description",
    ),
    (
        "content-without-description",
        W,
        "5.2.1",
        "NeedDescriptionBeforeContent",
        "item has content:encoded but no description",
    ),
    ("author-and-dc-creator", W, "5.3.1", "DuplicateItemSemantics", "item contains both author and dc:creator"),
    (
        "contact-and-dc-creator",
        W,
        "5.3.1",
        "DuplicateSemantics",
        "channel contains dc:creator with managingEditor or webMaster",
    ),
    (
        "slash-comments-not-integer",
        E,
        "5.4.1",
        "InvalidNonNegativeInteger",
        "slash:comments is not a non-negative integer",
    ),
    (
        "slash-comments-without-last-build-date",
        W,
        "5.4.1",
        "SlashDate",
        "slash:comments used but the channel has no lastBuildDate",
    ),
    # namespaces' own specifications, as the W3C validator reads them (not the profile's rules)
    (
        "duplicate-namespace-element",
        E,
        "5",
        "DuplicateElement",
        "a namespace element its specification allows once per channel or item is present more than once",
        NAMESPACE,
    ),
    (
        "namespace-duplicates-core",
        W,
        "5.1",
        ("DuplicateSemantics", "DuplicateItemSemantics"),
        "channel or item has both a core element and a namespace element with the same meaning (e.g. pubDate and dc:date)",
        NAMESPACE,
    ),
    (
        "namespace-undefined-element",
        E,
        "5",
        "UndefinedElement",
        "element of a namespace whose vocabulary is closed (Dublin Core, Content, Slash, Syndication, iTunes,"
        " Media RSS) that its specification does not define here (dc:modified, content:encoded in a channel...)",
        NAMESPACE,
    ),
    (
        "itunes-missing-attribute",
        E,
        "5",
        "MissingAttribute",
        "itunes:category without its text attribute, or itunes:image without its href",
        NAMESPACE,
    ),
    ("itunes-owner-missing-email", E, "5", "MissingElement", "itunes:owner without itunes:email", NAMESPACE),
    (
        "itunes-owner-email-invalid",
        E,
        "5",
        "InvalidContact",
        "itunes:owner's itunes:email is not an e-mail address (empty included)",
        NAMESPACE,
    ),
    (
        "dc-language-invalid",
        E,
        "5.3",
        "InvalidLanguage",
        "dc:language is not an RFC 1766 / ISO 639 language code",
        NAMESPACE,
    ),
    (
        "trackback-url-not-absolute",
        E,
        "5",
        "InvalidFullLink",
        "trackback:ping or trackback:about does not hold a full URL (in RSS 2.0 the URL is the element's text)",
        NAMESPACE,
    ),
    (
        "sy-update-frequency-invalid",
        E,
        "5",
        "InvalidInteger",
        "sy:updateFrequency is not a positive integer",
        NAMESPACE,
    ),
    # RSS 1.0 (RDF Site Summary 1.0, sections 5.2-5.6), for RSS 1.0 documents only
    ("rss1-channel-missing", E, "5.2", "MissingElement", "rdf:RDF contains no RSS 1.0 channel", RSS1),
    (
        "rss1-undefined-element",
        E,
        "5.2",
        "UndefinedElement",
        "element in the RSS 1.0 namespace that RSS 1.0 does not define here (e.g. language in a channel, item in a channel)",
        RSS1,
    ),
    (
        "rss1-duplicate-element",
        E,
        "5.2",
        "DuplicateElement",
        "RSS 1.0 element present more than once where the model allows one (channel, items, title...)",
        RSS1,
    ),
    (
        "rss1-missing-required",
        E,
        "5.3",
        "MissingElement",
        "channel, image, item or textinput lacks an element RSS 1.0 requires there",
        RSS1,
    ),
    ("rss1-about-missing", E, "5.3", "MissingAttribute", "channel, image, item or textinput has no rdf:about", RSS1),
    (
        "rss1-about-duplicate",
        E,
        "5.3",
        "DuplicateValue",
        "two of the channel, image, item and textinput elements have the same rdf:about",
        RSS1,
    ),
    (
        "rss1-resource-missing",
        E,
        "5.3.4",
        "MissingAttribute",
        "the channel's image or textinput (a reference) has no rdf:resource",
        RSS1,
    ),
    (
        "rss1-trackback-resource-missing",
        E,
        "6",
        "MissingAttribute",
        "trackback:ping or trackback:about in an RSS 1.0 item has no rdf:resource (the URL as text is the RSS 2.0 form)",
        RSS1,
    ),
)

RULES.update(
    _rules(
        # The validator's security checks on an item's HTML (description, content:encoded, xhtml:body): RSS 2.0
        # says the description may hold entity-encoded HTML; what an aggregator must not render is the validator's
        # reading (RFC 4287 8.1 says the same of Atom content, where atom_html checks it).
        ("html-unsafe-element", W, "4.1.1.20.4", "SecurityRisk", "item HTML with an element that runs or loads code (script, iframe, object, embed, meta...)", RSS2),
        ("html-unsafe-attribute", W, "4.1.1.20.4", ("SecurityRiskAttr", "SecurityRisk"), "item HTML with an event handler attribute (onclick...)", RSS2),
        ("html-unsafe-style", W, "4.1.1.20.4", ("DangerousStyleAttr", "SecurityRiskAttr", "SecurityRisk"), "item HTML with a style attribute beyond plain layout (a URL, expression(), position, mso-*...)", RSS2),
    )
)  # fmt: skip

RULES.update(_rules(*ATOM_ROWS))

#: The rules :func:`~pipelines.document.checks.check_feed` never reports: ``feedcensus lint``'s verdict on a
#: document the parser reads as no feed (``crawler.cli.documents.not_feed_findings``). The census records such a
#: document as the fetch_log outcome ``not_feed``, so the ``conformance`` table stays about feeds.
NOT_FEED_RULES = frozenset({"root-not-feed"})

#: Rule id -> its position in RULES (the order findings are reported in).
RULE_ORDER = {rule_id: i for i, rule_id in enumerate(RULES)}
