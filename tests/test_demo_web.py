"""The demo web does not age, and a second ``feedcensus demo`` into the same folder is a re-crawl (issue #37).

Before: the demo web's feeds were dated June 2025, so the report of a demo run in November 2026 showed
no active feed and a quality score of 0 for every one; and each demo served on a new port, so a second
demo into ``demo-out`` took its 11 feeds and 29 items for new.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from crawler.demo.dates import demo_day_midnight, format_day, render_dates
from crawler.demo.folder import STATE_FILE, DemoWeb, read_demo_web, start_demo_web, write_demo_web
from crawler.demo.webserver import demo_root, demo_site_root, demo_web
from crawler.report.breadth import read_measures
from pipelines.document.dates import parse_date
from tests.conftest import run_cli

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


# --- what a demo folder remembers ------------------------------------------------------------


def test_a_folder_remembers_its_demo_web_and_a_bad_file_is_one_line(tmp_path: Path) -> None:
    assert read_demo_web(tmp_path) == (None, None)
    write_demo_web(tmp_path, DemoWeb(41234, date(2026, 11, 27)))
    assert read_demo_web(tmp_path) == (DemoWeb(41234, date(2026, 11, 27)), None)
    for bad in ("{", '{"port": "41234", "day": "2026-11-27"}', '{"port": 0, "day": "2026-11-27"}', '{"port": 1}'):
        (tmp_path / STATE_FILE).write_text(bad)
        state, note = read_demo_web(tmp_path)
        assert state is None and note == f"{tmp_path / STATE_FILE}: not what a demo writes: serving a new demo web"


def test_the_remembered_port_and_day_are_served_again_and_a_taken_port_is_said(tmp_path: Path) -> None:
    server, web, note = start_demo_web(None, today=date(2027, 1, 1))
    with server:
        assert note is None and web == DemoWeb(server.port, date(2027, 1, 1))
    # The same port and day again (the port is free once the first server stopped).
    again, web_again, note = start_demo_web(web)
    with again:
        assert note is None and web_again == web and again.port == web.port
        # A second demo while the port is taken: another port, and one line saying what it means.
        other, web_other, note = start_demo_web(web)
        with other:
            assert other.port != web.port and web_other == DemoWeb(other.port, web.day)
            assert note is not None and note.startswith(f"port {web.port}, which the earlier demos")
            assert note.endswith(f"serving on {other.port} instead, so this crawl finds every URL new")


# --- two demos into one folder ---------------------------------------------------------------


@pytest.fixture(scope="module")
def two_demos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    out = tmp_path_factory.mktemp("demo") / "demo-out"
    first = run_cli("demo", "--out", str(out), "--job-id", "first")
    assert first.returncode == 0, first.stderr[-3000:]
    report = out / "report"
    measures = read_measures(report)
    newest = (report / "breadth_newest_age.csv").read_text(encoding="utf-8")
    second = run_cli("demo", "--out", str(out), "--job-id", "second")
    assert second.returncode == 0, second.stderr[-3000:]
    changes = run_cli("changes", str(out), "--json")
    assert changes.returncode == 0, changes.stderr[-3000:]
    yield {
        "out": out,
        "first": first,
        "second": second,
        "measures": measures,
        "newest": newest,
        "changes": json.loads(changes.stdout),
    }


def test_the_demo_report_shows_active_feeds_today(two_demos: dict[str, Any]) -> None:
    """Before: 0 active feeds, no newest item within 2 years, a quality score of 0 for every feed."""
    measures = two_demos["measures"]
    # 11 feeds: one not well-formed (not counted, as the peer does), one undated, one last written in 2003
    assert (measures["funnel_active"], measures["quality_active"]) == (8, 8), measures
    assert (measures["quality_inactive_stale"], measures["quality_inactive_undated"]) == (1, 1), measures
    assert measures["quality_active_mean"] > 0.5
    # the newest item of most feeds is within a week, of none in the future. (Not "none today": the newest items
    # are dated the day before the demo day at a time of day, so soon after midnight UTC they are under a day old.)
    rows = dict(line.split(",")[:2] for line in two_demos["newest"].splitlines()[1:])
    assert int(rows["1 week"]) >= 8, two_demos["newest"]
    assert (measures["feeds_future_items"], measures["items_future"]) == (0, 0), measures


def test_a_second_demo_into_the_folder_is_a_recrawl(two_demos: dict[str, Any]) -> None:
    """Before: a new port, so `changes` said 11 new feeds and 29 new items."""
    changes = two_demos["changes"]
    assert (changes["job"], changes["since"]) == ("second", "first")
    assert changes["new_feeds"] == [] and changes["gone_feeds"] == [], changes
    assert changes["new_items"] == [] and changes["changed_items"] == [], changes
    second = two_demos["second"].stderr
    assert "incremental: 11 feeds known from 1 earlier job; not due 11, not modified 0, unchanged 0" in second
    assert "feeds: 0   items: 0" in second  # nothing fetched as a feed: not even the URL a known feed redirects to
    state = json.loads((two_demos["out"] / STATE_FILE).read_text())
    assert (
        f"demo web serving at http://127.0.0.1:{state['port']}, as for the earlier demo into {two_demos['out']} "
        f"(a re-crawl; dated for {state['day']}, a new --out for today)"
    ) in second
    # the same URLs: the seeds the two demos wrote name the same port
    assert all(url.startswith(f"http://127.0.0.1:{state['port']}/") for url in read_seeds(two_demos["out"]))


def read_seeds(out: Path) -> list[str]:
    return (out / "demo-seeds.txt").read_text(encoding="utf-8").split()


def test_a_port_in_use_is_never_remembered_as_free(tmp_path: Path) -> None:
    """The fallback is real: a socket listening on the remembered port makes the demo web go elsewhere."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        taken = int(sock.getsockname()[1])
        server, web, note = start_demo_web(DemoWeb(taken, date(2027, 1, 1)))
        with server:
            assert server.port != taken and web.port == server.port and note is not None
