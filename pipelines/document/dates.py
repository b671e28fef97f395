"""Parse feed dates and say which form they were written in.

:func:`parse_date` returns ``(datetime in UTC or None, form)``. The forms, in
the order they are tried:

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
    capitalisation or spacing. RFC 822 comments are not supported.
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

Military zones other than ``Z`` are read as UTC: RFC 822 defined their signs
backwards and RFC 2822 says to treat them as ``-0000``. Dates with no zone are
taken as UTC. Results are always aware datetimes in UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

DATE_FORMS = ("rfc822-universal", "rfc822-other-zone", "rfc822-2digit-year", "iso8601", "other-parsed", "unparsed")

_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_FULL_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "sept": 9, "october": 10, "november": 11, "december": 12,
}  # fmt: skip
_MONTH_ANY = _MONTHS | _FULL_MONTHS

#: RFC 822 zones other than +hhmm, as minutes east of UTC.
_RFC822_ZONES: dict[str, int] = {
    "UT": 0, "GMT": 0, "Z": 0,
    "EST": -300, "EDT": -240, "CST": -360, "CDT": -300,
    "MST": -420, "MDT": -360, "PST": -480, "PDT": -420,
}  # fmt: skip
# Military letters (J is not a zone): read as UTC, see the module docstring.
_RFC822_ZONES.update({c: 0 for c in "ABCDEFGHIKLMNOPQRSTUVWXY"})
#: Zones the tolerant tier also knows.
_LENIENT_ZONES = _RFC822_ZONES | {"UTC": 0}

_UNIVERSAL = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} "
    r"\d\d:\d\d:\d\d (?:\+0000|-0000|GMT)"
)
#: ``_UNIVERSAL`` with its parts captured (day, month, year, hh, mm, ss); every zone it allows is UTC.
_UNIVERSAL_PARTS = re.compile(
    r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) "
    r"(\d\d):(\d\d):(\d\d) (?:\+0000|-0000|GMT)"
)
_MONTHS_CAP = {m.capitalize(): i for m, i in _MONTHS.items()}
_RFC822 = re.compile(
    r"(?:(?:mon|tue|wed|thu|fri|sat|sun)\s*,\s*)?"
    r"(\d{1,2})\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\s+(\d{4}|\d{2})\s+"
    r"(\d\d)\s*:\s*(\d\d)(?:\s*:\s*(\d\d))?\s*"
    r"(ut|gmt|[ecmp][sd]t|[a-ik-z]|[+-]\d{4})",
    re.IGNORECASE,
)
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


def parse_date(raw: str | None) -> tuple[datetime | None, str | None]:
    """Parse a feed date; return ``(aware datetime in UTC or None, form)``.

    ``(None, None)`` for ``None`` or blank input. Never raises.
    """
    if raw is None:
        return None, None
    try:
        s = raw.strip()
        if not s:
            return None, None
        return _parse(s)
    except Exception:  # the contract: never raise, whatever the input
        return None, "unparsed"


def _parse(s: str) -> tuple[datetime | None, str]:
    m = _UNIVERSAL_PARTS.fullmatch(s)
    if m is not None:  # the common case, read directly: same result as the general path below
        day, mon, year, hh, mm, ss = m.groups()
        dt = _build(int(year), _MONTHS_CAP[mon], int(day), int(hh), int(mm), int(ss), 0, 0)
        if dt is not None:
            return dt, "rfc822-universal"
    return _parse_general(s)


def _parse_general(s: str) -> tuple[datetime | None, str]:
    m = _RFC822.fullmatch(s)
    if m is not None:
        dt = _rfc822(m)
        if dt is not None:
            if len(m.group(3)) == 2:
                return dt, "rfc822-2digit-year"
            return dt, "rfc822-universal" if _UNIVERSAL.fullmatch(s) else "rfc822-other-zone"
    m = _ISO.fullmatch(s)
    if m is not None:
        dt = _iso(m)
        if dt is not None:
            return dt, "iso8601"
    m = _LENIENT.fullmatch(s)
    if m is not None:
        dt, known = _lenient(m)
        if dt is not None:
            return dt, "other-parsed"
        if known:  # read and found impossible (31 Feb, 25:00): dateparser would not do better
            return None, "unparsed"
    dt = _fallback(s)
    return (dt, "other-parsed") if dt is not None else (None, "unparsed")


def _year(text: str) -> int:
    y = int(text)
    if len(text) == 2:
        y += 2000 if y < 50 else 1900
    return y


def _build(y: int, mo: int, d: int, h: int, mi: int, sec: int, micro: int, offset_min: int) -> datetime | None:
    if sec == 60:  # a leap second: keep the date, lose the second
        sec = 59
    try:
        dt = datetime(
            y, mo, d, h, mi, sec, micro, tzinfo=UTC if offset_min == 0 else timezone(timedelta(minutes=offset_min))
        )
        return dt if offset_min == 0 else dt.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _rfc822(m: re.Match[str]) -> datetime | None:
    day, mon, year, hh, mm, ss, zone = m.groups()
    if zone[0] in "+-":
        hours, minutes = int(zone[1:3]), int(zone[3:5])
        if minutes > 59:
            return None
        offset = (hours * 60 + minutes) * (-1 if zone[0] == "-" else 1)
    else:
        offset = _RFC822_ZONES[zone.upper()]
    return _build(_year(year), _MONTHS[mon.lower()], int(day), int(hh), int(mm), int(ss or 0), 0, offset)


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
    if len(s) > 80 or not any(c.isdigit() for c in s):
        return None  # no digits: no absolute day/month/year; long: not a date
    import dateparser  # lazy: importing it costs ~0.2 s and it is rarely needed

    try:
        dt = dateparser.parse(s, settings=_DATEPARSER_SETTINGS)
    except Exception:
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)
