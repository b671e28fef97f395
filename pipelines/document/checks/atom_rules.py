"""The Atom 1.0 rules (RFC 4287) of the rule table: ``rules.RULES`` takes them in, after the RSS ones.

One row per rule, as ``rules._rules`` reads them: (id, severity, section of RFC 4287, the W3C Feed Validator
messages, title, source). The checks are ``atom`` (structure, ids, dates, links, types) and ``atom_html`` (what
text constructs and content hold: escaped HTML, the validator's security checks); ``docs/conformance.md``
("Atom 1.0") says what each rule takes for a failure and where the validator reads it otherwise.
"""

from __future__ import annotations

__all__ = ["ATOM_ROWS"]

_A, E, W = "atom", "error", "warning"

# fmt: off
ATOM_ROWS: tuple[tuple[str, str, str, str | tuple[str, ...], str, str], ...] = (
    # structure (4.1, 4.2)
    ("atom-missing-required", E, "4.1.1", "MissingElement",
     "feed or entry lacks atom:id, atom:title or atom:updated; entry lacks atom:author and the feed has none", _A),
    ("atom-duplicate-element", E, "4.1.1", "DuplicateElement",
     "Atom element allowed once in a feed or entry present more than once (id, title, updated...)", _A),
    ("atom-undefined-element", E, "4.1.1", "UndefinedElement",
     "element of the Atom namespace that RFC 4287 does not define here (published in a feed...)", _A),
    ("atom-element-blank", W, "4.2", "NotBlank",
     "a title, summary, content, id, generator, person's name or category term with no text", _A),
    ("atom-attribute-blank", W, "4.2", "AttrNotBlank",
     "an empty type attribute of a text construct or content, an empty rel or title of a link", _A),
    ("atom-value-whitespace", W, "4.2.6", "UnexpectedWhitespace",
     "white space around an id, a date, an icon, a logo or a person's uri", _A),
    # across a feed's entries, and what an entry's content asks of it (4.1.1, 4.1.2: atom_feed)
    ("atom-self-link-missing", W, "4.1.1", "MissingSelf", 'feed without an atom:link rel="self" (its own address)', _A),
    ("atom-entry-id-duplicate", W, "4.1.1", "DuplicateEntries", "two entries of a feed with the same atom:id", _A),
    ("atom-entry-updated-duplicate", W, "4.1.1", "DuplicateUpdated", "two entries of a feed with the same atom:updated", _A),
    ("atom-summary-missing", E, "4.1.2", "MissingSummary",
     "entry whose content has src or is base64 (not XML, not text) and has no atom:summary", _A),
    ("atom-content-or-alternate-missing", E, "4.1.2", "MissingContentOrAlternate",
     'entry with neither atom:content nor a link rel="alternate"', _A),
    ("atom-textual-content-missing", W, "4.1.2", "MissingTextualContent", "entry with neither atom:content nor atom:summary", _A),
    # ids, dates, persons (3.2, 3.3, 4.2.6)
    ("atom-id-not-iri", E, "4.2.6", "InvalidFullLink", "atom:id is not an absolute IRI (no scheme)", _A),
    ("atom-id-invalid", E, "4.2.6", ("InvalidTAG", "InvalidURN"),
     "atom:id in the tag: or urn: scheme does not follow RFC 4151 / RFC 2141", _A),
    ("atom-id-not-canonical", W, "4.2.6.1", "NonCanonicalURI",
     "atom:id not in RFC 3986's normal form (upper-case scheme or host, default port, %7e, dot segments...)", _A),
    ("atom-iri-invalid-char", E, "4.2.6", "InvalidUriChar",
     "an id, link href, content src, category scheme, generator uri or xml:base with a character no IRI holds", _A),
    ("atom-date-invalid", E, "3.3", "InvalidRFC3339Date", "atom:updated or atom:published is not an RFC 3339 date-time", _A),
    ("atom-email-invalid", E, "3.2.3", ("InvalidAddrSpec", "InvalidContact"), "atom:email of a person is not an e-mail address", _A),
    # links and types (3.1.1, 4.1.3, 4.2.7)
    ("atom-missing-attribute", E, "4.2.7.1", "MissingAttribute", "atom:link without href, or atom:category without term", _A),
    ("atom-type-invalid", E, "3.1.1", ("InvalidMIMEType", "InvalidTextType"),
     "type of a text construct not text, html or xhtml; of a content not those nor a (non-composite) media"
     " type, or text/html/xhtml with src; of a link not a media type", _A),
    ("atom-xhtml-div-missing", E, "3.1.1.3", "MissingXhtmlDiv", 'type="xhtml" text construct or content that is not one xhtml:div', _A),
    ("atom-alternate-duplicate", E, "4.1.1", "DuplicateAtomLink", 'two links rel="alternate" with the same type and hreflang', _A),
    # what a text construct or a content holds (3.1.1, 4.1.3.3), and the security of its HTML (8.1)
    ("atom-text-contains-html", W, "3.1.1.1", ("ContainsUndeclaredHTML", "ContainsHTML"),
     "plain text (type text, a name, a generator, a label, a link title) that looks like escaped HTML", _A),
    ("atom-xhtml-escaped", W, "3.1.1.3", "NotInline", 'type="xhtml" holding escaped HTML as text instead of inline markup', _A),
    ("atom-markup-not-escaped", W, "3.1.1", "NotEscaped", 'mode="escaped" (Atom 0.3) with child elements', _A),
    ("atom-html-fragment", W, "4.1.3.3", "HtmlFragment",
     "content of an HTML media type (text/html, application/xhtml+xml) that holds a fragment, not a document", _A),
    ("atom-html-unsafe-element", W, "8.1", "SecurityRisk",
     "HTML or XHTML content with an element that runs or loads code (script, iframe, object, embed, meta, style...)", _A),
    ("atom-html-unsafe-attribute", W, "8.1", ("SecurityRiskAttr", "SecurityRisk"),
     "HTML or XHTML content with an event handler attribute (onclick...) or an unsafe SVG / MathML attribute", _A),
    ("atom-html-unsafe-style", W, "8.1", ("DangerousStyleAttr", "SecurityRiskAttr", "SecurityRisk"),
     "HTML or XHTML content with a style attribute beyond plain layout (a URL, expression(), position, mso-*...)", _A),
)
# fmt: on
