"""The work a document worker does (:mod:`pipelines.document.pool` runs it): a :class:`Task` is any
picklable object with a pure ``run``; a :class:`Job` is a feed document's, answered with its rows
(:class:`Parsed`) or, when the work was lost, a :class:`Lost`. Also how many workers a crawl asks for."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, TypeVar

from pipelines.dataset.schedule import items_per_week
from pipelines.document.rows import TableRows, mark_novelty
from schemas.items import FeedDocument
from schemas.pickling import by_fields
from schemas.vocab import Outcome

if TYPE_CHECKING:
    from pipelines.document.checks import RuleFailure

T_co = TypeVar("T_co", covariant=True)


class Task(Protocol[T_co]):
    """Work for a worker: a picklable object whose ``run`` the worker calls (pure CPU work over plain data).

    Its class is pickled by name, so a worker imports the module that defines it with the first such
    task: :class:`Job` (a feed document's rows) here, ``crawler.fetch.discovery.PageTask`` (an HTML
    page's feed links and facts) there. What ``run`` returns must pickle too."""

    def run(self) -> T_co: ...


#: The tables of a parsed feed that nothing in the crawling process reads, only writes: a worker
#: sends them as Arrow record batches (:meth:`TableRows.encode`). Items only when no earlier job saw
#: any item of the feed (:attr:`Job.known_items`).
ENCODED_TABLES = ("items", "element_usage", "conformance")


@by_fields
@dataclass(frozen=True, slots=True)
class Job:
    """One feed document to process, and what its rows need besides it."""

    doc: FeedDocument
    now: datetime | None = None
    job_id: str | None = None
    #: The body's SHA-256, when the crawling process needed it first (to compare with the last fetch);
    #: else None, and it is computed with the rest of the document's work (:func:`job_rows`).
    content_hash: str | None = None
    #: Earlier jobs saw items of this feed: the crawling process marks which items are new and
    #: changed (it has the identities seen, which only grow), so the items stay dicts. Else every
    #: item is new, marked here.
    known_items: bool = False

    def run(self) -> Parsed:
        """In a worker: the rows, with the tables the crawling process only writes built into Arrow."""
        return job_rows(self, encode=True)


@by_fields
@dataclass(frozen=True, slots=True)
class Parsed:
    """A feed document's work, done: its rows (:data:`ENCODED_TABLES` as Arrow), the profile rules that
    failed internally, and its items per week (for scheduling its next fetch)."""

    rows: TableRows
    failures: tuple[RuleFailure, ...]
    items_per_week: float | None


@by_fields
@dataclass(frozen=True, slots=True)
class Lost:
    """The document's work was lost: it gets a fetch_log row with this outcome and error, and no other rows."""

    outcome: Outcome  # parse_error or parse_timeout
    error: str


#: What :meth:`DocumentPool.run` answers for a :class:`Job`.
Answer = Parsed | Lost


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


def content_digest(doc: FeedDocument) -> str | None:
    """SHA-256 (hex) of the body as received; None for a 304, which has none."""
    return hashlib.sha256(doc.body).hexdigest() if doc.status != 304 else None


def job_rows(job: Job, *, encode: bool = False) -> Parsed:
    """:func:`document_rows` for one job (hashing the body first unless the job says its hash), its
    items marked new when no earlier job saw any, and its items per week. ``encode``: build the
    :data:`ENCODED_TABLES` into Arrow (in a worker; in the crawling process the writer does it)."""
    from pipelines.document.process import document_rows  # here: the crawling process needs it only without workers

    digest = job.content_hash if job.content_hash is not None else content_digest(job.doc)
    rows, failures = document_rows(job.doc, job.now, job_id=job.job_id, content_hash=digest)
    rate = items_per_week([it["pub_date"] for it in rows.rows.get("items", ())], job.doc.fetched_at)
    if not job.known_items:
        mark_novelty(rows, {})
    if encode:
        rows.encode(t for t in ENCODED_TABLES if not (job.known_items and t == "items"))
    return Parsed(rows, failures, rate)
