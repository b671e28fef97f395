"""Retry waits: Retry-After (seconds or date), else exponential backoff, always capped."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from crawler.middlewares.retry import retry_delay

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("attempt", "header", "expected"),
    [
        (1, None, 1.0),
        (2, None, 2.0),
        (3, None, 4.0),
        (10, None, 60.0),  # capped
        (1, "5", 5.0),
        (1, "600", 60.0),  # capped
        (1, "Sun, 22 Nov 2026 12:00:30 GMT", 30.0),
        (1, "Sun, 22 Nov 2026 11:00:00 GMT", 0.0),  # in the past: retry now
        (2, "soon", 2.0),  # unreadable: backoff
        (1, " 3 ", 3.0),
    ],
)
def test_retry_delay(attempt: int, header: str | None, expected: float) -> None:
    assert retry_delay(attempt, header, base=1.0, cap=60.0, now=NOW) == pytest.approx(expected)
