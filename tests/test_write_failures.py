"""Data that cannot be written is never reported as written.

An output that cannot be written is refused before the first request; a
commit that fails later is tried again, then the crawl stops with exit code 3
and one line saying how many rows were lost, and what was committed before
stays readable. The failure here is a real one: a file stands where the
``links`` table's folder must go, so every commit holding links rows fails
with ENOTDIR from the filesystem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import QUICK_CRAWL, demo_seeds_file, read_table, run_cli


def test_an_unwritable_output_is_one_line_and_exit_2_before_any_request(tmp_path: Path, demo_server: Any) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    demo_server.reset_hits()
    proc = run_cli("crawl", "--seeds", str(demo_seeds_file(tmp_path, demo_server)), "--out", str(blocker / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith(f"feedcensus crawl: cannot write to {blocker / 'out'}")
    assert "Traceback" not in proc.stderr
    assert sum(demo_server.hits.values()) == 0, "the crawl fetched before finding out it could not write"


def test_a_commit_that_keeps_failing_stops_the_crawl_with_exit_3(tmp_path: Path, demo_server: Any) -> None:
    out = tmp_path / "out"
    out.mkdir()
    # items: a table the first commits (the pages' fetch_log, links and pages rows) do not write to.
    (out / "items").write_text("a file where the items folder must go")
    proc = run_cli(
        "crawl", "--seeds", str(demo_seeds_file(tmp_path, demo_server)), "--out", str(out), "--job-id", "j",
        *QUICK_CRAWL, "-s", "FEEDCENSUS_BATCH_ROWS=1",
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr[-2000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"feedcensus crawl: cannot write to {out}") and last.endswith("rows were not written")
    assert "Traceback" not in proc.stderr
    assert "trying again" in proc.stderr  # the commit was retried before giving up
    # What was committed before the failure is readable, and only whole commits are there.
    log = read_table(out, "fetch_log").to_pylist()
    assert log and all(row["job_id"] == "j" for row in log)
    markers = [json.loads(p.read_text()) for p in (out / "_commits" / "job_id=j").glob("*.json")]
    assert markers, "nothing was committed before the failure"
    assert sum(m["files"].get("fetch_log", 0) for m in markers) == len(log)
    # The failed commits wrote their feeds files before items failed: none of them stays behind.
    assert sorted(p.name for p in out.rglob(".part-*")) == []


def test_reading_a_dataset_with_a_damaged_parquet_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """A part file cut short (a disk that filled, a copy interrupted): before, survey, due and compact
    ended in a pyarrow traceback."""
    from crawler.demo.routes import Route, Web
    from crawler.demo.webserver import WebServer

    web = Web()
    items = "".join(f"<item><title>t{i}</title><guid>g{i}</guid></item>" for i in range(3))
    web.add("/f.xml", Route(f'<rss version="2.0"><channel><title>F</title>{items}</channel></rss>'.encode()))
    out = tmp_path / "out"
    with WebServer(web) as server:
        proc = run_cli("crawl", "--url", server.url_for("/f.xml"), "--out", str(out), *QUICK_CRAWL, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    part = next((out / "items").rglob("*.parquet"))
    part.write_bytes(part.read_bytes()[:100])
    for command in ("survey", "due", "compact"):
        proc = run_cli(command, str(out), timeout=60)
        assert proc.returncode == 2, (command, proc.stderr[-2000:])
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"feedcensus {command}: "), (command, lines)
        assert part.name in lines[0] and "Traceback" not in proc.stderr, (command, lines)


def test_reading_a_job_that_is_not_finished_says_so(tmp_path: Path) -> None:
    """A job whose crawl stopped before it ended (disk full: exit 3) keeps its .running markers: before,
    survey and due read it as if it were whole ("0 feeds in the job") and said nothing."""
    from crawler.demo.routes import Route, Web
    from crawler.demo.webserver import WebServer

    web = Web()
    web.add("/f.xml", Route(b'<rss version="2.0"><channel><title>F</title><item><guid>g</guid></item></channel></rss>'))
    out = tmp_path / "out"
    with WebServer(web) as server:
        proc = run_cli("crawl", "--url", server.url_for("/f.xml"), "--out", str(out), "--job-id", "j1", *QUICK_CRAWL)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for command in ("survey", "due"):
        assert "not finished" not in run_cli(command, str(out), timeout=60).stderr
    partitions = [p for p in out.glob("*/job_id=j1") if p.is_dir()]
    for partition in partitions[:2]:  # as a crawl still writing it, or one that stopped, leaves them
        (partition / ".running-abc123").write_text("{}")
    for command in ("survey", "due"):
        proc = run_cli(command, str(out), timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert f"feedcensus {command}: note: job j1 is not finished (2 partitions hold .running markers" in proc.stderr


def test_a_crawl_into_a_dataset_whose_earlier_job_cannot_be_read_stops_before_it_fetches(tmp_path: Path) -> None:
    """Before, it fetched and wrote the whole job without the earlier jobs' state (every feed anew), then
    said the crawl failed with a pyarrow error."""
    from crawler.demo.routes import Route, Web
    from crawler.demo.webserver import WebServer

    web = Web()
    for i in range(3):
        web.add(f"/f{i}.xml", Route(b'<rss version="2.0"><channel><title>F</title></channel></rss>'))
    out = tmp_path / "out"
    with WebServer(web) as server:
        urls = [a for i in range(3) for a in ("--url", server.url_for(f"/f{i}.xml"))]
        proc = run_cli("crawl", *urls, "--out", str(out), "--job-id", "one", *QUICK_CRAWL, timeout=60)
        assert proc.returncode == 0, proc.stderr[-2000:]
        part = next((out / "feeds").rglob("*.parquet"))
        part.write_bytes(part.read_bytes()[:100])
        before = sum(server.hits.values())
        proc = run_cli("crawl", *urls, "--out", str(out), "--job-id", "two", *QUICK_CRAWL, timeout=60)
        fetched = sum(server.hits.values()) - before
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"feedcensus crawl: cannot read the earlier jobs of {out}: ") and part.name in last, last
    assert last.endswith("; the crawl stopped before it began"), last
    assert fetched == 0, fetched
