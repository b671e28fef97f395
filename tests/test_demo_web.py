"""The demo web does not age (issue #37).

Before: the demo web's feeds were dated June 2025, so the report of a demo run in November 2026 showed
no active feed and a quality score of 0 for every one.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from lxml import etree

from crawler.demo.dates import demo_day_midnight, format_day, render_dates
from crawler.demo.webserver import demo_root, demo_site_root, demo_web
from pipelines.document.dates import parse_date

EXPECTED = json.loads((demo_root() / "EXPECTED.json").read_text(encoding="utf-8"))
#: Elements that carry a date in the demo web's feeds and lists (local names).
DATE_ELEMENTS = {"pubDate", "lastBuildDate", "date", "updated", "published", "modified", "issued", "created"}
#: The one feed of the demo web that is stale on purpose (Atom 0.3, last written in 2003).
STALE_FEED = "/mag-c/atom03.xml"
#: Demo days to render: today, a leap day, the turn of a year.
DAYS = (datetime.now(UTC).date(), date(2028, 2, 29), date(2027, 1, 1))


def feed_file(path: str) -> Path:
    return demo_site_root() / ("podcast-d/atom.xml" if "?" in path else path.lstrip("/"))


def dates_in(document: bytes) -> list[datetime]:
    """Every date element's value that parses, in UTC."""
    root = etree.fromstring(document, etree.XMLParser(recover=True, resolve_entities=False, no_network=True))
    found = []
    for element in root.iter():
        if isinstance(element.tag, str) and etree.QName(element).localname in DATE_ELEMENTS:
            parsed, _ = parse_date(element.text)
            if parsed is not None:
                found.append(parsed)
    return found


# --- dates relative to the demo day ----------------------------------------------------------


def test_format_day_writes_english_names_and_keeps_percent_signs() -> None:
    day = date(2026, 11, 24)
    assert format_day(day, "%a, %d %b %Y") == "Tue, 24 Nov 2026"
    assert format_day(day, "%a, %d %b %y") == "Tue, 24 Nov 26"
    assert format_day(day, "%Y/%m/%d 100%%") == "2026/11/24 100%"
    assert render_dates(b"<d>{{DATE-3:%Y-%m-%d}}T09:00Z</d>", date(2026, 3, 1)) == b"<d>2026-02-26T09:00Z</d>"
    assert render_dates(b"no placeholder {{BASE}}", day) == b"no placeholder {{BASE}}"


@pytest.mark.parametrize("day", DAYS, ids=str)
@pytest.mark.parametrize("path", sorted(EXPECTED["feeds"]))
def test_a_feed_is_dated_before_its_demo_day_and_active_feeds_recently(path: str, day: date) -> None:
    document = render_dates(feed_file(path).read_bytes(), day)
    assert b"{{DATE-" not in document
    dates = dates_in(document)
    midnight = datetime.fromtimestamp(demo_day_midnight(day), UTC)
    assert all(d <= midnight for d in dates), (path, [d for d in dates if d > midnight])
    if path == STALE_FEED:
        assert dates and max(dates).year == 2003
    elif dates:  # two feeds carry no date that parses (a feed without dates is a case the demo shows)
        assert max(dates) >= midnight - timedelta(days=8), (path, max(dates))


def test_the_same_demo_day_serves_the_same_bytes_and_validators() -> None:
    day = date(2027, 1, 1)
    first, again, later = demo_web(day), demo_web(day), demo_web(day + timedelta(days=1))
    keys = first.keys()
    assert keys == again.keys() == later.keys()
    changed = 0
    for key in keys:
        a, b, c = first.get(key), again.get(key), later.get(key)
        assert a is not None and b is not None and c is not None
        assert (a.body, a.headers, a.strong_etag()) == (b.body, b.headers, b.strong_etag()), key
        # the demo day's start (a second later for each time the override file replaced the route)
        modified = first.last_modified(key)
        assert modified == again.last_modified(key) and 0 <= (modified or 0) - demo_day_midnight(day) < 5, key
        changed += a.body != c.body
    assert changed >= 10  # the dated files move with the day (their ETags with them)
    own = first.get("/blog-a/feed.xml")
    assert own is not None and own.headers["Last-Modified"] == "Tue, 29 Dec 2026 09:40:00 GMT"
    assert own.headers["ETag"] == '"alpha-feed-20261229"'
