"""Reflexive autodiscovery (USM): does the page a feed names advertise that feed?

For a feed reached without a page (an OPML ``xmlUrl``, a ``--url``), the
census fetches the page in the channel's ``<link>`` and looks for the feed
among that page's autodiscovery links. The feed's ``feeds`` row is held until
the answer is known; a page already fetched is never fetched again.

``ReflexiveTracker`` is the pure bookkeeping; ``ReflexivePipeline`` is the
thin Scrapy component that schedules page requests and writes the held rows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from w3lib.url import canonicalize_url

from crawler.extensions.dataset import Dataset, dataset_of
from crawler.requests import FollowsLinks
from pipelines.document.rows import TableRows
from pipelines.feed import not_due_rows
from schemas.items import FetchContext, FetchRecord, NotDue, PageLinks
from schemas.vocab import FAILURE_OUTCOMES, Expect, Outcome, Via

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

ADVERTISES = "advertises"
DOES_NOT_ADVERTISE = "does_not_advertise"
PAGE_UNREACHABLE = "page_unreachable"
NO_LINK = "no_link"


def url_key(url: str) -> str:
    """Compare URLs the way a person would: canonical form, scheme ignored."""
    try:
        canon = canonicalize_url(url.strip(), keep_fragments=False)
    except ValueError:
        canon = url.strip()
    return canon.split("://", 1)[-1].rstrip("/")


class ReflexiveTracker:
    """Pages seen (with the feeds they advertise) and feed rows waiting for a page."""

    def __init__(self) -> None:
        #: page key -> keys of the feeds it advertises; None when the page could not be read.
        self.pages: dict[str, frozenset[str] | None] = {}
        #: page key -> [(the held rows of one feed document, keys the feed is known by)]
        self.waiting: dict[str, list[tuple[TableRows, frozenset[str]]]] = {}

    def page_seen(self, urls: Iterable[str], advertised: Iterable[str] | None) -> list[TableRows]:
        """Record a page (under all its URLs) and release the feeds waiting for it."""
        hrefs = None if advertised is None else frozenset(url_key(h) for h in advertised)
        released: list[TableRows] = []
        for url in urls:
            key = url_key(url)
            self.pages.setdefault(key, hrefs)
            for held, aliases in self.waiting.pop(key, ()):
                held.rows["feeds"][0]["reflexive"] = self._verdict(hrefs, aliases)
                released.append(held)
        return released

    def wait(self, held: TableRows, page_url: str, aliases: Iterable[str]) -> str:
        """Hold a feed's rows for ``page_url``. Returns 'done' (verdict set now), 'fetch' or 'pending'."""
        row = held.rows["feeds"][0]
        if not page_url:
            row["reflexive"] = NO_LINK
            return "done"
        key = url_key(page_url)
        keys = frozenset(url_key(a) for a in aliases)
        if key in self.pages:
            row["reflexive"] = self._verdict(self.pages[key], keys)
            return "done"
        first = key not in self.waiting
        self.waiting.setdefault(key, []).append((held, keys))
        return "fetch" if first else "pending"

    def drain(self) -> list[TableRows]:
        """Release every feed still waiting (its page never answered)."""
        released = []
        for entries in self.waiting.values():
            for held, _ in entries:
                held.rows["feeds"][0]["reflexive"] = PAGE_UNREACHABLE
                released.append(held)
        self.waiting.clear()
        return released

    @staticmethod
    def _verdict(advertised: frozenset[str] | None, feed_keys: frozenset[str]) -> str:
        if advertised is None:
            return PAGE_UNREACHABLE
        return ADVERTISES if advertised & feed_keys else DOES_NOT_ADVERTISE


#: fetch_log outcomes after which a page cannot tell us anything.
#: A page with one of these outcomes could not be read: it neither advertises a feed nor fails to.
#: (A page whose reading was lost in a document worker is recorded as parse_error or parse_timeout.)
_FAILED = frozenset((*FAILURE_OUTCOMES, Outcome.PARSE_ERROR, Outcome.PARSE_TIMEOUT))


class ReflexivePipeline:
    """Holds feeds rows until their channel page has been looked at."""

    def __init__(self, crawler: Crawler, dataset: Dataset) -> None:
        self.crawler = crawler
        self.dataset = dataset
        self.tracker = ReflexiveTracker()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        from scrapy.exceptions import NotConfigured

        if not crawler.settings.getbool("FEEDCENSUS_REFLEXIVE"):
            raise NotConfigured
        return cls(crawler, dataset_of(crawler))

    def process_item(self, item: Any) -> Any:
        if isinstance(item, TableRows):
            # A URL fetched as a document (feed or not) is no page that could advertise anything.
            for rec in item.rows.get("fetch_log", ()):
                self._release(self.tracker.page_seen({rec["url"], rec["final_url"] or rec["url"]}, []))
            if item.reflexive_page is not None:
                self._hold(item)
        elif isinstance(item, PageLinks):
            hrefs = [link.href for link in item.links if link.href]
            self._release(self.tracker.page_seen({item.page_url, item.requested_url}, hrefs))
        elif isinstance(item, FetchRecord) and not item.html and item.outcome != Outcome.DUPLICATE:
            # A page that failed, or turned out not to be HTML, advertises nothing we can read.
            readable: list[str] | None = None if item.outcome in _FAILED else []
            self._release(self.tracker.page_seen({item.url, item.final_url or item.url}, readable))
        return item

    def open_spider(self) -> None:
        """On a resumed crawl, learn the pages the interrupted run already looked at."""
        from pipelines.dataset.store import open_table

        ds = self.dataset
        if not ds.done:
            return

        def committed(table: str, columns: list[str]) -> list[dict[str, Any]]:
            try:
                return open_table(ds.out, table, ds.job_id).to_table(columns=columns).to_pylist()
            except FileNotFoundError:  # the interrupted run committed no row of this table
                return []

        links = committed("links", ["page_url", "href"])
        log = committed("fetch_log", ["url", "final_url", "outcome"])
        advertised: dict[str, list[str]] = {}
        for row in links:
            if row["href"]:
                advertised.setdefault(row["page_url"], []).append(row["href"])
        for row in log:
            if row["outcome"] == Outcome.DUPLICATE:
                continue
            urls = {row["url"], row["final_url"] or row["url"]}
            if row["outcome"] in _FAILED:
                self.tracker.page_seen(urls, None)
            else:
                self.tracker.page_seen(urls, advertised.get(row["final_url"] or row["url"], []))

    def close_spider(self) -> None:
        self._release(self.tracker.drain())

    def _hold(self, item: TableRows) -> None:
        page = item.reflexive_page or ""
        held = TableRows(item.rows, encoded=item.encoded)
        state = self.tracker.wait(held, page, item.feed_aliases)
        if state == "done":
            return
        feed_url = item.rows["feeds"][0]["url"]
        item.rows, item.encoded = {}, {}  # held: written when the page has answered
        if state == "fetch":
            self._request_page(page, feed_url)

    def _request_page(self, page: str, feed_url: str) -> None:
        spider = self.crawler.spider
        engine = self.crawler.engine
        if not isinstance(spider, FollowsLinks) or engine is None:
            raise TypeError("the reflexive pipeline needs a spider with page(url, ctx), such as CensusSpider")
        ctx = FetchContext(via=Via.REFLEXIVE, source=feed_url, depth=1, kind=Expect.PAGE)
        out = spider.page(page, ctx)
        if isinstance(out, FetchRecord | NotDue):
            # The "page" is a known feed, not due now: recorded as such; a feed advertises nothing.
            if isinstance(out, NotDue):
                self.crawler.stats.inc_value(f"feedcensus/outcome/{out.record.outcome}")
                self.dataset.write_many(not_due_rows(out).rows)
            else:
                self.dataset.record(out)
            self._release(self.tracker.page_seen({page}, []))
            return
        engine.crawl(out)

    def _release(self, held: list[TableRows]) -> None:
        for rows in held:
            self.dataset.write_rows(rows)
