"""How often the crawl process's threads may take the interpreter from one another (``FEEDCENSUS_SWITCH_INTERVAL``).

The reactor thread shares the interpreter lock with helper threads: the dataset's commit thread
(crawler/extensions/dataset.py), and Scrapy's and Twisted's own (DNS lookups). Every time the reactor makes a
system call (a socket read or write, a poll) it lets go of the lock; when a helper took it meanwhile
and runs Python code (turning rows into Arrow), the reactor gets it back only when the helper blocks
or when the switch interval has passed: 5 ms by default, a long time for a thread that makes a few
system calls per response. A shorter interval hands the lock
back sooner; the price is more forced switches for the helpers, whose work is not urgent. Measured in
``benchmarks/RESULTS.md`` (benchmark 2: the what-if columns run the same crawl with Python's 5 ms).
``0`` (or less) turns this off: the interval is left as the process has it.

The interval is the interpreter's, not the crawl's: it is set when the first engine starts and put back when
the last engine running in the process stops, so a process that runs a crawl among other work gets
its own value back.
"""

from __future__ import annotations

import sys

from crawler.extensions.interpreter import InterpreterSetting


class SwitchInterval(InterpreterSetting[float]):
    """Sets ``sys.setswitchinterval`` while the engine runs (a Scrapy extension)."""

    setting = "FEEDCENSUS_SWITCH_INTERVAL"

    def apply(self) -> float:
        before = sys.getswitchinterval()
        sys.setswitchinterval(self.value)
        return before

    def restore(self, saved: float) -> None:
        sys.setswitchinterval(saved)
