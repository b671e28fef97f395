"""What `feedcensus crawl` and `feedcensus demo` tell the user: exit codes, one-line errors, a quiet terminal.

Every crawl here is real (a subprocess of the CLI against a server on 127.0.0.1);
the data is read back from Parquet.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

from tests.conftest import QUICK_CRAWL, read_table, run_cli

FAST = [*QUICK_CRAWL, "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8"]
#: Scrapy's INFO lines that belong in a log file, not on the terminal.
SCRAPY_NOISE = ("Overridden settings", "Enabled extensions", "Enabled downloader middlewares", "Dumping Scrapy stats")


def _closed_port() -> int:
    """A port on 127.0.0.1 nobody listens on (connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_bad_setting_value_names_the_setting_and_its_type(tmp_path: Path) -> None:
    cases = {
        "DOWNLOAD_TIMEOUT=abc": ("DOWNLOAD_TIMEOUT", "a number"),
        "AUTOTHROTTLE_START_DELAY=soon": ("AUTOTHROTTLE_START_DELAY", "a number"),
        "FEEDCENSUS_GUESS=perhaps": ("FEEDCENSUS_GUESS", "true or false"),
        "RETRY_HTTP_CODES=[500": ("RETRY_HTTP_CODES", "list"),
    }
    for setting, (name, expected) in cases.items():
        proc = run_cli("crawl", "--url", "http://127.0.0.1:9/", "--out", str(tmp_path / "out"), "-s", setting)
        assert proc.returncode == 2, (setting, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert name in line and expected in line and setting.split("=", 1)[1] in line, line
    assert not (tmp_path / "out").exists()


def test_exit_1_when_nothing_usable_was_fetched_and_a_refused_robots_txt_is_one_line(tmp_path: Path) -> None:
    port = _closed_port()
    out = tmp_path / "out"
    args = ["crawl", "--url", f"http://127.0.0.1:{port}/feed.xml", "--out", str(out), "-s", "RETRY_TIMES=0", *FAST]
    proc = run_cli(*args)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stderr.strip().splitlines()[-1].startswith("feedcensus crawl: nothing usable was fetched")
    # The refusal is data: both the robots.txt request and the feed have their fetch_log row.
    log = {r["url"]: r for r in read_table(out, "fetch_log").to_pylist()}
    assert log[f"http://127.0.0.1:{port}/robots.txt"]["outcome"] == "network_error"
    assert log[f"http://127.0.0.1:{port}/feed.xml"]["outcome"] == "network_error"

    # At INFO the robots.txt failure is one line, not a traceback.
    proc = run_cli(*args, "--log-level", "INFO", "--job-id", "info")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    robots = [line for line in proc.stderr.splitlines() if "[scrapy.downloadermiddlewares.robotstxt]" in line]
    assert len(robots) == 1 and "robots.txt" in robots[0], robots
    assert not [line for line in proc.stderr.splitlines() if line.startswith(("  File ", "    "))]


def test_the_terminal_shows_progress_and_the_summary_once_and_the_log_file_the_rest(
    tmp_path: Path, demo_server: Any
) -> None:
    url = f"{demo_server.url}/blog-a/"
    log_file = tmp_path / "crawl.log"
    proc = run_cli("crawl", "--url", url, "--out", str(tmp_path / "out"), "--log-file", str(log_file), *FAST)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for noise in SCRAPY_NOISE:
        assert noise not in proc.stderr, proc.stderr[-3000:]
    assert proc.stderr.count("feeds: 2   items: 7") == 1, proc.stderr
    assert re.search(r"^finished in \d+:\d\d$", proc.stderr, re.M), proc.stderr
    assert len(proc.stderr.strip().splitlines()) <= 8, proc.stderr
    logged = log_file.read_text()
    for noise in SCRAPY_NOISE:
        assert noise in logged
    assert "summary: feeds: 2   items: 7" in logged

    # --log-level INFO shows Scrapy's lines on the terminal; the summary is still printed once.
    proc = run_cli("crawl", "--url", url, "--out", str(tmp_path / "out2"), "--log-level", "INFO", *FAST)
    assert proc.returncode == 0
    assert "Enabled extensions" in proc.stderr and "Dumping Scrapy stats" in proc.stderr
    assert proc.stderr.count("feeds: 2   items: 7") == 1, proc.stderr


def test_demo_fits_on_a_screen_and_names_the_dataset_and_the_report(tmp_path: Path) -> None:
    out = tmp_path / "demo-out"
    proc = run_cli("demo", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    shown = proc.stderr.splitlines() + proc.stdout.splitlines()
    assert len(shown) <= 40, "\n".join(shown)
    text = "\n".join(shown)
    assert "ERROR" not in text and "Traceback" not in text and "WARNING" not in text, text
    assert "dead ends on purpose" in proc.stderr.splitlines()[1]  # announced before they are met
    assert "feeds: 11" in proc.stderr
    # stdout is the answer: where the data and the report are.
    report = out / "report" / "index.html"
    assert proc.stdout.splitlines() == [f"dataset: {out}", f"report: {report}"]
    assert report.is_file() and "<html" in report.read_text().lower()
    assert read_table(out, "feeds").num_rows == 11
