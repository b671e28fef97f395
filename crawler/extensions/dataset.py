"""The run's dataset, one way in: the ``Dataset`` extension.

``Dataset`` is a Scrapy extension (built by ``from_crawler``, like Scrapy's
``FeedExporter``) that holds the run's one :class:`DatasetWriter`. Every other
component finds it with ``crawler.get_extension(Dataset)``: the Parquet
pipeline writes the items, the reflexive pipeline the rows it held, the
robots.txt log middleware the robots rows, the Parquet pipeline's
``request_dropped`` handler the duplicates, and the ``WorkerRecord`` extension
(crawler/extensions/workers.py) the process's ``workers`` row. Nothing else
writes Parquet. A distributed job's worker (``crawler.frontier.FrontierWorker``)
writes no rows; it sets :attr:`Dataset.claim` and uses the writer's commit
protocol (its token, markers and published commits).

It owns the resume state too. On a resumed crawl it first discards the files
of an unfinished commit, then reads which URLs the job already committed
(:attr:`Dataset.done`); the duplicate filter, the spider and the robots log
ask it instead of keeping registries of their own.

Commits (Parquet encoding, renames, an S3 upload) run on one background
thread, never on the reactor thread. Rows are taken from the buffers on the
reactor thread, which is cheap, so a feed's rows still share one commit and
commits are written in the order taken. At most ``MAX_QUEUED_COMMITS`` wait
for the thread; past that the pipeline's ``process_item`` waits, so a slow
object store slows the crawl down instead of filling memory. A commit that
fails is tried again (``COMMIT_TRIES`` in all); if it still fails the crawl
stops with the reason ``dataset_error`` and the error in the stats, and what
was committed before stays readable.

A crawl forced to stop (a second Ctrl-C stops the reactor before
``spider_closed`` has run) calls :meth:`Dataset.settle`: the commit in flight
ends, the writer thread stops, and the stats say what was committed; rows not
committed by then are not written (a resumed job fetches them again).

Other extensions hook into the commits through :meth:`Dataset.add_hook`, each
under a role whose place in :data:`HOOK_ROLES` fixes the order the hooks run in.
The resume journal comes first: ``on_take`` runs on the reactor thread when a
batch is taken (the journal flushes its buffer), ``before_commit`` on the
writer thread before the batch's files are written (the journal fsyncs). So
every committed page's discoveries are journaled.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from scrapy import Request, signals
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import defer, threads
from twisted.python.threadpool import ThreadPool

from pipelines.dataset.commits import Batch, DatasetWriter
from pipelines.dataset.jobids import default_job_id, job_id_problem
from pipelines.dataset.store import committed_urls
from pipelines.document.rows import TableRows, fetch_row
from schemas.items import FetchRecord

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: Commits taken but not yet written before producers wait.
MAX_QUEUED_COMMITS = 2
#: Attempts per commit before the crawl stops (waits of 1 s, 2 s between them).
COMMIT_TRIES = 3
#: The finish reason of a crawl stopped because its data could not be written.
DATASET_ERROR = "dataset_error"


class DatasetError(Exception):
    """The dataset cannot be written."""


class ClaimRefused(Exception):
    """A commit's rows cannot be claimed (the frontier failed): they are not written. The URLs they are
    for stay leased to this worker, so the job fetches them again (nothing lost, nothing twice)."""


#: When the dataset runs hooks (:meth:`Dataset.add_hook`): ``on_take`` on the reactor thread as a batch is
#: taken (no argument); ``before_commit`` on the writer thread before its files are written (no argument);
#: ``after_commit`` on the writer thread once it is committed (the batch); ``before_close`` on the reactor
#: thread when the spider closes, before the last commit, so the rows they write get in (no argument).
HOOK_POINTS: Final = ("on_take", "before_commit", "after_commit", "before_close")
HookPoint = Literal["on_take", "before_commit", "after_commit", "before_close"]
#: Who hooks into the dataset, in the order their hooks run at every point, whatever the order Scrapy
#: built the extensions in: the resume journal first (flushed as a batch is taken, fsynced before it is
#: written: every committed page's discoveries are journaled), then the frontier worker (it pushes the
#: requests held back before a take, so their ``duplicate`` rows join it, and ends leases after a
#: commit), then the ``workers`` row (written at close, from the final stats).
HOOK_ROLES: Final = ("journal", "frontier", "workers_row")

#: ``(commit id, batch) -> keys to leave out`` (see :attr:`Dataset.claim`).
Claim = Callable[[str, Batch], set[str]]


class Dataset:
    """The crawl's dataset writer and resume state; commits on a background thread."""

    def __init__(
        self,
        crawler: Crawler,
        writer: DatasetWriter,
        *,
        resume: bool,
    ) -> None:
        self.crawler = crawler
        self.writer = writer
        self.resume = resume
        #: URLs the job committed before this run (requested and final URLs); empty unless resuming.
        self.done: set[str] = committed_urls(writer.out, writer.job_id) if resume else set()
        if self.done:
            logger.info("resume: %d URLs already written in job %s", len(self.done), writer.job_id)
        #: The hooks of each point (:meth:`add_hook`), with their role's rank in :data:`HOOK_ROLES`.
        self._hooks: dict[str, list[tuple[int, Callable[..., None]]]] = {point: [] for point in HOOK_POINTS}
        #: A distributed job's claim of each commit's rows (``crawler.frontier.FrontierWorker``), on the writer
        #: thread before its files are written: the keys (:mod:`pipelines.dataset.claims`) another commit holds,
        #: whose rows are left out. :class:`ClaimRefused`: nothing of the batch is written. None: no claims.
        self.claim: Claim | None = None
        #: Rows left out of commits because another commit of the job holds them; rows not written because
        #: their claim was refused.
        self.rows_dropped = 0
        self.rows_unclaimed = 0
        #: The error that stopped the dataset, one line; None while commits succeed.
        self.error: str | None = None
        #: Rows taken for commits that could not be written.
        self.rows_lost = 0
        #: True once the stats say what was committed (the crawl closed, or :meth:`settle` ran).
        self.closed = False
        #: Rows of the batches taken and not yet committed, by batch number.
        self._uncommitted: dict[int, int] = {}
        self._done_fingerprints: set[bytes] | None = None
        self._pool = ThreadPool(minthreads=1, maxthreads=1, name="feedcensus-dataset")
        self._queued: list[defer.Deferred[None]] = []
        self._tail: defer.Deferred[None] = defer.succeed(None)
        crawler.signals.connect(self._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        resume = bool(settings.get("FEEDCENSUS_RESUME_DIR"))
        job_id = str(settings.get("FEEDCENSUS_JOB_ID") or default_job_id())
        if (problem := job_id_problem(job_id)) is not None:  # also for a crawl not started by the CLI (scrapyd)
            raise DatasetError(f"FEEDCENSUS_JOB_ID {job_id[:120]!r}: {problem}")
        try:
            writer = DatasetWriter(
                settings.get("FEEDCENSUS_OUT"),
                job_id,
                batch_rows=settings.getint("FEEDCENSUS_BATCH_ROWS"),
                flush_seconds=settings.getfloat("FEEDCENSUS_FLUSH_SECONDS"),
                resume=resume,  # discards an unfinished commit first
                auto_commit=False,
            )
            writer.check_writable()
        except OSError as exc:
            raise DatasetError(f"cannot write to {settings.get('FEEDCENSUS_OUT')}: {exc}") from None
        return cls(crawler, writer, resume=resume)

    # --- what the other components use --------------------------------------------

    @property
    def out(self) -> str:
        return self.writer.out

    @property
    def job_id(self) -> str:
        return self.writer.job_id

    @property
    def uncommitted_rows(self) -> int:
        """Rows taken for commits that are not committed yet (queued for the writer thread or being written)."""
        return sum(self._uncommitted.values())

    def is_done(self, url: str) -> bool:
        """Whether an interrupted run of this job already committed ``url``'s row."""
        return url in self.done

    def is_done_request(self, request: Request) -> bool:
        """Whether a request is for a URL already committed (compared as Scrapy's duplicate filter does)."""
        if not self.done:
            return False
        fingerprint = self.crawler.request_fingerprinter.fingerprint
        if self._done_fingerprints is None:
            self._done_fingerprints = set()
            for url in self.done:
                # Rows for what no request can be made of (a local OPML file, a URL without a scheme)
                # match no request: skipped, not an error that would stop the engine.
                with contextlib.suppress(ValueError):
                    self._done_fingerprints.add(fingerprint(Request(url)))
        return fingerprint(request) in self._done_fingerprints

    def add_hook(self, point: HookPoint, role: str, hook: Callable[..., None]) -> None:
        """Run ``hook`` at ``point`` (:data:`HOOK_POINTS`), in the order of ``role`` in :data:`HOOK_ROLES`
        (hooks of one role in the order added). The one way in: nothing else edits the hook lists."""
        if point not in HOOK_POINTS:
            raise ValueError(f"no dataset hook point {point!r}: one of {', '.join(HOOK_POINTS)}")
        if role not in HOOK_ROLES:
            raise ValueError(f"no dataset hook role {role!r}: one of {', '.join(HOOK_ROLES)} (add it there, in order)")
        hooks = self._hooks[point]
        hooks.append((HOOK_ROLES.index(role), hook))
        hooks.sort(key=lambda ranked: ranked[0])  # a stable sort: one role's hooks keep their order

    def hooks(self, point: HookPoint) -> list[Callable[..., None]]:
        """The hooks run at ``point``, in the order they run."""
        return [hook for _, hook in self._hooks[point]]

    def write(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        """Buffer rows of one table (committed with the next batch)."""
        self.writer.write(table, rows)

    def write_many(self, tables: Mapping[str, Iterable[Mapping[str, Any]]]) -> None:
        """Buffer rows of several tables; they land in the same commit."""
        self.writer.write_many(tables)

    def write_rows(self, rows: TableRows) -> None:
        """Buffer the rows of one document (dicts and tables built into Arrow); they land in the same commit."""
        self.writer.write_many(rows.rows, rows.encoded)

    def record(self, rec: FetchRecord) -> None:
        """One fetch_log row, counted in the stats under its outcome."""
        self.crawler.stats.inc_value(f"feedcensus/outcome/{rec.outcome}")
        self.writer.write("fetch_log", [fetch_row(rec)])

    async def commit_if_due(self) -> None:
        """Start a commit when one is due; wait while too many are queued (back-pressure)."""
        if self.writer.due():
            self._start_commit()
        while len(self._queued) > MAX_QUEUED_COMMITS:
            await maybe_deferred_to_future(self._queued[0])

    def commit_now(self) -> None:
        """Start a commit of what is buffered, due or not (a distributed worker with nothing to do)."""
        self._start_commit()

    # --- commits on the writer thread ------------------------------------------------

    def _start_commit(self) -> None:
        for hook in self.hooks("on_take"):
            hook()
        batch = self.writer.take()
        if batch is None:
            return
        if self.error is not None:
            self.rows_lost += batch.row_count()
            return
        d: defer.Deferred[None] = defer.Deferred()
        self._queued.append(d)
        self._uncommitted[batch.seq] = batch.row_count()
        # Chained on the previous commit: one at a time, in the order taken.
        self._tail.addBoth(lambda _: self._run_on_pool(batch, d))
        self._tail = d

    def _run_on_pool(self, batch: Batch, done: defer.Deferred[None]) -> defer.Deferred[None]:
        if self.error is not None:  # an earlier commit failed for good: this one is not attempted
            self.rows_lost += batch.row_count()
            self._uncommitted.pop(batch.seq, None)
            self._queued.remove(done)
            done.callback(None)
            return defer.succeed(None)
        result = threads.deferToThreadPool(_reactor(), self._pool, self._commit_with_retries, batch)
        result.addCallbacks(lambda _: self._committed(done), lambda f: self._failed(f.value, done, batch))
        return result

    def _commit_with_retries(self, batch: Batch) -> None:
        drop: set[str] = set()
        if self.claim is not None:
            try:
                drop = self.claim(self.writer.commit_id(batch), batch)
            except ClaimRefused as exc:
                self.rows_unclaimed += batch.row_count()
                self._uncommitted.pop(batch.seq, None)
                logger.warning("dataset: commit %d not written (%s): its URLs are fetched again", batch.seq, exc)
                return
        for attempt in range(1, COMMIT_TRIES + 1):
            try:
                for hook in self.hooks("before_commit"):
                    hook()
                written = sum(self.writer.rows_written.values())
                self.writer.commit(batch, drop)
                if drop:
                    self.rows_dropped += batch.row_count() - (sum(self.writer.rows_written.values()) - written)
                self._uncommitted.pop(batch.seq, None)  # on this thread: true even if the reactor stops now
                break
            except OSError as exc:
                if attempt == COMMIT_TRIES:
                    raise
                logger.warning("dataset: commit %d failed (%s), trying again", batch.seq, exc)
                time.sleep(2 ** (attempt - 1))
        for done_hook in self.hooks("after_commit"):
            done_hook(batch)

    def _committed(self, done: defer.Deferred[None]) -> None:
        self._queued.remove(done)
        done.callback(None)

    def _failed(self, exc: BaseException, done: defer.Deferred[None] | None, batch: Batch | None) -> None:
        if done is not None:
            self._queued.remove(done)
        if batch is not None:
            self.rows_lost += batch.row_count()
            self._uncommitted.pop(batch.seq, None)
        if self.error is None:
            self.error = f"cannot write to {self.out}: {type(exc).__name__}: {exc}".replace("\n", " ")
            logger.error("dataset: %s; stopping the crawl", self.error)
            stats = self.crawler.stats
            assert stats is not None
            stats.set_value("feedcensus/dataset_error", self.error)
            engine = self.crawler.engine
            if engine is not None and engine.running:
                deferred_from_coro(engine.close_spider_async(reason=DATASET_ERROR))
        if done is not None:
            done.callback(None)

    # --- lifecycle ------------------------------------------------------------------------

    def _spider_opened(self) -> None:
        self._pool.start()
        logger.info("Writing datasets to %s (job_id=%s)", self.out, self.job_id)

    async def _spider_closed(self) -> None:
        """After every pipeline has closed (so rows they release at close are in): the last commit."""
        if not self._pool.started:  # the crawl failed to open: spider_opened never came
            self._pool.start()
        for hook in self.hooks("before_close"):
            hook()
        self._start_commit()
        await maybe_deferred_to_future(self._tail)
        if self.error is None:
            try:
                await maybe_deferred_to_future(threads.deferToThreadPool(_reactor(), self._pool, self.writer.finish))
            except OSError as exc:
                self._failed(exc, None, None)
        self._pool.stop()
        self._record_written()

    def settle(self) -> None:
        """After a forced stop (the reactor stopped before ``spider_closed`` ended): what was committed, in the stats.

        The commit in flight ends (its files are whole or, cut short, discarded by a resume),
        the writer thread stops, and ``feedcensus/rows_not_written`` counts the rows taken or
        buffered that no commit holds. Nothing more is committed: the crawl was told to stop now.
        Does nothing when the crawl closed normally.
        """
        if self.closed:
            return
        if self._pool.started:
            self._pool.stop()  # joins the writer thread once its current commit is done
        if self.error is None:
            try:
                self.writer.finish()  # no more commits follow: the .running markers go
            except OSError as exc:
                logger.warning("dataset: cannot remove the .running markers: %s", exc)
        stats = self.crawler.stats
        assert stats is not None
        stats.set_value("feedcensus/rows_not_written", self.writer.pending + sum(self._uncommitted.values()))
        self._record_written()

    def _record_written(self) -> None:
        """Files and rows committed, in the stats (what the summary reports)."""
        stats = self.crawler.stats
        assert stats is not None
        stats.set_value("feedcensus/files_written", self.writer.files_written)
        for table, n in self.writer.rows_written.items():
            stats.set_value(f"feedcensus/rows/{table}", n)
        if self.error is not None:
            stats.set_value("feedcensus/rows_lost", self.rows_lost + self.writer.pending)
        if self.rows_dropped:
            stats.set_value("feedcensus/rows_dropped_claimed", self.rows_dropped)
        if self.rows_unclaimed:
            stats.set_value("feedcensus/rows_unclaimed", self.rows_unclaimed)
        self.closed = True


def _reactor() -> Any:
    from twisted.internet import reactor

    return reactor


def dataset_of(crawler: Crawler) -> Dataset:
    """The crawl's :class:`Dataset` extension (it must be enabled in ``EXTENSIONS``)."""
    dataset = crawler.get_extension(Dataset)
    if dataset is None:
        raise RuntimeError("the crawler.extensions.dataset.Dataset extension is not enabled")
    return dataset
