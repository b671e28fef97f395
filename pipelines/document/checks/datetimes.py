"""3.2 Dates and times, and 4.1.1.20.8 (an item's date in the future).

A date-time value is analysed once per element (:func:`date_verdict`): its
layout here (RFC 822 comments, runs of white space), its parts by the one
RFC 822 tokeniser, :func:`pipelines.document.dates.read_rfc822` (whose
docstring records how military zones, white space and validity are decided).
Each rule of :data:`DATE_RULES` is a predicate on that analysis
(:class:`DateAnalysis`); a value in one of the three universal forms takes a
shortcut (:func:`universal_date`) that a property test holds to the same
answers.

A date more than ``FUTURE_GRACE_SECONDS`` after ``now`` is "in the future".
A military zone is read as ``-0000`` (Universal Time), so such a date can be.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from types import MappingProxyType
from typing import NamedTuple

from pipelines.document.checks.context import Acc, DateVerdict, Element
from pipelines.document.dates import ParsedDate, read_rfc822, universal_instant, universal_instant_of, without_comments

__all__ = ["DATE_RULES", "DateAnalysis", "analyse_date", "check_date", "check_future", "date_verdict", "universal_date"]

FUTURE_GRACE_SECONDS = 600  # clock skew tolerated before an item date counts as "in the future"
_MULTI_SPACE_RE = re.compile(r"\s{2,}|[^\S ]")


class DateAnalysis(NamedTuple):
    """What the 3.2 rules need to know about one date-time value."""

    valid: bool
    weekday_ok: bool
    two_digit_year: bool
    comment_or_space: bool
    military: bool
    universal: bool
    timestamp: float | None  # seconds since the epoch, None when invalid


def universal_date(value: str, known: Mapping[str, ParsedDate] = MappingProxyType({})) -> tuple[float, bool] | None:
    """(timestamp, weekday matches) for a valid date-time in a universal form, else None.

    The common case, read directly: when this returns a result,
    :func:`analyse_date` finds the date valid and universal, with no remark but
    possibly the weekday. ``known``: dates the parser has read (``Acc.dates``), not read again.
    """
    s = value.strip()
    parsed = known.get(s)
    return universal_instant(s) if parsed is None else universal_instant_of(s, parsed)


def analyse_date(raw: str) -> DateAnalysis:
    """Analyse one RSS date-time value against RFC 822 and the profile's recommendations."""
    value = raw.strip()
    comment = "(" in value
    cleaned = without_comments(value) if comment else value
    layout = comment or _MULTI_SPACE_RE.search(cleaned.strip() if comment else value) is not None
    parts = read_rfc822(" ".join(cleaned.split()))
    if parts is None:
        return DateAnalysis(False, True, False, layout, False, False, None)
    timestamp, weekday_ok = parts.instant()
    # valid, weekday_ok, two_digit_year, comment_or_space, military, universal (the three forms have single
    # spaces and no comment), timestamp: by position, as a tuple is made fastest
    return DateAnalysis(
        True, weekday_ok, parts.two_digit_year, layout, parts.military, parts.universal and not layout, timestamp
    )


def _has_comment_or_extra_space(d: DateAnalysis) -> bool:
    return d.comment_or_space


def _is_invalid(d: DateAnalysis) -> bool:
    return not d.valid


def _weekday_mismatch(d: DateAnalysis) -> bool:
    return d.valid and not d.weekday_ok


def _two_digit_year(d: DateAnalysis) -> bool:
    return d.valid and d.two_digit_year


def _military_zone(d: DateAnalysis) -> bool:
    return d.valid and d.military


def _not_universal(d: DateAnalysis) -> bool:
    return d.valid and not d.universal


#: The 3.2 rules, each a predicate on the analysis of one value.
DATE_RULES: tuple[tuple[str, Callable[[DateAnalysis], bool]], ...] = (
    ("date-invalid", _is_invalid),
    ("date-weekday-mismatch", _weekday_mismatch),
    ("date-two-digit-year", _two_digit_year),
    ("date-comment-or-extra-space", _has_comment_or_extra_space),
    ("date-military-zone", _military_zone),
    ("date-not-universal-form", _not_universal),
)
_WEEKDAY_ONLY = ("date-weekday-mismatch",)
#: The rules of :data:`DATE_RULES` an analysis breaks, by its flags (all but the timestamp, which no rule reads):
#: found once for each of the few combinations that occur.
_BROKEN: dict[tuple[bool, ...], tuple[str, ...]] = {}


def _broken(d: DateAnalysis) -> tuple[str, ...]:
    flags = d[:6]
    rules = _BROKEN.get(flags)
    if rules is None:
        rules = _BROKEN[flags] = tuple(rule for rule, breaks in DATE_RULES if breaks(d))
    return rules


def date_verdict(value: str, known: Mapping[str, ParsedDate] = MappingProxyType({})) -> DateVerdict:
    """The 3.2 rules ``value`` breaks, and its timestamp (None when invalid).

    A value in a universal form is read by the shortcut, where only the
    weekday can be wrong (:func:`universal_date`); any other by
    :func:`analyse_date` and :data:`DATE_RULES`.
    """
    universal = universal_date(value, known)
    if universal is not None:
        timestamp, weekday_ok = universal
        return (() if weekday_ok else _WEEKDAY_ONLY), timestamp
    d = analyse_date(value)
    return _broken(d), d.timestamp


def _verdict(acc: Acc, text: str) -> DateVerdict:
    """:func:`date_verdict`, once per value in a row (``Acc.date_memo``).

    The rules of one pubDate share it, and so do items in a row with the same
    date (a feed often gives many items the same one).
    """
    memo = acc.date_memo
    if memo is not None and memo[0] == text:
        return memo[1]
    verdict = date_verdict(text, acc.dates)
    acc.date_memo = (text, verdict)
    return verdict


def check_date(acc: Acc, scope: str, text: str, el: Element) -> None:
    """3.2 on a pubDate or lastBuildDate."""
    for rule in _verdict(acc, text)[0]:
        acc.add(rule, scope, (text or "(empty)") if rule == "date-invalid" else text)


def check_future(acc: Acc, scope: str, text: str, el: Element) -> None:
    """4.1.1.20.8: an item's pubDate is not in the future (relative to the check's ``now``)."""
    timestamp = _verdict(acc, text)[1]
    if timestamp is not None and timestamp > (acc.future_limit or _future_limit(acc)):
        acc.add("item-date-in-future", scope, text)


def _future_limit(acc: Acc) -> float:
    if acc.future_limit is None:
        now = acc.now or datetime.now(UTC)
        if now.tzinfo is None:
            now = now.replace(tzinfo=UTC)
        acc.future_limit = now.timestamp() + FUTURE_GRACE_SECONDS
    return acc.future_limit
