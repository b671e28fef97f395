"""Check a parsed feed against the RSS Best Practices Profile (RSS Advisory Board, 2007).

One :class:`Rule` per requirement or recommendation of the profile (and of the
RSS 2.0 specification it restates) that can be tested mechanically on the
document; :func:`check_feed` walks the element tree once and returns one
:class:`Finding` per (rule, scope) that failed, with the number of occurrences
and the first offending value.

Scope is where the offending element sits: ``rss`` (the root), ``channel``,
``item``, ``image``, ``textInput``, ``skipHours`` or ``skipDays``.

Severity: ``error`` for a *must* / *must not* of the profile or the RSS 2.0
specification, ``warning`` for a *should* / recommendation.

What is deliberately not checked (not decidable on the document alone):
that the channel title matches the web site's name, that a category is a
slash-delimited taxonomy path, that URI schemes are IANA-registered (only the
``scheme:`` syntax is checked), that a feed by one person omits ``author``, and
that namespace elements are not used where a core element would do.

Judgement calls: a second enclosure is only the profile's ``DuplicateEnclosure``
warning (4.1.1.20.5), not also a duplicate item element; ``<hour>24</hour>`` is
an error (4.1.1.16.1 permits 0-23) under its own id so it can be told from other
bad hours; a date more than ``_FUTURE_GRACE_SECONDS`` ahead of ``now`` is "in the
future"; image formats are judged by the file extension of the URL, when it
has one; the 3.1 character-data rule looks only at plain-text elements
(titles, descriptions other than an item's, copyright, category, generator,
author, managingEditor, webMaster, source) in ASCII-compatible bodies.

The profile is about RSS 2.0: rules run only for ``format == "rss"`` (any
``version``; a version other than 2.0 is itself a finding). RSS 1.0 (``rdf``),
Atom and unknown documents get no findings: none of the profile's rules are
defined for them.
"""

from __future__ import annotations

import calendar
import contextlib
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from itertools import accumulate
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

from schemas.namespaces import element_name

__all__ = ["RULES", "Finding", "Rule", "check_feed"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One checkable requirement (``error``) or recommendation (``warning``) of the profile."""

    id: str
    severity: str
    section: str
    w3c: str | None
    title: str


@dataclass(frozen=True, slots=True)
class Finding:
    """A rule that failed in one scope of a feed: how often, and the first offending value."""

    rule: str
    severity: str
    scope: str
    count: int
    example: str | None


def _rules(*rows: tuple[str, str, str, str | None, str]) -> dict[str, Rule]:
    return {r[0]: Rule(*r) for r in rows}


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
    ("version-not-2-0", E, "4.1", "InvalidRSSVersion", 'rss element has no version attribute "2.0"'),
    ("channel-missing", E, "4.1", "MissingElement", "rss element contains no channel"),
    ("multiple-channels", E, "4.1", "DuplicateElement", "rss element contains more than one channel"),
    # 3.1 Character data
    ("text-element-has-children", E, "3.1", None, "character-data element contains child elements"),
    (
        "character-data-not-hex",
        W,
        "3.1",
        "CharacterData",
        '"&", "<" or ">" in plain text not written as &#x26; / &#x3C; / &#x3E;',
    ),
    # 3.2 Dates and times
    ("date-invalid", E, "3.2", "InvalidRFC2822Date", "date-time is not an RFC 822 date-time (four-digit year allowed)"),
    ("date-weekday-mismatch", E, "3.2", "IncorrectDOW", "day of the week does not match the date"),
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
    ("channel-missing-required", E, "4.1.1", "MissingElement", "channel lacks title, link or description"),
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
        "InvalidValue",
        "cloud port is not a TCP port number or protocol is not xml-rpc, soap or http-post",
    ),
    ("docs-not-rssboard", W, "4.1.1.7", None, 'docs is not "https://www.rssboard.org/rss-specification"'),
    # 4.1.1.9 image
    ("image-missing-required", E, "4.1.1.9", "MissingElement", "image lacks link, title or url"),
    ("duplicate-image-element", E, "4.1.1.9", "DuplicateElement", "image child element present more than once"),
    ("image-link-mismatch", W, "4.1.1.9", "ImageLinkDoesntMatch", "image link is not the channel's link"),
    ("image-title-mismatch", W, "4.1.1.9.2", "ImageTitleDoesntMatch", "image title is not the channel's title"),
    ("image-url-format", E, "4.1.1.9.3", "ImageUrlFormat", "image url names a file that is not GIF, JPEG or PNG"),
    ("image-too-tall", E, "4.1.1.9.5", "InvalidHeight", "image height is over 400"),
    ("image-too-wide", E, "4.1.1.9.6", "InvalidWidth", "image width is over 144"),
    ("image-size-not-integer", E, "4.1.1.9.6", None, "image width or height is not a positive integer"),
    # 4.1.1.10 .. 4.1.1.18
    ("language-invalid", E, "4.1.1.10", "InvalidLanguage", "language is not an ISO 639 / RFC 1766 language code"),
    ("rating-not-pics", E, "4.1.1.14", None, "rating is not a PICS label"),
    ("skip-day-invalid", E, "4.1.1.15.1", "InvalidDay", "skipDays day is not one of Monday..Sunday"),
    ("skip-day-duplicate", E, "4.1.1.15.1", "DuplicateValue", "skipDays day repeated"),
    ("skip-hour-invalid", E, "4.1.1.16.1", "InvalidHour", "skipHours hour is not an integer from 0 to 23"),
    ("skip-hour-24", E, "4.1.1.16.1", "UseZeroForMidnight", "skipHours uses 24 (RSS 0.91) for midnight instead of 0"),
    ("skip-hour-duplicate", E, "4.1.1.16.1", "DuplicateValue", "skipHours hour repeated"),
    ("text-input-present", W, "4.1.1.17", "AvoidTextInput", "textInput is ignored by most aggregators"),
    (
        "text-input-missing-required",
        E,
        "4.1.1.17",
        "MissingElement",
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
        "item description contains a relative URL in href or src",
    ),
    ("enclosure-missing-attribute", E, "4.1.1.20.5", "MissingAttribute", "enclosure lacks url, length or type"),
    ("enclosure-length-not-integer", E, "4.1.1.20.5", "InvalidIntegerAttribute", "enclosure length is not an integer"),
    (
        "enclosure-length-unknown",
        W,
        "4.1.1.20.5",
        "UseZeroForUnknown",
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
    ("item-date-in-future", W, "4.1.1.20.8", None, "item pubDate is in the future"),
    ("source-missing-url", E, "4.1.1.20.9", "MissingAttribute", "source lacks its url attribute"),
    ("source-url-not-absolute", E, "4.1.1.20.9", "InvalidURLAttribute", "source url does not begin with a URI scheme"),
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
    ("content-without-description", W, "5.2.1", None, "item has content:encoded but no description"),
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
)

_RULE_INDEX = {rule_id: i for i, rule_id in enumerate(RULES)}

# ---------------------------------------------------------------- vocabulary


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CHANNEL_SINGLE = _words(
    "title link description cloud copyright docs generator image language lastBuildDate managingEditor"
    " pubDate rating skipDays skipHours textInput ttl webMaster"
)
_CHANNEL_CORE = _CHANNEL_SINGLE | {"category", "item"}
_ITEM_SINGLE = frozenset(["author", "comments", "description", "guid", "link", "pubDate", "source", "title"])
_ITEM_CORE = _ITEM_SINGLE | {"category", "enclosure"}
_IMAGE_CORE = frozenset(["url", "title", "link", "width", "height", "description"])
_TEXT_INPUT_CORE = frozenset(["title", "description", "name", "link"])
_CHANNEL_REQUIRED = ("title", "link", "description")
_IMAGE_REQUIRED = ("link", "title", "url")
_TEXT_INPUT_REQUIRED = ("description", "link", "name", "title")
# plain-text elements whose "&" / "<" encoding matters (3.1); URLs and item description excluded
_PLAIN_CHANNEL = frozenset(
    ["title", "description", "copyright", "category", "generator", "managingEditor", "webMaster"]
)
_PLAIN_ITEM = frozenset(["title", "category", "author", "source"])
_PLAIN_SUB = frozenset(["title", "description"])  # image and textInput
_CONTAINERS = frozenset(["image", "textInput", "skipHours", "skipDays", "item", "cloud", "enclosure"])
_DAYS = frozenset(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"])
_CLOUD_ATTRS = ("domain", "path", "port", "protocol", "registerProcedure")
_CLOUD_PROTOCOLS = frozenset({"xml-rpc", "soap", "http-post"})
_RSSBOARD_DOCS = "https://www.rssboard.org/rss-specification"

_SCHEME_RE = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:")
_NOT_URL_CHARS_RE = re.compile(r"[^\x21-\x7e]")
_INT_RE = re.compile(r"\s*\+?\d+\s*\Z")
_FORM_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9:\-._]*\Z")
_PICS_RE = re.compile(r"\s*\(\s*PICS-1\.1\b")
_EMAIL_REAL_NAME_RE = re.compile(r"\s*[^\s@()<>\",;:]+@[^\s@()<>\",;:]+\.[^\s@()<>\",;:]+ \([^()]*\S[^()]*\)\s*\Z")
_EMAIL_BARE_RE = re.compile(r"\s*[^\s@()<>\",;:]+@[^\s@()<>\",;:]+\s*\Z")
_EMAIL_ANY_RE = re.compile(r"[^\s@()<>\",;:]+@[^\s@()<>\",;:]+")
_LANG_RE = re.compile(r"\s*([A-Za-z]{1,8})((?:-[A-Za-z0-9]{1,8})*)\s*\Z")
# an href= or src= attribute (after whitespace or "/") whose value does not start with a scheme or "#";
# a literal "=" first keeps the scan fast. &quot; covers descriptions escaped twice.
_REL_REF_RE = re.compile(
    r"""=(?:(?<=[\s/][hH][rR][eE][fF]=)|(?<=[\s/][sS][rR][cC]=))\s*(?:["']|&quot;|&#0*3[49];|&apos;)?\s*"""
    r"""(?![A-Za-z][A-Za-z0-9+.\-]*:|#)([^"'\s<>&][^"'\s<>&]*)"""
)
_IMAGE_EXT_RE = re.compile(r"\.([A-Za-z0-9]{1,5})\Z")
_IMAGE_EXTS = frozenset({"gif", "jpg", "jpeg", "jpe", "jfif", "pjpeg", "png"})

#: ISO 639-1 codes (plus the withdrawn iw, in, ji, mo, sh still seen in RSS language lists).
_ISO639_1 = _words(
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv
    dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii
    ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk
    ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc
    sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve
    vi vo wa wo xh yi yo za zh zu iw in ji mo sh"""
)

# ---------------------------------------------------------------- dates (3.2)

_MONTHS = {
    m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)
}
_WEEKDAYS = {d: i for i, d in enumerate(["mon", "tue", "wed", "thu", "fri", "sat", "sun"])}
_NAMED_ZONES = {
    "ut": 0,
    "gmt": 0,
    "z": 0,
    "est": -5,
    "edt": -4,
    "cst": -6,
    "cdt": -5,
    "mst": -7,
    "mdt": -6,
    "pst": -8,
    "pdt": -7,
}
_COMMENT_RE = re.compile(r"\([^()]*\)")
_DATE_RE = re.compile(
    r"(?:(?P<wd>[A-Za-z]+) ?, ?)?(?P<day>\d{1,2}) (?P<mon>[A-Za-z]+) (?P<year>\d+) "
    r"(?P<hh>\d\d):(?P<mm>\d\d)(?::(?P<ss>\d\d))? ?(?P<zone>[A-Za-z]+|[+-]\d{4})\Z"
)
_UNIVERSAL_RE = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"\d{4} \d\d:\d\d:\d\d (?:\+0000|-0000|GMT)\Z"
)
_MULTI_SPACE_RE = re.compile(r"\s{2,}|[^\S ]")
_FUTURE_GRACE_SECONDS = 600  # clock skew tolerated before an item date counts as "in the future"


@dataclass(frozen=True, slots=True)
class _DateAnalysis:
    valid: bool
    weekday_ok: bool
    two_digit_year: bool
    comment_or_space: bool
    military: bool
    universal: bool
    timestamp: float | None  # seconds since the epoch, None when unknown (invalid or military zone)


def _analyse_date(raw: str) -> _DateAnalysis:
    """Analyse one RSS date-time value against RFC 822 and the profile's recommendations."""
    value = raw.strip()
    comment = "(" in value
    cleaned = value
    if comment:
        for _ in range(4):  # nested comments, a few levels deep
            new = _COMMENT_RE.sub(" ", cleaned)
            if new == cleaned:
                break
            cleaned = new
    spaced = _MULTI_SPACE_RE.search(cleaned.strip() if comment else value) is not None
    cleaned = " ".join(cleaned.split())
    universal = _UNIVERSAL_RE.match(value) is not None
    bad = _DateAnalysis(False, True, False, comment or spaced, False, False, None)
    m = _DATE_RE.match(cleaned)
    if m is None:
        return bad
    wd, day_s, mon_s, year_s, zone = m.group("wd", "day", "mon", "year", "zone")
    month = _MONTHS.get(mon_s.lower())
    if month is None or len(year_s) not in (2, 4):
        return bad
    if wd is not None and wd.lower() not in _WEEKDAYS:
        return bad
    year = int(year_s)
    if len(year_s) == 2:
        year += 2000 if year < 50 else 1900
    day, hh, mm = int(day_s), int(m["hh"]), int(m["mm"])
    ss = int(m["ss"] or 0)
    if not (1 <= day <= calendar.monthrange(year, month)[1] and hh <= 23 and mm <= 59 and ss <= 60):
        return bad
    military = False
    offset: int | None
    if zone[0] in "+-":
        if int(zone[3:]) > 59:
            return bad
        offset = (int(zone[1:3]) * 60 + int(zone[3:])) * (-1 if zone[0] == "-" else 1)
    else:
        z = zone.lower()
        if z in _NAMED_ZONES:
            offset = _NAMED_ZONES[z] * 60
        elif len(z) == 1 and z != "j":
            military, offset = True, None  # RFC 822 got their signs wrong: the offset is unknowable
        else:
            return bad
    weekday_ok = wd is None or _WEEKDAYS[wd.lower()] == date(year, month, day).weekday()
    timestamp = None
    if offset is not None:
        timestamp = float(calendar.timegm((year, month, day, hh, mm, min(ss, 59), 0, 0, 0)) - offset * 60)
    return _DateAnalysis(True, weekday_ok, len(year_s) == 2, comment or spaced, military, universal, timestamp)


# ---------------------------------------------------------------- accumulation


def _same(text: str) -> str:
    return text


class _Acc:
    """Findings being gathered: (rule, scope) -> [count, first example]."""

    __slots__ = ("body", "candidates", "children", "future_limit", "hits", "mark", "now", "restore")

    def __init__(self, body: bytes, now: datetime | None, notes: Any = None) -> None:
        self.hits: dict[tuple[str, str], list[Any]] = {}
        self.body = body
        self.now = now
        #: Turns a text read from the tree into the document's text (see ``check_feed``'s ``notes``).
        self.restore: Callable[[str], str] = _same if notes is None else notes.restore
        #: Only a text containing this needs ``restore`` (NUL, which no XML text contains, when nothing does).
        self.mark: str = "\x00" if notes is None else notes.MARK
        #: element -> its element children and their names, when the parser kept them
        self.children: dict[Any, list[tuple[Any, str]]] = {} if notes is None else notes.children
        self.future_limit: float | None = None
        self.candidates: list[tuple[Any, str, str]] = []  # (element, raw tag, scope) for the 3.1 byte check

    def add(self, rule: str, scope: str, example: str | None, count: int = 1) -> None:
        hit = self.hits.get((rule, scope))
        if hit is None:
            self.hits[(rule, scope)] = [count, _short(example)]
        else:
            hit[0] += count

    def findings(self) -> list[Finding]:
        order = sorted(self.hits.items(), key=lambda kv: _RULE_INDEX[kv[0][0]])
        return [Finding(rule, RULES[rule].severity, scope, n, ex) for (rule, scope), (n, ex) in order]


def _short(value: str | None, limit: int = 200) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value if len(value) <= limit else value[: limit - 1] + "…"


_NAMES: dict[str, str] = {}


def _name(tag: str) -> str:
    """Census name of a tag ('title', 'dc:creator', '{uri}x'), cached."""
    name = _NAMES.get(tag)
    if name is None:
        if len(_NAMES) > 4096:
            _NAMES.clear()
        name = _NAMES[tag] = element_name(tag)
    return name


def _children(el: Any, acc: _Acc) -> list[tuple[Any, str]]:
    """The element children of ``el`` with their names: as the parser kept them, or read now."""
    kids = acc.children.get(el)
    if kids is None:
        names = _NAMES
        kids = [(ch, names.get(t) or _name(t)) for ch in el if (t := ch.tag).__class__ is str]
    return kids


def _is_core(name: str) -> bool:
    return ":" not in name and name[:1] != "{"


def _text(el: Any, acc: _Acc) -> str:
    if len(el) == 0:
        text = el.text
        if text is None:
            return ""
    else:
        text = "".join(el.itertext())
    return acc.restore(text) if acc.mark in text else text


def _leaf_text(el: Any, acc: _Acc) -> str:
    """``el.text`` (children ignored), or ''."""
    text = el.text
    if text is None:
        return ""
    return acc.restore(text) if acc.mark in text else text


def _has_child_elements(el: Any) -> bool:
    return len(el) > 0 and any(isinstance(c.tag, str) for c in el)


# ---------------------------------------------------------------- value checks


def _check_url(acc: _Acc, scope: str, value: str, rule: str = "url-not-absolute") -> None:
    if _SCHEME_RE.match(value) is None:
        acc.add(rule, scope, value or "(empty)")
    elif _NOT_URL_CHARS_RE.search(value.strip()) is not None:
        acc.add("url-not-ascii", scope, value)


def _check_email(acc: _Acc, scope: str, value: str) -> None:
    if _EMAIL_REAL_NAME_RE.match(value) is not None:
        return
    if _EMAIL_BARE_RE.match(value) is not None:
        acc.add("email-missing-real-name", scope, value)
    elif _EMAIL_ANY_RE.search(value) is not None:
        acc.add("email-format", scope, value)
    else:
        acc.add("email-missing", scope, value or "(empty)")


_UNIVERSAL_PARTS_RE = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
    r"(\d{4}) (\d\d):(\d\d):(\d\d) (?:\+0000|-0000|GMT)\Z"
)
_MONTH_NUMBERS = {m.capitalize(): n for m, n in _MONTHS.items()}
_WEEKDAY_NUMBERS = {d.capitalize(): n for d, n in _WEEKDAYS.items()}
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def _universal_date(value: str) -> tuple[float, bool] | None:
    """(timestamp, weekday matches) for a valid date-time in a universal form, else None.

    The common case, read directly: when this returns a result,
    ``_analyse_date`` finds the date valid and universal, with no remark but
    possibly the weekday.
    """
    m = _UNIVERSAL_PARTS_RE.match(value.strip())
    if m is None:
        return None
    wd, day_s, mon_s, year_s, hh_s, mm_s, ss_s = m.groups()
    year, month, day = int(year_s), _MONTH_NUMBERS[mon_s], int(day_s)
    hh, mm, ss = int(hh_s), int(mm_s), int(ss_s)
    if year < 1 or not (1 <= day <= calendar.monthrange(year, month)[1] and hh <= 23 and mm <= 59 and ss <= 60):
        return None  # _analyse_date says what is wrong (or raises, as it does for year 0)
    days = date(year, month, day).toordinal() - _EPOCH_ORDINAL
    weekday_ok = _WEEKDAY_NUMBERS[wd] == (days + 3) % 7  # 1970-01-01 was a Thursday
    return float(((days * 24 + hh) * 60 + mm) * 60 + min(ss, 59)), weekday_ok


def _check_date(acc: _Acc, scope: str, value: str, *, item: bool) -> None:
    universal = _universal_date(value)
    if universal is not None:
        timestamp, weekday_ok = universal
        if not weekday_ok:
            acc.add("date-weekday-mismatch", scope, value)
        if item:
            _check_future(acc, scope, value, timestamp)
        return
    d = _analyse_date(value)
    if d.comment_or_space:
        acc.add("date-comment-or-extra-space", scope, value)
    if not d.valid:
        acc.add("date-invalid", scope, value or "(empty)")
        return
    if not d.weekday_ok:
        acc.add("date-weekday-mismatch", scope, value)
    if d.two_digit_year:
        acc.add("date-two-digit-year", scope, value)
    if d.military:
        acc.add("date-military-zone", scope, value)
    if not d.universal:
        acc.add("date-not-universal-form", scope, value)
    if item and d.timestamp is not None:
        _check_future(acc, scope, value, d.timestamp)


def _check_future(acc: _Acc, scope: str, value: str, timestamp: float) -> None:
    if acc.future_limit is None:
        now = acc.now or datetime.now(UTC)
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        acc.future_limit = now.timestamp() + _FUTURE_GRACE_SECONDS
    if timestamp > acc.future_limit:
        acc.add("item-date-in-future", scope, value)


def _check_plain_text(acc: _Acc, el: Any, scope: str, text: str) -> None:
    if "&" in text or "<" in text or ">" in text:
        acc.candidates.append((el, el.tag, scope))


def _positive_int(value: str) -> int | None:
    return int(value) if _INT_RE.match(value) is not None else None


# ---------------------------------------------------------------- element checks


def _check_rss(root: Any, acc: _Acc) -> None:
    version = root.get("version")
    if version is None or version.strip() != "2.0":
        acc.add("version-not-2-0", "rss", "(missing)" if version is None else version)
    channels = 0
    for child in root:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        name = _name(tag)
        if name == "channel":
            channels += 1
            with contextlib.suppress(Exception):  # one odd channel must not stop the rest
                _check_channel(child, acc)
        elif _is_core(name):
            acc.add("undefined-element", "rss", name)
    if channels == 0:
        acc.add("channel-missing", "rss", None)
    elif channels > 1:
        acc.add("multiple-channels", "rss", "channel", channels - 1)


def _check_channel(channel: Any, acc: _Acc) -> None:
    scope = "channel"
    seen: dict[str, int] = {}
    texts: dict[str, str] = {}
    images: list[Any] = []
    items: list[Any] = []
    after_item: str | None = None
    self_link = False
    dc_creator = False
    for child, name in _children(channel, acc):
        if name == "item":
            items.append(child)
            continue
        if items and after_item is None:
            after_item = name
        if not _is_core(name):
            if name == "atom:link":
                if child.get("href") is None:
                    acc.add("atom-link-missing-href", scope, "atom:link")
                elif child.get("rel") == "self":
                    self_link = True
            elif name == "dc:creator":
                dc_creator = True
            continue
        if name not in _CHANNEL_CORE:
            acc.add("undefined-element", scope, name)
            continue
        seen[name] = seen.get(name, 0) + 1
        if name not in _CONTAINERS:
            if _has_child_elements(child):
                acc.add("text-element-has-children", scope, name)
            text = _text(child, acc)
            if name not in texts:
                texts[name] = text
            if name in _PLAIN_CHANNEL:
                _check_plain_text(acc, child, scope, text)
            if name == "link" or name == "docs":
                _check_url(acc, scope, text)
                if name == "docs" and text.strip() != _RSSBOARD_DOCS:
                    acc.add("docs-not-rssboard", scope, text)
            elif name == "pubDate" or name == "lastBuildDate":
                _check_date(acc, scope, text, item=False)
            elif name == "managingEditor" or name == "webMaster":
                _check_email(acc, scope, text)
            elif name == "language":
                _check_language(acc, scope, text)
            elif name == "ttl":
                n = _positive_int(text)
                if n is None or n < 1:
                    acc.add("ttl-not-positive-integer", scope, text or "(empty)")
            elif name == "rating" and _PICS_RE.match(text) is None:
                acc.add("rating-not-pics", scope, text or "(empty)")
        elif name == "image":
            images.append(child)
        elif name == "cloud":
            _check_cloud(acc, child)
        elif name == "textInput":
            acc.add("text-input-present", scope, "textInput")
            _guard(_check_text_input, acc, child)
        elif name == "skipHours":
            _guard(_check_skip_hours, acc, child)
        elif name == "skipDays":
            _guard(_check_skip_days, acc, child)

    for name in _CHANNEL_REQUIRED:
        if name not in seen:
            acc.add("channel-missing-required", scope, name)
    for name, n in seen.items():
        if n > 1 and name in _CHANNEL_SINGLE:
            acc.add("duplicate-channel-element", scope, name, n - 1)
    if after_item is not None:
        acc.add("items-before-channel-elements", scope, after_item)
    if not self_link:
        acc.add("missing-atom-self-link", scope, None)
    if dc_creator and ("managingEditor" in seen or "webMaster" in seen):
        acc.add("contact-and-dc-creator", scope, "managingEditor" if "managingEditor" in seen else "webMaster")
    for image in images:
        _guard(_check_image, acc, image, texts.get("title"), texts.get("link"))
    slash = 0
    for item in items:
        with contextlib.suppress(Exception):  # one odd item must not stop the rest
            slash += _check_item(item, acc)
    if slash and "lastBuildDate" not in seen:
        acc.add("slash-comments-without-last-build-date", scope, "slash:comments", slash)


def _guard(fn: Any, *args: Any) -> None:
    with contextlib.suppress(Exception):  # a rule that trips on odd input must not break the others
        fn(*args)


def _check_language(acc: _Acc, scope: str, text: str) -> None:
    m = _LANG_RE.match(text)
    ok = False
    if m is not None:
        primary = m.group(1).lower()
        ok = (
            primary in _ISO639_1
            or (len(primary) == 3 and primary.isalpha())
            or (primary in ("i", "x") and bool(m.group(2)))
        )
    if not ok:
        acc.add("language-invalid", scope, text or "(empty)")


def _check_cloud(acc: _Acc, cloud: Any) -> None:
    missing = [a for a in _CLOUD_ATTRS if cloud.get(a) is None]
    if missing:
        acc.add("cloud-missing-attribute", "channel", ", ".join(missing))
    port = cloud.get("port")
    protocol = cloud.get("protocol")
    if port is not None and ((n := _positive_int(port)) is None or n > 65535):
        acc.add("cloud-attribute-invalid", "channel", f'port="{port}"')
    if protocol is not None and protocol.strip().lower() not in _CLOUD_PROTOCOLS:
        acc.add("cloud-attribute-invalid", "channel", f'protocol="{protocol}"')


def _check_image(acc: _Acc, image: Any, channel_title: str | None, channel_link: str | None) -> None:
    scope = "image"
    seen: dict[str, int] = {}
    values: dict[str, str] = {}
    for child in image:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        name = _name(tag)
        if not _is_core(name):
            continue
        if name not in _IMAGE_CORE:
            acc.add("undefined-element", scope, name)
            continue
        seen[name] = seen.get(name, 0) + 1
        if _has_child_elements(child):
            acc.add("text-element-has-children", scope, name)
        text = _text(child, acc)
        values.setdefault(name, text)
        if name in _PLAIN_SUB:
            _check_plain_text(acc, child, scope, text)
        if name == "url" or name == "link":
            _check_url(acc, scope, text)
        if name == "url":
            path = text.strip().split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1]
            ext = _IMAGE_EXT_RE.search(path)
            if ext is not None and ext.group(1).lower() not in _IMAGE_EXTS and "://" in text:
                acc.add("image-url-format", scope, text)
        elif name == "width" or name == "height":
            n = _positive_int(text)
            if n is None or n < 1:
                acc.add("image-size-not-integer", scope, f"{name}={text.strip()}")
            elif name == "width" and n > 144:
                acc.add("image-too-wide", scope, text)
            elif name == "height" and n > 400:
                acc.add("image-too-tall", scope, text)
    for name in _IMAGE_REQUIRED:
        if name not in seen:
            acc.add("image-missing-required", scope, name)
    for name, n in seen.items():
        if n > 1:
            acc.add("duplicate-image-element", scope, name, n - 1)
    title = values.get("title")
    if title is not None and channel_title is not None and " ".join(title.split()) != " ".join(channel_title.split()):
        acc.add("image-title-mismatch", scope, title)
    link = values.get("link")
    if link is not None and channel_link is not None and link.strip().rstrip("/") != channel_link.strip().rstrip("/"):
        acc.add("image-link-mismatch", scope, link)


def _check_text_input(acc: _Acc, text_input: Any) -> None:
    scope = "textInput"
    seen: dict[str, int] = {}
    for child in text_input:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        name = _name(tag)
        if not _is_core(name):
            continue
        if name not in _TEXT_INPUT_CORE:
            acc.add("undefined-element", scope, name)
            continue
        seen[name] = seen.get(name, 0) + 1
        if _has_child_elements(child):
            acc.add("text-element-has-children", scope, name)
        text = _text(child, acc)
        if name in _PLAIN_SUB:
            _check_plain_text(acc, child, scope, text)
        if name == "link":
            _check_url(acc, scope, text)
        elif name == "name" and _FORM_NAME_RE.match(text.strip()) is None:
            acc.add("text-input-name-invalid", scope, text or "(empty)")
    for name in _TEXT_INPUT_REQUIRED:
        if name not in seen:
            acc.add("text-input-missing-required", scope, name)
    for name, n in seen.items():
        if n > 1:
            acc.add("duplicate-text-input-element", scope, name, n - 1)


def _check_skip_hours(acc: _Acc, skip_hours: Any) -> None:
    scope = "skipHours"
    hours: set[int] = set()
    for child in skip_hours:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        name = _name(tag)
        if not _is_core(name):
            continue
        if name != "hour":
            acc.add("undefined-element", scope, name)
            continue
        text = _text(child, acc)
        n = _positive_int(text)
        if n == 24:
            acc.add("skip-hour-24", scope, text)
            n = 0
        elif n is None or n > 23:
            acc.add("skip-hour-invalid", scope, text or "(empty)")
            continue
        if n in hours:
            acc.add("skip-hour-duplicate", scope, text)
        hours.add(n)


def _check_skip_days(acc: _Acc, skip_days: Any) -> None:
    scope = "skipDays"
    days: set[str] = set()
    for child in skip_days:
        tag = child.tag
        if not isinstance(tag, str):
            continue
        name = _name(tag)
        if not _is_core(name):
            continue
        if name != "day":
            acc.add("undefined-element", scope, name)
            continue
        text = _text(child, acc).strip()
        if text not in _DAYS:
            acc.add("skip-day-invalid", scope, text or "(empty)")
        elif text in days:
            acc.add("skip-day-duplicate", scope, text)
        days.add(text)


def _check_item(item: Any, acc: _Acc) -> int:
    """Check one item; return how many slash:comments it has (for the channel's SlashDate rule)."""
    scope = "item"
    add = acc.add
    mark = acc.mark
    seen: dict[str, int] = {}
    position = 0
    description_at = content_at = -1
    enclosures = 0
    dc_creator = False
    slash = 0
    for child, name in _children(item, acc):
        position += 1
        if ":" in name or name[:1] == "{":  # not a core element
            if name == "content:encoded":
                if content_at < 0:
                    content_at = position
            elif name == "dc:creator":
                dc_creator = True
            elif name == "slash:comments":
                slash += 1
                n = _positive_int(_leaf_text(child, acc))
                if n is None:
                    add("slash-comments-not-integer", scope, _text(child, acc) or "(empty)")
            elif name == "atom:link" and child.get("href") is None:
                add("atom-link-missing-href", scope, "atom:link")
            continue
        if name not in _ITEM_CORE:
            add("undefined-element", scope, name)
            continue
        seen[name] = seen.get(name, 0) + 1
        if name == "enclosure":
            enclosures += 1
            _check_enclosure(acc, child)
            continue
        if len(child):
            if _has_child_elements(child):
                add("text-element-has-children", scope, name)
            text = "".join(child.itertext())
        else:
            text = child.text
            if text is None:
                text = ""
        if mark in text:
            text = acc.restore(text)
        if name in _PLAIN_ITEM and ("&" in text or "<" in text or ">" in text):
            acc.candidates.append((child, child.tag, scope))
        if name == "title":
            pass
        elif name == "description":
            if description_at < 0:
                description_at = position
            if (m := _REL_REF_RE.search(text)) is not None:
                add("description-relative-url", scope, m.group(1))
        elif name == "pubDate":
            _check_date(acc, scope, text, item=True)
        elif name == "link" or name == "comments":
            _check_url(acc, scope, text)
        elif name == "guid":
            permalink = child.get("isPermaLink")
            flag = None if permalink is None else permalink.strip().lower()
            if flag is not None and flag not in ("true", "false"):
                add("guid-is-permalink-invalid", scope, permalink or "(empty)")
            elif flag != "false" and _SCHEME_RE.match(text) is None:
                add("guid-permalink-not-url", scope, text or "(empty)")
        elif name == "author":
            _check_email(acc, scope, text)
        elif name == "source":
            url = child.get("url")
            if url is None:
                add("source-missing-url", scope, text)
            else:
                _check_url(acc, scope, url, "source-url-not-absolute")
    if "title" not in seen and "description" not in seen:
        add("item-missing-title-and-description", scope, None)
    for name, n in seen.items():
        if n > 1 and name in _ITEM_SINGLE:
            add("duplicate-item-element", scope, name, n - 1)
    if enclosures > 1:
        add("duplicate-enclosure", scope, "enclosure", enclosures - 1)
    if "guid" not in seen:
        add("item-missing-guid", scope, None)
    if dc_creator and "author" in seen:
        add("author-and-dc-creator", scope, "author")
    if content_at >= 0:
        if description_at < 0:
            add("content-without-description", scope, "content:encoded")
        elif content_at < description_at:
            add("content-before-description", scope, "content:encoded")
    return slash


def _check_enclosure(acc: _Acc, enclosure: Any) -> None:
    scope = "item"
    url, length, mime = enclosure.get("url"), enclosure.get("length"), enclosure.get("type")
    missing = [a for a, v in (("url", url), ("length", length), ("type", mime)) if v is None]
    if missing:
        acc.add("enclosure-missing-attribute", scope, ", ".join(missing))
    if url is not None:
        _check_url(acc, scope, url, "enclosure-url-not-absolute")
    if length is not None and _INT_RE.match(length) is None:
        stripped = length.strip()
        if not stripped or (stripped[0] == "-" and stripped[1:].isdigit()):
            acc.add("enclosure-length-unknown", scope, length or "(empty)")
        else:
            acc.add("enclosure-length-not-integer", scope, length)


# ---------------------------------------------------------------- 3.1 raw bytes

_RAW_ESCAPE_RE = re.compile(rb"&(amp|lt|gt|#0*(?:38|60|62));|<!\[CDATA\[(.*?)\]\]>", re.S | re.I)


def _raw_offender(raw: bytes) -> bool:
    """True if the raw content writes "&", "<" or ">" other than as &#x26; / &#x3C; / &#x3E;."""
    for m in _RAW_ESCAPE_RE.finditer(raw):
        if m.group(1) is not None:
            return True
        inner = m.group(2)
        if b"&" in inner or b"<" in inner or b">" in inner:
            return True
    return False


def _check_character_data(acc: _Acc) -> None:
    body = acc.body
    if not body or not acc.candidates:
        return
    head = body[:4]
    if b"\x00" in head or head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return  # UTF-16/32: the byte search below would not find ASCII markup
    offsets: list[int] | None = None
    for el, tag, scope in acc.candidates:
        line = el.sourceline
        if not line or tag[:1] == "{":
            continue
        if offsets is None:
            offsets = list(accumulate(map((1).__add__, map(len, body.split(b"\n"))), initial=0))
        if line > len(offsets):
            continue
        name = tag.encode()
        start = body.find(b"<" + name, offsets[line - 1])
        if start < 0:
            continue
        gt = body.find(b">", start)
        if gt < 0 or body[gt - 1 : gt] == b"/":
            continue
        end = body.find(b"</" + name, gt)
        if end < 0:
            continue
        raw = body[gt + 1 : end]
        if _raw_offender(raw):
            acc.add("character-data-not-hex", scope, raw.decode("utf-8", "replace"))


# ---------------------------------------------------------------- entry point


def check_feed(
    root: Any,
    *,
    format: str,
    version: str | None,
    body: bytes = b"",
    now: datetime | None = None,
    notes: Any = None,
) -> list[Finding]:
    """Check one parsed feed against the RSS Best Practices Profile.

    ``root`` is the lxml root element (possibly from a recover-mode parse),
    ``format`` the detected format; only ``"rss"`` is checked (see the module
    docstring). ``version`` is the parser's reading of the version; the
    version rule reads the attribute itself so that no normalisation hides a
    bad value. ``body`` (the raw document bytes) is needed only for the 3.1
    character-data rule; ``now`` (default: the current UTC time; naive means
    UTC) is the reference for future item dates. ``notes`` is the ``notes``
    of the ``parse_feed(..., with_notes=True)`` result whose ``root`` this is
    (a ``pipelines.document.feedparse.TreeNotes``). Never raises.
    """
    del version  # the version rule reads root's attribute directly
    if format != "rss" or root is None:
        return []
    acc = _Acc(body if isinstance(body, bytes | bytearray) else b"", now, notes)
    _guard(_check_rss, root, acc)
    _guard(_check_character_data, acc)
    return acc.findings()
