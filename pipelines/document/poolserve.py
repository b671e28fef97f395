"""Inside a document worker process: tasks in on stdin, answers out on stdout; and the frames both ends use.

A worker is started by :mod:`pipelines.document.poolworker` running :func:`serve`. It says
:data:`READY` once it has imported the document code, then reads pickled tasks and writes each
one's answer, pickled, in the order it read them; :data:`STOP` asks it to exit, and it answers
with its :class:`Usage`. A task that raises costs that task (a :class:`~pipelines.document.jobs.Lost`),
not the worker. Messages are framed as :class:`multiprocessing.connection.Connection` frames them
(a 4-byte length): :func:`frame` and :func:`read_frame` are the crawling process's side of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import importlib
import os
import pickle
import resource
import struct
from dataclasses import dataclass
from multiprocessing.connection import Connection

from pipelines.document.jobs import Lost, Task
from schemas.vocab import Outcome

__all__ = ["READY", "STOP", "Usage", "frame", "read_frame", "serve"]

STOP = b""  # sent to a worker: exit
READY = b"ready"  # sent by a worker once it has imported the document code
#: The size a worker asks for its pipes (Linux's default is 64 KiB and its default maximum 1 MiB): with
#: the default, the event loop wrote a feed in 64 KiB steps, and 2 workers parsed the benchmark feeds
#: measurably slower (benchmarks/RESULTS.md, section 11).
_PIPE_BYTES = 2**20


@dataclass(frozen=True, slots=True)
class Usage:
    """What a worker used in its life: CPU seconds (user + system) and its peak resident memory in bytes."""

    cpu_seconds: float
    peak_rss: int


def serve() -> None:
    """A worker's entry point (:data:`pipelines.document.poolworker.WORKER_MAIN`): jobs on stdin, answers on stdout."""
    for fd in (0, 1):  # larger pipes: a feed of a few hundred KB crosses in one write, not 64 KiB at a time
        with contextlib.suppress(OSError, AttributeError):  # AttributeError: not Linux; OSError: over pipe-max-size
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    jobs, answers = Connection(os.dup(0), writable=False), Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # a stray print goes to stderr, not into the answers
    # The document code before the worker says it is ready: its import (about 0.1 s) is not counted
    # against the first feed's time limit. The crawling process imports it only when it parses itself.
    importlib.import_module("pipelines.document.process")
    _serve(jobs, answers)


def _serve(jobs: Connection, answers: Connection) -> None:
    """A worker's life: say it is ready, answer jobs until told to stop (then say what it used) or the crawling
    process goes away. (SIGINT is ignored already: :data:`pipelines.document.poolworker.WORKER_MAIN`.)"""
    answers.send_bytes(READY)
    while True:
        try:
            data = jobs.recv_bytes()
        except (EOFError, OSError):
            return
        if data == STOP:
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


def frame(payload: bytes) -> bytes:
    """``payload`` framed as :meth:`multiprocessing.connection.Connection.send_bytes` frames it (what
    :func:`serve` reads): a signed 4-byte big-endian length, or -1 and an 8-byte length beyond 2 GiB."""
    size = len(payload)
    if size > 0x7FFFFFFF:
        return struct.pack("!iQ", -1, size) + payload
    return struct.pack("!i", size) + payload


async def read_frame(stream: asyncio.StreamReader) -> bytes:
    """One message a worker sent (:meth:`Connection.send_bytes`); IncompleteReadError when its pipe closes first."""
    (size,) = struct.unpack("!i", await stream.readexactly(4))
    if size == -1:
        (size,) = struct.unpack("!Q", await stream.readexactly(8))
    return await stream.readexactly(size)
