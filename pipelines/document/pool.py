"""Document work in worker processes: the per-feed path off the crawling process, on every core.

Parsing, tallying, checking and building rows (:func:`pipelines.document.process.document_rows`)
is pure CPU work, about 1.4 ms per feed on the benchmark corpus, and in one process it shares a
core with Scrapy's reactor. A :class:`DocumentPool` runs it in ``workers`` processes instead:

- **One document per worker at a time.** :meth:`DocumentPool.process` takes an idle worker (it
  blocks while none is idle: that is the back-pressure, so a slow pool slows the crawl instead of
  filling memory), sends it the job, and waits for its answer.
- **A worker that dies or hangs costs one document.** When a worker exits while parsing (a
  crash in a C library, the kernel's OOM killer) the answer is :class:`Lost` with
  ``parse_error``; when it takes longer than ``timeout`` seconds it is killed and the answer is
  ``parse_timeout``. Either way a new worker takes its place and the pool goes on.
- **Only bytes cross the boundary.** The job (the fetched document) goes in pickled, the rows
  come back pickled. Measured on the 198 benchmark feeds (44.5 MB): pickling one round's rows
  costs 20 ms in the workers and unpickling 27 ms in the crawling process, against 656 ms of
  document work moved off it; Arrow IPC buffers per feed cost 168 ms to build (a schema and small
  batches per feed) and 28 ms to read, so rows travel as pickles and become Arrow once, in the
  dataset writer's commits, as they do without a pool.

Worker processes start with ``forkserver`` (``spawn`` where there is none), from a server that
has imported the document code once, so replacing a worker costs milliseconds, and none of them
inherits the crawling process's threads or sockets. They ignore SIGINT (the crawl decides how to
stop) and exit when the crawling process goes away (their pipe closes).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import pickle
import queue
import resource
import signal
import threading
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from typing import Any

from pipelines.document.checks import RuleFailure
from pipelines.document.process import document_rows
from pipelines.document.rows import TableRows
from schemas.items import FeedDocument
from schemas.vocab import Outcome

__all__ = ["DocumentPool", "Job", "Lost", "Usage", "default_workers"]

logger = logging.getLogger(__name__)

#: Seconds a worker waits for its own exit at close before it is killed.
_CLOSE_GRACE = 2.0
_STOP = b""  # sent to a worker: exit


@dataclass(frozen=True, slots=True)
class Job:
    """One document to process, and what :func:`document_rows` needs besides it."""

    doc: FeedDocument
    now: datetime | None = None
    job_id: str | None = None
    content_hash: str | None = None


@dataclass(frozen=True, slots=True)
class Lost:
    """The document's work was lost: it gets a fetch_log row with this outcome and error, and no other rows."""

    outcome: Outcome  # parse_error or parse_timeout
    error: str


@dataclass(frozen=True, slots=True)
class Usage:
    """What a worker used in its life: CPU seconds (user + system) and its peak resident memory in bytes."""

    cpu_seconds: float
    peak_rss: int


#: What :meth:`DocumentPool.process` answers: the rows and the rules that failed internally, or Lost.
Answer = tuple[TableRows, tuple[RuleFailure, ...]] | Lost


def default_workers() -> int:
    """The cores this process may run on, minus one for the reactor (0 on a single core: no pool)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(cores - 1, 0)


def _context() -> BaseContext:
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([__name__])  # the document code is imported once, in the server
    return ctx


def _serve(conn: Connection) -> None:
    """A worker's life: answer jobs until told to stop (then say what it used) or the crawling process goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        if data == _STOP:
            used = resource.getrusage(resource.RUSAGE_SELF)
            with contextlib.suppress(OSError):
                conn.send_bytes(pickle.dumps(Usage(used.ru_utime + used.ru_stime, used.ru_maxrss * 1024)))
            return
        conn.send_bytes(pickle.dumps(_answer(pickle.loads(data)), protocol=pickle.HIGHEST_PROTOCOL))


def _answer(job: Job) -> Answer:
    try:
        rows, failures = document_rows(job.doc, job.now, job_id=job.job_id, content_hash=job.content_hash)
    except Exception as exc:  # a bug met on one document costs that document, not the worker
        return Lost(Outcome.PARSE_ERROR, f"internal error while parsing: {type(exc).__name__}: {exc}")
    return rows, failures


class _Worker:
    """One worker process and the crawling process's end of its pipe."""

    def __init__(self, ctx: BaseContext, number: int) -> None:
        here, there = ctx.Pipe()
        self.conn = here
        self.process: Any = ctx.Process(  # type: ignore[attr-defined]
            target=_serve, args=(there,), name=f"feedcensus-document-{number}", daemon=True
        )
        self.process.start()
        there.close()

    def ask(self, payload: bytes, timeout: float) -> Answer:
        """Send one job and wait for its answer; Lost when the worker dies or runs out of time (it is then gone)."""
        try:
            self.conn.send_bytes(payload)
            if not self.conn.poll(timeout):
                self.kill()
                return Lost(Outcome.PARSE_TIMEOUT, f"parsing took longer than {timeout:g} s: the worker was stopped")
            data = self.conn.recv_bytes()
        except (EOFError, OSError):
            self.kill()
            return Lost(Outcome.PARSE_ERROR, f"the document worker died while parsing ({self._how_it_ended()})")
        answer: Answer = pickle.loads(data)
        return answer

    @property
    def alive(self) -> bool:
        return not self.conn.closed and bool(self.process.is_alive())

    def _how_it_ended(self) -> str:
        code = self.process.exitcode
        if code is None:
            return "no exit status"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(_CLOSE_GRACE)
        self.conn.close()

    def stop(self) -> Usage | None:
        """Ask the worker to exit; what it used, when it says (None when it is gone or silent)."""
        usage: Usage | None = None
        with contextlib.suppress(OSError, EOFError, pickle.UnpicklingError):
            self.conn.send_bytes(_STOP)
            if self.conn.poll(_CLOSE_GRACE):
                usage = pickle.loads(self.conn.recv_bytes())
        self.process.join(_CLOSE_GRACE)
        self.kill()
        return usage


class DocumentPool:
    """``workers`` processes that run :func:`document_rows`; :meth:`process` is blocking and thread-safe."""

    def __init__(self, workers: int, *, timeout: float = 60.0) -> None:
        if workers < 1:
            raise ValueError(f"a document pool needs at least one worker, not {workers}")
        self.workers = workers
        self.timeout = timeout
        self._ctx = _context()
        self._lock = threading.Lock()
        self._started = 0
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._all: list[_Worker] = []
        for _ in range(workers):
            self._idle.put(self._start())
        #: Documents answered, and workers replaced because they died or ran out of time.
        self.documents = 0
        self.replaced = 0
        #: Filled in by :meth:`close`: the CPU seconds of the workers that said (those replaced did not),
        #: and the largest peak resident memory of one worker, in bytes.
        self.cpu_seconds = 0.0
        self.peak_rss = 0
        self.closed = False

    def _start(self) -> _Worker:
        with self._lock:
            self._started += 1
            worker = _Worker(self._ctx, self._started)
            self._all.append(worker)
        return worker

    def process(self, job: Job) -> Answer:
        """The answer for one document (waits for an idle worker first)."""
        payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        worker = self._idle.get()
        try:
            answer = worker.ask(payload, self.timeout)
        finally:
            if not worker.alive and not self.closed:
                with self._lock:
                    self._all.remove(worker)
                    self.replaced += 1
                worker = self._start()
            self._idle.put(worker)
        with self._lock:
            self.documents += 1
        return answer

    def pids(self) -> list[int]:
        """The worker processes' ids (for measuring their memory)."""
        with self._lock:
            return [w.process.pid for w in self._all if w.process.pid is not None]

    def close(self, *, kill: bool = False) -> None:
        """Stop every worker once it is idle; ``kill``: at once (a forced stop: a document being
        parsed is then answered with Lost, so the thread waiting for it returns)."""
        self.closed = True
        with self._lock:
            workers, self._all = self._all, []
        for worker in workers:
            if kill:
                worker.kill()
                continue
            usage = worker.stop()
            if usage is not None:
                self.cpu_seconds += usage.cpu_seconds
                self.peak_rss = max(self.peak_rss, usage.peak_rss)
