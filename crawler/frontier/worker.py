"""This process as a worker of the job (:class:`FrontierWorker`, a Scrapy extension): its heartbeat, the
release of the URLs it committed (when each may be released: :mod:`crawler.frontier.releases`), the claims
of its commits' rows, and the end of the job.

- **The end of the job.** scrapy-redis never closes a spider that has nothing to do.
  Here a worker is busy from the moment it joins (so a coordinator still queueing its
  inputs keeps the job open) or takes a request, until it has nothing to do; then it
  asks whether the whole job is quiet: seeded (the coordinator queued every input),
  nothing queued, every live worker idle, and every lease held by a live worker (all
  idle, so those leases only wait for their rows to be committed, which each worker
  does when it closes). Then it closes: it commits, releases, unregisters and, when
  :meth:`Frontier.is_done` (nothing leased either), marks the job done. A worker that
  stops for another reason (Ctrl-C, a shutdown) puts what it holds back in the queue.
- **Exactly once.** A commit claims the keys of its rows (:mod:`pipelines.dataset.claims`) in one script
  before it writes its files (:meth:`FrontierWorker.claim_rows`); the rows of a key another commit claimed
  first are left out when that commit is published, and a dead worker's unpublished claim is taken over. A
  URL whose lease is released after its commit is *settled*: taken from the queue again, it is dropped. A
  commit's URLs are released once the rows their reading made are committed (a later commit done, or
  nothing waiting). After Redis restarted (a new ``run_id``: it may have lost its last writes) the first
  worker to join claims again every committed row's key. docs/distributed.md, "Exactly once".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import task

from crawler.extensions.dataset import ClaimRefused, Dataset
from crawler.extensions.history import history_of
from crawler.frontier.releases import ReleaseBook
from crawler.frontier.state import (
    BUSY,
    CLOSED,
    DEFAULT_HEARTBEAT,
    DEFAULT_KEY_TTL,
    DEFAULT_LEASE,
    FRONTIER_ERROR,
    IDLE,
    SETTLE_TIMEOUT,
    STAT_COMMANDS,
    STAT_DROPPED,
    STAT_ERROR,
    STAT_JOB_GONE,
    STAT_ORPHANED,
    STAT_QUEUED,
    STAT_RELEASED,
    STAT_REQUEUED,
    Claimed,
    FrontierError,
    JobGone,
)
from crawler.frontier.store import Frontier
from crawler.frontier.urls import _one_line, shareable_url
from crawler.requests import lease_key
from pipelines.dataset import faults
from pipelines.dataset.claims import commit_keys
from pipelines.dataset.store import committed_claims

if TYPE_CHECKING:
    from typing import Self

    from scrapy.crawler import Crawler

    from crawler.frontier.scheduler import FrontierScheduler
    from pipelines.dataset.commits import Batch

#: The package's one logger (``crawler.frontier``), as before the module became a package.
logger = logging.getLogger("crawler.frontier")


class FrontierWorker:
    """This process as a worker of the job (a Scrapy extension; does nothing without ``FEEDCENSUS_FRONTIER``).

    At ``spider_opened`` it registers (busy until it first finds nothing to do, so a job does
    not end while its coordinator is still queueing inputs) and starts a heartbeat that also
    puts dead workers' requests back. After each dataset commit it notes the URLs of the
    committed ``fetch_log`` rows; it releases them at the heartbeat after next (by then the
    requests their responses made are queued) or when the spider is idle. At ``spider_idle``
    it lets the spider close only when the job is quiet; at ``spider_closed``, after the
    dataset's last commit, it releases, hands back what it still holds, unregisters and marks
    the job done when it is.
    """

    def __init__(self, crawler: Crawler, frontier: Frontier | None, *, heartbeat: float = DEFAULT_HEARTBEAT) -> None:
        self.crawler = crawler
        self.frontier = frontier
        self.interval = heartbeat
        self.state: str = BUSY
        self.requests = 0
        #: The error that stopped the frontier, one line; None while it works.
        self.failed: str | None = None
        self.dataset: Dataset | None = None
        #: The committed URLs whose leases wait to end (:class:`ReleaseBook`).
        self.releases = ReleaseBook()
        self._loop: task.LoopingCall | None = None
        self._warned_dead = False
        #: True once the spider closed: the heartbeat loop only heartbeats until the worker leaves.
        self.closing = False
        #: When this idle worker first saw the job quiet with leases of other workers still held (see idle()).
        self._others_hold_since: float | None = None
        #: True while this process queues its inputs: it takes no request until they are all in.
        self.seeding = False
        #: The crawl's scheduler (set when it opens). Before this worker releases leases, says it is idle or
        #: marks the job seeded, the scheduler pushes the requests it holds back for a batch; and a committed
        #: row naming a URL it has taken and not yet given to Scrapy (another page's duplicate of it) does
        #: not end that lease.
        self.scheduler: FrontierScheduler | None = None
        if frontier is not None:
            crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
            crawler.signals.connect(self.spider_idle, signal=signals.spider_idle)
            crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        url = str(settings.get("FEEDCENSUS_FRONTIER") or "")
        if not url:
            return cls(crawler, None)
        lease = settings.getfloat("FEEDCENSUS_FRONTIER_LEASE", DEFAULT_LEASE)
        heartbeat = settings.getfloat("FEEDCENSUS_FRONTIER_HEARTBEAT", DEFAULT_HEARTBEAT)
        if not 0 < heartbeat < lease:
            raise FrontierError(
                f"FEEDCENSUS_FRONTIER_HEARTBEAT ({heartbeat:g}) must be above 0 and below FEEDCENSUS_FRONTIER_LEASE ({lease:g})"
            )
        frontier = Frontier.connect(
            url,
            str(settings.get("FEEDCENSUS_JOB_ID") or ""),
            str(settings.get("FEEDCENSUS_WORKER_ID") or "") or None,
            lease=lease,
            key_ttl=settings.getint("FEEDCENSUS_FRONTIER_KEY_TTL", DEFAULT_KEY_TTL),
        )
        return cls(crawler, frontier, heartbeat=heartbeat)

    # --- what the spider and the scheduler call --------------------------------------------

    def input_hosts(self, mine: set[str], *, share: bool) -> set[str]:
        """The hosts the job's inputs name: this process's (shared with the others when it has inputs,
        even none: workers wait for that) and the others'."""
        if self.frontier is None or self.failed is not None:
            return mine
        try:
            if share:
                self.frontier.share_hosts(mine)
            return mine | set(self.frontier.shared_hosts())
        except FrontierError as exc:
            self.fail(exc)
            return mine

    def seeding_started(self) -> None:
        """This process has inputs to queue (the spider calls this before ``start()`` yields the first).

        Until :meth:`seeded`, its scheduler takes no request: Scrapy asks ``start()`` for the next
        input only once its downloader has room, so a coordinator that also fetched would pop
        every input again as soon as it pushed it, and the job's other workers would starve.
        """
        if self.frontier is not None:
            self.seeding = True

    def seeded(self) -> None:
        """The coordinator has queued every input (the spider calls this at the end of ``start()``)."""
        self.seeding = False
        if self.scheduler is not None:  # on failure the crawl stops with frontier_error (and the job is not seeded)
            self.scheduler.push_pending()
        if self.frontier is None or self.failed is not None:
            return
        try:
            self.frontier.mark_seeded()
        except FrontierError as exc:
            self.fail(exc)

    def alias(self, url: str, urls: Iterable[str]) -> None:
        """When the row of ``url`` is committed, release ``urls`` too (a redirect chain dropped as a duplicate)."""
        self.releases.alias(url, urls)

    def claim_not_due(self, url: str, parent: str | None = None) -> bool:
        """Whether this worker records ``url`` as not due: the first of the job's workers to ask does
        (or a reading of ``parent``, the page that named it, after an earlier one was lost)."""
        if self.frontier is None or self.failed is not None:
            return True
        try:
            return self.frontier.claim_not_due(url, parent)
        except FrontierError as exc:
            self.fail(exc)
            return True

    def took_request(self) -> None:
        """The scheduler leased a request to this worker (the pop marked it busy)."""
        self.state = BUSY
        self.requests += 1

    def fail(self, exc: Exception, *, stop: bool = True) -> None:
        """The frontier failed: one stats line, one log line, and the crawl stops with ``frontier_error``."""
        message = _one_line(str(exc))
        if self.failed is not None:
            logger.debug("frontier: %s", message)
            return
        self.failed = message
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value(STAT_ERROR, message)
            if isinstance(exc, JobGone):
                stats.set_value(STAT_JOB_GONE, 1)
        logger.error("%s; stopping the crawl", message)
        try:
            engine = self.crawler.engine
        except RuntimeError:  # no engine yet: the crawl has not started
            return
        if stop and engine is not None and engine.running and engine.spider is not None:
            deferred_from_coro(engine.close_spider_async(reason=FRONTIER_ERROR))

    # --- signals -----------------------------------------------------------------------------------

    def spider_opened(self) -> None:
        assert self.frontier is not None
        self.dataset = self.crawler.get_extension(Dataset)
        if self.dataset is not None:
            self.dataset.add_hook("after_commit", "frontier", self.committed)
            self.dataset.add_hook("on_take", "frontier", self.before_take)
            self.dataset.claim = self.claim_rows
            self.frontier.writer_token = self.dataset.writer.token
            self.dataset.writer.marker_info = {
                "frontier": shareable_url(self.frontier.url),
                "worker": self.frontier.worker,
            }
        history = history_of(self.crawler)
        if history is not None:
            history.claim_not_due = self.claim_not_due  # one not_due row per feed in the whole job
        try:
            self.frontier.register(BUSY)
            self._reconcile()
        except FrontierError as exc:
            self.fail(exc)
            return
        logger.info(
            "frontier %s: worker %s joined job %s", self.frontier.display_url, self.frontier.worker, self.frontier.job
        )
        self._loop = task.LoopingCall(self.tick)
        self._loop.clock = _reactor()
        self._loop.start(self.interval, now=False)

    def committed(self, batch: Batch) -> None:
        """After a dataset commit (writer thread): its ``fetch_log`` rows' URLs are done
        (:meth:`ReleaseBook.committed`)."""
        self.releases.committed(batch)

    def before_take(self) -> None:
        """Before the dataset takes a batch (reactor thread): push the requests held back, so that the
        ``duplicate`` rows of those among them already requested land in the batch with their page's rows."""
        if self.scheduler is not None and self.failed is None:
            busy = self._responses_in_scraper()  # before the push: whatever is done now is pushed with it
            self.scheduler.push_pending()
            if self.dataset is not None:
                self.releases.taking(self.dataset.writer.next_seq, busy)

    def claim_rows(self, commit: str, batch: Batch) -> set[str]:
        """Claim the keys of a commit's rows (writer thread): the keys whose rows another commit holds.

        A key claimed by another worker's commit is that commit's when the commit is published (its
        marker is in the dataset); when it is not, and that worker is dead, the claim is taken over;
        while that worker lives (it is between its claim and its publishing), this waits for one or
        the other, at most twice the lease. :class:`ClaimRefused` when the frontier failed: the rows
        are not written, and the URLs they are for, still leased to this worker, are fetched again.
        """
        frontier, dataset = self.frontier, self.dataset
        assert frontier is not None and dataset is not None
        if self.failed is not None:
            raise ClaimRefused(self.failed)
        try:
            others = frontier.claim(commit, commit_keys(batch.tables.get("fetch_log") or ()))
            faults.reached("claimed")
            drop: set[str] = set()
            by_commit: dict[str, list[Claimed]] = {}
            for other in others:
                by_commit.setdefault(other.claim, []).append(other)
            for claims in by_commit.values():
                if self._published(claims[0]):
                    drop.update(c.key for c in claims)
                else:
                    # Its files, if that worker renamed some before it died, are no commit's: they go first.
                    dataset.writer.discard_commit(claims[0].commit)
                    taken = frontier.take_over(commit, claims)
                    logger.info("frontier: %d rows' claims of a dead worker's unpublished commit taken over", taken)
                    if taken < len(claims):  # changed meanwhile: ask again
                        drop.update(c.key for c in frontier.claim(commit, [c.key for c in claims]))
        except FrontierError as exc:
            raise ClaimRefused(_one_line(str(exc))) from None
        if drop:
            self._inc(STAT_DROPPED, len(drop))
            logger.info(
                "frontier: %d URLs of commit %s were committed by another worker: their rows left out",
                len(drop),
                commit,
            )
        return drop

    def _published(self, claim: Claimed) -> bool:
        """Whether the commit that made ``claim`` is published; waits while its worker lives and it is not."""
        assert self.frontier is not None and self.dataset is not None
        writer = self.dataset.writer
        deadline = time.monotonic() + 2 * self.frontier.lease_seconds
        live = claim.live and claim.worker != self.frontier.worker  # its own commits are done or failed
        while True:
            if writer.commit_published(claim.commit):
                return True
            if not live or time.monotonic() > deadline:
                return False
            time.sleep(0.05)
            live = self.frontier.worker_live(claim.worker)

    def _reconcile(self) -> None:
        """After Redis restarted (it may have lost its last second of writes, commits' claims among them):
        claim the keys of every row the dataset holds for the job, unless claimed."""
        frontier, dataset = self.frontier, self.dataset
        assert frontier is not None
        if dataset is None or not frontier.server_restarted():
            return
        started = time.monotonic()
        claims = committed_claims(dataset.out, dataset.job_id)
        added = frontier.reclaim(claims)
        frontier.mark_reconciled()
        logger.warning(
            "frontier: Redis restarted since job %s began: %d committed rows' keys checked, %d claims restored (%.1f s)",
            frontier.job, len(claims), added, time.monotonic() - started,
        )  # fmt: skip

    def clean_up_dead(self) -> None:
        """Remove what dead workers left in the dataset (``.running`` markers, temporary part files)."""
        frontier, dataset = self.frontier, self.dataset
        if frontier is None or dataset is None:
            return
        for token in frontier.dead_writers():
            if token == dataset.writer.token:
                continue  # this worker was taken for dead and came back: its markers are its own
            try:
                removed = dataset.writer.remove_leftovers(token)
            except OSError as exc:
                logger.warning("frontier: cannot remove what dead writer %s left: %s", token, exc)
                continue
            frontier.forget_dead_writer(token)
            if removed:
                logger.info("frontier: removed %d markers and temporary files dead writer %s left", removed, token)

    def tick(self) -> None:
        """Every ``FEEDCENSUS_FRONTIER_HEARTBEAT`` seconds: release, heartbeat, requeue dead workers' leases."""
        if self.frontier is None or self.failed is not None:
            return
        try:
            if self.closing:  # the spider closed: this worker only says it is alive until it leaves
                self._heartbeat(self.state)
                return
            self._release(staged=True)
            self._heartbeat(self.state)
            self._requeue_dead()
            self.clean_up_dead()
            self._set(STAT_QUEUED, self.frontier.queued())
        except FrontierError as exc:
            self.fail(exc)

    def spider_idle(self) -> None:
        """Nothing to do here: close if the job is quiet, else keep waiting (``DontCloseSpider``).

        After a frontier error the spider closes with ``frontier_error`` (also when the error came
        before the engine ran, when :meth:`fail` could not close it).
        """
        if self.frontier is None:
            return
        if self.failed is None:
            try:
                if self.idle():
                    return
            except FrontierError as exc:
                self.fail(exc)
        if self.failed is not None:
            raise CloseSpider(FRONTIER_ERROR)
        raise DontCloseSpider

    def idle(self) -> bool:
        """Release everything committed (the scraper is idle: every request it made is queued), say idle,
        requeue dead workers' leases; True when the job is quiet and this worker may close."""
        assert self.frontier is not None
        dataset = self.dataset
        if self.scheduler is not None and not self.scheduler.push_pending():
            raise FrontierError(self.failed or "the frontier failed")
        if dataset is not None and dataset.writer.pending:
            dataset.commit_now()  # idle: what it holds is all there is (its leases end once it is committed)
        self._release()
        self._requeue_dead()
        self.state = IDLE
        self._heartbeat(IDLE)
        status = self.frontier.status()
        if not status.quiet:
            self._others_hold_since = None
            return False
        me = self.frontier.worker
        others_hold = sum(w.leased for w in status.live_workers if w.id != me)
        if others_hold:
            # Another idle worker's leases wait for its commit. Should it die before, what it holds comes back
            # to the queue, and some worker must still be here to fetch it: wait until they are released,
            # or as long as it takes to find that worker dead (a lease) and two heartbeats more.
            now = time.monotonic()
            if self._others_hold_since is None:
                self._others_hold_since = now
            if now - self._others_hold_since < self.frontier.lease_seconds + 2 * self.interval:
                return False
        logger.info(
            "frontier: job %s is quiet (%d leases wait for their commits); worker %s closes", self.frontier.job,
            status.leased, me,
        )  # fmt: skip
        return True

    async def spider_closed(self, reason: str) -> None:
        # Heartbeats go on while the dataset's last commit runs (it may take longer than the lease): a worker
        # taken for dead then would have its markers removed by another, and write new ones after that.
        self.closing = True
        settled = await self._dataset_settled()
        if self._loop is not None and self._loop.running:
            self._loop.stop()
        if self.frontier is None:
            return
        try:
            if self.leave(reason, settled=settled):
                await self._others_gone()
                self.end_job()
        finally:
            self._close_connection()

    def close(self, reason: str, *, settled: bool = True) -> None:
        """After the dataset's last commit: leave the job, and end it if it is done (without waiting
        for silent workers, see :meth:`_others_gone`)."""
        if self.frontier is None:
            return
        try:
            if self.leave(reason, settled=settled):
                self.end_job()
        finally:
            self._close_connection()

    def leave(self, reason: str, *, settled: bool = True) -> bool:
        """Release, leave, and say whether the job is done (this worker then ends it: :meth:`end_job`).

        A worker that finished (and whose dataset closed) has committed every row it will
        write: a lease it still holds is one no row named, let go (``feedcensus/frontier/orphaned``).
        Otherwise (Ctrl-C, a shutdown, a dataset error) what it holds goes back to the queue.
        """
        frontier = self.frontier
        if frontier is None or self.failed is not None:
            return False
        try:
            self._release()
            self._heartbeat(CLOSED)
            self._leave(reason, requeue=reason != "finished" or not settled)
            status = frontier.status()
            if not status.done and not status.live_workers:
                logger.warning(
                    "frontier: job %s is not finished (%d requests queued, %d in flight) and no worker is left on "
                    "it: feedcensus worker --job %s goes on with it",
                    frontier.job, status.queued, status.leased, frontier.job,
                )  # fmt: skip
            return status.done
        except FrontierError as exc:
            self.fail(exc, stop=False)
            return False

    def end_job(self) -> None:
        """Mark the job done, after putting back what dead workers held and removing what they left."""
        frontier = self.frontier
        assert frontier is not None
        try:
            self._requeue_dead()  # every dead worker forgotten, its leftovers found
            self.clean_up_dead()
            frontier.finish()
            logger.info("frontier: job %s is done", frontier.job)
        except FrontierError as exc:
            self.fail(exc, stop=False)

    async def _others_gone(self) -> None:
        """Wait until every other worker still registered has left the job or is dead.

        The job is done once nothing is queued or leased and every live worker is idle; but a worker
        killed while idle, holding nothing, looks live until its heartbeat is a lease old. Only once it
        is found dead can its ``.running`` marker and temporary files be removed (a live idle worker may
        still be writing a commit of ``duplicate`` rows). An idle live worker leaves at once (it sees the
        job quiet too), and one that is closing leaves once its last commit is written; so this waits for
        a worker that died for a lease and a heartbeat, for one that closes as long as its last commit
        takes, and never longer than a closing worker waits for its own (``SETTLE_TIMEOUT``) and a lease.
        """
        frontier = self.frontier
        assert frontier is not None
        deadline = time.monotonic() + SETTLE_TIMEOUT + frontier.lease_seconds + self.interval
        said = False
        while time.monotonic() < deadline:
            try:
                others = [w for w in frontier.status().workers if w.live and w.id != frontier.worker]
            except FrontierError as exc:
                self.fail(exc, stop=False)
                return
            if not others:
                return
            if not said:
                said = True
                logger.info(
                    "frontier: job %s is done; waiting for %d other workers to leave or be found dead (e.g. %s)",
                    frontier.job, len(others), others[0].id,
                )  # fmt: skip
            await maybe_deferred_to_future(task.deferLater(_reactor(), self.interval / 2, lambda: None))
        logger.warning("frontier: other workers of job %s still alive; it is marked done without them", frontier.job)

    def _close_connection(self) -> None:
        frontier = self.frontier
        assert frontier is not None
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value(STAT_COMMANDS, frontier.commands)
        frontier.close()

    # --- helpers -----------------------------------------------------------------------------------

    def _leave(self, reason: str, *, requeue: bool) -> None:
        assert self.frontier is not None
        back = self.frontier.unregister(requeue=requeue)
        if not back:
            return
        if requeue:
            self._inc(STAT_REQUEUED, len(back))
            logger.info("frontier: %d requests this worker held went back to the queue (%s)", len(back), reason)
        else:
            self._inc(STAT_ORPHANED, len(back))
            logger.warning("frontier: %d leases no committed row named were let go, e.g. %s", len(back), back[0])

    def _take_releasable(self, *, staged: bool) -> list[str]:
        """The committed URLs whose leases may end now (:meth:`ReleaseBook.take`). ``staged``: only the commits
        already seen at the previous heartbeat."""
        dataset = self.dataset
        settled = dataset is None or (dataset.writer.pending == 0 and dataset.uncommitted_rows == 0)
        return self.releases.take(staged=staged, settled=settled, busy_now=self._responses_in_scraper())

    def _responses_in_scraper(self) -> frozenset[str]:
        """The keys (:func:`lease_key`) of the responses Scrapy's scraper holds: their callbacks' output is not
        all out yet. (A web archive's record is known by the URL it holds, not by its WARC file's.)"""
        try:
            engine = self.crawler.engine
        except RuntimeError:  # no engine yet
            return frozenset()
        slot = getattr(getattr(engine, "scraper", None), "slot", None)
        return frozenset(lease_key(request) for request in getattr(slot, "active", None) or ())

    def _release(self, *, staged: bool = False) -> None:
        """End this worker's leases of the URLs committed (:meth:`_take_releasable`), once the requests held
        back for a batch are queued (the requests a page's response made are queued before its lease ends):
        none if that push failed."""
        assert self.frontier is not None
        scheduler = self.scheduler
        if scheduler is not None and not scheduler.push_pending():
            raise FrontierError(self.failed or "the frontier failed")
        urls = self._take_releasable(staged=staged)
        if scheduler is not None:
            waiting = scheduler.taken_urls()
            urls = [u for u in urls if u not in waiting]  # their own rows end their leases, once fetched
        if urls:
            self._inc(STAT_RELEASED, self.frontier.release(urls))
            faults.reached("released")

    def _heartbeat(self, state: str) -> None:
        assert self.frontier is not None
        if not self.frontier.heartbeat(state, self.requests) and not self._warned_dead:
            self._warned_dead = True
            logger.warning(
                "frontier: worker %s had been taken for dead (silent for over %g s): what it held was requeued",
                self.frontier.worker,
                self.frontier.lease_seconds,
            )

    def _requeue_dead(self) -> None:
        assert self.frontier is not None
        back = self.frontier.requeue_dead()
        if back:
            self._inc(STAT_REQUEUED, len(back))
            logger.warning("frontier: %d requests of dead workers went back to the queue", len(back))

    async def _dataset_settled(self) -> bool:
        """Wait for the dataset's last commit (it runs in its own ``spider_closed`` handler, concurrently)."""
        dataset = self.dataset
        if dataset is None:
            return True
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while not dataset.closed and time.monotonic() < deadline:
            await maybe_deferred_to_future(task.deferLater(_reactor(), 0.05, lambda: None))
        if not dataset.closed:
            logger.warning("frontier: the dataset did not close within %g s; leaving the job anyway", SETTLE_TIMEOUT)
        return bool(dataset.closed)

    def _inc(self, name: str, count: int = 1) -> None:
        stats = self.crawler.stats
        if stats is not None and count:
            stats.inc_value(name, count)

    def _set(self, name: str, value: int) -> None:
        stats = self.crawler.stats
        if stats is not None:
            stats.set_value(name, value)


def _reactor() -> Any:
    from twisted.internet import reactor

    return reactor
