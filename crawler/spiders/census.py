"""The census spider: inputs in, feed documents and fetch records out.

Inputs are seed sites (pages to run autodiscovery on), OPML lists (local
files or URLs) and plain URLs (a feed, a page or a list: the content
decides). Every response is sniffed: feeds go to the item pipelines as
``FeedDocument``; OPML is expanded into more requests; HTML is left to the
``AutodiscoveryMiddleware``, which runs after this spider. Every input and
every request ends in exactly one ``FetchRecord`` (or, for a feed, a
``fetch_log`` row written by the feed pipeline).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from functools import cached_property
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider, signals

from crawler.extensions.archive import ArchiveLocations, archive_locations, warc_columns
from crawler.extensions.dataset import Dataset, dataset_of
from crawler.extensions.history import history_of
from crawler.extensions.resume import CrawlJournal
from crawler.fetch.inputs import Inputs, one_line, read_inputs, seed_warnings
from crawler.fetch.opml import OpmlDocument, parse_opml
from crawler.fetch.urls import check_url, not_a_url
from crawler.outcomes import classify_failure
from crawler.requests import context_of, first_url, make_request, response_headers
from pipelines.document.sniff import Sniffed, sniff
from schemas.items import WAITED_META_KEY, FeedDocument, FetchContext, FetchRecord, NotDue, logged_headers
from schemas.vocab import Expect, Outcome, Via

if TYPE_CHECKING:
    from scrapy.core.engine import ExecutionEngine
    from scrapy.http import Response
    from scrapy.settings import BaseSettings
    from twisted.python.failure import Failure

    from crawler.frontier import FrontierWorker

logger = logging.getLogger(__name__)

#: A distributed crawl's scheduler and worker extension (crawler/frontier/), added to the settings
#: only when FEEDCENSUS_FRONTIER is set: that package imports redis and scrapy_redis (0.1 s).
FRONTIER_SCHEDULER = "crawler.frontier.FrontierScheduler"
FRONTIER_EXTENSION = "crawler.frontier.FrontierWorker"

#: Feeds reached without a page, whose channel page the reflexive pipeline looks at.
REFLEXIVE_VIA = frozenset({Via.URL, Via.OPML})
#: Refusals whose Retry-After is recorded and scheduled (RFC 9110 section 10.2.3; RFC 6585 section 4).
RETRY_AFTER_STATUSES = frozenset({429, 503})


def as_list(value: str | Iterable[str] | None) -> list[str]:
    """Spider arguments arrive as one string from ``-a`` or as lists from the CLI."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in (p.strip() for p in value.split("\n")) if v]
    return [v for v in value if v]


def header_text(response: Response, name: bytes) -> str | None:
    """A response header as text (latin-1, as HTTP is), None when absent or empty."""
    value = response.headers.get(name)
    return value.decode("latin-1") if value else None


class CensusSpider(Spider):
    name = "census"

    def __init__(
        self,
        seeds: str | Iterable[str] | None = None,
        opml: str | Iterable[str] | None = None,
        url: str | Iterable[str] | None = None,
        seed_lists: Iterable[tuple[str, list[str]]] = (),
        inputs: Inputs | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.seed_files = as_list(seeds)
        self.opml_inputs = as_list(opml)
        self.urls = as_list(url)
        #: Seeds already read, named by their file (a replay's, when the crawl's file is gone).
        self.seed_lists = list(seed_lists)
        #: Those inputs already read (``feedcensus crawl`` reads them to refuse a crawl with none
        #: usable): not read twice, which for 10,000 seeds took about 0.4 s of the crawl's CPU.
        #: ``start()`` takes what they hold (:meth:`Inputs.take`) and lets go of them once done.
        self.inputs = inputs
        #: Hosts named in the inputs: allowed even when private (see NetworkSafetyMiddleware).
        self.input_hosts: set[str] = set()

    @classmethod
    def update_settings(cls, settings: BaseSettings) -> None:
        """A crawl with FEEDCENSUS_FRONTIER, however it was started (``--frontier``, ``-s``, ``scrapy
        crawl``), takes its requests from the shared frontier; a SCHEDULER given on the command line stays."""
        super().update_settings(settings)
        if settings.get("FEEDCENSUS_FRONTIER"):
            settings.set("SCHEDULER", FRONTIER_SCHEDULER, priority="spider")
            # The whole setting at the spider's priority, not only the new key: CrawlerProcess copies its
            # own (project) settings onto a crawler made before, which replaces a setting of lower priority.
            settings.set("EXTENSIONS", {**settings.getdict("EXTENSIONS"), FRONTIER_EXTENSION: 120}, priority="spider")

    @property
    def dataset(self) -> Dataset:
        return dataset_of(self.crawler)

    # --- start ---------------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        given, self.inputs = self.inputs, None
        # Taken out of the given object, which the command and Scrapy's arguments still hold to the end.
        if given is not None:
            inputs = given.take()
        else:
            inputs = read_inputs(self.seed_files, self.opml_inputs, self.urls, self.seed_lists)
        async for out in self.paced(self.started(inputs.hosts, inputs.count, self._start_outputs(inputs))):
            yield out

    async def paced(self, outputs: Iterable[Any]) -> AsyncIterator[Any]:
        """The outputs of ``start()``, each given once the engine has room for it.

        While the engine backs out (every download slot busy, or the responses in processing at
        their size cap: a crawl going as fast as it can), Scrapy reads ``start()`` without pause,
        so every input became a Request held in the in-memory scheduler, about 4 KB each (a
        10,000-site crawl with a document worker held 8,650 of them; a million-site list would
        hold gigabytes), and the feeds the first pages advertised waited behind all the other
        inputs. So, as Scrapy's documentation advises for lazy start requests, an output waits
        until the scheduler has run empty. A distributed job's inputs all go to its shared
        frontier first, unpaced: their memory is Redis's, and the other workers are waiting.
        """
        try:
            engine: ExecutionEngine | None = self.crawler.engine
        except RuntimeError:  # no engine: start() read outside a crawl (a test listing what it gives)
            engine = None
        worker = self._frontier_worker()
        if worker is not None and worker.frontier is not None:
            engine = None  # distributed: not paced
        for out in outputs:
            if engine is not None and engine.needs_backout():
                await self.crawler.signals.wait_for(signals.scheduler_empty)
            yield out

    def _frontier_worker(self) -> FrontierWorker | None:
        """The shared frontier's extension, on a distributed crawl; None on any other.

        crawler.frontier (which imports redis) is imported only for a distributed crawl.
        """
        if not self.crawler.settings.get("FEEDCENSUS_FRONTIER"):
            return None
        from crawler.frontier import FrontierWorker

        return self.crawler.get_extension(FrontierWorker)

    def started(self, hosts: set[str], count: int, outputs: Iterable[Any]) -> Iterator[Any]:
        """The start of any census: trust the ``hosts`` the ``count`` inputs name, then give ``outputs``.

        On a distributed job's frontier the hosts are shared with every worker, and the inputs all
        go into the shared queue before this process takes one (``seeding_started`` .. ``seeded``).
        """
        frontier = self._frontier_worker()
        # A distributed job's workers trust the hosts its inputs name, whichever process read them.
        if frontier is not None:
            self.input_hosts = frontier.input_hosts(hosts, share=bool(count))
        else:
            self.input_hosts = hosts
        self.crawler.stats.set_value("feedcensus/inputs", count)
        if frontier is None or not count:
            yield from outputs
            return
        frontier.seeding_started()  # every input goes into the shared queue before this process takes one
        try:
            yield from outputs
        finally:
            frontier.seeded()  # a distributed job ends only once every input is in its frontier (or seeding failed)

    def _start_outputs(self, inputs: Any) -> Iterator[Any]:
        dataset = self.dataset
        for line in seed_warnings(inputs.problems):
            logger.warning("%s", line)
        for rec in inputs.problems:
            if not dataset.is_done(rec.url):
                yield rec
        root = FetchContext(via=Via.OPML, source=None, depth=0, kind=Expect.OPML)
        for local in inputs.local_opml:
            if not dataset.is_done(local.path):
                yield self._opml_record(local.path, None, local.document, root, local.path, bytes_=None)
            yield from self._expand_opml(local.document, local.path, root)
        for u, ctx in inputs.requests:
            if (out := self.request(u, ctx)) is not None:
                yield out
        journal = self.crawler.get_extension(CrawlJournal)
        # Everything the interrupted run scheduled; the duplicate filter drops what it wrote.
        for entry in journal.previous if journal is not None else ():
            yield self.follow(entry.url, entry.context)

    # --- requests ------------------------------------------------------------------

    def request(self, url: str, ctx: FetchContext, *, priority_bias: int = 0) -> Request | FetchRecord | NotDue | None:
        """A request carrying its context; the FetchRecord saying why there is none; None if already written."""
        problem = check_url(url, self.settings.getint("FEEDCENSUS_MAX_URL_LENGTH"))
        if problem is None:
            return self.follow(url, ctx, priority_bias=priority_bias)
        if self.dataset.is_done(url):
            return None
        return FetchRecord.for_context(ctx, url, problem.outcome, error=problem.reason)

    def follow(
        self, url: str, ctx: FetchContext, *, priority_bias: int = 0, conditional: bool = True
    ) -> Request | FetchRecord | NotDue:
        """A request for a URL found in content (the network-safety middleware judges it, not this).

        A feed the earlier jobs know is requested conditionally (unless ``conditional`` is False:
        its body is needed), or not at all when it is not due: then its ``NotDue`` (or, named
        again, a duplicate record) stands in for the request.
        """
        history = history_of(self.crawler)
        # What an interrupted run of this job already wrote is left to the resume duplicate filter.
        ahead = history.before_request(url, ctx) if history is not None and not self.dataset.is_done(url) else {}
        if not isinstance(ahead, dict):  # not due: what to record instead of the request
            return ahead
        validators = ahead if conditional else None
        try:
            return make_request(
                url, ctx, callback=self.parse, errback=self.on_error, priority_bias=priority_bias, validators=validators
            )
        except ValueError as exc:  # Scrapy refuses the URL (a port its parser rejects...): its row says so
            refused = not_a_url(exc)
            return FetchRecord.for_context(ctx, url, refused.outcome, error=refused.reason)

    def page(self, url: str, ctx: FetchContext) -> Request | FetchRecord | NotDue:
        """A page whose HTML a pipeline needs (a feed's channel page): fetched in full, or not due."""
        return self.follow(url, ctx, conditional=False)

    # --- responses -----------------------------------------------------------------

    def parse(self, response: Response, **_: Any) -> Iterator[Any]:
        ctx = context_of(response)
        if response.status == 304:  # the answer to a conditional GET: the feed pipeline carries the feed forward
            yield self._feed_document(response, ctx)
            return
        ctype = header_text(response, b"Content-Type")
        # The same sniffer as feedcensus lint: what it calls a feed is a document the feed parser reads as one.
        kind = sniff(response.body, ctype)
        if kind == Sniffed.FEED:
            yield self._feed_document(response, ctx)
            return
        record = FetchRecord.for_context(
            ctx,
            first_url(response),
            Outcome.PAGE,
            final_url=response.url,
            status=response.status,
            content_type=ctype,
            bytes=len(response.body),
            **self._warc(response),
            **logged_headers(response_headers(response)),
        )
        if kind == Sniffed.OPML:
            yield from self._opml_response(response, ctx, record)
            return
        if kind == Sniffed.HTML:
            record.html = True  # the autodiscovery middleware runs on the pages so marked
            if ctx.kind == Expect.FEED:
                # A feed link or xmlUrl that leads to a page: the link is broken, but the page may advertise feeds.
                record.outcome = Outcome.NOT_FEED
                record.error = one_line(f"expected a feed, got an HTML page ({ctype or 'no Content-Type'})")
        else:
            record.outcome = Outcome.NOT_FEED
            head = response.body[:40].decode("latin-1", "replace")
            record.error = one_line(f"not a feed, page or OPML list ({ctype or 'no Content-Type'}; starts {head!r})")
        yield record

    def _feed_document(self, response: Response, ctx: FetchContext) -> FeedDocument:
        return FeedDocument(
            url=first_url(response),
            final_url=response.url,
            status=response.status,
            headers=response_headers(response),
            body=response.body,
            discovered_via=ctx.via,
            source=ctx.source,
            depth=ctx.depth,
            check_reflexive=ctx.via in REFLEXIVE_VIA and self.settings.getbool("FEEDCENSUS_REFLEXIVE"),
            **self._warc(response),
        )

    @cached_property
    def _archive(self) -> ArchiveLocations | None:
        return archive_locations(self.crawler)

    def _warc(self, response: Response) -> dict[str, Any]:
        """Where the response is archived (``crawl --warc``, a replay): the rows' WARC columns."""
        return warc_columns(self._archive, response)

    def _opml_response(self, response: Response, ctx: FetchContext, record: FetchRecord) -> Iterator[Any]:
        doc = parse_opml(response.body, response.url)
        yield self._opml_record(
            record.url,
            response.url,
            doc,
            ctx,
            ctx.source,
            bytes_=record.bytes,
            status=response.status,
            ctype=record.content_type,
            **self._warc(response),
            **logged_headers(response_headers(response)),
        )
        if doc.ok:
            yield from self._expand_opml(doc, response.url, ctx)

    def on_error(self, failure: Failure) -> Iterator[FetchRecord]:
        request = failure.request  # type: ignore[attr-defined]
        outcome, status, error = classify_failure(failure)
        response = getattr(failure.value, "response", None)
        record = FetchRecord.for_context(
            context_of(request),
            first_url(request),
            outcome,
            final_url=request.url,
            status=status,
            error=error,
            content_type=header_text(response, b"Content-Type") if response is not None else None,
            bytes=len(response.body) if response is not None else None,
            **(self._warc(response) if response is not None else {}),
            **logged_headers(response_headers(response) if response is not None else {}),
        )
        record.waited_for = request.meta.get(WAITED_META_KEY)
        archived = request.cb_kwargs.get("archived")
        if archived:  # a web archive's record (feedcensus commoncrawl): the row is about the URL it holds
            record.url, record.final_url = archived["url"], None
            where = f"{request.url} bytes {archived['offset']}+{archived['length']}"
            record.error = f"{record.error or 'failed'} (archive record {where})"
            if response is not None and response.url == request.url:
                record.status = None  # the archive host's answer, not the archived site's (error says it)
        if response is not None and status in RETRY_AFTER_STATUSES and record.status is not None:
            record.retry_after = header_text(response, b"Retry-After")
            self._schedule_after_refusal(record)
        yield record

    def _schedule_after_refusal(self, record: FetchRecord) -> None:
        """A 429/503 for a feed: when it is next due, Retry-After considered (a known feed's hints too)."""
        history = history_of(self.crawler)
        if history is None or not history.enabled or record.retry_after is None:
            return
        due = history.due(history.previous(record.url), retry_after=record.retry_after, now=record.fetched_at)
        record.next_due, record.due_hint, record.due_reason = due.at, due.hint, due.reason

    # --- OPML ----------------------------------------------------------------------

    def _opml_record(
        self,
        url: str,
        final_url: str | None,
        doc: OpmlDocument,
        ctx: FetchContext,
        source: str | None,
        *,
        bytes_: int | None,
        status: int | None = None,
        ctype: str | None = None,
        **response_fields: Any,
    ) -> FetchRecord:
        """The list's own row (``response_fields``: where its response is archived, see ``_warc``, and its logged headers)."""
        outcome, error = Outcome.OPML, None
        if not doc.ok:
            outcome, error = Outcome.NOT_FEED, one_line(doc.error)
        elif doc.recovered or doc.warnings:
            error = one_line(f"recovered: {'; '.join(doc.warnings[:3])}" if doc.warnings else "recovered")
            logger.warning("OPML %s is not well-formed, recovered %d outlines: %s", url, len(doc.outlines), error)
        return FetchRecord(
            url=url,
            outcome=outcome,
            final_url=final_url,
            status=status,
            error=error,
            source=source,
            discovered_via=ctx.via,
            depth=ctx.depth,
            content_type=ctype,
            bytes=bytes_,
            **response_fields,
        )

    def _expand_opml(
        self, doc: OpmlDocument, source: str, ctx: FetchContext
    ) -> Iterator[Request | FetchRecord | NotDue]:
        """Requests for a list's feeds, pages and includes (``ctx``: the list's own context)."""
        pages = self.settings.getbool("FEEDCENSUS_OPML_PAGES")
        out: list[Request | FetchRecord | NotDue | None] = []
        for outline in doc.outlines:
            if outline.xml_url:
                out.append(self.request(outline.xml_url, ctx.child(Via.OPML, source, Expect.FEED)))
            if outline.html_url and (pages or not outline.xml_url):
                out.append(self.request(outline.html_url, ctx.child(Via.OPML_PAGE, source, Expect.PAGE)))
        max_includes = self.settings.getint("FEEDCENSUS_OPML_MAX_INCLUDE_DEPTH")
        for inc in doc.includes:
            include = ctx.child(Via.INCLUDE, source, Expect.OPML, include_depth=ctx.include_depth + 1)
            if ctx.include_depth >= max_includes:
                error = f"OPML include deeper than {max_includes}"
                out.append(FetchRecord.for_context(include, inc, Outcome.REFUSED, error=error))
            else:
                out.append(self.request(inc, include))
        yield from (o for o in out if o is not None)
