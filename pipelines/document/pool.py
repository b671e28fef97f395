"""Document work in worker processes: the per-feed path and page reading off the crawling process, on every core.

Parsing, tallying, checking and building rows (:func:`pipelines.document.process.document_rows`)
is pure CPU work, and in one process it shares a core with Scrapy's reactor; so is reading an HTML
page for its feed links and facts (``crawler.fetch.discovery.read_page``). A
:class:`DocumentPool` runs such work in ``workers`` processes instead. Work is a :class:`Task`: a
picklable object whose ``run`` a worker calls (:class:`Job` is a feed document's; both are in
:mod:`pipelines.document.jobs`, with the answers).

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
  C library, the kernel's OOM killer) the answer is :class:`Lost` with ``parse_error``; when a task
  takes longer than ``timeout`` seconds the worker is killed and the answer is ``parse_timeout``.
  The task it had not begun goes to another worker, and a new worker is started when one is next
  needed. A caller that stops waiting (the crawl is stopping) leaves the worker as it is: its
  answer is read and dropped.
- **Only bytes cross the boundary.** The task goes in pickled, the answer comes back pickled, with
  the tables the crawling process only writes (:data:`ENCODED_TABLES`: items, element_usage,
  conformance) inside it as Arrow IPC record batches that it passes to the dataset writer as they
  are: unpickling batches costs the crawling process much less than unpickling dicts and converting
  them, and the writer decodes them at its commit. Building small batches costs the worker more than
  pickling dicts (on the large parse-benchmark feeds, more than the crawling process saves: benchmark
  1's 2-worker figure; the per-feed figures: benchmarks/RESULTS.md, section 11). Messages are
  framed as :class:`multiprocessing.connection.Connection` frames them (a 4-byte length), which
  is what a worker reads and writes.

A worker is a fresh interpreter (:func:`serve`) reading tasks on its stdin
and writing answers on its stdout, not a ``multiprocessing`` process: the ``spawn`` and
``forkserver`` start methods import the caller's main script again in every worker (a script
without an ``if __name__ == "__main__"`` guard would start a crawl there), and ``fork`` would copy
a process that runs threads. Starting one costs the interpreter and the imports of the document
code and pyarrow (0.25-0.45 s before the worker says it is ready; again only for a worker
replaced). The crawl starts its first worker's process before its event loop runs
(:meth:`DocumentPool.launch`), so that cost overlaps the crawl's own start instead of holding up
its first pages. numpy and pandas, which pyarrow would import too, are refused
(pipelines/dataset/nopandas.py). Workers ignore SIGINT
(the crawl decides how to stop) and exit when the crawling process goes away (their stdin closes).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import fcntl
import importlib
import logging
import os
import pickle
import resource
import signal
import struct
import subprocess
import sys
import threading
import weakref
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pipelines.document.jobs import (
    ENCODED_TABLES,
    Answer,
    Job,
    Lost,
    Parsed,
    Task,
    content_digest,
    default_workers,
    job_rows,
    workers_setting,
)
from schemas.vocab import Outcome

if TYPE_CHECKING:
    pass

__all__ = [
    "ENCODED_TABLES",
    "Answer",
    "DocumentPool",
    "Job",
    "Lost",
    "Parsed",
    "Task",
    "Usage",
    "content_digest",
    "default_workers",
    "job_rows",
    "serve",
    "workers_setting",
]

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Seconds a worker waits for its own exit at close before it is killed.
_CLOSE_GRACE = 2.0
_STOP = b""  # sent to a worker: exit
_READY = b"ready"  # sent by a worker once it has imported the document code
#: Seconds a new worker may take to start (an interpreter and the document code's imports: 0.25-0.45 s).
_START_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class Usage:
    """What a worker used in its life: CPU seconds (user + system) and its peak resident memory in bytes."""

    cpu_seconds: float
    peak_rss: int


def _serve(jobs: Connection, answers: Connection) -> None:
    """A worker's life: say it is ready, answer jobs until told to stop (then say what it used) or the crawling
    process goes away. (SIGINT is ignored already: :data:`_WORKER_MAIN`.)"""
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


def _answer(task: Task[object]) -> object:
    try:
        return task.run()
    except Exception as exc:  # a bug met on one document costs that document, not the worker
        return Lost(Outcome.PARSE_ERROR, f"internal error while parsing: {type(exc).__name__}: {exc}")


#: The folder the ``pipelines`` package is in: a worker imports the same code as the crawling process.
_CODE_ROOT = str(Path(__file__).resolve().parents[2])
#: How large a buffer the pipe from a worker reads into before it waits for the crawl to take the data.
_READ_LIMIT = 2**20
#: The size a worker asks for its pipes (Linux's default is 64 KiB and its default maximum 1 MiB): with
#: the default, the event loop wrote a feed in 64 KiB steps, and 2 workers parsed the benchmark feeds
#: measurably slower (benchmarks/RESULTS.md, section 11).
_PIPE_BYTES = 2**20


def _frame(payload: bytes) -> bytes:
    """``payload`` framed as :meth:`multiprocessing.connection.Connection.send_bytes` frames it (what
    :func:`serve` reads): a signed 4-byte big-endian length, or -1 and an 8-byte length beyond 2 GiB."""
    size = len(payload)
    if size > 0x7FFFFFFF:
        return struct.pack("!iQ", -1, size) + payload
    return struct.pack("!i", size) + payload


async def _read_frame(stream: asyncio.StreamReader) -> bytes:
    """One message a worker sent (:meth:`Connection.send_bytes`); IncompleteReadError when its pipe closes first."""
    (size,) = struct.unpack("!i", await stream.readexactly(4))
    if size == -1:
        (size,) = struct.unpack("!Q", await stream.readexactly(8))
    return await stream.readexactly(size)


#: What the caller of a task written to a worker awaits: the answer's bytes, a Lost, or _AGAIN when the
#: worker was lost before it began the task (the caller sends it to another).
_Answer = asyncio.Future[bytes | Lost | None]
_AGAIN = None
#: The answer of a task the pool was closed on.
_STOPPED = Lost(Outcome.PARSE_ERROR, "the crawl stopped before this document was parsed")


#: A worker's program: numpy and pandas refused before pyarrow is imported (pipelines/dataset/nopandas.py),
#: then :func:`serve`. (Not ``python -m``: the classes pickled back must be this module's, not ``__main__``'s.)
_WORKER_MAIN = (
    # SIGINT ignored first: a Ctrl-C while the worker imports (as the crawl starts) is the crawl's to handle
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from pipelines.dataset.nopandas import refuse_numpy_and_pandas; refuse_numpy_and_pandas(); "
    f"from {__name__} import serve; serve()"
)


def _launch() -> subprocess.Popen[bytes]:
    """Start a worker process now; :meth:`_Worker.start` joins it to the event loop.

    Started with :class:`subprocess.Popen`, not :func:`asyncio.create_subprocess_exec`, so that the
    crawl can start its first worker before its event loop runs (:meth:`DocumentPool.launch`)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (_CODE_ROOT, os.environ.get("PYTHONPATH"))))}
    return subprocess.Popen(
        # -P: not the working folder first on sys.path: a pipelines/ there must not replace ours
        [sys.executable, "-P", "-c", _WORKER_MAIN],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        bufsize=0,
    )


def _stop(popen: subprocess.Popen[bytes]) -> None:
    """Kill a worker process that never joined the event loop (or failed to), collect it, close its pipes."""
    popen.kill()  # nothing when it was collected already
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(_CLOSE_GRACE)
    for pipe in (popen.stdin, popen.stdout):
        if pipe is not None:
            pipe.close()


class _Worker:
    """One worker process (:func:`serve`), the jobs written to it and not yet answered (in order: it
    answers them in the order it reads them), and the task that reads its answers on the event loop.

    Its exit is waited for by a thread blocked in ``waitpid`` (which does not hold the interpreter lock),
    as asyncio's own child watcher does on Python 3.11."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        jobs: asyncio.WriteTransport,
        answers: asyncio.StreamReader,
        pool: DocumentPool,
    ) -> None:
        self.popen = popen
        # Written to, never drained: the tasks a worker holds (at most DEPTH) wait in the pipe and, past
        # its size, in the transport's buffer, so up to DEPTH bodies of DOWNLOAD_MAXSIZE each.
        self.jobs = jobs
        self.answers = answers
        self.pool = pool
        self.sent: collections.deque[_Answer] = collections.deque()  # one per task written, in order
        self.ready = False  # the worker has sent _READY
        self.gone = False  # killed, or its pipes broke: it takes no more jobs
        self.usage: Usage | None = None  # what it said it used, when it stopped
        self._clock: asyncio.TimerHandle | None = None  # the time limit of the job it is working on
        self._timed_out = False
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = loop.create_future()  # its exit status, once collected
        threading.Thread(target=self._wait, args=(loop,), name=f"feedcensus-worker-{popen.pid}", daemon=True).start()
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, pool: DocumentPool, launched: subprocess.Popen[bytes] | None = None) -> _Worker:
        """A worker on the running event loop: ``launched`` (a process :func:`_launch` started before the
        loop ran), else a new one; killed and collected when joining its pipes to the loop fails or is cancelled."""
        popen = launched or _launch()
        assert popen.stdin is not None and popen.stdout is not None
        loop = asyncio.get_running_loop()
        answers = asyncio.StreamReader(limit=_READ_LIMIT, loop=loop)
        read: asyncio.BaseTransport | None = None
        try:
            read, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(answers, loop=loop), popen.stdout
            )
            jobs, _ = await loop.connect_write_pipe(asyncio.Protocol, popen.stdin)
        except BaseException:
            if read is not None:
                read.close()
            _stop(popen)
            raise
        return cls(popen, jobs, answers, pool)

    def _wait(self, loop: asyncio.AbstractEventLoop) -> None:
        """In the worker's own thread: wait for its exit, and tell the event loop."""
        code = self.popen.wait()
        with contextlib.suppress(RuntimeError):  # the event loop was closed first: nobody waits any more
            loop.call_soon_threadsafe(self._exit, code)

    def _exit(self, code: int) -> None:
        if not self._exited.done():
            self._exited.set_result(code)

    async def _exit_wait(self) -> None:
        """Wait for the worker's exit to be collected, up to :data:`_CLOSE_GRACE` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._exited), _CLOSE_GRACE)

    def send(self, payload: bytes) -> _Answer:
        """Write a task to the worker's stdin (the pipe holds it while the worker finishes the one before);
        its answer, to await."""
        answer: _Answer = asyncio.get_running_loop().create_future()
        self.sent.append(answer)
        self.jobs.write(_frame(payload))
        if len(self.sent) == 1:
            self._start_clock()
        return answer

    def _start_clock(self) -> None:
        """The time limit runs for the job the worker is on: the first one sent and not answered, once it is ready."""
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None
        if self.sent and self.ready and not self.gone:
            self._clock = asyncio.get_running_loop().call_later(self.pool.timeout, self._time_out)

    def _time_out(self) -> None:
        self._timed_out = True
        timeout = self.pool.timeout
        self._end(Lost(Outcome.PARSE_TIMEOUT, f"parsing took longer than {timeout:g} s: the worker was stopped"))
        self.kill()

    def _end(self, lost: Lost) -> None:
        """The worker is lost: the job it was on gets ``lost``, the ones it had not begun go to another worker."""
        self.gone = True
        if self._clock is not None:
            self._clock.cancel()
            self._clock = None
        for i, answer in enumerate(self.sent):
            if not answer.done():
                answer.set_result(lost if i == 0 else _AGAIN)
        self.sent.clear()
        self.pool._lost(self)

    async def _read(self) -> None:
        """Read the worker's answers until it stops or goes away; each answers the oldest job sent."""
        try:
            try:
                first = await asyncio.wait_for(_read_frame(self.answers), _START_TIMEOUT)
            except (TimeoutError, asyncio.IncompleteReadError) as exc:
                raise _NotStarted from exc
            if first != _READY:
                raise _NotStarted
            self.ready = True
            self._start_clock()
            while True:
                data = await _read_frame(self.answers)
                if not self.sent:  # what it says after _STOP: what it used
                    self.usage = pickle.loads(data)
                    return
                answer = self.sent.popleft()
                if not answer.done():  # done: its caller stopped waiting (the crawl is stopping)
                    answer.set_result(data)
                self._start_clock()
                self.pool._wake()
        except _NotStarted:
            self.kill()
            how = await self._how_it_ended()
            self._end(Lost(Outcome.PARSE_ERROR, f"the document worker did not start ({how})"))
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, OSError, pickle.UnpicklingError):
            if self._timed_out or (self.gone and not self.sent):
                return
            self.gone = True
            how = await self._how_it_ended()
            self._end(Lost(Outcome.PARSE_ERROR, f"the document worker died while parsing ({how})"))

    @property
    def pid(self) -> int:
        return self.popen.pid

    async def _how_it_ended(self) -> str:
        await self._exit_wait()
        if not self._exited.done():
            return "no exit status"
        code = self._exited.result()
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit code {code}"

    def kill(self) -> None:
        """Kill the process at once (its waiting thread collects its exit)."""
        self.gone = True
        self.popen.kill()  # nothing when it was already collected: its pid may be another's now
        self.jobs.close()

    async def stop(self) -> Usage | None:
        """Ask the worker to exit once it has answered what it was sent (each task still within its time
        limit); what it used, when it says."""
        if not self.gone:
            with contextlib.suppress(ConnectionError, OSError):
                self.jobs.write(_frame(_STOP))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.reader), _CLOSE_GRACE + self.pool.timeout * len(self.sent))
            await self._exit_wait()
        self.kill()
        await self._exit_wait()
        self.reader.cancel()
        self.abandon()
        return self.usage

    def abandon(self) -> None:
        """Answer the tasks still sent to this worker, which will not answer them (the pool is closing)."""
        for answer in self.sent:
            if not answer.done():
                answer.set_result(_STOPPED)
        self.sent.clear()


class DocumentPool:
    """``workers`` processes that run :class:`Task` s (a feed's rows: :class:`Job`; a page's links),
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
        self._all: list[_Worker] = []
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
                self._launched = _launch()
            except OSError as exc:  # start() tries again on the loop, where a failure is reported as before
                logger.debug("could not start a document worker yet: %s", exc)
                return
            self._launch_guard = weakref.finalize(self, _stop, self._launched)

    async def start(self) -> None:
        """Start the first worker now (while the crawl starts) instead of with the first document."""
        if not self._all and not self._starting:
            await self._spawn()

    async def _spawn(self) -> _Worker:
        """A new worker (the one :meth:`launch` started, if there is one), counted among those running."""
        self._starting += 1
        launched, self._launched = self._launched, None
        self._forget_launch()  # from here on, the worker is the pool's like any other
        try:
            worker = await _Worker.start(self, launched)
        finally:
            self._starting -= 1
        if self.closed:  # closed while it started: it never joins
            worker.kill()
            raise _Closed
        self._all.append(worker)
        self.ran = max(self.ran, len(self._live()))
        return worker

    def _lost(self, worker: _Worker) -> None:
        """A worker died or ran out of time: the next document that needs one starts a new one."""
        if worker in self._all:
            self._all.remove(worker)
            if not self.closed:
                self.replaced += 1
        self._wake()

    async def _room(self) -> _Worker:
        """A worker with nothing to do; else a new one while fewer than ``workers`` run; else one with
        room for a next job; else wait, in turn, until a worker answers: that is the back-pressure, so
        a slow pool slows the crawl instead of filling memory."""
        woken = False
        while True:
            if self.closed:
                raise _Closed
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
                    self._wake()
                raise
            woken = True

    def _live(self) -> list[_Worker]:
        """The workers that take tasks (not one whose death is being looked into)."""
        return [w for w in self._all if not w.gone]

    async def _pick(self) -> _Worker | None:
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

    def _wake(self) -> None:
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
            except _Closed:
                return _STOPPED
            # Pickled once it has a worker, not while it waits: the body is not held twice meanwhile.
            sent = worker.send(pickle.dumps(task, protocol=pickle.HIGHEST_PROTOCOL))
            if self._waiting and self._has_room():  # a new worker has room for more than this one
                self._wake()
            answer = await sent
            if answer is _AGAIN:
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
            self._wake()

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
            _stop(launched)

    def _forget_launch(self) -> None:
        guard, self._launch_guard = self._launch_guard, None
        if guard is not None:
            guard.detach()


class _Closed(Exception):
    """The pool was closed while a document waited for a worker."""


class _NotStarted(Exception):
    """A worker did not say it was ready within _START_TIMEOUT, or said something else."""


def serve() -> None:
    """A worker's entry point (:data:`_WORKER_MAIN`): jobs on stdin, answers on stdout."""
    for fd in (0, 1):  # larger pipes: a feed of a few hundred KB crosses in one write, not 64 KiB at a time
        with contextlib.suppress(OSError, AttributeError):  # AttributeError: not Linux; OSError: over pipe-max-size
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    jobs, answers = Connection(os.dup(0), writable=False), Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # a stray print goes to stderr, not into the answers
    # The document code before the worker says it is ready: its import (about 0.1 s) is not counted
    # against the first feed's time limit. The crawling process imports it only when it parses itself.
    importlib.import_module("pipelines.document.process")
    _serve(jobs, answers)
