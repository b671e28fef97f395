"""The document pool (pipelines/document/pool.py): real worker processes, real documents.

A worker that dies or runs out of time costs one document, recorded as parse_error or
parse_timeout, and the pool replaces it; the rows that come back are the ones the
crawling process would have made itself. A crawl test checks the same through
``feedcensus crawl`` against a loopback web.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from pipelines.dataset.schedule import Policy
from pipelines.dataset.state import SeenItem
from pipelines.document.jobs import ENCODED_TABLES, Job, Lost, Parsed, default_workers, job_rows, workers_setting
from pipelines.document.pool import DocumentPool
from pipelines.document.process import document_rows
from pipelines.document.rows import mark_novelty
from pipelines.feed import parsed_rows
from schemas.items import FeedDocument
from schemas.pickling import by_fields
from schemas.tables import arrow_schema, decode_rows, encode_rows
from schemas.vocab import DateForm, Outcome
from tests.conftest import REPO, read_table, run_cli
from tests.pool_tasks import Loaded

RSS = {"Content-Type": "application/rss+xml"}
T = TypeVar("T")


def doc_of(body: bytes, url: str = "http://127.0.0.1/feed.xml") -> FeedDocument:
    return FeedDocument(
        url=url,
        final_url=url,
        status=200,
        headers={"content-type": "application/rss+xml"},
        body=body,
        discovered_via="url",
        source=None,
        depth=0,
    )


def big_feed(items: int) -> bytes:
    """An RSS 2.0 feed with this many items (20,000 take over a second to parse here)."""
    item = "<item><title>Post {0}</title><link>http://127.0.0.1/p/{0}</link><guid>p{0}</guid>"
    item += "<pubDate>Sun, 22 Nov 2026 10:00:00 GMT</pubDate><description>Body {0}</description></item>"
    body = "".join(item.format(i) for i in range(items))
    head = '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Big</title>'
    return (head + "<link>http://127.0.0.1/</link><description>d</description>" + body + "</channel></rss>").encode()


def in_pool(workers: int = 1, timeout: float = 30) -> Callable[[Callable[[DocumentPool], Awaitable[T]]], T]:
    """Runs ``use(pool)`` on a new event loop with a new pool, as the crawl's reactor thread does, and closes it."""

    def run(use: Callable[[DocumentPool], Awaitable[T]]) -> T:
        async def main() -> T:
            pool = DocumentPool(workers, timeout=timeout)
            await pool.start()
            try:
                return await use(pool)
            finally:
                await pool.close()

        return asyncio.run(main())

    return run


def all_rows(parsed: Parsed) -> dict[str, list[dict[str, Any]]]:
    """A parsed document's rows as dicts, its Arrow-encoded tables decoded."""
    return {**parsed.rows.rows, **{t: decode_rows(t, e).to_pylist() for t, e in parsed.rows.encoded.items()}}


def arrow_round_trip(rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Rows as they read back from Arrow (the encoded tables only; the rest as they are)."""
    return {
        t: pa.RecordBatch.from_pylist(r, schema=arrow_schema(t)).to_pylist() if t in ENCODED_TABLES else r
        for t, r in rows.items()
    }


def test_the_pool_answers_with_the_rows_the_crawling_process_would_make(corpus: Path) -> None:
    feeds = corpus / "benchmark_feeds"
    if not feeds.is_dir():
        pytest.skip(f"benchmark feeds not found at {feeds}")
    files = sorted(p for p in feeds.iterdir() if p.name != "manifest.tsv")[:25]
    docs = [doc_of(path.read_bytes(), f"http://127.0.0.1/{path.name}") for path in files]

    async def use(pool: DocumentPool) -> DocumentPool:
        for doc in docs:
            here, failures = document_rows(doc, None, job_id="j", content_hash="h")
            mark_novelty(here, {})  # what a job does to them before they leave the worker (nothing seen before)
            answer = await pool.run(Job(doc, None, "j", "h"))
            assert not isinstance(answer, Lost), answer
            assert set(answer.rows.encoded) <= set(ENCODED_TABLES) and not set(answer.rows.rows) & set(ENCODED_TABLES)
            assert all_rows(answer) == arrow_round_trip(here.rows), doc.url
            assert answer.failures == failures
        return pool

    pool = in_pool()(use)
    assert pool.documents == len(files)
    assert pool.replaced == 0


def test_encoded_rows_are_the_batch_from_pylist_builds(corpus: Path) -> None:
    """encode_rows converts rows as one struct array: the same columns, values and types as per column."""
    feeds = corpus / "benchmark_feeds"
    if not feeds.is_dir():
        pytest.skip(f"benchmark feeds not found at {feeds}")
    files = sorted(p for p in feeds.iterdir() if p.name != "manifest.tsv")
    compared: dict[str, int] = {}
    for path in files:
        rows, _ = document_rows(doc_of(path.read_bytes(), f"http://127.0.0.1/{path.name}"), None, job_id="j")
        mark_novelty(rows, {})
        for table, table_rows in rows.rows.items():
            expected = pa.RecordBatch.from_pylist(table_rows, schema=arrow_schema(table))
            got = decode_rows(table, encode_rows(table, table_rows))
            assert got.equals(expected), (path.name, table)
            compared[table] = compared.get(table, 0) + len(table_rows)
    assert set(ENCODED_TABLES) <= set(compared), compared
    assert compared["items"] > 1000, compared


@pytest.mark.parametrize(
    ("table", "rows"),
    [
        # a missing column is null and an unknown key is ignored
        ("element_usage", [{"feed_url": "u", "element": "title", "scope": "channel", "count": 1, "not_a_column": 5}]),
        # a null in a column that must not have one: kept, as from_pylist keeps it (the writer's checks see it)
        ("element_usage", [{"feed_url": None, "element": "title", "scope": "channel", "count": 1}]),
        # timestamps, lists (empty, null), enum values, int64
        ("items", [
            {"feed_url": "u", "position": 0, "pub_date": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
             "categories": ["a", "b"], "date_form": DateForm.ISO8601, "enclosure_length": 2**40},
            {"feed_url": "u", "position": 1, "pub_date": None, "categories": [], "date_form": None},
            {"feed_url": "u", "position": 2, "categories": None},
        ]),
    ],
)  # fmt: skip
def test_encoded_rows_match_from_pylist_on_awkward_rows(table: str, rows: list[dict[str, Any]]) -> None:
    got = decode_rows(table, encode_rows(table, rows))
    assert got.equals(pa.RecordBatch.from_pylist(rows, schema=arrow_schema(table)))
    assert got.to_pylist() == pa.RecordBatch.from_pylist(rows, schema=arrow_schema(table)).to_pylist()


def test_a_worker_builds_arrow_batches_without_importing_pandas_or_numpy() -> None:
    """pyarrow would import pandas (when installed) at its first conversion, and numpy as it is imported: a
    worker refuses both (0.25 s and 45 MiB, 0.1 s and 11 MiB a worker). Nor does a worker import the crawl's
    frameworks or DuckDB."""

    names = ("pyarrow", "pandas", "numpy", "duckdb", "scrapy", "twisted")

    async def use(pool: DocumentPool) -> dict[str, bool] | Lost:
        parsed = await pool.run(Job(doc_of(big_feed(3))))
        assert not isinstance(parsed, Lost) and parsed.rows.encoded["items"].num_rows == 3
        return await pool.run(Loaded(names))

    assert in_pool()(use) == {name: name == "pyarrow" for name in names}  # both installed (pyproject.toml)


def test_a_worker_launched_before_the_event_loop_runs_is_the_one_that_answers() -> None:
    """The crawl starts its first worker's process as the crawler is made (crawler/extensions/documentpool.py), before
    its event loop runs; the pool takes that process when it starts, and starts no other."""
    pool = DocumentPool(1, timeout=30)
    pool.launch()
    launched = pool._launched
    assert launched is not None and launched.poll() is None  # running, before any event loop

    async def main() -> Parsed | Lost:
        await pool.start()
        assert pool.pids() == [launched.pid]
        try:
            return await pool.run(Job(doc_of(big_feed(2))))
        finally:
            await pool.close()

    parsed = asyncio.run(main())
    assert not isinstance(parsed, Lost) and parsed.rows.rows["feeds"][0]["item_count"] == 2
    assert pool.ran == 1 and pool.documents == 1
    assert launched.returncode == 0  # it stopped when asked, and was waited for


@pytest.mark.parametrize("how", ["close", "kill"])
def test_a_launched_worker_that_never_joined_is_stopped_with_the_pool(how: str) -> None:
    """A crawl that fails to open never starts the pool: closing (spider_closed) or killing it (a forced
    stop) stops the launched process, and waits for it."""
    pool = DocumentPool(1, timeout=30)
    pool.launch()
    launched = pool._launched
    assert launched is not None
    if how == "close":
        asyncio.run(pool.close())
    else:
        pool.kill()
    assert launched.returncode == -signal.SIGKILL and pool._launched is None  # collected, not left a zombie


def test_a_launched_worker_stops_when_its_pool_is_dropped_unstarted() -> None:
    """A crawl that failed before it opened, and whose reactor never stopped either: the pool's end stops it."""
    pool = DocumentPool(1, timeout=30)
    pool.launch()
    launched = pool._launched
    assert launched is not None and launched.poll() is None
    del pool
    gc.collect()
    assert launched.returncode == -signal.SIGKILL


def test_a_feed_with_items_seen_before_keeps_its_items_as_dicts_and_the_crawl_marks_them() -> None:
    """The identities seen before stay in the crawling process: a job says only that there are some."""
    doc = doc_of(big_feed(2))

    async def use(pool: DocumentPool) -> tuple[object, object]:
        return await pool.run(Job(doc)), await pool.run(Job(doc, known_items=True))

    first, again = in_pool()(use)
    assert isinstance(first, Parsed) and isinstance(again, Parsed)
    assert {"items", "element_usage"} <= set(first.rows.encoded) and "items" not in first.rows.rows
    assert [i["is_new"] for i in all_rows(first)["items"]] == [True, True]  # marked in the worker
    assert "items" not in again.rows.encoded and "element_usage" in again.rows.encoded
    assert first.items_per_week == again.items_per_week is not None
    # The crawling process marks them against what the earlier jobs saw: here, the first of the two.
    before = again.rows.rows["items"][0]
    marked = parsed_rows(again, {before["identity"]: SeenItem("earlier", before["content_hash"])}, Policy())
    assert [(i["is_new"], i["first_seen_job"]) for i in marked.rows.rows["items"]] == [(False, "earlier"), (True, None)]
    assert marked.rows.rows["feeds"][0]["new_items"] == 1


def test_in_the_crawling_process_rows_stay_dicts_for_the_writer() -> None:
    """FEEDCENSUS_WORKERS=0: nothing to pickle, so nothing is built into Arrow before the writer's commit."""
    parsed = job_rows(Job(doc_of(big_feed(2))))
    assert parsed.rows.encoded == {}
    assert [i["is_new"] for i in parsed.rows.rows["items"]] == [True, True]


def test_a_document_past_the_timeout_is_parse_timeout_and_the_worker_is_replaced() -> None:
    async def use(pool: DocumentPool) -> None:
        (before,) = pool.pids()
        answer = await pool.run(Job(doc_of(big_feed(20_000))))
        assert isinstance(answer, Lost)
        assert answer.outcome == Outcome.PARSE_TIMEOUT
        assert answer.error == "parsing took longer than 0.2 s: the worker was stopped"
        assert pool.replaced == 1
        # the next document is parsed by a new worker
        small = await pool.run(Job(doc_of(big_feed(3))))
        assert not isinstance(small, Lost)
        assert small.rows.rows["feeds"][0]["item_count"] == 3
        (after,) = pool.pids()
        assert after != before

    in_pool(timeout=0.2)(use)


def test_a_worker_that_dies_mid_document_costs_that_document_only() -> None:
    async def use(pool: DocumentPool) -> None:
        await pool.run(Job(doc_of(big_feed(1))))  # the worker has started
        (pid,) = pool.pids()
        asking = asyncio.ensure_future(pool.run(Job(doc_of(big_feed(40_000)))))
        await asyncio.sleep(0.3)  # the worker is parsing (40,000 items take seconds)
        os.kill(pid, signal.SIGKILL)
        answer = await asyncio.wait_for(asking, 30)
        assert isinstance(answer, Lost)
        assert answer.outcome == Outcome.PARSE_ERROR
        assert answer.error == "the document worker died while parsing (killed by SIGKILL)"
        assert pool.replaced == 1
        after = await pool.run(Job(doc_of(big_feed(2))))
        assert not isinstance(after, Lost)
        assert after.rows.rows["feeds"][0]["item_count"] == 2

    in_pool()(use)


def test_a_busy_worker_holds_its_next_document_and_the_rest_wait_in_the_crawl() -> None:
    """Back-pressure: a worker holds the document it is on and the next one (so it never waits for the
    crawl between two); a caller beyond that waits until an answer is back. Answers keep their order."""
    order: list[str] = []

    async def ask(pool: DocumentPool, name: str, items: int) -> None:
        answer = await pool.run(Job(doc_of(big_feed(items))))
        assert not isinstance(answer, Lost) and answer.rows.rows["feeds"][0]["item_count"] == items
        order.append(name)

    small = [(f"small{n}", n) for n in range(1, DocumentPool.DEPTH + 3)]

    async def use(pool: DocumentPool) -> None:
        callers = [asyncio.ensure_future(ask(pool, "big", 20_000))]
        await asyncio.sleep(0.2)
        callers += [asyncio.ensure_future(ask(pool, name, n)) for name, n in small]
        await asyncio.sleep(0.2)  # the big feed takes over a second
        assert pool.in_flight() == DocumentPool.DEPTH  # the rest wait in the crawl
        await asyncio.wait_for(asyncio.gather(*callers), 60)
        assert pool.in_flight() == 0

    in_pool()(use)
    assert order == ["big"] + [name for name, _ in small]


def test_a_cancelled_document_does_not_leave_its_answer_for_the_next_one() -> None:
    """A caller that stops waiting (the crawl is being stopped) still has its answer read, and dropped:
    the next document gets its own answer, from the same worker."""

    async def use(pool: DocumentPool) -> None:
        asking = asyncio.ensure_future(pool.run(Job(doc_of(big_feed(40_000)))))
        await asyncio.sleep(0.2)
        assert not asking.done()  # 40,000 items take seconds
        asking.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asking
        after = await pool.run(Job(doc_of(big_feed(2))))
        assert not isinstance(after, Lost)
        assert after.rows.rows["feeds"][0]["item_count"] == 2
        assert pool.replaced == 0

    in_pool()(use)


def test_a_document_queued_behind_a_lost_one_is_parsed_by_the_next_worker() -> None:
    """The document a worker had not begun when it ran out of time is not lost with it."""

    async def use(pool: DocumentPool) -> None:
        big = asyncio.ensure_future(pool.run(Job(doc_of(big_feed(20_000)))))
        await asyncio.sleep(0.05)
        small = asyncio.ensure_future(pool.run(Job(doc_of(big_feed(3)))))
        lost, parsed = await asyncio.wait_for(asyncio.gather(big, small), 60)
        assert isinstance(lost, Lost) and lost.outcome == Outcome.PARSE_TIMEOUT
        assert not isinstance(parsed, Lost) and parsed.rows.rows["feeds"][0]["item_count"] == 3
        assert pool.replaced == 1

    in_pool(timeout=0.3)(use)


def test_a_document_queued_behind_one_whose_worker_died_is_parsed_by_the_next_worker() -> None:
    async def use(pool: DocumentPool) -> None:
        await pool.run(Job(doc_of(big_feed(1))))  # the worker has started
        (pid,) = pool.pids()
        big = asyncio.ensure_future(pool.run(Job(doc_of(big_feed(40_000)))))
        await asyncio.sleep(0.3)
        small = asyncio.ensure_future(pool.run(Job(doc_of(big_feed(3)))))
        await asyncio.sleep(0.05)
        assert pool.in_flight() == 2  # both are in the worker's pipe
        os.kill(pid, signal.SIGKILL)
        lost, parsed = await asyncio.wait_for(asyncio.gather(big, small), 60)
        assert isinstance(lost, Lost) and lost.error == "the document worker died while parsing (killed by SIGKILL)"
        assert not isinstance(parsed, Lost) and parsed.rows.rows["feeds"][0]["item_count"] == 3
        assert pool.replaced == 1 and pool.pids() != [pid]

    in_pool()(use)


def test_closing_the_pool_answers_every_caller_even_those_waiting_for_room() -> None:
    """No caller is left waiting: those in a worker get their rows, those still waiting "the crawl stopped"."""

    async def main() -> list[object]:
        pool = DocumentPool(1, timeout=30)
        await pool.start()
        callers = [asyncio.ensure_future(pool.run(Job(doc_of(big_feed(2_000))))) for _ in range(DocumentPool.DEPTH + 4)]
        await asyncio.sleep(0.1)
        await pool.close()
        return list(await asyncio.wait_for(asyncio.gather(*callers), 30))

    answers = asyncio.run(main())
    stopped = [a for a in answers if isinstance(a, Lost)]
    assert len(answers) - len(stopped) == DocumentPool.DEPTH  # those sent to the worker were answered
    assert {a.error for a in stopped} == {"the crawl stopped before this document was parsed"}


def test_workers_start_as_documents_need_them_and_never_more_than_asked() -> None:
    """One worker at first; another only while every one is busy; up to ``workers``, whatever the demand."""

    async def use(pool: DocumentPool) -> DocumentPool:
        assert len(pool.pids()) == 1
        for _ in range(3):  # one at a time: the first worker is idle for each
            assert not isinstance(await pool.run(Job(doc_of(big_feed(1)))), Lost)
        assert len(pool.pids()) == 1
        answers = await asyncio.gather(*(pool.run(Job(doc_of(big_feed(5_000)))) for _ in range(4)))
        assert len(answers) == 4 and not any(isinstance(a, Lost) for a in answers)
        assert len(pool.pids()) == 2
        return pool

    pool = in_pool(workers=2)(use)
    assert pool.ran == 2 and pool.documents == 7
    assert pool.cpu_seconds > 0 and pool.peak_rss > 0  # both workers said what they used when they stopped


def test_a_body_is_hashed_with_its_rows_unless_the_job_says_its_hash() -> None:
    doc = doc_of(big_feed(2))

    async def use(pool: DocumentPool) -> None:
        hashed = await pool.run(Job(doc))
        given = await pool.run(Job(doc, content_hash="given"))
        assert not isinstance(hashed, Lost) and not isinstance(given, Lost)
        assert hashed.rows.rows["feeds"][0]["content_hash"] == hashlib.sha256(doc.body).hexdigest()
        assert given.rows.rows["feeds"][0]["content_hash"] == "given"

    in_pool()(use)


def test_a_killed_pool_stops_its_workers_at_once() -> None:
    """What a forced stop does (the reactor stops without closing the spider): no worker outlives the crawl."""

    async def main() -> list[int]:
        pool = DocumentPool(1, timeout=30)
        await pool.start()
        pids = pool.pids()
        pool.kill()
        await asyncio.sleep(0.5)
        return pids

    (pid,) = asyncio.run(main())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_pool_needs_a_worker_and_the_default_leaves_a_core_to_the_reactor() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        DocumentPool(0)
    assert default_workers() == max(len(os.sched_getaffinity(0)) - 1, 0)


def test_the_worker_setting_is_read_one_way_for_the_cli_and_the_pipeline() -> None:
    assert workers_setting("auto") == workers_setting(" auto ") == default_workers()
    assert (workers_setting("3"), workers_setting(2), workers_setting("0"), workers_setting("-1")) == (3, 2, 0, 0)
    assert workers_setting(None) == 0  # unset, as outside the project's settings: the in-process path
    for bad in ("many", "", "1.5", True, 2.0):
        with pytest.raises(ValueError):
            workers_setting(bad)


def test_a_page_that_runs_out_of_time_is_recorded_without_its_links_and_the_crawl_goes_on(tmp_path: Path) -> None:
    """Pages are read in the workers too: one that takes too long costs its links, not the crawl."""
    flood = b"".join(b'<link rel="alternate" type="application/rss+xml" href="/f%d.xml">' % i for i in range(30_000))
    web = Web()
    web.add("/flood/", Route(body=b"<html><head>" + flood + b"</head></html>", headers={"Content-Type": "text/html"}))
    web.add("/site/", Route(body=b'<html><head><link rel="alternate" type="application/rss+xml" href="/small.xml">'))
    web.add("/small.xml", Route(body=big_feed(2), headers=RSS))
    out = tmp_path / "out"
    with WebServer(web) as server:
        base = server.url
        proc = run_cli(
            "crawl", "--out", str(out), "--job-id", "t", "--no-reflexive",
            "--url", base + "/flood/", "--url", base + "/site/",
            "-s", "FEEDCENSUS_WORKERS=1", "-s", "FEEDCENSUS_PARSE_TIMEOUT=0.3", "-s", "ROBOTSTXT_OBEY=False",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    log = {r["url"].removeprefix(base): r for r in read_table(out, "fetch_log").to_pylist()}
    assert log["/flood/"]["error"] == "parsing took longer than 0.3 s: the worker was stopped"
    assert log["/flood/"]["outcome"] == "parse_timeout"
    assert log["/site/"]["error"] is None
    assert log["/small.xml"]["outcome"] == "feed"
    assert {r["page_url"].removeprefix(base) for r in read_table(out, "pages").to_pylist()} == {"/site/"}
    assert {r["href"].removeprefix(base) for r in read_table(out, "links").to_pylist()} == {"/small.xml"}
    assert "the page's links were not read; recorded as parse_timeout" in proc.stderr


def test_a_crawl_records_a_feed_that_ran_out_of_time_and_parses_the_others(tmp_path: Path) -> None:
    web = Web()
    web.add("/big.xml", Route(body=big_feed(20_000), headers=RSS))
    web.add("/small.xml", Route(body=big_feed(2), headers=RSS))
    out = tmp_path / "out"
    with WebServer(web) as server:
        proc = run_cli(
            "crawl", "--out", str(out), "--job-id", "t", "--no-reflexive",
            "--url", server.url + "/big.xml", "--url", server.url + "/small.xml",
            "-s", "FEEDCENSUS_WORKERS=1", "-s", "FEEDCENSUS_PARSE_TIMEOUT=0.2", "-s", "ROBOTSTXT_OBEY=False",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    log = {r["url"].rsplit("/", 1)[1]: r for r in read_table(out, "fetch_log").to_pylist()}
    assert log["big.xml"]["outcome"] == "parse_timeout"
    assert log["big.xml"]["error"] == "parsing took longer than 0.2 s: the worker was stopped"
    assert log["big.xml"]["status"] == 200
    assert log["small.xml"]["outcome"] == "feed"
    feeds = read_table(out, "feeds").to_pylist()
    assert [f["url"].rsplit("/", 1)[1] for f in feeds] == ["small.xml"]
    assert "parse_timeout 1" in proc.stdout + proc.stderr


def test_workers_import_the_crawls_code_whatever_folder_the_crawl_runs_in(tmp_path: Path) -> None:
    """A ``pipelines`` package in the working folder (a Scrapy project has one) is not what the workers import."""
    (tmp_path / "pipelines").mkdir()
    (tmp_path / "pipelines" / "__init__.py").write_text('raise SystemExit("the wrong pipelines package")\n')
    web = Web()
    web.add("/small.xml", Route(body=big_feed(2), headers=RSS))
    with WebServer(web) as server:
        # The installed command, as a user runs it (``python -m`` would put the folder first for the crawl too).
        proc = subprocess.run(
            [str(Path(sys.executable).parent / "feedcensus"), "crawl", "--out", str(tmp_path / "out"),
             "--url", server.url + "/small.xml", "--no-reflexive", "-s", "FEEDCENSUS_WORKERS=1",
             "-s", "ROBOTSTXT_OBEY=False"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "workers: 1 process read 1 feed or page" in proc.stderr
    assert "replaced 0" in proc.stderr
    [log] = read_table(tmp_path / "out", "fetch_log").to_pylist()
    assert log["outcome"] == "feed"


def test_the_worker_count_is_a_number_or_auto(tmp_path: Path) -> None:
    web = Web()
    web.add("/small.xml", Route(body=big_feed(2), headers=RSS))
    with WebServer(web) as server:
        url = server.url + "/small.xml"
        # --no-reflexive: the feed's channel link (http://127.0.0.1/) would be retried for 10 s.
        auto = run_cli(
            "crawl", "--out", str(tmp_path / "a"), "--url", url, "--no-reflexive", "-s", "FEEDCENSUS_WORKERS=auto"
        )
        bad = run_cli("crawl", "--out", str(tmp_path / "b"), "--url", url, "-s", "FEEDCENSUS_WORKERS=many")
    assert auto.returncode == 0, auto.stderr[-2000:]
    workers = [line for line in auto.stderr.splitlines() if line.startswith("workers: ")]
    assert workers == [] if default_workers() == 0 else workers[0].startswith(f"workers: {default_workers()} process")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "feedcensus crawl: -s FEEDCENSUS_WORKERS=many: FEEDCENSUS_WORKERS takes a whole number or auto, not 'many'"
    ]


@by_fields
@dataclass(frozen=True)
class NoFields:
    """A class with no fields, pickled by them (module level: pickle finds a class by its name)."""


def test_what_crosses_the_pool_pickles_as_its_fields_and_comes_back_equal() -> None:
    """The task and answer classes pickle as ``cls(*fields)`` (schemas/pickling.py), not through the
    per-field __setstate__ of slotted dataclasses, and unpickle equal, nested objects included."""
    import dataclasses
    import pickle

    from crawler.fetch.discovery import PageTask

    rss = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://a.example/</link>'
        b"<description>d</description><item><title>i</title><guid>g1</guid>"
        b"<pubDate>Sun, 01 Mar 2026 10:00:00 GMT</pubDate></item></channel></rss>"
    )
    doc = FeedDocument(
        "http://a.example/f", "http://a.example/f", 200, {"content-type": "application/rss+xml"}, rss, "seed", None, 0
    )
    job = Job(doc, datetime(2026, 3, 2, tzinfo=UTC), "job-1")
    page = PageTask(
        b'<html><head><link rel="alternate" type="application/rss+xml" href="/f"></head></html>',
        "http://a.example/",
        {"content-type": "text/html"},
        False,
        2000,
    )
    parsed = job.run()
    read = page.run()
    objects = [job, doc, parsed, parsed.rows, *parsed.rows.encoded.values(), page, read, *read.links, read.facts]
    from pipelines.document.checks.context import RuleFailure

    objects += [Lost(Outcome.PARSE_TIMEOUT, "slow"), RuleFailure("item-title", 2, "KeyError: 'x'")]
    for obj in objects:
        assert type(obj).__reduce__(obj)[0] is type(obj)  # the class itself, called with the field values
        back = pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == obj, type(obj).__name__
    assert read.links and parsed.rows.encoded  # the nested objects were there to compare

    @dataclasses.dataclass
    class Checked:
        a: int

        def __post_init__(self) -> None:
            self.a += 1

    @dataclasses.dataclass(kw_only=True)
    class Named:
        a: int

    @dataclasses.dataclass(init=False)
    class ByHand:
        a: int

        def __init__(self, a: int) -> None:
            self.a = a * 4

    for cls in (Checked, Named, ByHand):  # calling them with the field values would not rebuild them
        with pytest.raises(TypeError, match="not rebuilt"):
            by_fields(cls)

    assert pickle.loads(pickle.dumps(NoFields())) == NoFields()  # pickled by its (no) fields too
    with pytest.raises(TypeError, match="not a subclass"):  # it would be pickled as Lost, its own field lost

        @dataclasses.dataclass(frozen=True, slots=True)
        class MoreLost(Lost):
            extra: int = 0


#: The crawl's extension (crawler/extensions/documentpool.py) as Scrapy builds it, with the asyncio reactor installed
#: and never opening a spider (a crawl that failed before it opened); then the reactor stops.
_EXTENSION_WITHOUT_A_CRAWL = """
import json
from scrapy.utils.reactor import install_reactor
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
from scrapy.utils.test import get_crawler
from twisted.internet import reactor
from crawler.extensions.documentpool import DocumentWorkers

crawler = get_crawler(settings_dict={"FEEDCENSUS_WORKERS": 1})
extension = DocumentWorkers.from_crawler(crawler)
launched = extension.pool._launched
running = launched is not None and launched.poll() is None
reactor.callLater(0, reactor.stop)
reactor.run()
print(json.dumps([running, launched.returncode, extension.pool is None]))
"""


def test_the_crawl_starts_its_first_worker_as_the_crawler_is_made_and_stops_it_with_the_reactor() -> None:
    """Before the engine is built, the first worker is importing; a crawl that never opens its spider
    still stops it when its reactor stops, before the process exits."""
    out = subprocess.run(
        [sys.executable, "-c", _EXTENSION_WITHOUT_A_CRAWL], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True, -signal.SIGKILL, True]
