"""A process that kills itself at a named point, for the tests of what a crash leaves (no mocks).

``FEEDCENSUS_DIE_AT=<point>:<n>`` makes the process send itself SIGKILL the ``n``-th time it reaches
``<point>`` (a real SIGKILL: no handler, no ``finally``, no flush runs). Unset, :func:`reached` costs a
dictionary lookup. The points, in the order of one commit of a distributed job's worker:

- ``take``: a batch of requests was taken from the frontier (leased), before any is fetched;
- ``claimed``: a commit's keys are claimed in the frontier, before its files are written;
- ``written``: its files are written under temporary names, before they are renamed into place;
- ``renamed``: its files are in place, before its commit marker is written;
- ``committed``: its marker is written, before the frontier hears of the commit;
- ``released``: the leases of committed URLs were released (at a heartbeat).
"""

from __future__ import annotations

import os
import signal
from typing import Final

ENV: Final = "FEEDCENSUS_DIE_AT"
POINTS: Final = ("take", "claimed", "written", "renamed", "committed", "released")

_counts: dict[str, int] = {}


def _target() -> tuple[str, int] | None:
    raw = os.environ.get(ENV) or ""
    point, _, n = raw.partition(":")
    if point not in POINTS:
        return None
    return point, int(n) if n.isdigit() else 1


_TARGET: Final = _target()


def reached(point: str) -> None:
    """Count one arrival at ``point``; SIGKILL this process when it is the one ``FEEDCENSUS_DIE_AT`` names."""
    if _TARGET is None or _TARGET[0] != point:
        return
    _counts[point] = _counts.get(point, 0) + 1
    if _counts[point] == _TARGET[1]:
        os.kill(os.getpid(), signal.SIGKILL)
