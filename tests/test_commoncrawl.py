"""``feedcensus commoncrawl``: the census over archive records chosen by an index, fetched by Range request.

The archive here is real and made the way Common Crawl's is: the bundled demo web is crawled with
``--warc`` (one gzip member per record), an index in Common Crawl's columns is written from the
crawl's own ``fetch_log`` (which names each response's record), and the WARC folder is served on
127.0.0.1 by a server that answers Range requests. The census over the index must give the
crawl's rows for the same documents; a corrupt record, a missing file and a bad index are
recorded or refused, never fatal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from crawler.demo.rangeserver import RangeServer
from tests.conftest import QUICK_CRAWL, demo_seeds_file, processes_that_wrote, read_table, run_cli

FEED_TYPE = "application/rss+xml"
RSS_BODY = b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>http://site.example/</link><description>d</description></channel></rss>'


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory, demo_server: Any) -> dict[str, Any]:
    """The demo web crawled live with --warc: its dataset, its WARC folder and an index of its records."""
    work = tmp_path_factory.mktemp("cc")
    live = work / "live"
    proc = run_cli(
        "crawl", "--seeds", str(demo_seeds_file(work, demo_server)), "--out", str(live), "--job-id", "live",
        "--warc", str(work / "warc"), "--no-reflexive", *QUICK_CRAWL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    fetched = [r for r in read_table(live, "fetch_log").to_pylist() if r["warc_filename"] and r["outcome"] != "robots"]
    kinds = {"feed": FEED_TYPE, "page": "text/html"}
    rows = [
        {
            "url": r["final_url"],
            "warc_filename": r["warc_filename"],
            "warc_record_offset": r["warc_record_offset"],
            "warc_record_length": r["warc_record_length"],
            # What Common Crawl's detection would say (the demo serves some feeds with wrong types on purpose).
            "content_mime_detected": kinds.get(r["outcome"], "application/octet-stream"),
        }
        for r in fetched
    ]
    index = work / "index.parquet"
    pq.write_table(pa.Table.from_pylist(rows), index)
    return {"work": work, "live": live, "warc": work / "warc", "index": index, "rows": rows}


def commoncrawl(server: RangeServer, index: Path, out: Path, *args: str) -> Any:
    return run_cli(
        "commoncrawl", "--index", str(index), "--archive-base", server.url, "--out", str(out), "--job-id", "cc",
        *QUICK_CRAWL, *args,
    )  # fmt: skip


def by_url(out: Path, table: str, key: str = "url") -> dict[str, dict[str, Any]]:
    return {r[key]: r for r in read_table(out, table).to_pylist()}


FEED_FACTS = ("format", "version", "well_formed", "item_count", "title", "link", "errors", "warnings", "content_hash")


def test_the_records_an_index_names_give_the_live_crawls_rows(archived: dict[str, Any], demo_server: Any) -> None:
    out = archived["work"] / "from-index"
    hits_before = sum(demo_server.hits.values())
    with RangeServer(archived["warc"]) as server:
        proc = commoncrawl(server, archived["index"], out, "--pages", "100")
        ranges = [r for path, r in server.requests if path != "/robots.txt"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert sum(demo_server.hits.values()) == hits_before, "the census over the archive reached the live web"
    assert len(ranges) == len(archived["rows"]) - sum(
        1 for r in archived["rows"] if r["content_mime_detected"] not in (FEED_TYPE, "text/html")
    )
    assert all(r and r.startswith("bytes=") for r in ranges)  # one Range request per record

    live_feeds = {r["final_url"]: r for r in read_table(archived["live"], "feeds").to_pylist()}
    cc_feeds = by_url(out, "feeds")
    assert set(cc_feeds) == set(live_feeds)
    for url, row in cc_feeds.items():
        live = live_feeds[url]
        assert {f: row[f] for f in FEED_FACTS} == {f: live[f] for f in FEED_FACTS}, url
        assert row["discovered_via"] == "archive" and row["source"] == live["warc_filename"]
        # The row names the record it came from, and the time the archive says it was fetched.
        assert (row["warc_filename"], row["warc_record_offset"]) == (live["warc_filename"], live["warc_record_offset"])
        assert abs((row["fetched_at"] - live["fetched_at"]).total_seconds()) < 2

    def items(out: Path, urls: dict[str, str]) -> list[tuple[Any, ...]]:
        rows = read_table(out, "items").to_pylist()
        return sorted(
            (urls.get(r["feed_url"], r["feed_url"]), r["position"], r["identity"], r["content_hash"]) for r in rows
        )

    live_names = {r["url"]: r["final_url"] for r in live_feeds.values()}
    assert items(out, {}) == items(archived["live"], live_names)
    usage = {
        (r["feed_url"], r["scope"], r["element"], r["count"]) for r in read_table(out, "element_usage").to_pylist()
    }
    live_usage = {
        (live_names[r["feed_url"]], r["scope"], r["element"], r["count"])
        for r in read_table(archived["live"], "element_usage").to_pylist()
    }
    assert usage == live_usage

    # Pages: their feed links are recorded, not followed (the archive is the web here).
    links = read_table(out, "links").to_pylist()
    assert links and not any(link["followed"] for link in links)
    pages = {r["url"] for r in archived["rows"] if r["content_mime_detected"] == "text/html"}
    assert {link["page_url"] for link in links} <= pages


def test_a_bad_record_and_a_missing_file_are_recorded_not_fatal(archived: dict[str, Any]) -> None:
    good = next(r for r in archived["rows"] if r["content_mime_detected"] == FEED_TYPE)
    rows = [
        good,
        {**good, "url": "http://example.invalid/shifted", "warc_record_offset": good["warc_record_offset"] + 7},
        {**good, "url": "http://example.invalid/missing", "warc_filename": "no-such.warc.gz"},
    ]
    index = archived["work"] / "bad-index.csv"
    pacsv.write_csv(pa.Table.from_pylist(rows), index)
    out = archived["work"] / "bad"
    with RangeServer(archived["warc"]) as server:
        proc = commoncrawl(server, index, out, "-s", "RETRY_ENABLED=False")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    log = by_url(out, "fetch_log")
    assert log[good["url"]]["outcome"] == "feed"
    shifted = log["http://example.invalid/shifted"]
    assert shifted["outcome"] not in ("feed", "page") and "archive record" in shifted["error"]
    missing = log["http://example.invalid/missing"]
    # The 404 is the archive host's, not the archived site's: no status, the error says it.
    assert (missing["outcome"], missing["status"]) == ("http_error", None)
    assert "404" in missing["error"] and "no-such.warc.gz" in missing["error"]


def test_an_index_without_the_record_columns_is_one_line_and_exit_2(tmp_path: Path) -> None:
    index = tmp_path / "index.parquet"
    pq.write_table(pa.table({"url": ["http://a.example/feed"], "warc_filename": ["x.warc.gz"]}), index)
    proc = run_cli("commoncrawl", "--index", str(index), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"feedcensus commoncrawl: {index}: the index lacks the column(s) warc_record_offset, warc_record_length"
    ]


def test_an_index_with_no_feed_record_is_refused(tmp_path: Path) -> None:
    index = tmp_path / "index.csv"
    index.write_text(
        "url,warc_filename,warc_record_offset,warc_record_length,content_mime_detected\nhttp://a/,x,0,10,image/png\n"
    )
    proc = run_cli("commoncrawl", "--index", str(index), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "no row of the index is a usable feed record" in proc.stderr


def test_a_coordinator_and_a_worker_share_the_records_on_a_frontier(archived: dict[str, Any], tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.redisserver import RedisServer

    out = tmp_path / "shared"
    with RedisServer(tmp_path / "redis") as redis, RangeServer(archived["warc"]) as server:
        common = ["--out", str(out), *QUICK_CRAWL, "-s", "FEEDCENSUS_FRONTIER_HEARTBEAT=0.5"]
        coordinator = subprocess.Popen(
            [sys.executable, "-m", "crawler.cli", "commoncrawl", "--index", str(archived["index"]),
             "--archive-base", server.url, "--job-id", "ccd", "--frontier", redis.url, "--pages", "100", *common],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        join = ""
        assert coordinator.stderr is not None
        for line in coordinator.stderr:  # the first lines: the records, then how workers join
            if "more workers join with" in line:
                join = line.split("more workers join with ", 1)[1].strip()
                break
        assert " -s " not in join and "--job ccd" in join, join  # the job's settings travel with it
        worker_args = join.removeprefix("feedcensus ").split()
        worker = subprocess.run(
            [sys.executable, "-m", "crawler.cli", *worker_args, *QUICK_CRAWL,
             "-s", "FEEDCENSUS_FRONTIER_HEARTBEAT=0.5"],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        coordinator.communicate(timeout=300)
    assert coordinator.returncode == 0 and worker.returncode == 0, worker.stderr[-2000:]
    feeds = read_table(out, "feeds").to_pylist()
    live = {r["final_url"]: r for r in read_table(archived["live"], "feeds").to_pylist()}
    assert sorted(r["url"] for r in feeds) == sorted(live)  # every record once, whichever process read it
    for row in feeds:
        assert {f: row[f] for f in FEED_FACTS} == {f: live[row["url"]][f] for f in FEED_FACTS}
    assert not any(link["followed"] for link in read_table(out, "links").to_pylist())
    assert len(read_table(out, "workers").to_pylist()) == processes_that_wrote(worker.stderr)


def archived_site(tmp_path: Path, pages: dict[str, tuple[int, dict[str, str], bytes]]) -> tuple[Path, Path]:
    """A WARC with one response record per URL (status, headers, body) and its index; (WARC folder, index)."""
    from datetime import UTC, datetime

    from crawler.archive.warc import Exchange, WarcWriter

    folder = tmp_path / "warc"
    writer = WarcWriter(folder, job="site")
    rows = []
    for url, (status, headers, body) in pages.items():
        where = writer.write(
            Exchange(url, "GET", [], status, list(headers.items()), body, datetime(2026, 3, 1, tzinfo=UTC))
        )
        mime = headers.get("Content-Type", "text/html").split(";")[0]
        rows.append(
            {
                "url": url,
                "warc_filename": where.filename,
                "warc_record_offset": where.offset,
                "warc_record_length": where.length,
                "content_mime_detected": mime,
            }
        )
    writer.close()
    index = tmp_path / "index.parquet"
    pq.write_table(pa.Table.from_pylist(rows), index)
    return folder, index


def test_an_archived_refresh_redirect_or_503_is_recorded_never_followed_or_retried(tmp_path: Path) -> None:
    from crawler.demo.routes import Route, Web
    from crawler.demo.webserver import WebServer

    probe = Web()
    probe.add("/live", Route(b"<html>live</html>", headers={"Content-Type": "text/html"}))
    with WebServer(probe) as live:
        refresh = f'<html><head><meta http-equiv="refresh" content="0; url={live.url_for("/live")}"></head></html>'
        rss = {"Content-Type": "application/rss+xml"}
        folder, index = archived_site(
            tmp_path,
            {
                "http://site.example/page": (200, {"Content-Type": "text/html"}, refresh.encode()),
                "http://site.example/moved.xml": (301, {**rss, "Location": live.url_for("/live")}, b""),
                "http://site.example/busy.xml": (503, {**rss, "Retry-After": "1"}, b"busy"),
                "http://site.example/feed.xml": (200, rss, RSS_BODY),
            },
        )
        with RangeServer(folder) as server:
            proc = commoncrawl(server, index, tmp_path / "out", "--pages", "5")
            ranges = [path for path, _ in server.requests if path != "/robots.txt"]
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert live.hits.get("/live", 0) == 0, "an archived redirect or refresh reached the live web"
    assert len(ranges) == 4  # one request per record: nothing retried
    log = by_url(tmp_path / "out", "fetch_log")
    assert log["http://site.example/page"]["outcome"] == "page"
    assert (log["http://site.example/moved.xml"]["outcome"], log["http://site.example/moved.xml"]["status"]) == (
        "http_error",
        301,
    )
    assert (log["http://site.example/busy.xml"]["outcome"], log["http://site.example/busy.xml"]["status"]) == (
        "http_error",
        503,
    )
    assert log["http://site.example/feed.xml"]["outcome"] == "feed"


def test_index_rows_that_name_no_record_are_left_out_and_counted(tmp_path: Path) -> None:
    index = tmp_path / "index.csv"
    index.write_text(
        "url,warc_filename,warc_record_offset,warc_record_length,content_mime_detected,content_mime_type\n"
        "http://a.example/ok,x.warc.gz,0,10,application/rss+xml,\n"
        "http://a.example/typed-by-server,x.warc.gz,10,10,,application/atom+xml\n"
        "http://a.example/no-offset,x.warc.gz,,10,application/rss+xml,\n"
        "http://a.example/text,x.warc.gz,abc,10,application/rss+xml,\n"
        "http://a.example/half,x.warc.gz,1.5,10,application/rss+xml,\n"
        "http://a.example/negative,x.warc.gz,-3,10,application/rss+xml,\n"
        ",x.warc.gz,20,10,application/rss+xml,\n"
    )
    from crawler.archive.ccindex import read_index

    chosen = read_index(str(index))
    assert [r.url for r in chosen.rows] == ["http://a.example/ok", "http://a.example/typed-by-server"]
    assert chosen.unusable == 5


def test_the_archive_spider_runs_as_a_scrapy_job(archived: dict[str, Any], tmp_path: Path) -> None:
    """What scrapyd schedules: ``scrapy crawl census-archive -a index=...`` reads the index itself."""
    import subprocess
    import sys

    from tests.conftest import REPO

    out = tmp_path / "scrapy-out"
    with RangeServer(archived["warc"]) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "scrapy", "crawl", "census-archive", "-a", f"index={archived['index']}",
             "-a", f"archive_base={server.url}", "-s", f"FEEDCENSUS_OUT={out}", "-s", "FEEDCENSUS_FOLLOW_LINKS=False",
             "-s", "FEEDCENSUS_REFLEXIVE=False", *QUICK_CRAWL, "-s", "LOG_LEVEL=WARNING"],
            cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    live = {r["final_url"] for r in read_table(archived["live"], "feeds").to_pylist()}
    assert {r["url"] for r in read_table(out, "feeds").to_pylist()} == live
