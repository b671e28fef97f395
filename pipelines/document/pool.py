"""Document work in worker processes: the per-feed path off the crawling process, on every core.

Parsing, tallying, checking and building rows (:func:`pipelines.document.process.document_rows`)
is pure CPU work, about 1.4 ms per feed on the benchmark corpus, and in one process it shares a
core with Scrapy's reactor. A :class:`DocumentPool` runs it in ``workers`` processes instead:

- **One document per worker at a time.** :meth:`DocumentPool.process` takes an idle worker, starts
  one more when none is idle and fewer than ``workers`` run (a small crawl starts one or two, not
  one per core), else blocks until one is idle: that is the back-pressure, so a slow pool slows the
  crawl instead of filling memory. It sends the worker the job and waits for its answer.
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

A worker is a fresh interpreter (:func:`serve`) reading jobs on its stdin
and writing answers on its stdout, not a ``multiprocessing`` process: the ``spawn`` and
``forkserver`` start methods import the caller's main script again in every worker (a script
without an ``if __name__ == "__main__"`` guard would start a crawl there), and ``fork`` would copy
a process that runs threads. Starting one costs the interpreter and the imports of the document
code (about 0.2 s, while the crawl starts; again only for a worker replaced). Workers ignore SIGINT
(the crawl decides how to stop) and exit when the crawling process goes away (their stdin closes).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import pickle
import queue
import resource
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.connection import Connection
from pathlib import Path

from pipelines.document.checks import RuleFailure
from pipelines.document.process import document_rows
from pipelines.document.rows import TableRows
from schemas.items import FeedDocument
from schemas.vocab import Outcome

__all__ = [
    "DocumentPool",
    "Job",
    "Lost",
    "Usage",
    "content_digest",
    "default_workers",
    "job_rows",
    "serve",
    "workers_setting",
]

logger = logging.getLogger(__name__)

#: Seconds a worker waits for its own exit at close before it is killed.
_CLOSE_GRACE = 2.0
_STOP = b""  # sent to a worker: exit
_READY = b"ready"  # sent by a worker once it has imported the document code
#: Seconds a new worker may take to start (an interpreter and the document code's imports: ~0.2 s).
_START_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Job:
    """One document to process, and what :func:`document_rows` needs besides it."""

    doc: FeedDocument
    now: datetime | None = None
    job_id: str | None = None
    #: The body's SHA-256, when the crawling process needed it first (to compare with the last fetch);
    #: else None, and it is computed with the rest of the document's work (:func:`job_rows`).
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


def workers_setting(value: object) -> int:
    """How many workers ``FEEDCENSUS_WORKERS`` asks for: ``auto`` is :func:`default_workers`, else a whole
    number (ValueError otherwise; a negative number is 0). Unset (None, outside the project's settings): 0."""
    if value is None:
        return 0
    if isinstance(value, str) and value.strip() == "auto":
        return default_workers()
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"not a whole number or auto: {value!r}")
    return max(int(value), 0)


def _serve(jobs: Connection, answers: Connection) -> None:
    """A worker's life: say it is ready, answer jobs until told to stop (then say what it used) or the crawling
    process goes away."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    answers.send_bytes(_READY)
    while True:
        try:
            data = jobs.recv_bytes()
        except (EOFError, OSError):
            return
        if data == _STOP:
            used = resource.getrusage(resource.RUSAGE_SELF)
            with contextlib.suppress(OSError):
                answers.send_bytes(pickle.dumps(Usage(used.ru_utime + used.ru_stime, _peak_rss(used))))
            return
        answers.send_bytes(pickle.dumps(_answer(pickle.loads(data)), protocol=pickle.HIGHEST_PROTOCOL))


def _peak_rss(used: resource.struct_rusage) -> int:
    """This worker's own peak resident memory in bytes: the high-water mark of its memory (VmHWM, Linux).

    Not ``ru_maxrss``: getrusage(2) keeps it across execve(2), and a worker is the crawling process
    forked then exec'd, so its ``ru_maxrss`` is at least what the crawling process had resident when
    the worker started (measured: 472 MiB for a worker whose VmHWM was 69 MiB, started by a process
    holding 400 MiB). Where /proc is not there, ``ru_maxrss`` is the best there is."""
    with contextlib.suppress(OSError), open("/proc/self/status", "rb") as status:
        for line in status:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1]) * 1024
    return used.ru_maxrss * 1024


def content_digest(doc: FeedDocument) -> str | None:
    """SHA-256 (hex) of the body as received; None for a 304, which has none."""
    return hashlib.sha256(doc.body).hexdigest() if doc.status != 304 else None


def job_rows(job: Job) -> tuple[TableRows, tuple[RuleFailure, ...]]:
    """:func:`document_rows` for one job, hashing the body first unless the job says its hash."""
    digest = job.content_hash if job.content_hash is not None else content_digest(job.doc)
    return document_rows(job.doc, job.now, job_id=job.job_id, content_hash=digest)


def _answer(job: Job) -> Answer:
    try:
        rows, failures = job_rows(job)
    except Exception as exc:  # a bug met on one document costs that document, not the worker
        return Lost(Outcome.PARSE_ERROR, f"internal error while parsing: {type(exc).__name__}: {exc}")
    return rows, failures


#: The folder the ``pipelines`` package is in: a worker imports the same code as the crawling process.
_CODE_ROOT = str(Path(__file__).resolve().parents[2])


class _Worker:
    """One worker process (:func:`serve`) and the pipes to it."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (_CODE_ROOT, os.environ.get("PYTHONPATH"))))}
        self.process = subprocess.Popen(
            [sys.executable, "-c", f"from {__name__} import serve; serve()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.jobs = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.answers = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()
        self.ready = False  # the worker has sent _READY

    def ask(self, payload: bytes, timeout: float) -> Answer:
        """Send one job and wait for its answer; Lost when the worker dies or runs out of time (it is then gone).

        The time starts once the worker has said it is ready: its start-up is not the document's."""
        try:
            if not self.ready:
                self._wait_ready()
            self.jobs.send_bytes(payload)
            if not self.answers.poll(timeout):
                self.kill()
                return Lost(Outcome.PARSE_TIMEOUT, f"parsing took longer than {timeout:g} s: the worker was stopped")
            data = self.answers.recv_bytes()
        except (EOFError, OSError):
            self.kill()
            return Lost(Outcome.PARSE_ERROR, f"the document worker died while parsing ({self._how_it_ended()})")
        answer: Answer = pickle.loads(data)
        return answer

    def _wait_ready(self) -> None:
        """Wait for the worker's first message, sent once its imports are done (OSError if it does not come)."""
        if not self.answers.poll(_START_TIMEOUT) or self.answers.recv_bytes() != _READY:
            raise OSError("the document worker did not start")
        self.ready = True

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return not self.answers.closed and self.process.poll() is None

    def _how_it_ended(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(_CLOSE_GRACE)
        code = self.process.returncode
        if code is None:
            return "no exit status"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(_CLOSE_GRACE)
        self.jobs.close()
        self.answers.close()

    def stop(self) -> Usage | None:
        """Ask the worker to exit; what it used, when it says (None when it is gone or silent)."""
        usage: Usage | None = None
        with contextlib.suppress(OSError, EOFError, pickle.UnpicklingError):
            self.jobs.send_bytes(_STOP)
            if self.answers.poll(_CLOSE_GRACE):
                usage = pickle.loads(self.answers.recv_bytes())
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(_CLOSE_GRACE)
        self.kill()
        return usage


class DocumentPool:
    """``workers`` processes that run :func:`document_rows`; :meth:`process` is blocking and thread-safe."""

    def __init__(self, workers: int, *, timeout: float = 60.0) -> None:
        if workers < 1:
            raise ValueError(f"a document pool needs at least one worker, not {workers}")
        self.workers = workers
        self.timeout = timeout
        self._lock = threading.Lock()
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._all: list[_Worker] = []
        self._idle.put(self._start())  # one now, while the crawl starts; the others when they are needed
        #: Documents answered, and workers replaced because they died or ran out of time.
        self.documents = 0
        self.replaced = 0
        #: Filled in by :meth:`close`: the CPU seconds of the workers that said (those replaced did not),
        #: and the largest peak resident memory of one worker, in bytes.
        self.cpu_seconds = 0.0
        self.peak_rss = 0
        #: Filled in by :meth:`close`: how many worker processes the crawl needed (at most ``workers``).
        self.ran = 0
        self.closed = False

    def _start(self) -> _Worker:
        with self._lock:
            return self._spawn()

    def _spawn(self) -> _Worker:
        """A new worker, counted among those running (the caller holds the lock)."""
        worker = _Worker()
        self._all.append(worker)
        return worker

    def _take(self) -> _Worker:
        """An idle worker; else a new one while fewer than ``workers`` run; else the next to be idle."""
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if len(self._all) < self.workers and not self.closed:
                return self._spawn()
        return self._idle.get()

    def process(self, job: Job) -> Answer:
        """The answer for one document (waits for an idle worker first)."""
        payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        worker = self._take()
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
            return [w.pid for w in self._all]

    def close(self, *, kill: bool = False) -> None:
        """Stop every worker once it is idle; ``kill``: at once (a forced stop: a document being
        parsed is then answered with Lost, so the thread waiting for it returns)."""
        self.closed = True
        with self._lock:
            workers, self._all = self._all, []
        self.ran = max(self.ran, len(workers))
        for worker in workers:
            if kill:
                worker.kill()
                continue
            usage = worker.stop()
            if usage is not None:
                self.cpu_seconds += usage.cpu_seconds
                self.peak_rss = max(self.peak_rss, usage.peak_rss)


def serve() -> None:
    """A worker's entry point (``python -c "from pipelines.document.pool import serve; serve()"``): jobs on
    stdin, answers on stdout. (Not ``python -m``: the classes pickled back must be this module's, not
    ``__main__``'s.)"""
    jobs, answers = Connection(os.dup(0), writable=False), Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # a stray print goes to stderr, not into the answers
    _serve(jobs, answers)
