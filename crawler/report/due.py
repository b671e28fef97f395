"""When each known feed of a dataset is next due: ``feedcensus due``. No Scrapy.

The state of the earlier jobs (:class:`pipelines.dataset.state.StateIndex`) gives each
known feed's hints at its last fetch; :func:`pipelines.dataset.schedule.next_due` turns
them into a time, the hint that decided it and the reason, under a
:class:`~pipelines.dataset.schedule.Policy`, exactly as the next crawl would decide.

The caller passes the function that reads a feed's hints off its state
(``pipelines.dataset.state.hints_of``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow.fs as pafs

from pipelines.dataset.schedule import Hints, Policy, next_due
from pipelines.dataset.state import FeedState, StateIndex
from pipelines.dataset.store import resolve_root

__all__ = ["DueError", "DueFeed", "due_feeds", "iso", "parse_time", "schedule", "summary", "to_lines"]


class DueError(Exception):
    """The dataset cannot be read for a schedule (missing, no crawl yet)."""


@dataclass(frozen=True, slots=True)
class DueFeed:
    """One known feed: when it is next due, and why."""

    url: str
    due_now: bool
    next_due: datetime
    hint: str
    reason: str
    last_fetched: datetime | None
    status: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "url": self.url,
            "due_now": self.due_now,
            "next_due": iso(self.next_due),
            "hint": self.hint,
            "reason": self.reason,
            "last_fetched": iso(self.last_fetched) if self.last_fetched is not None else None,
            "status": self.status,
        }


def iso(when: datetime) -> str:
    """``2026-11-22T00:15:00Z``: UTC, to the second."""
    return when.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (``2026-11-22T00:15:00Z``, ``2026-11-22 00:15``...); naive is UTC. ValueError otherwise."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"not an ISO time: {text!r} (e.g. 2026-11-22T00:15:00Z)") from None
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def schedule(
    states: Iterable[FeedState], hints: Callable[[FeedState], Hints], policy: Policy, now: datetime
) -> list[DueFeed]:
    """Every feed with its next due time: those due at ``now`` first, then by due time, then by URL."""
    feeds = []
    for state in states:
        due = next_due(hints(state), policy)
        feeds.append(
            DueFeed(
                url=state.url,
                due_now=due.is_due(now),
                next_due=due.at,
                hint=str(due.hint),
                reason=due.reason,
                last_fetched=state.fetched_at,
                status=state.status,
            )
        )
    return sorted(feeds, key=lambda f: (not f.due_now, f.next_due, f.url))


def due_feeds(out: str, hints: Callable[[FeedState], Hints], policy: Policy, now: datetime) -> list[DueFeed]:
    """The schedule of every known feed of the dataset at ``out``; :class:`DueError` when there is none to read."""
    fs, root = resolve_root(out)
    if isinstance(fs, pafs.LocalFileSystem) and fs.get_file_info(root).type != pafs.FileType.Directory:
        raise DueError(f"no such dataset directory: {out}")
    with StateIndex.open(out) as index:
        if not index.jobs:
            raise DueError(f"no crawl found in {out} (expected {out}/fetch_log/job_id=...)")
        return schedule(index.feeds(), hints, policy, now)


def _wait(delta: timedelta) -> str:
    """``in 2d3h``, ``in 45m``, ``in 30s``: the two largest units."""
    seconds = max(int(delta.total_seconds()), 0)
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "in " + "".join(parts[:2] or ["0s"])


def _plural(n: int) -> str:
    return f"{n} feed" if n == 1 else f"{n} feeds"


def summary(feeds: list[DueFeed]) -> str:
    """``N feeds due now, M later (next at ...)``."""
    now = sum(f.due_now for f in feeds)
    later = [f for f in feeds if not f.due_now]
    line = f"{_plural(now)} due now, {len(later)} later"
    return line + (f" (next at {iso(later[0].next_due)})" if later else "")


def to_lines(feeds: list[DueFeed], now: datetime) -> list[str]:
    """One line per feed (when, due time, hint, URL, reason), then the summary line."""
    lines = []
    for f in feeds:
        when = "due now" if f.due_now else _wait(f.next_due - now)
        lines.append(f"{when:<10} {iso(f.next_due)}  {f.hint:<12}  {f.url}  {f.reason}")
    return [*lines, summary(feeds)]
