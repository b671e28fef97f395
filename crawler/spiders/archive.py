"""The census over a web archive's records (``feedcensus commoncrawl``): the same parse, other inputs.

Its inputs are rows of an archive's index (:mod:`crawler.archive.ccindex`): each becomes a Range
request for one record of a WARC file (:func:`crawler.requests.archive_record_request`), an
ordinary Scrapy request, so retries, politeness towards the archive host, ``fetch_log`` and the
distributed frontier apply unchanged. ``ArchiveRecordMiddleware`` turns the answer into the
archived response (its URL, status, headers, body and fetch time); from there on it is the census
spider's: feeds go to the item pipelines, pages to autodiscovery (their links recorded, not
followed: the archive is the web here), a failure's row is about the URL the record holds.

A census of listed sites (``feedcensus commoncrawl --sites``) also gives, first, a ``not_archived``
row for each listed site the index holds no page of, and, with ``--live``, fetches the feed links
of the archived pages live (``FEEDCENSUS_FOLLOW_LINKS`` on): the autodiscovery middleware asks
the census spider's ``follow`` for them and names them ``archive-link``; they are ordinary requests
of the crawl (network guard, robots.txt, politeness per host), on a frontier too.
On a distributed frontier, ``feedcensus worker`` processes (the census spider) take these requests too.
"""

from __future__ import annotations

import posixpath
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from crawler.archive.ccindex import IndexRow, read_index
from crawler.archive.sites import ListedSite
from crawler.requests import archive_record_request
from crawler.spiders.census import CensusSpider
from schemas.items import FetchContext, FetchRecord
from schemas.vocab import Expect, Outcome, Via

if TYPE_CHECKING:
    pass

#: Common Crawl's public HTTPS endpoint for its WARC files.
COMMON_CRAWL_BASE = "https://data.commoncrawl.org/"


def warc_file_url(base: str, warc_filename: str) -> str:
    """The URL of a WARC file under ``base`` (``crawl-data/CC-MAIN-.../x.warc.gz`` joined as a path)."""
    return base.rstrip("/") + "/" + posixpath.normpath(warc_filename).lstrip("/")


class ArchiveSpider(CensusSpider):
    name = "census-archive"

    def __init__(
        self,
        records: Iterable[IndexRow] = (),
        archive_base: str = COMMON_CRAWL_BASE,
        index: str | None = None,
        pages: int | str = 0,
        where: str | None = None,
        missing: Iterable[ListedSite] = (),
        sites_source: str | None = None,
        **kwargs: Any,
    ) -> None:
        """``records`` (``feedcensus commoncrawl`` reads and checks them first), or ``index``, ``pages`` and
        ``where`` to read them here: ``scrapy crawl census-archive -a index=rows.parquet`` (a scrapyd job).
        Such a run should set ``FEEDCENSUS_FOLLOW_LINKS=False`` and ``FEEDCENSUS_REFLEXIVE=False`` as the
        command does."""
        super().__init__(**kwargs)
        self.records = list(records)
        if index and not self.records:
            self.records = read_index(index, pages=int(pages), where=where).rows  # IndexRowsError: the crawl fails
        self.archive_base = archive_base
        #: Listed sites the index holds no page of (``--sites``): each gets a ``not_archived`` row.
        self.missing = list(missing)
        self.sites_source = sites_source

    async def start(self) -> AsyncIterator[Any]:
        host = urlsplit(self.archive_base).hostname
        # The archive host is the user's choice: trusted (and shared with a distributed job's workers).
        async for out in self.paced(
            self.started({host} if host else set(), len(self.records) + len(self.missing), self._outputs())
        ):
            yield out

    def _outputs(self) -> Iterator[Any]:
        ctx = FetchContext(via=Via.ARCHIVE, source=self.sites_source, depth=0, kind=Expect.PAGE)
        for site in self.missing:
            url = f"http://{site.domain}/"
            if not self.dataset.is_done(url):
                error = f"no archived page of {site.domain} (rank {site.rank}) in the index"
                yield FetchRecord.for_context(ctx, url, Outcome.NOT_ARCHIVED, error=error)
        yield from self._record_requests()

    def _record_requests(self) -> Iterator[Any]:
        for row in self.records:
            kind = Expect.FEED if row.kind == "feed" else Expect.PAGE
            ctx = FetchContext(via=Via.ARCHIVE, source=row.warc_filename, depth=0, kind=kind)
            yield archive_record_request(
                warc_file_url(self.archive_base, row.warc_filename),
                row.offset,
                row.length,
                row.url,
                ctx,
                callback=self.parse,
                errback=self.on_error,
            )
