"""A setting of the whole interpreter that a crawl changes while its engine runs, then puts back.

The base of the extensions that tune the process for a crawl (the thread switch interval, the garbage
collector): the first engine of the process to start saves what the process had, each engine applies
the crawl's value as it starts, and the last one to stop puts the saved value back, so a process that
runs a crawl among other work gets its own value back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class WhileEngineRuns:
    """Subclasses say what they save, apply and put back; this class counts the engines."""

    #: Engines of this process running with the setting applied, and what the process had before the first
    #: (one count and one saved value per subclass: each is its own setting).
    _running: ClassVar[int] = 0
    _saved: ClassVar[object] = None

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._running, cls._saved = 0, None

    def __init__(self, crawler: Crawler) -> None:
        self.started = False
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    def save(self) -> object:
        """What the process has now."""
        raise NotImplementedError

    def apply(self) -> None:
        """Set the crawl's value."""
        raise NotImplementedError

    def restore(self, saved: object) -> None:
        """Put back what :meth:`save` returned."""
        raise NotImplementedError

    def engine_started(self) -> None:
        cls = type(self)
        if cls._running == 0:
            cls._saved = self.save()
        cls._running += 1
        self.started = True
        self.apply()

    def engine_stopped(self) -> None:
        if not self.started:
            return
        self.started = False
        cls = type(self)
        cls._running -= 1
        if cls._running == 0:
            self.restore(cls._saved)
            cls._saved = None
