"""A setting of the whole interpreter that a crawl changes while its engine runs, then puts back.

The base of the extensions that tune the process for a crawl (the thread switch interval, the garbage
collector's threshold). The first engine of the process to start saves what the process had and
applies the crawl's value; the last one to stop puts the saved value back, so a process that runs a
crawl among other work gets its own value back. Engines that start while another runs change nothing:
the value of the first one holds until the last stops. The count is kept per setting name
(:attr:`InterpreterSetting.setting`), so a subclass of an extension shares its count.

The value is the whole process's while it is set, the user's other work in the process included;
a process embedding crawls (a notebook) that wants none of this sets the setting to 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar, cast

from scrapy import signals
from scrapy.exceptions import NotConfigured

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

T = TypeVar("T")


@dataclass(slots=True)
class _Held:
    """For one setting: how many engines run with it applied, and what the process had before the first."""

    running: int = 0
    saved: object = None


#: Setting name -> its engines and saved value, for the life of the process.
_HELD: dict[str, _Held] = {}


class InterpreterSetting(Generic[T]):
    """Subclasses name their setting and say how to apply it (returning what the process had) and put
    it back; this class reads the setting (a number; 0 or less: the extension is off) and counts the engines."""

    #: The crawl setting this extension applies (the key its engines are counted under).
    setting: ClassVar[str]

    def __init__(self, crawler: Crawler, value: float) -> None:
        self.value = value  #: the setting's value, which :meth:`apply` gives the process
        self.started = False
        crawler.signals.connect(self.engine_started, signal=signals.engine_started)
        crawler.signals.connect(self.engine_stopped, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        value = crawler.settings.getfloat(cls.setting)
        if value <= 0:
            raise NotConfigured
        return cls(crawler, value)

    def apply(self) -> T:
        """Set the crawl's value; return what the process had, for :meth:`restore`."""
        raise NotImplementedError

    def restore(self, saved: T) -> None:
        """Put back what :meth:`apply` returned."""
        raise NotImplementedError

    def engine_started(self) -> None:
        held = _HELD.setdefault(self.setting, _Held())
        if held.running == 0:
            held.saved = self.apply()
        held.running += 1
        self.started = True

    def engine_stopped(self) -> None:
        if not self.started:
            return
        self.started = False
        held = _HELD[self.setting]
        held.running -= 1
        if held.running == 0:
            saved, held.saved = held.saved, None
            self.restore(cast(T, saved))
