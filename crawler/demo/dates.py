"""The demo web's dates: written relative to a day, so that its feeds never age.

A demo whose feeds were dated once and for all reports them a little staler every month: a year on, no
feed is active, no item is recent and every quality score is 0. So the files under ``crawler/demo/web/site``
write each date as a placeholder that names how many days before *the demo day* it falls and how it
is written::

    <pubDate>{{DATE-3:%a, %d %b %Y}} 09:39:21 GMT</pubDate>     ->  Tue, 24 Nov 2026 09:39:21 GMT
    <dc:date>{{DATE-1:%Y-%m-%d}}T07:05:00Z</dc:date>              ->  2026-11-26T07:05:00Z
    <link>{{BASE}}/blog-a/{{DATE-3:%Y/%m/%d}}/counting-elements</link>

Only the date moves: the time of day, the zone and the way each feed writes its dates (RFC 822 with
``GMT``, ``EST`` or a two-digit year, ISO 8601, a date alone, garbage) stay as written, so the variety
the demo shows is kept. Every placeholder is at least one day before the demo day, and no time of
day with its zone reaches past the demo day's midnight (UTC): served on its demo day, nothing in the
demo web is dated in the future (``tests/test_demo_web.py`` checks it).

The format is ``strftime``'s, except that ``%a`` and ``%b`` are always English (as RFC 822 needs),
whatever the locale. Standard library only: the demo server and the tests use it.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

__all__ = ["PLACEHOLDER", "demo_day_midnight", "format_day", "render_dates", "today_utc"]

#: ``{{DATE-N:FORMAT}}``: the demo day less N days, written with FORMAT (no braces in it).
PLACEHOLDER = re.compile(rb"\{\{DATE-(\d{1,5}):([^{}\n]{1,60})\}\}")

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def today_utc() -> date:
    """Today's date in UTC: the demo day of a demo web served now."""
    return datetime.now(UTC).date()


def demo_day_midnight(day: date) -> int:
    """Unix seconds of the demo day's start (00:00 UTC): no date of the demo web is later."""
    return int(datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp())


def format_day(day: date, fmt: str) -> str:
    """``day.strftime(fmt)`` with English ``%a`` and ``%b`` (``%%`` kept as a literal percent sign)."""
    parts = fmt.split("%%")
    english = [p.replace("%a", _DAYS[day.weekday()]).replace("%b", _MONTHS[day.month - 1]) for p in parts]
    return "%".join(day.strftime(p) for p in english)


def render_dates(data: bytes, day: date) -> bytes:
    """``data`` with every ``{{DATE-N:FORMAT}}`` written out for the demo day ``day``.

    Bytes in, bytes out (the placeholders and what they become are ASCII), so a file in any
    ASCII-compatible encoding is rendered without being decoded. Data without a placeholder is
    returned as it is.
    """
    if b"{{DATE-" not in data:
        return data

    def one(match: re.Match[bytes]) -> bytes:
        days, fmt = int(match.group(1)), match.group(2).decode("ascii", "replace")
        return format_day(day - timedelta(days=days), fmt).encode("ascii", "replace")

    return PLACEHOLDER.sub(one, data)
