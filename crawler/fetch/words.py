"""Counts in the messages a user reads: ``1 error``, ``2 errors``. Standard library only, cheap to import."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1 (``noun + "s"`` unless ``plural`` is given)."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"
