"""What the terminal says in the corners a first week finds (issue 37, "The terminal").

Junk in a seeds file, two Ctrl-C on a live progress line, an OPML xmlUrl that is an HTML page, plurals,
a gzip-compressed OPML file and ``--version``: each with a real crawl or command in a subprocess against
a server on 127.0.0.1, as a user meets them.
"""

from __future__ import annotations

import gzip
import os
import pty
import re
import signal
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from crawler.extensions.progress import status_line, summary_lines
from crawler.fetch.inputs import SHOWN_SEED_PROBLEMS
from crawler.fetch.opml import MAX_GUNZIPPED_BYTES, gunzip, parse_opml
from tests.conftest import QUICK_CRAWL, REPO, read_table, run_cli

HTML = {"Content-Type": "text/html"}
RSS = {"Content-Type": "application/rss+xml"}
FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><link>http://x.test/</link>'
    b"<description>d</description><item><title>i</title><guid>g1</guid></item></channel></rss>"
)
NO_ROBOTS = ("-s", "ROBOTSTXT_OBEY=False")
LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+\] WARNING: ", re.M)


def test_version_is_the_package_s_and_exits_0() -> None:
    proc = run_cli("--version")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"feedcensus {version('feedcensus')}\n", "")


def test_junk_lines_beside_a_good_seed_are_capped_and_counted(tmp_path: Path) -> None:
    """996 junk lines beside one good URL printed 996 warnings; now the first few and one line for the rest."""
    web = Web()
    web.add("/site/", Route(b"<html><head><title>x</title></head></html>", headers=HTML))
    with WebServer(web) as server:
        lines = [f"{server.url}/site/", *(f"junk line {i}" for i in range(996))]
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(lines) + "\n", encoding="utf-8")
        out = tmp_path / "out"
        proc = run_cli("crawl", "--seeds", str(seeds), "--out", str(out), *QUICK_CRAWL, *NO_ROBOTS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    warnings = [line[m.end() :] for line in proc.stderr.splitlines() if (m := LOG_LINE.match(line))]
    assert len(warnings) == SHOWN_SEED_PROBLEMS + 1, proc.stderr[-3000:]
    assert warnings[0] == f"{seeds}:2: whitespace inside the URL: 'junk line 0'"
    assert warnings[-1] == "and 991 more seed lines left out (fetch_log has each, outcome input_error)"
    # every one is still a fetch_log row
    outcomes = [r["outcome"] for r in read_table(out, "fetch_log").to_pylist()]
    assert outcomes.count("input_error") == 996 and outcomes.count("page") == 1

    # all junk: one line, the same count of the rest, exit 2
    (tmp_path / "junk.txt").write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    proc = run_cli("crawl", "--seeds", str(tmp_path / "junk.txt"), "--out", str(tmp_path / "out2"))
    assert proc.returncode == 2
    (line,) = proc.stderr.splitlines()
    assert line.endswith("whitespace inside the URL (and 995 more unusable inputs)"), line
    (tmp_path / "two.txt").write_text("junk 1\njunk 2\n", encoding="utf-8")
    proc = run_cli("crawl", "--seeds", str(tmp_path / "two.txt"), "--out", str(tmp_path / "out2"))
    assert proc.returncode == 2 and proc.stderr.strip().endswith("(and 1 more unusable input)"), proc.stderr


def test_an_opml_xmlurl_that_is_a_page_is_counted_as_a_page_read(tmp_path: Path) -> None:
    """Printed ``pages: 0 (1 advertising feeds, 3 feed links)``: links read from no page at all."""
    web = Web()
    links = "".join(f'<link rel="alternate" type="application/rss+xml" href="/{n}.xml">' for n in "abc")
    web.add("/page/", Route(f"<html><head>{links}</head></html>".encode(), headers=HTML))
    for n in "abc":
        web.add(f"/{n}.xml", Route(FEED, headers=RSS))
    with WebServer(web) as server:
        opml = tmp_path / "list.opml"
        opml.write_text(
            f'<opml version="2.0"><body><outline text="x" type="rss" xmlUrl="{server.url}/page/"/></body></opml>',
            encoding="utf-8",
        )
        proc = run_cli("crawl", "--opml", str(opml), "--out", str(tmp_path / "out"), *QUICK_CRAWL, *NO_ROBOTS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (pages,) = [line for line in proc.stderr.splitlines() if line.startswith("pages: ")]
    assert pages == (
        "pages: 1 (1 advertising feeds, 3 feed links; 1 of them HTML where a feed was expected, "
        "in errors as not_feed)   opml lists: 1"
    )
    assert "errors: not_feed 1" in proc.stderr


def test_counts_of_one_are_singular_and_unknown_worker_figures_are_not_zeros() -> None:
    stats = {
        "response_received_count": 1,
        "feedcensus/outcome/feed": 1,
        "feedcensus/items": 1,
        "feedcensus/outcome/page": 1,
        "feedcensus/outcome/http_error": 1,
        "autodiscovery/pages": 1,
        "autodiscovery/links": 1,
        "feedcensus/history/jobs": 1,
        "feedcensus/history/feeds": 1,
        "feedcensus/files_written": 1,
        "feedcensus/warc/dir": "archive/",
        "feedcensus/warc/records": 1,
        "feedcensus/warc/files": 1,
        "feedcensus/workers/processes": 1,
        "feedcensus/workers/documents": 1,
    }
    line = status_line(stats, pending=0, elapsed=1.0)
    assert line.startswith("1 response, 0 pending, 1 feed, 1 item, 1 error, "), line
    summary = "\n".join(summary_lines(stats, "/data", "job1"))
    assert "pages: 1 (0 advertising feeds, 1 feed link)" in summary
    assert "incremental: 1 feed known from 1 earlier job;" in summary
    assert "job_id=job1; 1 file;" in summary
    assert "(1 record in 1 file, " in summary
    # killed workers reported no figures: they are unknown, not 0.0 s and 0 MiB
    assert "workers: 1 process read 1 feed or page (CPU and memory unknown: stopped before they reported" in summary
    assert "0 MiB" not in summary
    stats |= {
        "feedcensus/workers/processes": 2,
        "feedcensus/workers/documents": 2,
        "feedcensus/workers/cpu_seconds": 1.5,
    }
    stats["feedcensus/workers/peak_rss_mb"] = 60.2
    assert "workers: 2 processes read 2 feeds and pages (CPU 1.5 s, peak RSS of one 60 MiB;" in "\n".join(
        summary_lines(stats, "/data", "job1")
    )


def test_two_ctrl_c_the_summary_starts_its_own_line(tmp_path: Path) -> None:
    """The summary ran on after the live progress line, and the workers line said 0.0 s and 0 MiB."""
    web = Web()
    for i in range(12):
        web.add(f"/s{i}/", Route(b"<html><head><title>x</title></head></html>", headers=HTML, delay=3.0))
    with WebServer(web) as server:
        urls = [a for i in range(12) for a in ("--url", f"{server.url}/s{i}/")]
        primary, secondary = pty.openpty()
        options = [*QUICK_CRAWL, *NO_ROBOTS, "-s", "FEEDCENSUS_WORKERS=1"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "crawler.cli", "crawl", *urls, "--out", str(tmp_path / "out"), *options],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=secondary,
        )
        os.close(secondary)
        chunks: list[bytes] = []
        deadline = time.monotonic() + 60
        signals_sent = 0
        while time.monotonic() < deadline:
            try:
                data = os.read(primary, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
            if signals_sent == 0 and b"pending" in b"".join(chunks):
                proc.send_signal(signal.SIGINT)
                time.sleep(0.6)  # a tick of the live line (every 0.5 s) after the first
                proc.send_signal(signal.SIGINT)
                signals_sent = 2
        code = proc.wait(timeout=30)
        os.close(primary)
    out = b"".join(chunks).decode(errors="replace")
    assert signals_sent == 2 and code == 130, out[-3000:]
    at = out.index("inputs: ")
    assert out[:at].endswith("\n"), repr(out[max(0, at - 200) : at + 20])
    assert "responses/min" in out[:at]  # the last progress line is left on the screen, ended
    assert "0 MiB" not in out and "CPU 0.0 s" not in out, out[at:]
    assert "workers: 1 process read 0 feeds and pages (CPU and memory unknown" in out, out[at:]


def test_a_gzip_compressed_opml_file_is_read(tmp_path: Path) -> None:
    """Gave "root element is ‹ÿ>"."""
    web = Web()
    web.add("/feed.xml", Route(FEED, headers=RSS))
    with WebServer(web) as server:
        body = f'<opml version="2.0"><body><outline text="x" type="rss" xmlUrl="{server.url}/feed.xml"/></body></opml>'
        opml = tmp_path / "list.opml.gz"
        opml.write_bytes(gzip.compress(body.encode()))
        proc = run_cli("crawl", "--opml", str(opml), "--out", str(tmp_path / "out"), *QUICK_CRAWL, *NO_ROBOTS)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "root element" not in proc.stderr
    assert "feeds: 1   items: 1" in proc.stderr and "opml lists: 1" in proc.stderr


def test_gzip_opml_that_cannot_be_read_says_why_in_one_line(tmp_path: Path) -> None:
    body = b'<opml version="2.0"><body><outline text="x" xmlUrl="http://a.test/f"/></body></opml>'
    assert parse_opml(gzip.compress(body) + gzip.compress(body)).outlines[1].xml_url == "http://a.test/f"
    assert gunzip(gzip.compress(b" " * 4096), 4095) == (b"", "gzip-compressed, and more than 0 MiB decompressed")
    big = gzip.compress(b" " * (MAX_GUNZIPPED_BYTES + 1))
    assert parse_opml(big).error == "gzip-compressed, and more than 32 MiB decompressed"
    cut = tmp_path / "cut.opml.gz"
    cut.write_bytes(gzip.compress(body)[:-12])
    proc = run_cli("crawl", "--opml", str(cut), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [f"feedcensus crawl: {cut}: gzip-compressed, but cut short"]


def test_the_survey_heading_counts_in_words_that_agree() -> None:
    """'1 web pages', '1 feeds', '1 items' in the survey's heading (issue #37)."""
    from crawler.report.model import Survey
    from crawler.report.render import to_markdown

    one = Survey("j", "rss", ("j",), {"feeds": 1, "format_feeds": 1, "format_items": 1, "pages": 1})
    heading = to_markdown(one).splitlines()[2]
    assert heading.startswith("1 feed in the job (all formats); 1 rss feed with 1 item; 1 web page fetched."), heading
    two = Survey("j", "atom", ("j",), {"feeds": 2, "format_feeds": 0, "format_items": 0, "pages": 3})
    heading = to_markdown(two).splitlines()[2]
    assert heading.startswith("2 feeds in the job (all formats); 0 atom feeds with 0 items; 3 web pages fetched."), (
        heading
    )
