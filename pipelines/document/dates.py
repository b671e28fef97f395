"""Parse feed dates and say which form they were written in; read RFC 822 date-times.

:func:`parse_date` returns ``(datetime in UTC or None, form)``, the form a
:class:`schemas.vocab.DateForm`. The forms, in the order they are tried:

``rfc822-universal``
    Exactly one of the three forms the RSS Best Practices Profile (section
    3.2) found to work in all 18 tested aggregators:
    ``Thu, 04 Oct 2007 23:59:45 +0000``, ``... -0000`` and ``... GMT``:
    a weekday, a comma, the day of the month (the leading zero may be
    omitted), the month, a four-digit year, ``hh:mm:ss`` and one of the zones
    ``+0000``, ``-0000`` or ``GMT``, single spaces, weekday and month
    capitalised as shown. ``UT``, ``Z`` and lower case are valid RFC 822 but
    are not among the three forms, so they count as ``rfc822-other-zone``.
    Whether the weekday matches the date is not checked.
``rfc822-other-zone``
    Any other valid RFC 822 date-time with a four-digit year (the profile's
    one amendment to RFC 822): another zone (``EST``, ``PDT``, ``UT``, ``Z``,
    military letters, ``+hhmm``), no weekday, no seconds, other
    capitalisation or spacing. RFC 822 comments are not supported here (the
    profile checks strip them with :func:`without_comments` first).
``rfc822-2digit-year``
    A valid RFC 822 date-time with a two-digit year (00-49 is read as
    20xx, 50-99 as 19xx, as RFC 2822 section 4.3 says).
``iso8601``
    ISO 8601 / W3CDTF: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD`` or a date and
    time with ``T`` (or a space), optional seconds and fraction, and an
    optional zone ``Z`` / ``+hh:mm`` / ``+hhmm`` / ``+hh``.
``other-parsed``
    Parsed, but not as one of the above: first by a tolerant reading of
    RFC 822-like dates with a known zone or no zone (full month or weekday
    names, ``UTC``, ``+hh:mm``...), then by ``dateparser`` as the last resort
    (about 300 times slower; absolute dates only, with day, month and year;
    relative dates such as "yesterday" are refused so results never depend
    on the day of the crawl).
``unparsed``
    Nothing could read it.
``not-tried``
    Not tried by ``dateparser``: the document had already given it
    :data:`FALLBACK_MISSES` dates it could not read, or :data:`FALLBACK_CALLS`
    in all (see :class:`FallbackBudget`).

RFC 822 is tokenised here and only here: :func:`read_rfc822` reads a
date-time into its parts (:class:`Rfc822DateTime`), and both
:func:`parse_date` and the profile's date rules
(``pipelines.document.checks.datetimes``) use it, so the census and the
checks never disagree on what is a valid RFC 822 date-time or what instant
it names. Decisions:

* **Military zones.** RFC 822 section 5 defines the single letters ``A``-``I``,
  ``K``-``Z`` (no ``J``) as zones, with their signs backwards; RFC 1123
  5.2.14 says they therefore carry no information and RFC 2822 section 4.3
  says to treat them as ``-0000``: the time is in Universal Time and the
  local zone is unknown. So a military letter is a *valid* zone (not a
  syntax error), it is read as offset 0 (UTC), and it is marked
  (:attr:`Rfc822DateTime.military`) so the checks can warn about it
  (``date-military-zone``; the profile says not to use them). ``Z`` is
  plain UT and is not marked. An item date with a military zone is
  therefore also subject to the "in the future" rule, read as UTC.
* **White space.** RFC 822 (3.1.4) allows linear white space between any two
  lexical tokens, so spaces around ``,`` and ``:`` and before the zone are
  accepted, as are runs of white space; the checks warn about runs
  (``date-comment-or-extra-space``), not about single spaces.
* **Validity.** A date-time is read only if it names a real calendar day
  (year 1 to 9999), an hour 0-23, a minute 0-59, a second 0-60 (60, a leap
  second, is read as 59) and a zone whose minutes are 0-59. Names are
  matched without regard to ASCII case.
* Dates with no zone (other tiers only) are taken as UTC. Results are always
  aware datetimes in UTC.
"""

from __future__ import annotations

import calendar
import re
import sys
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any, NamedTuple, TypeAlias

from schemas.vocab import DateForm

__all__ = [
    "DATE_FORMS",
    "FALLBACK_CALLS",
    "FALLBACK_MISSES",
    "FallbackBudget",
    "ParsedDate",
    "Rfc822DateTime",
    "parse_date",
    "read_rfc822",
    "read_universal",
    "universal_instant",
    "universal_instant_of",
    "without_comments",
]

#: What :func:`parse_date` gives: (aware datetime in UTC or None, form or None).
ParsedDate: TypeAlias = tuple[datetime | None, DateForm | None]

#: Every date form, in the order :func:`parse_date` tries them.
DATE_FORMS: tuple[DateForm, ...] = tuple(DateForm)

_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_FULL_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "sept": 9, "october": 10, "november": 11, "december": 12,
}  # fmt: skip
_MONTH_ANY = _MONTHS | _FULL_MONTHS
_WEEKDAYS = {d: i for i, d in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))}
_MONTHS_CAP = {m.capitalize(): i for m, i in _MONTHS.items()}
_WEEKDAYS_CAP = {d.capitalize(): i for d, i in _WEEKDAYS.items()}
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

#: RFC 822 zones other than +hhmm and the military letters, as minutes east of UTC.
_RFC822_ZONES: dict[str, int] = {
    "UT": 0, "GMT": 0, "Z": 0,
    "EST": -300, "EDT": -240, "CST": -360, "CDT": -300,
    "MST": -420, "MDT": -360, "PST": -480, "PDT": -420,
}  # fmt: skip
#: RFC 822's military letters other than Z (J is not a zone): read as -0000, see the module docstring.
_MILITARY = frozenset("ABCDEFGHIKLMNOPQRSTUVWXY")
#: Zones the tolerant tier knows.
_LENIENT_ZONES = _RFC822_ZONES | {c: 0 for c in _MILITARY} | {"UTC": 0}

#: The profile's three universal forms, with their parts captured (weekday, day, month, year, hh, mm, ss);
#: every zone they allow is UTC.
_UNIVERSAL_PARTS = re.compile(
    r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) "
    r"(\d\d):(\d\d):(\d\d) (?:\+0000|-0000|GMT)"
)
#: An RFC 822 date-time (four-digit years allowed): weekday, day, month, year, hh, mm, ss, zone.
_RFC822 = re.compile(
    r"(?:(mon|tue|wed|thu|fri|sat|sun)\s*,\s*)?"
    r"(\d{1,2})\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+(\d{4}|\d{2})\s+"
    r"(\d\d)\s*:\s*(\d\d)(?:\s*:\s*(\d\d))?\s*"
    r"(ut|gmt|[ecmp][sd]t|[a-ik-z]|[+-]\d{4})",
    re.IGNORECASE,
)
#: An innermost RFC 822 comment; a backslash quotes the next character, so `\)` inside does not close it.
_COMMENT = re.compile(r"\((?:[^()\\]|\\.)*\)")
_ISO = re.compile(
    r"(\d{4})(?:-(\d\d)(?:-(\d\d)(?:[Tt ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?\s*"
    r"([Zz]|[+-]\d\d(?::?\d\d)?)?)?)?)?"
)
_LENIENT = re.compile(
    r"(?:[a-z]+\.?\s*,?\s*)?"
    r"(\d{1,2})[\s-]+([a-z]+)\.?[\s-]+(\d{4}|\d{2}),?\s+"
    r"(\d{1,2})[:.](\d\d)(?:[:.](\d\d)(?:[.,]\d+)?)?\s*"
    r"(?:([a-z]{1,4})|([+-])(\d\d):?(\d\d)?)?",
    re.IGNORECASE,
)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


# ---------------------------------------------------------------- RFC 822: the one tokeniser


class Rfc822DateTime(NamedTuple):
    """An RFC 822 date-time read into its parts (see :func:`read_rfc822`). A tuple: made for every date read."""

    weekday: int | None  #: as written, 0 = Monday; None when omitted (not checked against the date)
    day: int
    month: int
    year: int  #: two-digit years expanded (00-49: 20xx, 50-99: 19xx)
    hour: int
    minute: int
    second: int  #: 0 when omitted; 60 (a leap second) as written
    offset: int  #: minutes east of UTC; 0 for a military zone (read as -0000)
    two_digit_year: bool
    military: bool  #: a military letter other than Z
    universal: bool  #: written exactly in one of the profile's three universal forms

    def is_real(self) -> bool:
        """A real calendar day (year 1-9999) and time of day: hour 0-23, minute 0-59, second 0-60."""
        return (
            self.year >= 1
            and 1 <= self.day <= (29 if self.month == 2 and calendar.isleap(self.year) else _MONTH_DAYS[self.month])
            and self.hour <= 23
            and self.minute <= 59
            and self.second <= 60
        )

    def instant(self) -> tuple[float, bool]:
        """(Seconds since the epoch, a leap second read as :59; whether the weekday, if written, is the date's)."""
        weekday, day, month, year, hour, minute, second, offset = self[:8]
        d = date(year, month, day)
        seconds = ((d.toordinal() - _EPOCH_ORDINAL) * 24 + hour) * 3600 + minute * 60 + min(second, 59) - offset * 60
        return float(seconds), weekday is None or weekday == d.weekday()

    def to_datetime(self) -> datetime | None:
        """The instant as an aware UTC datetime; None when the zone or result is outside ``datetime``'s range."""
        return _build(self.year, self.month, self.day, self.hour, self.minute, self.second, 0, self.offset)

    def form(self) -> DateForm:
        """Which of the three RFC 822 date forms this is."""
        if self.two_digit_year:
            return DateForm.RFC822_2DIGIT_YEAR
        return DateForm.RFC822_UNIVERSAL if self.universal else DateForm.RFC822_OTHER_ZONE


def read_universal(s: str) -> Rfc822DateTime | None:
    """``s`` (stripped) read as one of the profile's three universal forms, or None.

    The common case, read directly: whenever this returns a result,
    :func:`read_rfc822` returns the same one.
    """
    m = _UNIVERSAL_PARTS.fullmatch(s)
    if m is None:
        return None
    wd, day, mon, year, hh, mm, ss = m.groups()
    parts = Rfc822DateTime(
        _WEEKDAYS_CAP[wd], int(day), _MONTHS_CAP[mon], int(year), int(hh), int(mm), int(ss), 0, False, False, True
    )
    return parts if parts.is_real() else None


def universal_instant(s: str) -> tuple[float, bool] | None:
    """``read_universal(s).instant()``, or None where that is None, without making the parts.

    The checks' common case (every item's pubDate): the day is read by ``datetime``, which
    refuses what :meth:`Rfc822DateTime.is_real` refuses (see :func:`_universal_datetime`).
    """
    m = _UNIVERSAL_PARTS.fullmatch(s)
    if m is None:
        return None
    dt = _universal_datetime(m)
    if dt is None:
        return None
    return dt.timestamp(), dt.weekday() == _WEEKDAYS_CAP[m.group(1)]


def universal_instant_of(s: str, parsed: ParsedDate) -> tuple[float, bool] | None:
    """:func:`universal_instant` of ``s`` (stripped) from ``parsed``, what :func:`parse_date` gave for it.

    The same answer without reading ``s`` again: ``parse_date`` gives the universal form exactly when
    :func:`universal_instant` reads ``s``, and then the instant itself; the weekday is the first token.
    """
    dt, form = parsed
    if form is not DateForm.RFC822_UNIVERSAL or dt is None:
        return None
    return dt.timestamp(), dt.weekday() == _WEEKDAYS_CAP[s[:3]]


def read_rfc822(s: str) -> Rfc822DateTime | None:
    """``s`` (stripped, comments removed) read as an RFC 822 date-time; None when it is not a valid one.

    Valid: RFC 822 syntax (four-digit years allowed) naming a real day and
    time, see the module docstring. The weekday is read, not checked.
    """
    return read_universal(s) or _read_rfc822_general(s)


def without_comments(value: str) -> str:
    """``value`` with its RFC 822 comments (nested a few levels deep) each replaced by a space."""
    cleaned = value
    for _ in range(4):
        new = _COMMENT.sub(" ", cleaned)
        if new == cleaned:
            break
        cleaned = new
    return cleaned


def _read_rfc822_general(s: str) -> Rfc822DateTime | None:
    """:func:`read_rfc822` without the shortcut for the universal forms."""
    m = _RFC822.fullmatch(s)
    if m is None:
        return None
    wd, day, mon, year, hh, mm, ss, zone = m.groups()
    weekday = None if wd is None else _WEEKDAYS.get(wd.lower())
    month = _MONTHS.get(mon.lower())
    offset = _zone_offset(zone)
    if month is None or offset is None or (wd is not None and weekday is None):
        return None  # a zone minute over 59, or a letter that matched only by Unicode case folding
    parts = Rfc822DateTime(
        weekday, int(day), month, _year(year), int(hh), int(mm), int(ss or 0), offset,
        two_digit_year=len(year) == 2,
        military=zone.upper() in _MILITARY,
        universal=_UNIVERSAL_PARTS.fullmatch(s) is not None,
    )  # fmt: skip
    return parts if parts.is_real() else None


def _zone_offset(zone: str) -> int | None:
    """Minutes east of UTC for an RFC 822 zone (military letters: 0); None when it is not one."""
    if zone[0] in "+-":
        minutes = int(zone[3:5])
        if minutes > 59:
            return None
        return (int(zone[1:3]) * 60 + minutes) * (-1 if zone[0] == "-" else 1)
    upper = zone.upper()
    if upper in _MILITARY:
        return 0
    return _RFC822_ZONES.get(upper)


# ---------------------------------------------------------------- parse_date


#: How many dates one document may give ``dateparser`` that it cannot read, and how many it may give it
#: in all (each distinct text once), before its other dates that only ``dateparser`` could read are left
#: as ``not-tried``. Measured here: ``dateparser`` takes about 27 ms to give up on a text and about 7 ms
#: to read one; parsing a feed of 3,000 items dated "sometime around N o'clock" took 80 s without the
#: bound (past the document workers' 60 s limit, so the feed was lost) and 0.7 s with it.
FALLBACK_MISSES = 25
FALLBACK_CALLS = 500


class FallbackBudget:
    """One document's use of ``dateparser``: what it gave for each text so far (a text seen again gets
    the same answer and costs nothing), and how many more texts it may be given. Misses are counted
    whether or not ``dateparser``'s cache already knew the text, so the dates a document gets do not
    depend on what the process parsed before it."""

    __slots__ = ("calls_left", "misses_left", "tried")

    def __init__(self, misses: int = FALLBACK_MISSES, calls: int = FALLBACK_CALLS) -> None:
        self.misses_left = misses
        self.calls_left = calls
        self.tried: dict[str, datetime | None] = {}

    def read(self, s: str) -> tuple[datetime | None, DateForm]:
        """``s`` read by ``dateparser``, or ``not-tried`` once the budget is spent."""
        if s in self.tried:
            dt = self.tried[s]
        elif self.misses_left <= 0 or self.calls_left <= 0:
            return None, DateForm.NOT_TRIED
        else:
            dt = self.tried[s] = _fallback(s)
            self.calls_left -= 1
            if dt is None:
                self.misses_left -= 1
        return (dt, DateForm.OTHER_PARSED) if dt is not None else (None, DateForm.UNPARSED)


def parse_date(raw: str | None, budget: FallbackBudget | None = None) -> ParsedDate:
    """Parse a feed date; return ``(aware datetime in UTC or None, form)``.

    ``(None, None)`` for ``None`` or blank input. ``budget``: the document's (:class:`FallbackBudget`);
    without one, ``dateparser`` is always tried. Never raises.
    """
    if raw is None:
        return None, None
    try:
        s = raw.strip()
        if not s:
            return None, None
        return _parse(s, budget)
    except (ValueError, LookupError, OverflowError):  # defensive: no input is known to raise (tests look)
        return None, DateForm.UNPARSED


def _parse(s: str, budget: FallbackBudget | None = None) -> tuple[datetime | None, DateForm]:
    """The two common cases read directly (same results as :func:`_parse_general`), else the general path.

    A universal form is read without making its :class:`Rfc822DateTime`, and ISO 8601 before RFC 822
    (no text matches both patterns: RFC 822 needs a month name, ISO 8601 has no letters but T and Z).
    """
    m = _UNIVERSAL_PARTS.fullmatch(s)
    if m is not None:
        dt = _universal_datetime(m)
        if dt is not None:
            return dt, DateForm.RFC822_UNIVERSAL
    else:
        m = _ISO.fullmatch(s)
        if m is not None and (dt := _iso(m)) is not None:
            return dt, DateForm.ISO8601
    return _parse_general(s, budget)


def _universal_datetime(m: re.Match[str]) -> datetime | None:
    """What ``read_universal(s).to_datetime()`` gives for a match of ``_UNIVERSAL_PARTS``, at once.

    ``datetime`` refuses exactly what :meth:`Rfc822DateTime.is_real` refuses (year 0, a day the
    month does not have, hour 24 and over, minute 60 and over, second 61 and over); second 60 is 59.
    """
    _, day, mon, year, hh, mm, ss = m.groups()
    second = int(ss)
    try:
        return datetime(
            int(year), _MONTHS_CAP[mon], int(day), int(hh), int(mm), 59 if second == 60 else second, tzinfo=UTC
        )
    except ValueError:
        return None


def _parse_general(s: str, budget: FallbackBudget | None = None) -> tuple[datetime | None, DateForm]:
    parts = _read_rfc822_general(s)
    if parts is not None:
        dt = parts.to_datetime()
        if dt is not None:
            return dt, parts.form()
    m = _ISO.fullmatch(s)
    if m is not None:
        dt = _iso(m)
        if dt is not None:
            return dt, DateForm.ISO8601
    m = _LENIENT.fullmatch(s)
    if m is not None:
        dt, known = _lenient(m)
        if dt is not None:
            return dt, DateForm.OTHER_PARSED
        if known:  # read and found impossible (31 Feb, 25:00): dateparser would not do better
            return None, DateForm.UNPARSED
    if len(s) > 80 or not any(c.isdigit() for c in s):
        return None, DateForm.UNPARSED  # no digits: no absolute day/month/year; long: not a date
    # without a document's budget (parse_date called alone): an unbounded one, for this text only
    return (budget or FallbackBudget(misses=sys.maxsize, calls=sys.maxsize)).read(s)


def _year(text: str) -> int:
    y = int(text)
    if len(text) == 2:
        y += 2000 if y < 50 else 1900
    return y


def _build(y: int, mo: int, d: int, h: int, mi: int, sec: int, micro: int, offset_min: int) -> datetime | None:
    """The instant in UTC of a local time ``offset_min`` minutes east of UTC; None when ``datetime`` cannot hold it.

    An offset of a day or more is refused, as ``timezone`` refuses it; the local time is moved to UTC by
    subtracting the offset, which is what ``astimezone(UTC)`` does, without making a ``timezone``.
    """
    if sec == 60:  # a leap second: keep the date, lose the second
        sec = 59
    if not -_DAY_MINUTES < offset_min < _DAY_MINUTES:
        return None
    try:
        dt = datetime(y, mo, d, h, mi, sec, micro, tzinfo=UTC)
        return dt if offset_min == 0 else dt - timedelta(minutes=offset_min)
    except (ValueError, OverflowError):
        return None


_DAY_MINUTES = 24 * 60


def _iso(m: re.Match[str]) -> datetime | None:
    year, mon, day, hh, mm, ss, frac, zone = m.groups()
    offset = 0
    if zone and zone not in "Zz":
        digits = zone[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
        if minutes > 59:
            return None
        offset = (hours * 60 + minutes) * (-1 if zone[0] == "-" else 1)
    micro = int((frac + "000000")[:6]) if frac else 0
    return _build(int(year), int(mon or 1), int(day or 1), int(hh or 0), int(mm or 0), int(ss or 0), micro, offset)


def _lenient(m: re.Match[str]) -> tuple[datetime | None, bool]:
    """The tolerant RFC 822-like tier: ``(datetime or None, whether every part was understood)``."""
    day, mon, year, hh, mm, ss, zname, sign, zh, zm = m.groups()
    month = _MONTH_ANY.get(mon.lower())
    if month is None:
        return None, False
    if zname is not None:
        offset = _LENIENT_ZONES.get(zname.upper())
        if offset is None:  # an unknown zone name (CEST, IST...): leave it to dateparser
            return None, False
    elif sign is not None:
        if int(zm or 0) > 59:
            return None, True
        offset = (int(zh) * 60 + int(zm or 0)) * (-1 if sign == "-" else 1)
    else:
        offset = 0
    dt = _build(_year(year), month, int(day), int(hh), int(mm), int(ss or 0), 0, offset)
    return dt, True


_DATEPARSER_SETTINGS: dict[str, Any] = {
    "RETURN_AS_TIMEZONE_AWARE": True,
    "TO_TIMEZONE": "UTC",
    "PARSERS": ["timestamp", "custom-formats", "absolute-time"],
    "REQUIRE_PARTS": ["day", "month", "year"],
}


@lru_cache(maxsize=2048)
def _fallback(s: str) -> datetime | None:
    """dateparser, the slow last resort; bounded cache since feeds repeat values."""
    import dateparser  # lazy: importing it costs ~0.2 s and it is rarely needed

    try:
        dt = dateparser.parse(s, settings=_DATEPARSER_SETTINGS)
    except Exception:  # dateparser is third-party code fed arbitrary text: any failure means "not read"
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)
