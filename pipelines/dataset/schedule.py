"""When a known feed is next due: the publisher's hints at the last fetch, one time, one reason.

Pure (stdlib only). :func:`next_due` turns the :class:`Hints` recorded when a
feed was last fetched into a :class:`Due`: the time the feed may be fetched
again, the :class:`schemas.vocab.DueHint` that decided it, and the reasoning in
one line of words. :func:`items_per_week` measures a feed's own rate for the
adaptive interval; :func:`parse_duration` reads ``--min-interval`` style values.

The formula
-----------

All times are UTC; a naive datetime is taken as UTC. ``F`` is the last fetch
(``Hints.fetched_at``), ``lo`` and ``hi`` the policy's ``min_interval`` and
``max_interval``.

1. **Never fetched** (``F`` is None): ``at = 1970-01-01T00:00Z``, due at once
   (hint ``first-fetch``); unless a 429/503 with Retry-After is all there is:
   then ``F`` is taken as that refusal's time and the rules below apply.
2. **Ignore hints** (``Policy.ignore_hints``): ``at = F``, due at once (hint
   ``ignore-hints``).
3. **Publisher hints.** Each hint present and readable gives a candidate
   interval after ``F``:

   - ``ttl``: RSS ``<ttl>`` minutes.
   - ``sy``: ``sy:updatePeriod / sy:updateFrequency``, the period being hourly
     1h, daily 1d, weekly 7d, monthly 30d, yearly 365d (a missing period is
     daily and a missing frequency 1, the module's defaults).
   - ``max-age``: Cache-Control ``max-age=N``: N seconds; ``no-cache``,
     ``no-store`` or ``max-age=0``: 0 (due at once). ``s-maxage`` is ignored:
     we are a private client.
   - ``expires``: only when Cache-Control has no readable ``max-age``,
     ``no-cache`` or ``no-store``: ``Expires - F``; 0 when
     the date is past or unreadable (``"0"`` included: RFC 9111 5.3 reads an
     invalid Expires as already expired).
   - ``retry-after``: only when the 429/503 was the latest answer
     (``retry_at >= F``; a missing ``retry_at`` is taken as ``F``):
     ``(retry_at - F) + N`` seconds, or the HTTP date ``- F`` (at least
     ``retry_at - F``).

   The feed is due when all of them allow it: the interval is the largest
   candidate, and its hint names the decision (on a tie, the first in the
   list above). The reason names the winner first, then the others, e.g.
   ``Cache-Control max-age=7200 (2h) >= ttl 60 min``.
4. **Adaptive.** No candidate (no publisher hint, or none readable):
   ``interval = 7 days / items_per_week`` (hint ``adaptive``); with
   ``items_per_week`` None or 0, ``interval = hi`` (hint ``max-interval``).
5. **Bounds.** ``interval = min(max(interval, lo), hi)``: hint
   ``min-interval`` if that raised it, ``max-interval`` if it lowered it.
   Retry-After is a publisher's suggestion too and is bounded the same way,
   counted from the refusal (``retry_at``) rather than from ``F``.
   Then ``at = F + interval``.
6. **Skip lists** (``skipHours`` / ``skipDays``, GMT): if ``at`` falls in a
   skipped hour or on a skipped day, it moves to the start of the next hour
   that is neither (hint ``skip``). A list that names every hour (every day)
   is ignored. If the move would pass ``F + hi``, ``at = F + hi`` (hint
   ``max-interval``: the skip is cut short).

So, once fetched and unless hints are ignored, ``F + lo <= at <= L + hi``, ``L``
being the latest answer (``F``, or a later 429/503).

Bad input never raises: an unreadable hint is left out and the reason says
``ignored: ...`` (except an unreadable Expires, which counts as expired).
Hour 24 in ``skipHours`` is read as 0 (midnight), as the RSS Best Practices
Profile recommends; other hours outside 0-23 and unknown day names are
ignored. Numbers of seconds above 2^31 are read as 2^31 (RFC 9111 1.2.2).
If ``min_interval`` exceeds ``max_interval``, ``max_interval`` wins.

``items_per_week(pub_dates, F, window)`` counts the dates within ``window``
before ``F`` (a date up to one day after ``F`` counts too; later ones are
bogus and ignored) and returns ``count * 7 / window days``; None when there is
no usable date at all.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime

from schemas.vocab import DueHint

__all__ = [
    "DEFAULT_MAX_INTERVAL",
    "DEFAULT_MIN_INTERVAL",
    "DEFAULT_POLICY",
    "DEFAULT_WINDOW",
    "EPOCH",
    "SY_PERIODS",
    "WEEKDAYS",
    "Due",
    "Hints",
    "Policy",
    "items_per_week",
    "next_due",
    "parse_duration",
]

#: The shortest interval between two fetches of a feed, whatever its hints say.
DEFAULT_MIN_INTERVAL = timedelta(minutes=5)
#: The longest interval between two fetches of a feed, whatever its hints say.
DEFAULT_MAX_INTERVAL = timedelta(hours=24)
#: How far back :func:`items_per_week` looks by default.
DEFAULT_WINDOW = timedelta(days=28)
#: ``Due.at`` of a feed never fetched: due at once.
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: ``sy:updatePeriod`` values and their length.
SY_PERIODS: dict[str, timedelta] = {
    "hourly": timedelta(hours=1),
    "daily": timedelta(days=1),
    "weekly": timedelta(days=7),
    "monthly": timedelta(days=30),
    "yearly": timedelta(days=365),
}
#: ``skipDays`` day names, in ``datetime.weekday()`` order.
WEEKDAYS: tuple[str, ...] = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

_DAY_INDEX = {name.lower(): i for i, name in enumerate(WEEKDAYS)}
_ZERO = timedelta(0)
_HOUR = timedelta(hours=1)
_DAY = timedelta(days=1)
_WEEK_SECONDS = 7 * 86400
#: RFC 9111 1.2.2: a delta-seconds above 2^31 is read as 2^31.
_MAX_SECONDS = 2**31
#: More digits than this is above 2^31 anyway (and keeps int() away from huge strings).
_MAX_DIGITS = 15
_DIGITS = re.compile(r"[0-9]+")
_DURATION = re.compile(r"([0-9]+)([smhdw]?)")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(frozen=True, slots=True)
class Hints:
    """What the publisher said about a feed's schedule at its last fetch."""

    fetched_at: datetime | None  # when the feed server last answered (UTC aware); None: never fetched
    ttl: int | None = None  # minutes
    skip_hours: tuple[int, ...] = ()  # GMT hours 0-23
    skip_days: tuple[str, ...] = ()  # "Monday".."Sunday"
    update_period: str | None = None  # hourly daily weekly monthly yearly
    update_frequency: int | None = None
    cache_control: str | None = None  # raw header
    expires: str | None = None  # raw header (HTTP date)
    retry_after: str | None = None  # raw header of a 429/503 (seconds or HTTP date)
    retry_at: datetime | None = None  # when that 429/503 was received
    items_per_week: float | None = None  # the feed's own rate, for the adaptive interval


@dataclass(frozen=True, slots=True)
class Policy:
    """The crawl's own limits. If ``min_interval`` exceeds ``max_interval``, ``max_interval`` wins."""

    min_interval: timedelta = DEFAULT_MIN_INTERVAL
    max_interval: timedelta = DEFAULT_MAX_INTERVAL
    ignore_hints: bool = False


#: The policy :func:`next_due` uses when given none.
DEFAULT_POLICY = Policy()


@dataclass(frozen=True, slots=True)
class Due:
    """When a feed is next due, what decided it, and why in one line."""

    at: datetime  # when the feed is next due (UTC aware)
    hint: DueHint  # what decided it
    reason: str  # one line in words, e.g. "ttl 60 min; moved out of skipHours 0-5 to 06:00Z"

    def is_due(self, now: datetime) -> bool:
        """Whether the feed may be fetched at ``now`` (naive: UTC)."""
        return self.at <= _utc(now)


@dataclass(frozen=True, slots=True)
class _Candidate:
    interval: timedelta  # after the last fetch
    hint: DueHint
    words: str


# --- small helpers -----------------------------------------------------------


def _utc(dt: datetime) -> datetime:
    """``dt`` in UTC; naive is taken as UTC (so is a time whose conversion would leave the calendar)."""
    if dt.tzinfo is None or dt.utcoffset() is None:
        return dt.replace(tzinfo=UTC)
    try:
        return dt.astimezone(UTC)
    except OverflowError:
        return dt.replace(tzinfo=UTC)


def _add(dt: datetime, delta: timedelta) -> datetime:
    """``dt + delta``, stopping at the ends of the calendar instead of raising."""
    try:
        return dt + delta
    except OverflowError:
        end = datetime.max if delta > _ZERO else datetime.min
        return end.replace(tzinfo=UTC)


def _seconds(n: float) -> timedelta:
    """``n`` seconds, read as 0 to 2^31."""
    return timedelta(seconds=min(max(n, 0), _MAX_SECONDS))


def _delta_seconds(text: str) -> int | None:
    """An HTTP delta-seconds (digits only), at most 2^31; None if it is not one."""
    if _DIGITS.fullmatch(text) is None:
        return None
    return min(int(text), _MAX_SECONDS) if len(text) <= _MAX_DIGITS else _MAX_SECONDS


def _http_date(text: str) -> datetime | None:
    """An HTTP date (IMF-fixdate, RFC 850 or asctime) in UTC, or None."""
    try:
        return _utc(parsedate_to_datetime(text.strip()))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _fmt(delta: timedelta) -> str:
    """A duration in the units :func:`parse_duration` reads, e.g. ``1d2h``, ``30m``, ``0s``."""
    seconds = int(delta.total_seconds())
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


def _quote(text: object) -> str:
    """A raw value quoted for a reason: one line, at most 40 characters."""
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= 40 else flat[:37] + "...")


def _present(raw: str | None) -> bool:
    return raw is not None and raw.strip() != ""


# --- the publisher's hints, one function each -----------------------------------


def _ttl(hints: Hints, fetched: datetime, notes: list[str]) -> _Candidate | None:
    if hints.ttl is None:
        return None
    if hints.ttl < 0:
        notes.append(f"ignored: ttl {hints.ttl}")
        return None
    return _Candidate(_seconds(hints.ttl * 60), DueHint.TTL, f"ttl {hints.ttl} min")


def _sy(hints: Hints, fetched: datetime, notes: list[str]) -> _Candidate | None:
    if hints.update_period is None and hints.update_frequency is None:
        return None
    name = "daily" if hints.update_period is None else hints.update_period.strip().lower()
    frequency = 1 if hints.update_frequency is None else hints.update_frequency
    period = SY_PERIODS.get(name)
    if period is None:
        notes.append(f"ignored: sy:updatePeriod {_quote(hints.update_period)}")
        return None
    if frequency < 1:
        notes.append(f"ignored: sy:updateFrequency {frequency}")
        return None
    interval = period / frequency
    return _Candidate(interval, DueHint.SY, f"sy {name}/{frequency} = {_fmt(interval)}")


def _cache_control(raw: str, notes: list[str]) -> _Candidate | None:
    """Cache-Control's answer: no-cache / no-store (due at once), max-age, or None."""
    at_once = ""
    max_age: int | None = None
    for part in raw.split(","):
        name, sep, value = part.partition("=")
        name = name.strip().lower()
        value = value.strip().strip('"')
        if (name == "no-cache" and not sep) or name == "no-store":
            at_once = at_once or name
        elif name == "max-age" and max_age is None:
            max_age = _delta_seconds(value)
            if max_age is None:
                notes.append(f"ignored: Cache-Control max-age={_quote(value)}")
    if at_once:
        return _Candidate(_ZERO, DueHint.MAX_AGE, f"Cache-Control {at_once}: due at once")
    if max_age is None:
        return None
    words = "due at once" if max_age == 0 else _fmt(_seconds(max_age))
    return _Candidate(_seconds(max_age), DueHint.MAX_AGE, f"Cache-Control max-age={max_age} ({words})")


def _expires(raw: str, fetched: datetime) -> _Candidate:
    when = _http_date(raw)
    if when is None:
        return _Candidate(_ZERO, DueHint.EXPIRES, f"Expires {_quote(raw)} unreadable: taken as expired")
    if when <= fetched:
        return _Candidate(_ZERO, DueHint.EXPIRES, "Expires in the past: due at once")
    interval = _seconds((when - fetched).total_seconds())
    return _Candidate(interval, DueHint.EXPIRES, f"Expires {_fmt(interval)} after the fetch")


def _http_cache(hints: Hints, fetched: datetime, notes: list[str]) -> _Candidate | None:
    """Cache-Control if it decides, else Expires (RFC 9111 5.3: max-age overrides Expires)."""
    if hints.cache_control is not None and _present(hints.cache_control):
        decided = _cache_control(hints.cache_control, notes)
        if decided is not None:
            return decided
    if hints.expires is not None and _present(hints.expires):
        return _expires(hints.expires, fetched)
    return None


def _retry_after(hints: Hints, fetched: datetime, notes: list[str]) -> _Candidate | None:
    raw = hints.retry_after
    if raw is None or not _present(raw):
        return None
    received = fetched if hints.retry_at is None else _utc(hints.retry_at)
    if received < fetched:
        notes.append("ignored: Retry-After of an answer older than the last fetch")
        return None
    base = received - fetched
    text = raw.strip()
    seconds = _delta_seconds(text)
    if seconds is not None:
        return _Candidate(base + _seconds(seconds), DueHint.RETRY_AFTER, f"Retry-After {seconds} s")
    when = _http_date(text)
    if when is None:
        notes.append(f"ignored: Retry-After {_quote(raw)}")
        return None
    return _Candidate(max(base, when - fetched), DueHint.RETRY_AFTER, f"Retry-After {when:%Y-%m-%d %H:%M:%SZ}")


#: The publisher's hints in tie-break order: each gives a candidate or None.
_RULES: tuple[Callable[[Hints, datetime, list[str]], _Candidate | None], ...] = (
    _ttl,
    _sy,
    _http_cache,
    _retry_after,
)


def _adaptive(rate: float | None, hi: timedelta, notes: list[str]) -> _Candidate:
    if rate is not None and not (math.isfinite(rate) and rate >= 0):
        notes.append(f"ignored: items_per_week {rate}")
        rate = None
    if rate is None:
        return _Candidate(hi, DueHint.MAX_INTERVAL, f"no hint and no item history: max-interval {_fmt(hi)}")
    if rate == 0:
        return _Candidate(hi, DueHint.MAX_INTERVAL, f"no hint and no recent items: max-interval {_fmt(hi)}")
    interval = _seconds(_WEEK_SECONDS / rate)
    return _Candidate(interval, DueHint.ADAPTIVE, f"no hint: {rate:.3g} items/week, every {_fmt(interval)}")


def _decide(hints: Hints, fetched: datetime, hi: timedelta, notes: list[str]) -> _Candidate:
    """The latest of the publisher's candidates, or the adaptive interval when there is none."""
    candidates = [c for c in (rule(hints, fetched, notes) for rule in _RULES) if c is not None]
    if not candidates:
        return _adaptive(hints.items_per_week, hi, notes)
    best = candidates[0]
    for candidate in candidates[1:]:
        if candidate.interval > best.interval:
            best = candidate
    others = [c.words for c in candidates if c is not best]
    words = " >= ".join([best.words, *others])
    return _Candidate(best.interval, best.hint, words)


def _limits(policy: Policy) -> tuple[timedelta, timedelta]:
    hi = max(policy.max_interval, _ZERO)
    return min(max(policy.min_interval, _ZERO), hi), hi


def _bound(decided: _Candidate, lo: timedelta, hi: timedelta) -> _Candidate:
    if decided.interval < lo:
        return _Candidate(lo, DueHint.MIN_INTERVAL, f"{decided.words}; raised to min-interval {_fmt(lo)}")
    if decided.interval > hi:
        return _Candidate(hi, DueHint.MAX_INTERVAL, f"{decided.words}; lowered to max-interval {_fmt(hi)}")
    return decided


# --- skipHours / skipDays --------------------------------------------------------


def _skip_lists(hints: Hints, notes: list[str]) -> tuple[frozenset[int], frozenset[int]]:
    """The skipped GMT hours and weekdays (``weekday()`` numbers) to honour."""
    hours = {0 if h == 24 else h for h in hints.skip_hours}
    bad_hours = sorted(h for h in hours if not 0 <= h <= 23)
    if bad_hours:
        notes.append(f"ignored: skipHours {', '.join(map(str, bad_hours))}")
    hours.difference_update(bad_hours)
    days = {_DAY_INDEX.get(d.strip().lower(), -1) for d in hints.skip_days}
    bad_days = [d for d in hints.skip_days if d.strip().lower() not in _DAY_INDEX]
    if bad_days:
        notes.append(f"ignored: skipDays {', '.join(_quote(d) for d in bad_days)}")
    days.discard(-1)
    if len(hours) == 24:
        notes.append("skipHours ignored: it skips every hour")
        hours = set()
    if len(days) == 7:
        notes.append("skipDays ignored: it skips every day")
        days = set()
    return frozenset(hours), frozenset(days)


def _hour_ranges(hours: Iterable[int]) -> str:
    """``0-5,22-23`` for hours 0 to 5, 22 and 23."""
    runs: list[list[int]] = []
    for h in sorted(hours):
        if runs and h == runs[-1][1] + 1:
            runs[-1][1] = h
        else:
            runs.append([h, h])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _skip(
    decided: _Candidate, at: datetime, hours: frozenset[int], days: frozenset[int], cap: datetime, hi: timedelta
) -> tuple[datetime, DueHint, str]:
    """Move ``at`` to the next hour outside the skip lists, no later than ``cap``."""
    hit_hours = hit_days = False
    t = at
    for _ in range(24 * 8 + 1):
        in_hours, in_days = t.hour in hours, t.weekday() in days
        if not (in_hours or in_days):
            break
        hit_hours, hit_days = hit_hours or in_hours, hit_days or in_days
        t = _add(t.replace(minute=0, second=0, microsecond=0), _HOUR)
        if t > cap:
            break
    if t == at:
        return at, decided.hint, decided.words
    held: list[str] = []
    if hit_hours:
        held.append(f"skipHours {_hour_ranges(hours)}")
    if hit_days:
        held.append(f"skipDays {','.join(WEEKDAYS[d] for d in sorted(days))}")
    lists = " and ".join(held)
    if t > cap or t.hour in hours or t.weekday() in days:
        return cap, DueHint.MAX_INTERVAL, f"{decided.words}; {lists} cut short by max-interval {_fmt(hi)}"
    stamp = f"{t:%H:%MZ}" if t.date() == at.date() else f"{t:%A %Y-%m-%d %H:%MZ}"
    return t, DueHint.SKIP, f"{decided.words}; moved out of {lists} to {stamp}"


# --- the public functions ------------------------------------------------------


def next_due(hints: Hints, policy: Policy = DEFAULT_POLICY) -> Due:
    """When the feed is next due, by the formula in the module docstring. Never raises."""
    if hints.fetched_at is None:
        if hints.retry_at is None or not _present(hints.retry_after):
            return Due(EPOCH, DueHint.FIRST_FETCH, "never fetched: due at once")
        # Never answered but with a 429/503: its Retry-After counts from then.
        hints = replace(hints, fetched_at=hints.retry_at)
    fetched = _utc(hints.fetched_at or hints.retry_at or EPOCH)
    if policy.ignore_hints:
        return Due(fetched, DueHint.IGNORE_HINTS, "hints ignored: due at once")
    lo, hi = _limits(policy)
    notes: list[str] = []
    decided = _decide(hints, fetched, hi, notes)
    # The bounds hold from the latest answer: after a 429/503 that decided, from when it came.
    offset = _retry_offset(hints, fetched) if decided.hint == DueHint.RETRY_AFTER else _ZERO
    if offset:
        bounded = _bound(replace(decided, interval=decided.interval - offset), lo, hi)
        bounded = replace(bounded, interval=bounded.interval + offset)
    else:  # nearly always: no copies (dataclasses.replace is not free)
        bounded = _bound(decided, lo, hi)
    hours, days = _skip_lists(hints, notes)
    cap = _add(fetched, offset + hi)
    at, hint, words = _skip(bounded, _add(fetched, bounded.interval), hours, days, cap, hi)
    return Due(at, hint, "; ".join([words, *notes]))


def _retry_offset(hints: Hints, fetched: datetime) -> timedelta:
    """How long after the last fetch the 429/503 came (0 when it is not later)."""
    if hints.retry_at is None:
        return _ZERO
    return max(_utc(hints.retry_at) - fetched, _ZERO)


def items_per_week(
    pub_dates: Iterable[datetime | None], fetched_at: datetime, *, window: timedelta = DEFAULT_WINDOW
) -> float | None:
    """Items per week over ``window`` before ``fetched_at``; None if no date is usable (or the window is empty)."""
    if window <= _ZERO:
        return None
    end = _utc(fetched_at)
    start = _add(end, -window)
    bogus_after = _add(end, _DAY)
    usable = counted = 0
    for date in pub_dates:
        if date is None:
            continue
        when = _utc(date)
        if when > bogus_after:
            continue
        usable += 1
        if when >= start:
            counted += 1
    if not usable:
        return None
    return counted * 7 / (window / _DAY)


def parse_duration(text: str) -> timedelta:
    """``"0"``, ``"90"`` (seconds), ``"90s"``, ``"30m"``, ``"2h"``, ``"1d"``, ``"1w"``; ValueError otherwise."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise ValueError(
            f"not a duration: {_quote(text)} (a whole number with an optional unit s, m, h, d or w, e.g. 90, 30m, 2h)"
        )
    digits, unit = match.groups()
    if len(digits) > _MAX_DIGITS:
        raise ValueError(f"duration too long: {_quote(text)}")
    try:
        return timedelta(seconds=int(digits) * _UNIT_SECONDS[unit])
    except OverflowError:
        raise ValueError(f"duration too long: {_quote(text)}") from None
