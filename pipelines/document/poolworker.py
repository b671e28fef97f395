"""One document worker process, as the pool drives it from the event loop.

A worker is a fresh interpreter (:func:`pipelines.document.poolserve.serve`) reading tasks on its
stdin and writing answers on its stdout, not a ``multiprocessing`` process: the ``spawn`` and
``forkserver`` start methods import the caller's main script again in every worker (a script without
an ``if __name__ == "__main__"`` guard would start a crawl there), and ``fork`` would copy a process
that runs threads. Starting one costs the interpreter and the imports of the document code and
pyarrow (0.25-0.45 s before the worker says it is ready; again only for a worker replaced). The
crawl starts its first worker's process before its event loop runs
(:meth:`pipelines.document.pool.DocumentPool.launch`), so that cost overlaps the crawl's own start
instead of holding up its first pages. numpy and pandas, which pyarrow would import too, are refused
(pipelines/dataset/nopandas.py). Workers ignore SIGINT (the crawl decides how to stop) and exit when
the crawling process goes away (their stdin closes).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import pickle
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from pipelines.document.jobs import Lost
from pipelines.document.poolserve import READY, STOP, Usage, frame, read_frame, serve
from schemas.vocab import Outcome

if TYPE_CHECKING:
    from pipelines.document.pool import DocumentPool

__all__ = ["AGAIN", "STOPPED", "WORKER_MAIN", "Reply", "Worker", "launch_worker", "stop_worker"]

#: Seconds a worker waits for its own exit at close before it is killed.
CLOSE_GRACE = 2.0
#: Seconds a new worker may take to start (an interpreter and the document code's imports: 0.25-0.45 s).
_START_TIMEOUT = 60.0
#: The folder the ``pipelines`` package is in: a worker imports the same code as the crawling process.
_CODE_ROOT = str(Path(__file__).resolve().parents[2])
#: How large a buffer the pipe from a worker reads into before it waits for the crawl to take the data.
_READ_LIMIT = 2**20

#: What the caller of a task written to a worker awaits: the answer's bytes, a Lost, or AGAIN when the
#: worker was lost before it began the task (the caller sends it to another).
Reply = asyncio.Future[bytes | Lost | None]
AGAIN = None
#: The answer of a task the pool was closed on.
STOPPED = Lost(Outcome.PARSE_ERROR, "the crawl stopped before this document was parsed")


#: A worker's program: numpy and pandas refused before pyarrow is imported (pipelines/dataset/nopandas.py),
#: then :func:`~pipelines.document.poolserve.serve`. (Not ``python -m``: the classes pickled back must be
#: that module's, not ``__main__``'s.)
WORKER_MAIN = (
    # SIGINT ignored first: a Ctrl-C while the worker imports (as the crawl starts) is the crawl's to handle
    "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
    "from pipelines.dataset.nopandas import refuse_numpy_and_pandas; refuse_numpy_and_pandas(); "
    f"from {serve.__module__} import serve; serve()"
)


def launch_worker() -> subprocess.Popen[bytes]:
    """Start a worker process now; :meth:`Worker.start` joins it to the event loop.

    Started with :class:`subprocess.Popen`, not :func:`asyncio.create_subprocess_exec`, so that the
    crawl can start its first worker before its event loop runs (:meth:`DocumentPool.launch`)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (_CODE_ROOT, os.environ.get("PYTHONPATH"))))}
    return subprocess.Popen(
        # -P: not the working folder first on sys.path: a pipelines/ there must not replace ours
        [sys.executable, "-P", "-c", WORKER_MAIN],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        bufsize=0,
    )


def stop_worker(popen: subprocess.Popen[bytes]) -> None:
    """Kill a worker process that never joined the event loop (or failed to), collect it, close its pipes."""
    popen.kill()  # nothing when it was collected already
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(CLOSE_GRACE)
    for pipe in (popen.stdin, popen.stdout):
        if pipe is not None:
            pipe.close()


class Worker:
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
        self.sent: collections.deque[Reply] = collections.deque()  # one per task written, in order
        self.ready = False  # the worker has sent READY
        self.gone = False  # killed, or its pipes broke: it takes no more jobs
        self.usage: Usage | None = None  # what it said it used, when it stopped
        self._clock: asyncio.TimerHandle | None = None  # the time limit of the job it is working on
        self._timed_out = False
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[int] = loop.create_future()  # its exit status, once collected
        threading.Thread(target=self._wait, args=(loop,), name=f"feedcensus-worker-{popen.pid}", daemon=True).start()
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, pool: DocumentPool, launched: subprocess.Popen[bytes] | None = None) -> Worker:
        """A worker on the running event loop: ``launched`` (a process :func:`launch_worker` started before the
        loop ran), else a new one; killed and collected when joining its pipes to the loop fails or is cancelled."""
        popen = launched or launch_worker()
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
            stop_worker(popen)
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
        """Wait for the worker's exit to be collected, up to :data:`CLOSE_GRACE` seconds."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._exited), CLOSE_GRACE)

    def send(self, payload: bytes) -> Reply:
        """Write a task to the worker's stdin (the pipe holds it while the worker finishes the one before);
        its answer, to await."""
        answer: Reply = asyncio.get_running_loop().create_future()
        self.sent.append(answer)
        self.jobs.write(frame(payload))
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
                answer.set_result(lost if i == 0 else AGAIN)
        self.sent.clear()
        self.pool.worker_lost(self)

    async def _read(self) -> None:
        """Read the worker's answers until it stops or goes away; each answers the oldest job sent."""
        try:
            try:
                first = await asyncio.wait_for(read_frame(self.answers), _START_TIMEOUT)
            except (TimeoutError, asyncio.IncompleteReadError) as exc:
                raise _NotStarted from exc
            if first != READY:
                raise _NotStarted
            self.ready = True
            self._start_clock()
            while True:
                data = await read_frame(self.answers)
                if not self.sent:  # what it says after STOP: what it used
                    self.usage = pickle.loads(data)
                    return
                answer = self.sent.popleft()
                if not answer.done():  # done: its caller stopped waiting (the crawl is stopping)
                    answer.set_result(data)
                self._start_clock()
                self.pool.wake()
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
                self.jobs.write(frame(STOP))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.reader), CLOSE_GRACE + self.pool.timeout * len(self.sent))
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
                answer.set_result(STOPPED)
        self.sent.clear()


class _NotStarted(Exception):
    """A worker did not say it was ready within _START_TIMEOUT, or said something else."""
