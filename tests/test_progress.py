"""Progress: a live status line on a terminal, periodic log lines otherwise, and a summary at the end."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import time
from pathlib import Path

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from crawler.extensions.progress import status_line, summary_lines
from tests.conftest import QUICK_CRAWL, REPO


def test_status_and_summary_lines_add_up() -> None:
    stats = {
        "response_received_count": 120,
        "feedcensus/outcome/feed": 30,
        "feedcensus/outcome/page": 80,
        "feedcensus/outcome/http_error": 7,
        "feedcensus/outcome/timeout": 3,
        "feedcensus/items": 600,
        "feedcensus/outcome/duplicate": 12,
        "feedcensus/inputs": 90,
    }
    line = status_line(stats, pending=5, elapsed=60.0)
    assert line == (
        "120 responses, 5 pending, 30 feeds, 600 items, 10 errors, 120 responses/min, elapsed 1:00, ~0:03 left"
    )
    # No estimate before a rate is known, nor when nothing is pending.
    assert status_line({}, pending=5, elapsed=0.0).endswith("0 responses/min, elapsed 0:00")
    assert status_line(stats, pending=0, elapsed=3725.0).endswith("elapsed 1:02:05")
    summary = "\n".join(summary_lines(stats, "/data", "job1"))
    assert "errors: http_error 7, timeout 3" in summary
    assert "feeds: 30   items: 600" in summary
    assert "data: /data (job_id=job1" in summary
    assert "profile rules that failed" not in summary
    stats["feedcensus/checks/internal_error/item-date-in-future"] = 2
    assert summary_lines(stats, "/data", "job1")[-1].endswith("(not counted in conformance): item-date-in-future 2")


def test_live_progress_on_a_terminal(tmp_path: Path) -> None:
    web = Web()
    html = {"Content-Type": "text/html"}
    for i in range(12):
        web.add(f"/s{i}/", Route(b"<html><head><title>x</title></head></html>", headers=html, delay=0.4))
    # A list that is not well-formed, answered while the live line is up: its warning must not run into the line.
    web.add("/list.opml", Route(b'<opml version="2.0"><body><outline text="a & b"/></body></opml>', delay=1.2))
    with WebServer(web) as server:
        urls = [a for i in range(12) for a in ("--url", f"{server.url}/s{i}/")]
        urls += ["--opml", f"{server.url}/list.opml"]
        primary, secondary = pty.openpty()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "crawler.cli",
                "crawl",
                *urls,
                "--out",
                str(tmp_path / "out"),
                *QUICK_CRAWL,
                "-s",
                "ROBOTSTXT_OBEY=False",
                "-s",
                "CONCURRENT_REQUESTS_PER_DOMAIN=2",
            ],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=secondary,
        )
        os.close(secondary)
        chunks = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                data = os.read(primary, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=30)
        os.close(primary)
    out = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0
    assert "\r\x1b[K" in out and "pending" in out and "responses/min" in out and "elapsed" in out
    # The warning was printed on a line of its own: the live line was cleared first.
    warnings = [m.start() for m in re.finditer(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[", out)]
    assert warnings, out
    for at in warnings:
        assert out[:at].endswith(("\r\x1b[K", "\n")), repr(out[max(0, at - 80) : at + 40])
    assert "not well-formed" in out
    assert out.count("pages: 12") == 1, out  # the summary, printed once at the end
    assert "Dumping Scrapy stats" not in out and "Enabled extensions" not in out


def test_periodic_log_lines_when_not_on_a_terminal(tmp_path: Path) -> None:
    from tests.conftest import run_cli

    web = Web()
    for i in range(6):
        web.add(f"/s{i}/", Route(b"<html><head></head></html>", headers={"Content-Type": "text/html"}, delay=0.4))
    with WebServer(web) as server:
        urls = [a for i in range(6) for a in ("--url", f"{server.url}/s{i}/")]
        proc = run_cli(
            "crawl",
            *urls,
            "--out",
            str(tmp_path / "out"),
            "-s",
            "FEEDCENSUS_PROGRESS_INTERVAL=0.3",
            *QUICK_CRAWL,
            "-s",
            "ROBOTSTXT_OBEY=False",
            "-s",
            "CONCURRENT_REQUESTS_PER_DOMAIN=1",
        )
    assert proc.returncode == 0
    assert "\x1b[K" not in proc.stderr
    assert "[crawler.extensions.progress] INFO: progress: " in proc.stderr
    assert "elapsed" in proc.stderr
    assert proc.stderr.count("pages: 6") == 1, proc.stderr  # the summary, printed once
    assert "Dumping Scrapy stats" not in proc.stderr and "Overridden settings" not in proc.stderr
