"""The document pool (pipelines/document/pool.py): real worker processes, real documents.

A worker that dies or runs out of time costs one document, recorded as parse_error or
parse_timeout, and the pool replaces it; the rows that come back are the ones the
crawling process would have made itself. A crawl test checks the same through
``feedcensus crawl`` against a loopback web.
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from crawler.demo.webserver import Route, Web, WebServer
from pipelines.document.pool import DocumentPool, Job, Lost, default_workers, workers_setting
from pipelines.document.process import document_rows
from schemas.items import FeedDocument
from schemas.vocab import Outcome
from tests.conftest import read_table, run_cli

RSS = {"Content-Type": "application/rss+xml"}


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


@pytest.fixture
def pool() -> Any:
    p = DocumentPool(1, timeout=30)
    yield p
    p.close()


def test_the_pool_answers_with_the_rows_the_crawling_process_would_make(pool: DocumentPool, corpus: Path) -> None:
    feeds = corpus / "benchmark_feeds"
    if not feeds.is_dir():
        pytest.skip(f"benchmark feeds not found at {feeds}")
    files = sorted(p for p in feeds.iterdir() if p.name != "manifest.tsv")[:25]
    for path in files:
        doc = doc_of(path.read_bytes(), f"http://127.0.0.1/{path.name}")
        here, failures = document_rows(doc, None, job_id="j", content_hash="h")
        answer = pool.process(Job(doc, None, "j", "h"))
        assert not isinstance(answer, Lost), answer
        assert answer[0].rows == here.rows, path.name
        assert answer[1] == failures
    assert pool.documents == len(files)
    assert pool.replaced == 0


def test_a_document_past_the_timeout_is_parse_timeout_and_the_worker_is_replaced() -> None:
    pool = DocumentPool(1, timeout=0.2)
    try:
        before = pool.pids()
        answer = pool.process(Job(doc_of(big_feed(20_000))))
        assert isinstance(answer, Lost)
        assert answer.outcome == Outcome.PARSE_TIMEOUT
        assert answer.error == "parsing took longer than 0.2 s: the worker was stopped"
        assert pool.replaced == 1
        assert pool.pids() != before
        # the next document is parsed by the new worker
        small = pool.process(Job(doc_of(big_feed(3))))
        assert not isinstance(small, Lost)
        assert small[0].rows["feeds"][0]["item_count"] == 3
    finally:
        pool.close()


def test_a_worker_that_dies_mid_document_costs_that_document_only(pool: DocumentPool) -> None:
    (pid,) = pool.pids()
    answers: list[Any] = []
    asking = threading.Thread(target=lambda: answers.append(pool.process(Job(doc_of(big_feed(40_000))))))
    asking.start()
    time.sleep(0.3)  # the worker is parsing (40,000 items take seconds)
    os.kill(pid, signal.SIGKILL)
    asking.join(30)
    (answer,) = answers
    assert isinstance(answer, Lost)
    assert answer.outcome == Outcome.PARSE_ERROR
    assert answer.error == "the document worker died while parsing (killed by SIGKILL)"
    assert pool.replaced == 1
    after = pool.process(Job(doc_of(big_feed(2))))
    assert not isinstance(after, Lost)
    assert after[0].rows["feeds"][0]["item_count"] == 2


def test_the_pool_waits_for_an_idle_worker_instead_of_queueing_documents(pool: DocumentPool) -> None:
    """Back-pressure: with one worker, a second caller waits until the first answer is back."""
    order: list[str] = []

    def ask(name: str, items: int) -> None:
        pool.process(Job(doc_of(big_feed(items))))
        order.append(name)

    first = threading.Thread(target=ask, args=("big", 20_000))
    first.start()
    time.sleep(0.2)
    second = threading.Thread(target=ask, args=("small", 1))
    second.start()
    first.join(60)
    second.join(60)
    assert order == ["big", "small"]


def test_workers_start_as_documents_need_them_and_never_more_than_asked() -> None:
    """One worker at first; another only while every one is busy; up to ``workers``, whatever the demand."""
    pool = DocumentPool(2, timeout=30)
    try:
        assert len(pool.pids()) == 1
        for _ in range(3):  # one at a time: the first worker is idle for each
            assert not isinstance(pool.process(Job(doc_of(big_feed(1)))), Lost)
        assert len(pool.pids()) == 1
        answers: list[object] = []
        callers = [
            threading.Thread(target=lambda: answers.append(pool.process(Job(doc_of(big_feed(5_000))))))
            for _ in range(4)
        ]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(60)
        assert len(answers) == 4 and not any(isinstance(a, Lost) for a in answers)
        assert len(pool.pids()) == 2
    finally:
        pool.close()
    assert pool.ran == 2 and pool.documents == 7


def test_a_body_is_hashed_with_its_rows_unless_the_job_says_its_hash(pool: DocumentPool) -> None:
    doc = doc_of(big_feed(2))
    hashed = pool.process(Job(doc))
    given = pool.process(Job(doc, content_hash="given"))
    assert not isinstance(hashed, Lost) and not isinstance(given, Lost)
    assert hashed[0].rows["feeds"][0]["content_hash"] == hashlib.sha256(doc.body).hexdigest()
    assert given[0].rows["feeds"][0]["content_hash"] == "given"


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


def test_the_worker_count_is_a_number_or_auto(tmp_path: Path) -> None:
    web = Web()
    web.add("/small.xml", Route(body=big_feed(2), headers=RSS))
    with WebServer(web) as server:
        url = server.url + "/small.xml"
        auto = run_cli("crawl", "--out", str(tmp_path / "a"), "--url", url, "-s", "FEEDCENSUS_WORKERS=auto")
        bad = run_cli("crawl", "--out", str(tmp_path / "b"), "--url", url, "-s", "FEEDCENSUS_WORKERS=many")
    assert auto.returncode == 0, auto.stderr[-2000:]
    workers = [line for line in auto.stderr.splitlines() if line.startswith("workers: ")]
    assert workers == [] if default_workers() == 0 else workers[0].startswith(f"workers: {default_workers()} process")
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "feedcensus crawl: -s FEEDCENSUS_WORKERS=many: FEEDCENSUS_WORKERS takes a whole number or auto, not 'many'"
    ]
