"""The crawl's stats collector: Scrapy's in-memory one without the cost Scrapy 2.19 put on every use.

Scrapy 2.19 deprecated the ``spider`` argument of the stats methods. To warn about it, its
``StatsCollector`` overrides ``__getattribute__``: every attribute of the collector, the methods and
``_stats`` inside them alike, is looked up under a ``_cached_`` name first, and for the internal ones
that lookup fails by raising an AttributeError. One ``inc_value`` took 4.8 us instead of 0.22 us
here, and a census response makes 17 such calls (Scrapy's downloader and core stats, the census's
outcome counts; a bare Scrapy spider's response 11): about 80 us a response. :class:`CensusStats`
is the same collector with Python's own attribute lookup: the methods still take (and ignore)
``spider``, only the warning about it is gone; no code of this project passes it.
"""

from __future__ import annotations

from scrapy.statscollectors import MemoryStatsCollector


class CensusStats(MemoryStatsCollector):
    """``MemoryStatsCollector`` with plain attribute lookup (``STATS_CLASS`` in crawler/settings.py)."""

    __getattribute__ = object.__getattribute__
