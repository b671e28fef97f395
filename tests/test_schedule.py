"""pipelines/dataset/schedule.py: each rule of next_due, their combinations, items_per_week, parse_duration."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.dataset.schedule import (
    DEFAULT_MAX_INTERVAL,
    DEFAULT_MIN_INTERVAL,
    EPOCH,
    Due,
    Hints,
    Policy,
    items_per_week,
    next_due,
    parse_duration,
)
from schemas.vocab import DueHint

#: A Friday, 12:00 UTC.
F = datetime(2024, 1, 5, 12, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
#: Bounds wide enough not to get in the way of the rule under test.
WIDE = Policy(min_interval=timedelta(0), max_interval=timedelta(days=400))


def due(policy: Policy = WIDE, **hints: object) -> Due:
    return next_due(Hints(F, **hints), policy)  # type: ignore[arg-type]


# --- first fetch, ignore-hints ---------------------------------------------------


def test_never_fetched_is_due_at_once() -> None:
    d = next_due(Hints(None, ttl=600))
    assert (d.at, d.hint) == (EPOCH, DueHint.FIRST_FETCH)
    assert d.at.tzinfo is not None
    assert d.is_due(datetime(1970, 1, 1, tzinfo=UTC))


def test_never_fetched_wins_over_ignore_hints() -> None:
    assert next_due(Hints(None), Policy(ignore_hints=True)).hint == DueHint.FIRST_FETCH


def test_ignore_hints_is_due_at_the_last_fetch() -> None:
    d = next_due(Hints(F, ttl=600, retry_after="3600"), Policy(ignore_hints=True))
    assert (d.at, d.hint) == (F, DueHint.IGNORE_HINTS)
    assert d.is_due(F)


# --- each publisher hint ---------------------------------------------------------


def test_ttl_is_minutes_after_the_fetch() -> None:
    d = due(ttl=60)
    assert (d.at, d.hint, d.reason) == (F + HOUR, DueHint.TTL, "ttl 60 min")


def test_negative_ttl_is_ignored() -> None:
    d = due(ttl=-5, items_per_week=7.0)
    assert d.hint == DueHint.ADAPTIVE
    assert "ignored: ttl -5" in d.reason


@pytest.mark.parametrize(
    ("period", "frequency", "interval"),
    [
        ("hourly", 1, HOUR),
        ("hourly", 4, 15 * MIN),
        ("daily", 2, 12 * HOUR),
        ("weekly", 1, 7 * DAY),
        ("monthly", 1, 30 * DAY),
        ("yearly", 1, 365 * DAY),
        (" Daily ", 1, DAY),  # read without regard to case or surrounding space
        (None, 2, 12 * HOUR),  # the module's default period: daily
        ("weekly", None, 7 * DAY),  # the module's default frequency: 1
    ],
)
def test_sy_is_period_over_frequency(period: str | None, frequency: int | None, interval: timedelta) -> None:
    d = due(update_period=period, update_frequency=frequency)
    assert (d.at, d.hint) == (F + interval, DueHint.SY)


@pytest.mark.parametrize(
    ("period", "frequency", "note"),
    [("fortnightly", 1, "ignored: sy:updatePeriod 'fortnightly'"), ("daily", 0, "ignored: sy:updateFrequency 0")],
)
def test_unreadable_sy_is_ignored(period: str, frequency: int, note: str) -> None:
    d = due(update_period=period, update_frequency=frequency)
    assert d.hint == DueHint.MAX_INTERVAL  # no hint left, no item history
    assert note in d.reason


@pytest.mark.parametrize(
    ("header", "interval"),
    [
        ("max-age=3600", HOUR),
        ("public, Max-Age=600", 10 * MIN),  # directive names are case-insensitive
        ('max-age="120"', 2 * MIN),  # the quoted form is accepted
        ("max-age=0", timedelta(0)),
        ("no-cache", timedelta(0)),
        ("no-store", timedelta(0)),
        ("max-age=3600, no-cache", timedelta(0)),  # no-cache: revalidate every time
        ("max-age=3600, s-maxage=60", HOUR),  # s-maxage is for shared caches
    ],
)
def test_cache_control(header: str, interval: timedelta) -> None:
    d = due(cache_control=header)
    assert (d.at, d.hint) == (F + interval, DueHint.MAX_AGE)


def test_qualified_no_cache_is_not_due_at_once() -> None:
    d = due(cache_control='no-cache="Set-Cookie", max-age=600')
    assert d.at == F + 10 * MIN


def test_s_maxage_alone_is_no_hint() -> None:
    d = due(cache_control="s-maxage=60")
    assert d.hint == DueHint.MAX_INTERVAL


def test_garbage_max_age_is_ignored_and_said() -> None:
    d = due(cache_control="max-age=abc", ttl=30)
    assert (d.at, d.hint) == (F + 30 * MIN, DueHint.TTL)
    assert "ignored: Cache-Control max-age='abc'" in d.reason


def test_huge_max_age_is_read_as_2_to_the_31_seconds() -> None:
    d = due(Policy(max_interval=timedelta(days=30_000)), cache_control="max-age=" + "9" * 40)
    assert (d.at, d.hint) == (F + timedelta(seconds=2**31), DueHint.MAX_AGE)
    assert d.reason.startswith("Cache-Control max-age=2147483648 ")


def test_expires_in_the_future() -> None:
    d = due(expires="Fri, 05 Jan 2024 14:30:00 GMT")
    assert (d.at, d.hint) == (F + timedelta(hours=2, minutes=30), DueHint.EXPIRES)


@pytest.mark.parametrize("header", ["Thu, 04 Jan 2024 00:00:00 GMT", "0", "tomorrow"])
def test_expires_past_or_unreadable_is_expired(header: str) -> None:
    d = due(expires=header)
    assert (d.at, d.hint) == (F, DueHint.EXPIRES)


def test_expires_unreadable_says_so() -> None:
    assert "Expires '0' unreadable" in due(expires="0").reason


def test_expires_other_date_forms() -> None:
    # RFC 850 and asctime, the obsolete HTTP-date forms, and a zone other than GMT
    assert due(expires="Friday, 05-Jan-24 13:00:00 GMT").at == F + HOUR
    assert due(expires="Fri Jan  5 13:00:00 2024").at == F + HOUR
    assert due(expires="Fri, 05 Jan 2024 08:00:00 -0500").at == F + HOUR


def test_max_age_overrides_expires() -> None:
    d = due(cache_control="max-age=60", expires="Sat, 06 Jan 2024 12:00:00 GMT")
    assert (d.at, d.hint) == (F + MIN, DueHint.MAX_AGE)


def test_expires_counts_when_cache_control_has_no_max_age() -> None:
    d = due(cache_control="public, max-age=abc", expires="Fri, 05 Jan 2024 13:00:00 GMT")
    assert (d.at, d.hint) == (F + HOUR, DueHint.EXPIRES)


def test_retry_after_seconds_count_from_the_answer() -> None:
    d = due(retry_after="120", retry_at=F + 10 * MIN)
    assert (d.at, d.hint, d.reason) == (F + 12 * MIN, DueHint.RETRY_AFTER, "Retry-After 120 s")


def test_retry_after_date() -> None:
    d = due(retry_after="Fri, 05 Jan 2024 15:00:00 GMT", retry_at=F)
    assert (d.at, d.hint) == (F + 3 * HOUR, DueHint.RETRY_AFTER)


def test_retry_after_date_in_the_past_is_the_answer_itself() -> None:
    d = due(retry_after="Thu, 04 Jan 2024 00:00:00 GMT", retry_at=F + 5 * MIN)
    assert (d.at, d.hint) == (F + 5 * MIN, DueHint.RETRY_AFTER)


def test_retry_after_without_retry_at_counts_from_the_fetch() -> None:
    assert due(retry_after="600").at == F + 10 * MIN


def test_retry_after_of_an_older_answer_is_ignored() -> None:
    d = due(retry_after="86400", retry_at=F - MIN, ttl=30)
    assert (d.at, d.hint) == (F + 30 * MIN, DueHint.TTL)
    assert "ignored: Retry-After of an answer older than the last fetch" in d.reason


def test_garbage_retry_after_is_ignored_and_said() -> None:
    d = due(retry_after="soon", retry_at=F, ttl=30)
    assert (d.at, d.hint) == (F + 30 * MIN, DueHint.TTL)
    assert "ignored: Retry-After 'soon'" in d.reason


def test_retry_after_is_bounded_like_any_hint() -> None:
    d = next_due(Hints(F, retry_after="172800", retry_at=F))
    assert (d.at, d.hint) == (F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL)
    assert "Retry-After 172800 s" in d.reason


def test_all_garbage_headers_together() -> None:
    d = next_due(Hints(F, cache_control="max-age=abc", expires="0", retry_after="soon", retry_at=F))
    # Expires "0" is expired (RFC 9111), so the feed is due as soon as the policy allows
    assert (d.at, d.hint) == (F + DEFAULT_MIN_INTERVAL, DueHint.MIN_INTERVAL)
    assert "max-age='abc'" in d.reason and "Retry-After 'soon'" in d.reason


def test_a_reason_is_one_line_whatever_the_header() -> None:
    d = due(cache_control="max-age=\nabc\r\n", retry_after="so\non", skip_days=("Fun\nday",))
    assert "\n" not in d.reason and "\r" not in d.reason


# --- combinations: the latest candidate wins ---------------------------------------


@pytest.mark.parametrize(
    ("ttl", "max_age", "at", "hint"),
    [
        (60, 1800, F + HOUR, DueHint.TTL),
        (30, 7200, F + 2 * HOUR, DueHint.MAX_AGE),
        (60, 3600, F + HOUR, DueHint.TTL),  # a tie goes to the first listed: ttl
    ],
)
def test_ttl_against_max_age_the_later_wins(ttl: int, max_age: int, at: datetime, hint: DueHint) -> None:
    d = due(ttl=ttl, cache_control=f"max-age={max_age}")
    assert (d.at, d.hint) == (at, hint)


def test_the_reason_names_the_winner_first() -> None:
    d = due(ttl=30, cache_control="max-age=7200")
    assert d.reason == "Cache-Control max-age=7200 (2h) >= ttl 30 min"


def test_every_hint_at_once_the_latest_decides() -> None:
    d = due(
        ttl=60,
        update_period="daily",
        cache_control="max-age=600",
        retry_after="Sat, 06 Jan 2024 18:00:00 GMT",
        retry_at=F,
        items_per_week=1000.0,
    )
    assert (d.at, d.hint) == (F + 30 * HOUR, DueHint.RETRY_AFTER)


def test_hints_make_the_feed_rate_irrelevant() -> None:
    assert due(ttl=60, items_per_week=0.01).hint == DueHint.TTL


# --- adaptive ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rate", "at", "hint"),
    [
        (14.0, F + 12 * HOUR, DueHint.ADAPTIVE),
        (7.0, F + DAY, DueHint.ADAPTIVE),
        (0.5, F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL),  # 14 days, lowered
        (10_000.0, F + DEFAULT_MIN_INTERVAL, DueHint.MIN_INTERVAL),  # 60 s, raised
        (0.0, F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL),
        (None, F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL),
        (1e-300, F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL),
    ],
)
def test_adaptive_interval_is_a_week_over_the_rate(rate: float | None, at: datetime, hint: DueHint) -> None:
    d = next_due(Hints(F, items_per_week=rate))
    assert (d.at, d.hint) == (at, hint)


@pytest.mark.parametrize("rate", [float("nan"), float("inf"), -3.0])
def test_adaptive_garbage_rate_is_ignored(rate: float) -> None:
    d = next_due(Hints(F, items_per_week=rate))
    assert (d.at, d.hint) == (F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL)
    assert "ignored: items_per_week" in d.reason


def test_adaptive_when_every_hint_is_unreadable() -> None:
    d = due(cache_control="max-age=abc", retry_after="soon", items_per_week=7.0)
    assert (d.at, d.hint) == (F + DAY, DueHint.ADAPTIVE)


# --- bounds -------------------------------------------------------------------------


def test_min_interval_raises_a_short_hint() -> None:
    d = next_due(Hints(F, ttl=1))
    assert (d.at, d.hint) == (F + DEFAULT_MIN_INTERVAL, DueHint.MIN_INTERVAL)
    assert d.reason == "ttl 1 min; raised to min-interval 5m"


def test_max_interval_lowers_a_long_hint() -> None:
    d = next_due(Hints(F, update_period="weekly"))
    assert (d.at, d.hint) == (F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL)
    assert d.reason.endswith("lowered to max-interval 1d")


def test_a_hint_on_a_bound_keeps_its_name() -> None:
    assert next_due(Hints(F, ttl=5)).hint == DueHint.TTL
    assert next_due(Hints(F, ttl=24 * 60)).hint == DueHint.TTL


def test_custom_policy() -> None:
    policy = Policy(min_interval=2 * HOUR, max_interval=3 * DAY)
    assert next_due(Hints(F, ttl=60), policy).at == F + 2 * HOUR
    assert next_due(Hints(F, update_period="weekly"), policy).at == F + 3 * DAY


def test_min_above_max_max_wins() -> None:
    d = next_due(Hints(F, ttl=1), Policy(min_interval=2 * DAY, max_interval=DAY))
    assert d.at == F + DAY


# --- skipHours / skipDays --------------------------------------------------------------


def test_not_in_a_skipped_hour_nothing_moves() -> None:
    d = due(ttl=60, skip_hours=(0, 1, 2), skip_days=("Sunday",))
    assert (d.at, d.hint, d.reason) == (F + HOUR, DueHint.TTL, "ttl 60 min")


def test_skip_hours_move_to_the_next_free_hour() -> None:
    d = due(ttl=60, skip_hours=(13, 14, 15))
    assert (d.at, d.hint) == (datetime(2024, 1, 5, 16, tzinfo=UTC), DueHint.SKIP)
    assert d.reason == "ttl 60 min; moved out of skipHours 13-15 to 16:00Z"


def test_skip_hours_across_midnight() -> None:
    fetched = datetime(2024, 1, 5, 22, 30, tzinfo=UTC)
    d = next_due(Hints(fetched, ttl=60, skip_hours=(23, 0, 1)))
    assert (d.at, d.hint) == (datetime(2024, 1, 6, 2, tzinfo=UTC), DueHint.SKIP)
    assert "skipHours 0-1,23" in d.reason and "2024-01-06 02:00Z" in d.reason


def test_skip_days_into_the_next_week() -> None:
    # Friday 12:00 + 1 day lands on Saturday; Saturday and Sunday skipped: Monday 00:00
    d = next_due(Hints(F, ttl=24 * 60, skip_days=("Saturday", "Sunday")), Policy(max_interval=4 * DAY))
    assert (d.at, d.hint) == (datetime(2024, 1, 8, tzinfo=UTC), DueHint.SKIP)
    assert "moved out of skipDays Saturday,Sunday to Monday 2024-01-08 00:00Z" in d.reason


def test_skip_from_sunday_to_the_next_week() -> None:
    sunday = datetime(2024, 1, 7, 12, tzinfo=UTC)
    d = next_due(
        Hints(sunday, ttl=12 * 60, skip_days=("Sunday", "Monday"), skip_hours=(0, 1)), Policy(max_interval=3 * DAY)
    )
    assert d.at == datetime(2024, 1, 9, 2, tzinfo=UTC)  # Tuesday, after the skipped hours 0 and 1
    assert "skipHours 0-1 and skipDays Monday,Sunday" in d.reason


def test_skip_day_names_are_read_without_regard_to_case() -> None:
    d = next_due(Hints(F, ttl=24 * 60, skip_days=(" saturday", "SUNDAY")), Policy(max_interval=4 * DAY))
    assert d.at == datetime(2024, 1, 8, tzinfo=UTC)


def test_hour_zero_is_midnight() -> None:
    # the parser has already read <hour>24</hour> as 0
    fetched = datetime(2024, 1, 5, 23, 30, tzinfo=UTC)
    d = next_due(Hints(fetched, ttl=40, skip_hours=(0,)))
    assert (d.at, d.hint) == (datetime(2024, 1, 6, 1, tzinfo=UTC), DueHint.SKIP)


def test_hour_24_is_read_as_midnight_too() -> None:
    fetched = datetime(2024, 1, 5, 23, 30, tzinfo=UTC)
    assert next_due(Hints(fetched, ttl=40, skip_hours=(24,))).at == datetime(2024, 1, 6, 1, tzinfo=UTC)


def test_every_hour_skipped_ignores_skip_hours() -> None:
    d = due(ttl=60, skip_hours=tuple(range(24)))
    assert (d.at, d.hint) == (F + HOUR, DueHint.TTL)
    assert "skipHours ignored: it skips every hour" in d.reason


def test_every_day_skipped_ignores_skip_days_but_not_skip_hours() -> None:
    d = due(
        ttl=60,
        skip_days=tuple(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]),
        skip_hours=(13,),
    )
    assert (d.at, d.hint) == (F + 2 * HOUR, DueHint.SKIP)
    assert "skipDays ignored: it skips every day" in d.reason


def test_skip_cut_short_by_max_interval() -> None:
    # ttl 20 h lands on Saturday 08:00; the weekend is skipped, but max-interval is 24 h
    d = next_due(Hints(F, ttl=20 * 60, skip_days=("Saturday", "Sunday")))
    assert (d.at, d.hint) == (F + DEFAULT_MAX_INTERVAL, DueHint.MAX_INTERVAL)
    assert "skipDays Saturday,Sunday cut short by max-interval 1d" in d.reason


def test_skip_may_end_exactly_at_max_interval() -> None:
    d = next_due(Hints(F, ttl=23 * 60 + 30, skip_hours=(11,)))
    assert (d.at, d.hint) == (F + DEFAULT_MAX_INTERVAL, DueHint.SKIP)


def test_garbage_skip_values_are_ignored_and_said() -> None:
    d = due(ttl=60, skip_hours=(25, -1, 13), skip_days=("Funday",))
    assert d.at == F + 2 * HOUR  # hour 13 still honoured
    assert "ignored: skipHours -1, 25" in d.reason and "ignored: skipDays 'Funday'" in d.reason


def test_skip_applies_after_the_bounds() -> None:
    d = next_due(Hints(F, ttl=1, skip_hours=(12,)))
    assert (d.at, d.hint) == (F + HOUR, DueHint.SKIP)
    assert d.reason == "ttl 1 min; raised to min-interval 5m; moved out of skipHours 12 to 13:00Z"


# --- time zones ---------------------------------------------------------------------------


def test_naive_fetched_at_is_utc() -> None:
    d = next_due(Hints(F.replace(tzinfo=None), ttl=60))
    assert d.at == F + HOUR and d.at.utcoffset() == timedelta(0)


def test_other_zones_are_converted_to_utc() -> None:
    local = F.astimezone(timezone(timedelta(hours=5)))
    d = next_due(Hints(local, ttl=60, skip_hours=(13,)))
    assert d.at == F + 2 * HOUR  # 13 is a GMT hour
    assert d.at.tzinfo == UTC


def test_retry_at_in_another_zone() -> None:
    d = due(retry_after="60", retry_at=(F + MIN).astimezone(timezone(timedelta(hours=-8))))
    assert d.at == F + 2 * MIN


# --- Due.is_due -------------------------------------------------------------------------------


def test_is_due_edges() -> None:
    d = Due(F, DueHint.TTL, "ttl 60 min")
    assert d.is_due(F)
    assert d.is_due(F + timedelta(microseconds=1))
    assert not d.is_due(F - timedelta(microseconds=1))
    assert d.is_due(F.replace(tzinfo=None))  # naive: UTC
    assert not d.is_due(F.astimezone(timezone(timedelta(hours=1))) - MIN)


# --- items_per_week -------------------------------------------------------------------------


def test_items_per_week_counts_the_window() -> None:
    dates = [F - timedelta(days=d) for d in (1, 3, 7, 13, 27)] + [F - timedelta(days=40)]
    assert items_per_week(dates, F) == pytest.approx(5 * 7 / 28)


def test_items_per_week_skips_none_and_bogus_future_dates() -> None:
    dates = [None, F - DAY, F + timedelta(hours=12), F + timedelta(days=3), None]
    assert items_per_week(dates, F) == pytest.approx(2 * 7 / 28)  # 12 h ahead counts, 3 days ahead is bogus


def test_items_per_week_none_without_dates() -> None:
    assert items_per_week([], F) is None
    assert items_per_week([None, None], F) is None
    assert items_per_week([F + timedelta(days=30)], F) is None  # only bogus dates: nothing known


def test_items_per_week_zero_when_every_date_is_old() -> None:
    assert items_per_week([F - timedelta(days=100)], F) == 0.0


def test_items_per_week_custom_window_and_naive_dates() -> None:
    dates = [(F - timedelta(days=d)).replace(tzinfo=None) for d in (1, 2, 5)]
    assert items_per_week(dates, F.replace(tzinfo=None), window=timedelta(days=7)) == pytest.approx(3.0)
    assert items_per_week(dates, F, window=timedelta(0)) is None


def test_items_per_week_feeds_next_due() -> None:
    rate = items_per_week([F - timedelta(days=d) for d in range(14)], F)
    assert rate == pytest.approx(3.5)
    assert next_due(Hints(F, items_per_week=rate), WIDE).at == F + 2 * DAY


# --- parse_duration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0", timedelta(0)),
        ("90", timedelta(seconds=90)),
        ("90s", timedelta(seconds=90)),
        ("30m", 30 * MIN),
        ("2h", 2 * HOUR),
        ("1d", DAY),
        ("1w", 7 * DAY),
        (" 5m ", 5 * MIN),
    ],
)
def test_parse_duration_good(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text", ["", "m", "-1", "1.5h", "2 h", "1H", "1y", "2h30m", "١٢", "5m\nx", "9" * 30, "99999999999w"]
)
def test_parse_duration_bad(text: str) -> None:
    with pytest.raises(ValueError, match=r"duration") as info:
        parse_duration(text)
    assert "\n" not in str(info.value)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_parse_duration_never_raises_anything_else(text: str) -> None:
    try:
        result = parse_duration(text)
    except ValueError as exc:
        assert "\n" not in str(exc)
    else:
        assert result >= timedelta(0)


# --- the property: a fetched feed is always due within the bounds -----------------------------

_headers = st.one_of(
    st.none(),
    st.text(max_size=30),
    st.integers(0, 10**12).map(str),
    st.sampled_from(["no-cache", "no-store", "max-age=0", "max-age=abc", "private, max-age=60", "0", "soon"]),
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(9000, 1, 1)).map(
        lambda t: t.strftime("%a, %d %b %Y %H:%M:%S GMT")
    ),
    st.integers(0, 10**9).map(lambda n: f"max-age={n}"),
)
_times = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(9000, 1, 1),
    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7))]),
)
_hints = st.builds(
    Hints,
    fetched_at=_times,
    ttl=st.none() | st.integers(-10, 10**12),
    skip_hours=st.lists(st.integers(-2, 26), max_size=26).map(tuple),
    skip_days=st.lists(
        st.sampled_from(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "Funday"]),
        max_size=8,
    ).map(tuple),
    update_period=st.none() | st.sampled_from(["hourly", "daily", "weekly", "monthly", "yearly", "never"]),
    update_frequency=st.none() | st.integers(-1, 10**6),
    cache_control=_headers,
    expires=_headers,
    retry_after=_headers,
    retry_at=st.none() | _times,
    items_per_week=st.none() | st.floats(allow_nan=True, allow_infinity=True),
)
_policies = st.builds(
    lambda lo, extra: Policy(min_interval=lo, max_interval=lo + extra),
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=30)),
    st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=400)),
)


@settings(max_examples=1000, deadline=None)
@given(_hints, _policies)
def test_a_fetched_feed_is_due_within_the_bounds(hints: Hints, policy: Policy) -> None:
    d = next_due(hints, policy)
    assert hints.fetched_at is not None
    fetched = hints.fetched_at.astimezone(UTC)
    # The bounds hold from the latest answer: a 429/503 after the fetch moves the upper one.
    latest = max(fetched, hints.retry_at.astimezone(UTC)) if hints.retry_at is not None else fetched
    assert fetched + policy.min_interval <= d.at <= latest + policy.max_interval
    assert d.at.utcoffset() == timedelta(0)
    assert d.hint in set(DueHint) - {DueHint.FIRST_FETCH, DueHint.IGNORE_HINTS}
    assert d.reason and "\n" not in d.reason


@settings(max_examples=200, deadline=None)
@given(_hints, _policies)
def test_a_skip_move_never_lands_in_a_skipped_hour(hints: Hints, policy: Policy) -> None:
    d = next_due(hints, policy)
    if d.hint == DueHint.SKIP:
        hours = {0 if h == 24 else h for h in hints.skip_hours}
        assert d.at.hour not in hours or len(hours & set(range(24))) == 24
        assert d.at.minute == d.at.second == 0


def test_retry_after_counts_from_the_refusal_and_is_bounded_from_there() -> None:
    f = datetime(2026, 11, 1, tzinfo=UTC)
    refused = f + timedelta(hours=24, minutes=1)  # a 429 a day after the last good fetch
    d = next_due(Hints(fetched_at=f, retry_after="3600", retry_at=refused))
    assert d.hint == DueHint.RETRY_AFTER and d.at == refused + timedelta(hours=1)
    capped = next_due(Hints(fetched_at=f, retry_after="999999", retry_at=refused))
    assert capped.hint == DueHint.MAX_INTERVAL and capped.at == refused + timedelta(hours=24)


def test_a_url_that_only_ever_answered_429_waits_for_its_retry_after() -> None:
    refused = datetime(2026, 11, 1, tzinfo=UTC)
    d = next_due(Hints(fetched_at=None, retry_after="7200", retry_at=refused))
    assert d.hint == DueHint.RETRY_AFTER and d.at == refused + timedelta(hours=2)
    assert next_due(Hints(fetched_at=None)).hint == DueHint.FIRST_FETCH
