"""parse_date: each form, time zones, two-digit years, garbage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.document.dates import (
    DATE_FORMS,
    FALLBACK_CALLS,
    FALLBACK_MISSES,
    FallbackBudget,
    _build,
    _parse,
    _parse_general,
    parse_date,
    read_rfc822,
    read_universal,
    universal_instant,
    universal_instant_of,
    without_comments,
)
from schemas.vocab import DateForm

OCT4 = datetime(2007, 10, 4, 23, 59, 45, tzinfo=UTC)


@pytest.mark.parametrize(
    "raw",
    [
        # the three forms the profile found to work in all 18 aggregators
        "Thu, 04 Oct 2007 23:59:45 +0000",
        "Thu, 04 Oct 2007 23:59:45 -0000",
        "Thu, 04 Oct 2007 23:59:45 GMT",
        "Thu, 4 Oct 2007 23:59:45 GMT",  # the leading zero may be omitted
        "  Thu, 04 Oct 2007 23:59:45 GMT\n",  # surrounding whitespace is not part of the value
    ],
)
def test_universal_forms(raw: str) -> None:
    assert parse_date(raw) == (OCT4, "rfc822-universal")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Thu, 04 Oct 2007 19:59:45 EDT", OCT4),
        ("Thu, 04 Oct 2007 18:59:45 EST", OCT4),
        ("Thu, 04 Oct 2007 16:59:45 PDT", OCT4),
        ("Thu, 04 Oct 2007 18:59:45 CDT", OCT4),
        ("Fri, 05 Oct 2007 01:59:45 +0200", OCT4),
        ("Thu, 04 Oct 2007 17:29:45 -0630", OCT4),
        ("Thu, 04 Oct 2007 23:59:45 UT", OCT4),  # valid RFC 822 universal time, but not one of the three forms
        ("Thu, 04 Oct 2007 23:59:45 Z", OCT4),
        ("Thu, 04 Oct 2007 23:59:45 A", OCT4),  # military zones are read as UTC (RFC 2822 4.3)
        ("thu, 04 oct 2007 23:59:45 gmt", OCT4),  # RFC 822 is case-insensitive; the profile form is not
        ("04 Oct 2007 23:59:45 GMT", OCT4),  # the weekday is optional
        ("Thu, 04 Oct 2007 23:59 GMT", OCT4.replace(second=0)),  # so are the seconds
        ("Thu,  04 Oct 2007  23:59:45 GMT", OCT4),  # extra spaces: valid, not the universal form
    ],
)
def test_other_zone_forms(raw: str, expected: datetime) -> None:
    assert parse_date(raw) == (expected, "rfc822-other-zone")


@pytest.mark.parametrize(
    ("raw", "year"),
    [("Thu, 04 Oct 07 23:59:45 GMT", 2007), ("Mon, 04 Oct 99 23:59:45 GMT", 1999), ("04 Oct 49 23:59:45 +0000", 2049)],
)
def test_two_digit_years(raw: str, year: int) -> None:
    dt, form = parse_date(raw)
    assert form == "rfc822-2digit-year"
    assert dt is not None and dt.year == year and dt.tzinfo is UTC


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2007-10-04T23:59:45Z", OCT4),
        ("2007-10-04T23:59:45+00:00", OCT4),
        ("2007-10-05T01:59:45+02:00", OCT4),
        ("2007-10-04T18:59:45-0500", OCT4),
        ("2007-10-04T23:59:45.250Z", OCT4.replace(microsecond=250000)),
        ("2007-10-04T23:59:45", OCT4),  # no zone: taken as UTC
        ("2007-10-04 23:59:45Z", OCT4),  # a space instead of T
        ("2007-10-04T23:59Z", OCT4.replace(second=0)),  # W3CDTF without seconds
        ("2007-10-04", datetime(2007, 10, 4, tzinfo=UTC)),
        ("2007-10", datetime(2007, 10, 1, tzinfo=UTC)),
        ("2007", datetime(2007, 1, 1, tzinfo=UTC)),
    ],
)
def test_iso8601(raw: str, expected: datetime) -> None:
    assert parse_date(raw) == (expected, "iso8601")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Thursday, 04 October 2007 23:59:45 GMT", OCT4),  # full names: tolerant tier
        ("Thu, 04 Oct 2007 23:59:45 UTC", OCT4),  # UTC is not an RFC 822 zone
        ("Thu, 04 Oct 2007 23:59:45", OCT4),  # no zone at all
        ("Fri, 05 Oct 2007 01:59:45 +02:00", OCT4),
        ("Fri, 05 Oct 2007 01:59:45 CEST", OCT4),  # unknown to the stdlib tiers: dateparser
        ("2007/10/04 23:59:45", OCT4),  # dateparser
    ],
)
def test_other_parsed(raw: str, expected: datetime) -> None:
    assert parse_date(raw) == (expected, "other-parsed")


@pytest.mark.parametrize(
    "raw",
    [
        "yesterday",  # relative dates are refused: results must not depend on the crawl day
        "not a date",
        "Thu, 31 Feb 2007 23:59:45 GMT",  # no such day
        "Thu, 04 Oct 2007 25:61:45 GMT",
        "2007-13-45T99:99:99Z",
        "x" * 500,
        "\x00\ufffd",
    ],
)
def test_unparsed(raw: str) -> None:
    assert parse_date(raw) == (None, "unparsed")


@pytest.mark.parametrize("raw", [None, "", "   \n\t"])
def test_blank(raw: str | None) -> None:
    assert parse_date(raw) == (None, None)


def test_result_is_always_utc_aware() -> None:
    for raw in ("Thu, 04 Oct 2007 23:59:45 PST", "2007-10-04T23:59:45+05:30", "Thu, 04 Oct 2007 23:59:45"):
        dt, _ = parse_date(raw)
        assert dt is not None and dt.utcoffset() is not None and dt.tzinfo is UTC


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_never_raises_and_form_is_known(raw: str) -> None:
    dt, form = parse_date(raw)
    assert form is None or form in DATE_FORMS
    assert (dt is None) or (dt.tzinfo is UTC)
    assert (form is None) == (raw.strip() == "")


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]),
    st.integers(0, 35),
    st.sampled_from(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]),
    st.integers(0, 9999),
    st.integers(0, 25),
    st.integers(0, 61),
    st.integers(0, 61),
    st.sampled_from(["+0000", "-0000", "GMT"]),
    st.booleans(),
)
def test_universal_shortcut_agrees_with_the_general_reading(
    wd: str, day: int, mon: str, year: int, hh: int, mm: int, ss: int, zone: str, short_day: bool
) -> None:
    text = f"{wd}, {day if short_day else f'{day:02d}'} {mon} {year:04d} {hh:02d}:{mm:02d}:{ss:02d} {zone}"
    assert _parse(text) == _parse_general(text)
    parts = read_universal(text)
    assert universal_instant(text) == (None if parts is None else parts.instant())
    assert universal_instant_of(text, parse_date(text)) == universal_instant(text)  # the checks reuse the parser's


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(st.integers(-1, 10000), st.sampled_from([1, 9999])),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 25),
    st.integers(0, 61),
    st.integers(0, 61),
    st.one_of(st.integers(-1500, 1500), st.sampled_from([-1440, -1439, 0, 1439, 1440])),
)
def test_build_moves_to_utc_as_astimezone_does(y: int, mo: int, d: int, h: int, mi: int, sec: int, offset: int) -> None:
    try:
        zone = timezone(timedelta(minutes=offset))
        expected: datetime | None = datetime(y, mo, d, h, mi, 59 if sec == 60 else sec, tzinfo=zone).astimezone(UTC)
    except (ValueError, OverflowError):
        expected = None
    built = _build(y, mo, d, h, mi, sec, 0, offset)
    assert built == expected
    assert built is None or built.tzinfo is UTC


@pytest.mark.parametrize("zone", ["A", "B", "I", "K", "M", "N", "Y", "a", "z", "Z"])
def test_military_zones_are_read_as_minus_0000(zone: str) -> None:
    # RFC 822 section 5 defines A-I, K-Z with their signs reversed; RFC 1123 5.2.14 says they carry no
    # information and RFC 2822 4.3 to treat them as -0000: Universal Time, the local zone unknown.
    raw = f"Thu, 04 Oct 2007 23:59:45 {zone}"
    assert parse_date(raw) == (OCT4, "rfc822-other-zone")
    parts = read_rfc822(raw)
    assert parts is not None and parts.offset == 0
    assert parts.military is (zone.upper() != "Z")  # Z is UT itself, not a wrongly defined zone
    assert parts.instant() == (OCT4.timestamp(), True)
    assert read_rfc822("Thu, 04 Oct 2007 23:59:45 J") is None  # J is no zone


@pytest.mark.parametrize(
    ("raw", "form"),
    [
        ("Thu, 04 Oct 2007 23 : 59 : 45 GMT", "rfc822-other-zone"),  # RFC 822 allows white space around ":"
        ("Thu , 04 Oct 2007 23:59:45 GMT", "rfc822-other-zone"),
        ("Thu, 04 Oct 2007 23:59:45 GMT", "rfc822-universal"),
    ],
)
def test_white_space_between_tokens(raw: str, form: str) -> None:
    assert parse_date(raw) == (OCT4, form)
    parts = read_rfc822(" ".join(raw.split()))
    assert parts is not None and parts.universal is (form == "rfc822-universal")


def test_forms_are_the_vocabulary() -> None:
    assert tuple(DateForm) == DATE_FORMS
    assert isinstance(parse_date("2007")[1], DateForm)
    assert isinstance(parse_date("yesterday")[1], DateForm)


def test_a_quoted_parenthesis_does_not_close_an_rfc822_comment() -> None:
    value = r"Thu, 09 (nested (comment) Mar)Feb(escaped comment\) 2005) 2006()23:59:45 +0000"
    assert without_comments(value).split() == ["Thu,", "09", "Feb", "2006", "23:59:45", "+0000"]


# ---------------------------------------------------------------- dateparser's budget per document


def _rss_dated(dates: list[str]) -> bytes:
    items = "".join(f"<item><title>{i}</title><pubDate>{d}</pubDate></item>" for i, d in enumerate(dates))
    return (
        '<rss version="2.0"><channel><title>T</title><link>http://e.example/</link><description>d</description>'
        f"{items}</channel></rss>"
    ).encode()


def _forms(body: bytes) -> list[DateForm | None]:
    from pipelines.document.feedparse import parse_feed

    return [it.date_form for it in parse_feed(body, "http://e.example/feed.xml").items]


def test_a_document_gives_dateparser_a_bounded_number_of_unreadable_dates() -> None:
    # dateparser takes ~27 ms to give up on a text: 3,000 of them held one feed for 80 s
    unreadable = [f"around {i} o'clock, give or take" for i in range(FALLBACK_MISSES + 10)]
    after = ["Thu, 04 Oct 2007 23:59:45 GMT", "2007-10-04T23:59:45Z", "4 October 2007 23:59 UTC", "soon"]
    forms = _forms(_rss_dated(unreadable + after))
    assert forms[:FALLBACK_MISSES] == [DateForm.UNPARSED] * FALLBACK_MISSES
    assert forms[FALLBACK_MISSES : len(unreadable)] == [DateForm.NOT_TRIED] * 10
    # what is read without dateparser still is; a text with no digit was never dateparser's to try
    assert forms[len(unreadable) :] == [
        DateForm.RFC822_UNIVERSAL,
        DateForm.ISO8601,
        DateForm.OTHER_PARSED,
        DateForm.UNPARSED,
    ]


def test_the_budget_counts_only_what_dateparser_cannot_read() -> None:
    readable = [f"{day}. März 2024 10:{day:02d}" for day in range(1, FALLBACK_MISSES + 6)]
    assert _forms(_rss_dated(readable)) == [DateForm.OTHER_PARSED] * len(readable)


def test_a_documents_dates_do_not_depend_on_what_the_process_parsed_before() -> None:
    # the same texts, now in dateparser's cache, get the same forms: the budget counts cached misses too
    unreadable = [f"circa {i} in the afternoon" for i in range(FALLBACK_MISSES + 3)]
    first = _forms(_rss_dated(unreadable))
    assert first == _forms(_rss_dated(unreadable))
    assert first.count(DateForm.NOT_TRIED) == 3


def test_a_text_seen_again_gets_its_first_answer_and_costs_nothing() -> None:
    readable, unreadable = "4 October 2007 23:59 CEST", "about 3 in the morning"
    # alternating: each distinct text is given to dateparser once, so the budget is never spent
    dates = [readable, unreadable] * (FALLBACK_MISSES + 5)
    forms = _forms(_rss_dated([*dates, *(f"near {i} pm" for i in range(FALLBACK_MISSES)), readable, unreadable]))
    assert forms[: len(dates)] == [DateForm.OTHER_PARSED, DateForm.UNPARSED] * (FALLBACK_MISSES + 5)
    # spent now (1 + 24 misses); the texts already tried still get their answers
    assert forms[len(dates) + FALLBACK_MISSES - 1] == DateForm.NOT_TRIED
    assert forms[-2:] == [DateForm.OTHER_PARSED, DateForm.UNPARSED]


def test_dateparser_is_given_a_bounded_number_of_texts_in_all() -> None:
    budget = FallbackBudget(misses=FALLBACK_MISSES, calls=3)
    readable = [f"{day} October 2007 23:59 CEST" for day in range(1, 6)]
    assert [parse_date(d, budget)[1] for d in readable] == [DateForm.OTHER_PARSED] * 3 + [DateForm.NOT_TRIED] * 2
    assert FALLBACK_CALLS > FALLBACK_MISSES


def test_parse_date_alone_always_tries_dateparser() -> None:
    budget = FallbackBudget(misses=0)
    assert parse_date("4 October 2007 23:59 CEST", budget) == (None, DateForm.NOT_TRIED)
    assert parse_date("4 October 2007 23:59 CEST") == (datetime(2007, 10, 4, 21, 59, tzinfo=UTC), DateForm.OTHER_PARSED)
