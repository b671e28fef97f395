"""How often the crawl process's threads may take the interpreter from one another (``FEEDCENSUS_SWITCH_INTERVAL``).

The reactor thread shares the interpreter lock with helper threads: the dataset's commit thread
(pipelines/writer.py), and Scrapy's and Twisted's own (DNS lookups). Every time the reactor makes a
system call (a socket read or write, a poll) it lets go of the lock; when a helper took it meanwhile
and runs Python code (turning rows into Arrow), the reactor gets it back only when the helper blocks
or when the switch interval has passed: 5 ms by default, a long time for a thread that makes a few
system calls per response. A shorter interval hands the lock
back sooner; the price is more forced switches for the helpers, whose work is not urgent. Measured in
``benchmarks/RESULTS.md`` (benchmark 2: the what-if columns run the same crawl with Python's 5 ms).
``0`` (or less) turns this off: the interval is left as the process has it.

The interval is the interpreter's, not the crawl's: it is set when an engine starts and put back when
the last engine running in the process stops, so a process that runs a crawl among other work gets
its own value back.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, ClassVar

from scrapy import signals
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler


class SwitchInterval:
    """Sets ``sys.setswitchinterval`` while the engine runs (a Scrapy extension)."""

    #: Engines of this process running with an interval set, and the interval found before the first.
    _running: ClassVar[int] = 0
    _before: ClassVar[float | None] = None

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = False

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
        if SwitchInterval._running == 0:
            SwitchInterval._before = sys.getswitchinterval()
        SwitchInterval._running += 1
        self.started = True
        sys.setswitchinterval(self.seconds)

    def engine_stopped(self) -> None:
        if not self.started:
            return
        self.started = False
        SwitchInterval._running -= 1
        if SwitchInterval._running == 0 and SwitchInterval._before is not None:
            sys.setswitchinterval(SwitchInterval._before)
            SwitchInterval._before = None
