"""Crash safety and resume: SIGKILL mid-crawl, read the dataset, resume, compare with an uninterrupted run.

The sample web is generated: sites whose home pages advertise a feed, and an
OPML list of more feeds (whose channel pages are checked reflexively). Every
route answers after a short delay so the crawl is still running when killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
import pytest

from crawler.demo.webserver import Route, Web, WebServer
from tests.conftest import REPO, read_table, run_cli

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
    "-s",
    "AUTOTHROTTLE_ENABLED=False",
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


def test_sigkill_leaves_a_readable_dataset_and_resume_completes_it(
    web: Any, reference: dict[str, Any], tmp_path: Path
) -> None:
    out, state = tmp_path / "out", tmp_path / "state"
    cmd = _crawl_command(tmp_path, web, out, "--resume", str(state))
    web.reset_hits()
    with open(tmp_path / "stderr.txt", "wb") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 60
    job = None
    while time.monotonic() < deadline and proc.poll() is None:
        jobs = (
            [p.name.split("=", 1)[1] for p in (out / "_commits").glob("job_id=*")]
            if (out / "_commits").exists()
            else []
        )
        if jobs and _commits(out, jobs[0]) >= 3 and list(out.glob("items/*/*.parquet")):
            job = jobs[0]
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the crawl finished before it could be killed: make the web slower"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    assert job is not None
    first_hits = Counter(web.hits)

    # Killed: what is there reads cleanly with pyarrow and DuckDB, and is a strict subset of the reference.
    partial = _snapshot(out)
    assert 0 < len(partial["log"]) < len(reference["log"])
    assert set(partial["log"]) <= set(reference["log"])
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*) FROM read_parquet('{out}/items/**/*.parquet', hive_partitioning=1)").fetchone()
    assert n is not None and n[0] == len(partial["items"])
    written = {u for u, _ in partial["log"]}

    # Resumed: same job, and at the end exactly the reference dataset.
    web.reset_hits()
    proc2 = run_cli("crawl", "--resume", str(state), *SETTINGS)
    assert proc2.returncode == 0, proc2.stderr[-3000:]
    assert f"resuming job {job}" in proc2.stderr
    final = _snapshot(out)
    for key in reference:
        missing = Counter(reference[key]) - Counter(final[key])
        extra = Counter(final[key]) - Counter(reference[key])
        assert not missing and not extra, (key, sorted(missing)[:5], sorted(extra)[:5])
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
    assert "shutdown" in err.lower() or "closing spider" in err.lower()
    feeds = read_table(out, "feeds").to_pylist()
    fetched_feeds = {r["url"] for r in log if r["outcome"] == "feed"}
    assert {r["url"] for r in feeds} == fetched_feeds
