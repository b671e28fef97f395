"""How often the crawl process's threads may take the interpreter from one another (``FEEDCENSUS_SWITCH_INTERVAL``).

The reactor thread shares the interpreter lock with two helper threads: the one that waits on each
document worker (pipelines/feed.py) and the dataset's commit thread (pipelines/writer.py). Every time
the reactor makes a system call (a socket read or write, a poll) it lets go of the lock; when a helper
took it meanwhile and runs Python code (unpickling an answer, turning rows into Arrow), the reactor
gets it back only when the helper blocks or when the switch interval has passed: 5 ms by default, a
long time for a thread that makes a few system calls per response. A shorter interval hands the lock
back sooner. Measured in ``benchmarks/RESULTS.md`` (benchmark 2); ``0`` leaves Python's default.

The interval is the interpreter's, not the crawl's: it is set when the engine starts and put back
when it stops, so a process that runs a crawl among other work gets its own value back.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class SwitchInterval:
    """Sets ``sys.setswitchinterval`` for the life of the engine (a Scrapy extension)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.before: float | None = None  # the interval found when the engine started

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        seconds = crawler.settings.getfloat("FEEDCENSUS_SWITCH_INTERVAL")
        if seconds <= 0:
            raise NotConfigured
        extension = cls(seconds)
        crawler.signals.connect(extension.engine_started, signal=signals.engine_started)
        crawler.signals.connect(extension.engine_stopped, signal=signals.engine_stopped)
        return extension

    def engine_started(self) -> None:
        self.before = sys.getswitchinterval()
        sys.setswitchinterval(self.seconds)

    def engine_stopped(self) -> None:
        if self.before is not None:
            sys.setswitchinterval(self.before)
            self.before = None
