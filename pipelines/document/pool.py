"""Document work in worker processes: the per-feed path and page reading off the crawling process, on every core.

Parsing, tallying, checking and building rows (:func:`pipelines.document.process.document_rows`)
is pure CPU work, and in one process it shares a core with Scrapy's reactor; so is reading an HTML
page for its feed links and facts (``crawler.fetch.discovery.read_page``). A
:class:`DocumentPool` runs such work in ``workers`` processes instead. Work is a
:class:`~pipelines.document.jobs.Task`: a picklable object whose ``run`` a worker calls
(:class:`~pipelines.document.jobs.Job` is a feed document's; both are defined in
:mod:`pipelines.document.jobs`, with the answers, and are imported from there).

- **Driven from the event loop, no thread waits for an answer.** :meth:`DocumentPool.run` writes
  the task to a worker's stdin and awaits its answer, which a reader task per worker takes from its
  stdout; in the crawl that is the reactor thread's asyncio loop, so no helper thread holds the
  interpreter lock to wait or unpickle. (One thread per worker is blocked in ``waitpid`` for its
  exit, as asyncio's own child watcher does on Python 3.11, which does not hold the lock.)
- **Back-pressure.** A worker holds the task it is on and a few more queued in its pipe
  (``DEPTH``), so it never waits for the event loop between two. A task goes to an idle worker; else to a new one while
  fewer than ``workers`` run (a small crawl starts one or two, not one per core); else to a worker
  with room for a next one; else its caller waits, in turn, for an answer. A slow pool slows the
  crawl instead of filling memory.
- **A worker that dies or hangs costs one task.** When a worker exits while working (a crash in a
  C library, the kernel's OOM killer) the answer is :class:`~pipelines.document.jobs.Lost` with ``parse_error``; when a task
  takes longer than ``timeout`` seconds the worker is killed and the answer is ``parse_timeout``.
  The task it had not begun goes to another worker, and a new worker is started when one is next
  needed. A caller that stops waiting (the crawl is stopping) leaves the worker as it is: its
  answer is read and dropped.
- **Only bytes cross the boundary.** The task goes in pickled, the answer comes back pickled, with
  the tables the crawling process only writes (:data:`~pipelines.document.jobs.ENCODED_TABLES`: items, element_usage,
  conformance) inside it as Arrow IPC record batches that it passes to the dataset writer as they
  are: unpickling batches costs the crawling process much less than unpickling dicts and converting
  them, and the writer decodes them at its commit. Building small batches costs the worker more than
  pickling dicts (on the large parse-benchmark feeds, more than the crawling process saves: benchmark
  1's 2-worker figure; the per-feed figures: benchmarks/RESULTS.md, section 11). Messages are
  framed as :class:`multiprocessing.connection.Connection` frames them (a 4-byte length), which
  is what a worker reads and writes.

A worker process, seen from the crawling process (start, tasks written, answers read, its time
limit and its death), is a :class:`~pipelines.document.poolworker.Worker`; what runs inside it,
and the frames both ends use, is :mod:`pipelines.document.poolserve`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import pickle
import subprocess
import weakref
from typing import TypeVar

from pipelines.document.jobs import Lost, Task
from pipelines.document.poolworker import AGAIN, STOPPED, Worker, launch_worker, stop_worker

__all__ = ["DocumentPool"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


class DocumentPool:
    """``workers`` processes that run tasks (a feed's rows: a ``Job``; a page's links),
    driven from the running asyncio event loop (the crawl's reactor thread): :meth:`run` writes a task
    to a worker and awaits its answer."""

    #: Tasks a worker may hold: the one it is on and those queued in its pipe, so it never waits for the
    #: event loop between two. Paired 2,000-site crawls: 8 gave 18 % more responses a minute than 2 and 5 %
    #: less reactor CPU (fewer callers waiting for room); 4, 16 and 32 were within the noise of 8.
    DEPTH = 8

    def __init__(self, workers: int, *, timeout: float = 60.0) -> None:
        if workers < 1:
            raise ValueError(f"a document pool needs at least one worker, not {workers}")
        self.workers = workers
        self.timeout = timeout
        self._all: list[Worker] = []
        self._starting = 0  # workers being started (counted against ``workers``)
        self._waiting: collections.deque[asyncio.Future[None]] = collections.deque()  # callers waiting for room
        #: Documents answered, and workers replaced because they died or ran out of time.
        self.documents = 0
        self.replaced = 0
        #: Filled in by :meth:`close`: the CPU seconds of the workers that said (those replaced did not),
        #: and the largest peak resident memory of one worker, in bytes.
        self.cpu_seconds = 0.0
        self.peak_rss = 0
        #: How many worker processes the crawl has needed at once (at most ``workers``).
        self.ran = 0
        self.closed = False
        self._launched: subprocess.Popen[bytes] | None = None  # started by launch(), not yet on the loop
        self._launch_guard: weakref.finalize[[subprocess.Popen[bytes]], DocumentPool] | None = None  # see launch()

    def launch(self) -> None:
        """Start the first worker's process now, before the event loop runs: it imports the document code
        (0.25-0.45 s) while the crawl starts, and :meth:`start` joins it to the loop. Should the pool be
        dropped without being started or closed (a crawl that failed before it opened), the process is
        stopped when the pool is collected, or at the latest when this process exits."""
        if self._launched is None and not self._all and not self.closed:
            try:
                self._launched = launch_worker()
            except OSError as exc:  # start() tries again on the loop, where a failure is reported as before
                logger.debug("could not start a document worker yet: %s", exc)
                return
            self._launch_guard = weakref.finalize(self, stop_worker, self._launched)

    async def start(self) -> None:
        """Start the first worker now (while the crawl starts) instead of with the first document."""
        if not self._all and not self._starting:
            await self._spawn()

    async def _spawn(self) -> Worker:
        """A new worker (the one :meth:`launch` started, if there is one), counted among those running."""
        self._starting += 1
        launched, self._launched = self._launched, None
        self._forget_launch()  # from here on, the worker is the pool's like any other
        try:
            worker = await Worker.start(self, launched)
        finally:
            self._starting -= 1
        if self.closed:  # closed while it started: it never joins
            worker.kill()
            raise Closed
        self._all.append(worker)
        self.ran = max(self.ran, len(self._live()))
        return worker

    def worker_lost(self, worker: Worker) -> None:
        """A worker died or ran out of time: the next document that needs one starts a new one."""
        if worker in self._all:
            self._all.remove(worker)
            if not self.closed:
                self.replaced += 1
        self.wake()

    async def _room(self) -> Worker:
        """A worker with nothing to do; else a new one while fewer than ``workers`` run; else one with
        room for a next job; else wait, in turn, until a worker answers: that is the back-pressure, so
        a slow pool slows the crawl instead of filling memory."""
        woken = False
        while True:
            if self.closed:
                raise Closed
            if woken or not self._waiting:  # a newcomer does not pass those already waiting
                worker = await self._pick()
                if worker is not None:
                    return worker
            turn = asyncio.get_running_loop().create_future()
            self._waiting.append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():  # woken, then cancelled: pass the turn on
                    self.wake()
                raise
            woken = True

    def _live(self) -> list[Worker]:
        """The workers that take tasks (not one whose death is being looked into)."""
        return [w for w in self._all if not w.gone]

    async def _pick(self) -> Worker | None:
        live = self._live()
        least = min(live, key=lambda w: len(w.sent), default=None)
        if least is not None and not least.sent:
            return least
        if len(live) + self._starting < self.workers:
            return await self._spawn()
        if least is not None and len(least.sent) < self.DEPTH:
            return least
        return None

    def _has_room(self) -> bool:
        live = self._live()
        return len(live) + self._starting < self.workers or any(len(w.sent) < self.DEPTH for w in live)

    def wake(self) -> None:
        """A worker answered or went: the first caller still waiting for room tries again."""
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():  # done: its caller was cancelled
                turn.set_result(None)
                return

    async def run(self, task: Task[T]) -> T | Lost:
        """What ``task.run()`` returns, run in a worker (waits for room in a worker first); Lost when the
        worker died or ran out of time on it, or it raised."""
        while True:
            try:
                worker = await self._room()
            except Closed:
                return STOPPED
            # Pickled once it has a worker, not while it waits: the body is not held twice meanwhile.
            sent = worker.send(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))
            if self._waiting and self._has_room():  # a new worker has room for more than this one
                self.wake()
            answer = await sent
            if answer is AGAIN:
                continue
            self.documents += 1
            if isinstance(answer, Lost):
                return answer
            result: T | Lost = pickle.loads(answer)
            return result

    def pids(self) -> list[int]:
        """The worker processes' ids (for measuring their memory)."""
        return [w.pid for w in self._all]

    def in_flight(self) -> int:
        """Documents written to a worker and not yet answered (at most ``DEPTH`` per worker)."""
        return sum(len(w.sent) for w in self._all)

    def _wake_all(self) -> None:
        """The pool is closed: every caller waiting for room gets "the crawl stopped"."""
        while self._waiting:
            self.wake()

    async def close(self) -> None:
        """Stop every worker once it has answered what it was sent (the crawl has finished its items)."""
        self.closed = True
        self._wake_all()
        self._unlaunch()
        workers, self._all = self._all, []
        for usage in await asyncio.gather(*(w.stop() for w in workers)):
            if usage is not None:
                self.cpu_seconds += usage.cpu_seconds
                self.peak_rss = max(self.peak_rss, usage.peak_rss)

    def kill(self) -> None:
        """Kill every worker at once (a forced stop: the reactor is stopping without closing the spider;
        or the crawl did not start, and the worker :meth:`launch` started never joined)."""
        self.closed = True
        self._wake_all()
        self._unlaunch()
        workers, self._all = self._all, []
        for worker in workers:
            worker.kill()
            worker.abandon()

    def _unlaunch(self) -> None:
        """Stop the process :meth:`launch` started if it never joined the loop (it had no work)."""
        launched, self._launched = self._launched, None
        self._forget_launch()
        if launched is not None:
            stop_worker(launched)

    def _forget_launch(self) -> None:
        guard, self._launch_guard = self._launch_guard, None
        if guard is not None:
            guard.detach()


class Closed(Exception):
    """The pool was closed while a document waited for a worker."""
