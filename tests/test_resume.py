"""Crash safety and resume: SIGKILL mid-crawl, read the dataset, resume, compare with an uninterrupted run.

The sample web is generated: sites whose home pages advertise a feed, and an
OPML list of more feeds (whose channel pages are checked reflexively). Every
route answers after a short delay so the crawl is still running when killed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from tests.conftest import QUICK_CRAWL, REPO, read_table, run_cli

SITES = 30
LISTED = 20
DELAY = 0.15


def _feed(base: str, path: str, page: str, n: int) -> bytes:
    items = "".join(
        f"<item><title>Post {i}</title><link>{base}{page}p{i}</link><guid>{base}{page}p{i}</guid>"
        f"<pubDate>Sun, 22 Nov 2026 0{i % 10}:00:00 GMT</pubDate><description>Body {i}</description></item>"
        for i in range(n)
    )
    return (
        f'<?xml version="1.0"?><rss version="2.0"><channel><title>{path}</title><link>{base}{page}</link>'
        f"<description>d</description>{items}</channel></rss>"
    ).encode()


def _page(base: str, feed: str | None) -> bytes:
    link = f'<link rel="alternate" type="application/rss+xml" href="{feed}">' if feed else ""
    return f"<!doctype html><html><head><title>x</title>{link}</head><body>hi</body></html>".encode()


@pytest.fixture(scope="module")
def web() -> Any:
    web = Web()
    server = WebServer(web).start()
    base = server.url
    rss = {"Content-Type": "application/rss+xml"}
    html = {"Content-Type": "text/html; charset=utf-8"}
    for i in range(SITES):
        web.add(f"/s{i}/", Route(_page(base, f"/s{i}/feed.xml"), headers=html, delay=DELAY))
        web.add(
            f"/s{i}/feed.xml", Route(_feed(base, f"/s{i}/feed.xml", f"/s{i}/", 5 + i % 7), headers=rss, delay=DELAY)
        )
    outlines = []
    for j in range(LISTED):
        advertise = f"/o{j}/feed.xml" if j % 2 == 0 else None
        web.add(f"/o{j}/", Route(_page(base, advertise), headers=html, delay=DELAY))
        web.add(
            f"/o{j}/feed.xml", Route(_feed(base, f"/o{j}/feed.xml", f"/o{j}/", 3 + j % 5), headers=rss, delay=DELAY)
        )
        outlines.append(f'<outline text="o{j}" xmlUrl="{base}/o{j}/feed.xml"/>')
    web.add(
        "/list.opml",
        Route(
            f'<opml version="2.0"><body>{"".join(outlines)}</body></opml>'.encode(),
            headers={"Content-Type": "text/x-opml"},
        ),
    )
    web.add("/robots.txt", Route(b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"}))
    yield server
    server.stop()


def _inputs(tmp: Path, base: str) -> list[str]:
    seeds = tmp / "seeds.txt"
    seeds.write_text("".join(f"{base}/s{i}/\n" for i in range(SITES)), encoding="utf-8")
    return ["--seeds", str(seeds), "--opml", f"{base}/list.opml"]


SETTINGS = [
    *QUICK_CRAWL,
    "-s",
    "CONCURRENT_REQUESTS_PER_DOMAIN=4",
    "-s",
    "FEEDCENSUS_BATCH_ROWS=40",
    "-s",
    "FEEDCENSUS_FLUSH_SECONDS=0.2",
]


def _crawl_command(tmp: Path, web: Any, out: Path, *args: str) -> list[str]:
    """The crawl of the generated web, as a command to start (and kill) as a subprocess."""
    return [sys.executable, "-m", "crawler.cli", "crawl", *_inputs(tmp, web.url), "--out", str(out), *SETTINGS, *args]


def _snapshot(out: Path) -> dict[str, Any]:
    names = ("feeds", "items", "element_usage", "fetch_log", "links")
    t = {name: read_table(out, name).to_pylist() if (out / name).exists() else [] for name in names}
    return {
        "feeds": sorted((r["url"], r["item_count"], r["reflexive"]) for r in t["feeds"]),
        "items": sorted((r["feed_url"], r["position"], r["guid"]) for r in t["items"]),
        "usage": sorted((r["feed_url"], r["scope"], r["element"], r["count"]) for r in t["element_usage"]),
        "log": sorted((r["url"], r["outcome"]) for r in t["fetch_log"] if r["outcome"] != "duplicate"),
        "links": sorted((r["page_url"], r["href"]) for r in t["links"]),
    }


@pytest.fixture(scope="module")
def reference(web: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("ref")
    proc = run_cli("crawl", *_inputs(tmp, web.url), "--out", str(tmp / "out"), "--job-id", "ref", *SETTINGS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return _snapshot(tmp / "out")


def _commits(out: Path, job: str) -> int:
    folder = out / "_commits" / f"job_id={job}"
    return len(list(folder.glob("*.json"))) if folder.exists() else 0


def _kill_once_committed(cmd: list[str], out: Path, stderr: Path, commits: int = 3) -> str:
    """Start the crawl, SIGKILL it once ``commits`` commits (with items) are on disk; return its job id."""
    with open(stderr, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    job = None
    while time.monotonic() < deadline and proc.poll() is None:
        folders = list((out / "_commits").glob("job_id=*")) if (out / "_commits").exists() else []
        jobs = [p.name.split("=", 1)[1] for p in folders]
        if jobs and _commits(out, jobs[0]) >= commits and any(out.glob("items/*/*.parquet")):
            job = jobs[0]
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the crawl finished before it could be killed: make the web slower"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert job is not None
    return job


def _assert_partial_reads_cleanly(out: Path, partial: dict[str, Any], reference: dict[str, Any]) -> None:
    """What a killed crawl left reads with pyarrow and DuckDB, and is a strict subset of the reference."""
    assert 0 < len(partial["log"]) < len(reference["log"])
    assert set(partial["log"]) <= set(reference["log"])
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{out}/items/**/*.parquet', hive_partitioning=1)").fetchone()
    assert n is not None and n[0] == len(partial["items"])


def _committed_urls(out: Path, job: str) -> set[str]:
    """URLs of the fetch_log files that have their commit marker. A kill between a commit's renames and its
    marker leaves files the resume deletes (and so fetches their URLs again, by design)."""
    stems = {m.stem for m in (out / "_commits" / f"job_id={job}").glob("*.json")}
    files = [
        f for f in (out / "fetch_log" / f"job_id={job}").glob("part-*.parquet") if f.stem.removeprefix("part-") in stems
    ]
    rows = [r for f in files for r in pq.read_table(f, columns=["url", "outcome"]).to_pylist()]
    return {r["url"] for r in rows if r["outcome"] != "duplicate"}  # as _snapshot's log


def _assert_same_as_reference(final: dict[str, Any], reference: dict[str, Any]) -> None:
    for key in reference:
        missing = Counter(reference[key]) - Counter(final[key])
        extra = Counter(final[key]) - Counter(reference[key])
        assert not missing and not extra, (key, sorted(missing)[:5], sorted(extra)[:5])


def test_sigkill_leaves_a_readable_dataset_and_resume_completes_it(
    web: Any, reference: dict[str, Any], tmp_path: Path
) -> None:
    out, state = tmp_path / "out", tmp_path / "state"
    web.reset_hits()
    job = _kill_once_committed(_crawl_command(tmp_path, web, out, "--resume", str(state)), out, tmp_path / "err.txt")
    first_hits = Counter(web.hits)
    partial = _snapshot(out)
    _assert_partial_reads_cleanly(out, partial, reference)
    written = _committed_urls(out, job)

    # Resumed: same job, and at the end exactly the reference dataset.
    web.reset_hits()
    proc2 = run_cli("crawl", "--resume", str(state), *SETTINGS)
    assert proc2.returncode == 0, proc2.stderr[-3000:]
    assert f"resuming job {job}" in proc2.stderr
    _assert_same_as_reference(_snapshot(out), reference)
    # Nothing already written was fetched again (robots.txt is read again by design: its rules are not kept).
    refetched = [u for u in written if web.hits.get(u.split(web.url, 1)[1], 0) > 0 and not u.endswith("/robots.txt")]
    assert refetched == []
    assert sum(first_hits.values()) + sum(web.hits.values()) >= len(reference["log"])
    assert not [p for p in out.rglob(".*") if p.is_file()]


def test_sigint_stops_gracefully_and_flushes(web: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    huge_batches = ["-s", "FEEDCENSUS_FLUSH_SECONDS=3600", "-s", "FEEDCENSUS_BATCH_ROWS=100000"]
    cmd = _crawl_command(tmp_path, web, out, "--job-id", "int", *huge_batches)
    web.reset_hits()
    with open(tmp_path / "stderr.txt", "wb") as fh:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=fh)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and sum(n for p, n in web.hits.items() if p.endswith("feed.xml")) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    err = (tmp_path / "stderr.txt").read_text(errors="replace")
    assert "Traceback" not in err
    # Nothing was committed before the signal (huge batch, no timed flush): every row comes from the graceful close.
    log = read_table(out, "fetch_log").to_pylist()
    assert len(log) >= 10
    assert proc.returncode == 130
    last = err.strip().splitlines()[-1]
    assert last.startswith("feedcensus crawl: interrupted;") and "--resume DIR" in last, last
    feeds = read_table(out, "feeds").to_pylist()
    fetched_feeds = {r["url"] for r in log if r["outcome"] == "feed"}
    assert {r["url"] for r in feeds} == fetched_feeds


# --- resuming what the first run accepted, with every option it was given -------------------------------------


def _interrupt_after(cmd: list[str], cwd: Path, web: Any, err_path: Path, suffix: str) -> int:
    """Start ``cmd`` in ``cwd``, send SIGINT once a path ending in ``suffix`` is requested; return its exit code."""
    web.reset_hits()
    with open(err_path, "wb") as err:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(p.endswith(suffix) for p in list(web.hits)):
        time.sleep(0.01)
    assert proc.poll() is None, "the crawl finished before it could be interrupted: make the web slower"
    proc.send_signal(signal.SIGINT)
    return proc.wait(timeout=60)


def _local_inputs(folder: Path, base: str) -> None:
    """The generated web's seeds and OPML list as local files (the list names the same feeds as /list.opml)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "seeds.txt").write_text("".join(f"{base}/s{i}/\n" for i in range(SITES)), encoding="utf-8")
    outlines = "".join(f'<outline text="o{j}" xmlUrl="{base}/o{j}/feed.xml"/>' for j in range(LISTED))
    (folder / "list.opml").write_text(f'<opml version="2.0"><body>{outlines}</body></opml>', encoding="utf-8")


def test_resume_of_relative_local_inputs_from_another_directory(
    web: Any, reference: dict[str, Any], tmp_path: Path
) -> None:
    first, elsewhere = tmp_path / "first", tmp_path / "elsewhere"
    _local_inputs(first, web.url)
    elsewhere.mkdir()
    cmd = [
        sys.executable, "-m", "crawler.cli", "crawl", "--seeds", "seeds.txt", "--opml", "./list.opml",
        "--url", "feeds/x.xml", "--out", "out", "--resume", "state", *SETTINGS,
    ]  # fmt: skip
    code = _interrupt_after(cmd, first, web, tmp_path / "first.txt", "feed.xml")
    err = (tmp_path / "first.txt").read_text(errors="replace")
    assert code == 130, err[-3000:]
    # The last line says what was committed and the exact command that resumes.
    last = err.strip().splitlines()[-1]
    assert "interrupted" in last and "feedcensus crawl --resume state" in last, last
    partial = _snapshot(first / "out")
    assert len(partial["feeds"]) < len(reference["feeds"])

    web.reset_hits()
    proc = run_cli(
        "crawl", "--resume", str(Path("..") / "first" / "state"), cwd=elsewhere, env={"PYTHONPATH": str(REPO)}
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-3000:]
    assert not (elsewhere / "out").exists(), "the resume wrote where it was run, not where the job lives"
    final = _snapshot(first / "out")
    # Feeds and items as in the reference (the reflexive verdict aside: a graceful stop writes the feeds
    # whose channel page had not answered yet as page_unreachable, in pipelines/reflexive.py).
    assert [f[:2] for f in final["feeds"]] == [f[:2] for f in reference["feeds"]]
    assert final["items"] == reference["items"]
    # One row per URL: nothing written before was written again, the unusable --url included.
    urls = [u for u, outcome in final["log"]]
    assert len(urls) == len(set(urls))
    assert ("feeds/x.xml", "unsupported_scheme") in final["log"] or ("feeds/x.xml", "invalid_url") in final["log"]


def test_resume_keeps_every_option_and_refuses_contradicting_ones(web: Any, tmp_path: Path) -> None:
    out, state = tmp_path / "out", tmp_path / "state"
    options = ["--no-reflexive", "--guess", "--follow-body-links", "--log-level", "WARNING"]
    cmd = _crawl_command(tmp_path, web, out, "--resume", str(state), *options)
    code = _interrupt_after(cmd, REPO, web, tmp_path / "first.txt", "/")  # a seed page: before any feed
    assert code == 130, (tmp_path / "first.txt").read_text(errors="replace")[-3000:]
    saved = json.loads((state / "state.json").read_text())
    assert saved["options"]["no_reflexive"] is True and saved["options"]["guess"] is True
    assert saved["options"]["follow_body_links"] is True and saved["options"]["no_pages"] is False
    assert saved["options"]["log_level"] == "WARNING"
    assert saved["options"]["set"] == [s for s in SETTINGS if s != "-s"]

    # Explicit options that contradict the saved ones: one line, exit 2, nothing crawled.
    for bad in (["--no-pages"], ["-s", "FEEDCENSUS_BATCH_ROWS=99"], ["-s", "DOWNLOAD_TIMEOUT=5"]):
        web.reset_hits()
        proc = run_cli("crawl", "--resume", str(state), *bad)
        assert proc.returncode == 2, (bad, proc.stderr[-2000:])
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and bad[-1].split("=")[0].lstrip("-") in lines[0], (bad, lines)
        assert sum(web.hits.values()) == 0

    # Only --resume: the saved options are used (no channel page is checked for the feeds the resume fetches).
    web.reset_hits()
    proc = run_cli("crawl", "--resume", str(state))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert any(p.startswith("/o") and p.endswith("feed.xml") for p in web.hits), "the resume fetched no OPML feed"
    feeds = read_table(out, "feeds").to_pylist()
    assert feeds and all(f["reflexive"] is None for f in feeds), [f["reflexive"] for f in feeds]
    assert not [p for p in web.hits if p.startswith("/o") and p.endswith("/")], "channel pages were fetched"


def test_double_sigint_exits_130_and_the_summary_counts_what_is_on_disk(web: Any, tmp_path: Path) -> None:
    out = tmp_path / "out"
    small_batches = ["-s", "FEEDCENSUS_BATCH_ROWS=5", "-s", "FEEDCENSUS_FLUSH_SECONDS=0.1"]
    cmd = _crawl_command(tmp_path, web, out, "--job-id", "dbl", *small_batches)
    web.reset_hits()
    with open(tmp_path / "stderr.txt", "wb") as fh:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=fh)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _commits(out, "dbl") < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=60)
    err = (tmp_path / "stderr.txt").read_text(errors="replace")
    assert code == 130, err[-3000:]
    assert "Traceback" not in err
    on_disk = list(out.glob("*/job_id=dbl/*.parquet"))
    log = read_table(out, "fetch_log").to_pylist()
    (data_line,) = [line for line in err.splitlines() if line.startswith("data: ")]
    assert f"{len(on_disk)} files" in data_line, (data_line, len(on_disk))
    assert f"fetch_log {len(log)} rows" in data_line, (data_line, len(log))
    assert "interrupted" in err.strip().splitlines()[-1]


def test_a_journal_entry_no_request_can_be_made_for_is_a_row(web: Any, tmp_path: Path) -> None:
    """Before, Scrapy's ``Request`` refused it inside the engine and the resumed crawl failed (exit 2)."""
    out, state = tmp_path / "out", tmp_path / "state"
    proc = run_cli("crawl", "--url", f"{web.url}/s0/feed.xml", "--out", str(out), "--resume", str(state), *SETTINGS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # A journal edited by hand: an entry Scrapy cannot turn into a request.
    line = json.loads((state / "journal.jsonl").read_text().splitlines()[0])
    line["url"] = "not-a-url"
    with open(state / "journal.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
    proc = run_cli("crawl", "--resume", str(state))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    rows = [r for r in read_table(out, "fetch_log").to_pylist() if r["url"] == "not-a-url"]
    assert [r["outcome"] for r in rows] == ["invalid_url"] and "Missing scheme" in rows[0]["error"]


def test_an_error_inside_the_engine_is_shown_as_itself() -> None:
    from crawler.cli.crawl import CrawlResult, exit_status
    from crawler.cli.errors import EXIT_USAGE

    result = CrawlResult(stats={}, elapsed=1.0, engine_error=ValueError("Missing scheme in request url: x"))
    args = argparse.Namespace(frontier=None, resume=None)
    assert exit_status(result, args, {"FEEDCENSUS_OUT": "out", "FEEDCENSUS_JOB_ID": "j"}) == (
        EXIT_USAGE,
        "the crawl failed: ValueError: Missing scheme in request url: x",
    )


def test_a_worker_whose_requests_its_hosts_answered_with_errors_did_not_fail() -> None:
    """A worker of a shared job that took only a gone feed (its host answered 404) fetched the job's data; one
    whose every request got no answer at all failed, as a crawl whose every input failed does."""
    from crawler.cli.crawl import CrawlResult, exit_status
    from crawler.cli.errors import EXIT_NOTHING_FETCHED, EXIT_OK

    args = argparse.Namespace(frontier="redis://127.0.0.1:1/0", resume=None)
    settings = {"FEEDCENSUS_OUT": "out", "FEEDCENSUS_JOB_ID": "j"}
    gone = {"feedcensus/frontier/leased": 1, "feedcensus/outcome/http_error": 1}
    assert exit_status(CrawlResult(stats=gone, elapsed=1.0), args, settings, worker=True) == (EXIT_OK, None)
    assert exit_status(CrawlResult(stats=gone, elapsed=1.0), args, settings)[0] == EXIT_NOTHING_FETCHED
    unreachable = {"feedcensus/frontier/leased": 2, "feedcensus/outcome/network_error": 2}
    code, _ = exit_status(CrawlResult(stats=unreachable, elapsed=1.0), args, settings, worker=True)
    assert code == EXIT_NOTHING_FETCHED


def test_resume_of_a_job_that_wrote_no_links(web: Any, tmp_path: Path) -> None:
    """Feeds whose channel pages advertise nothing: the job has no links table, and a resume still runs."""
    out, state = tmp_path / "out", tmp_path / "state"
    feeds = [a for j in range(1, LISTED, 2) for a in ("--url", f"{web.url}/o{j}/feed.xml")]
    proc = run_cli("crawl", *feeds, "--out", str(out), "--resume", str(state), *SETTINGS, timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not (out / "links").exists()
    web.reset_hits()
    proc = run_cli("crawl", "--resume", str(state), timeout=60)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-3000:]
    assert sum(web.hits.values()) == 0, "a resume of a finished job fetched again"
    assert len(read_table(out, "feeds")) == LISTED // 2
