"""``feedcensus replay``: the census run over WARC files, with no network.

The demo web is crawled once with ``--warc`` on a server of its own, which is then stopped: every
replay below runs with nothing listening. The replay of the crawl's own archive must give the
crawl's dataset row for row; the only allowances are listed in ``ALLOWED`` with their reasons.
"""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from crawler.archive.inputs import archive_inputs
from crawler.archive.read import ArchivedRequest, ArchiveIndex, ArchiveReader, build_index, find_files
from crawler.archive.warc import (
    SETTINGS_FIELD,
    Exchange,
    WarcWriter,
    recorded_settings,
    request_settings,
    settings_field,
)
from tests.conftest import QUICK_CRAWL, assert_usage_error, demo_seeds_file, read_table, run_cli

JOB = "replayed"
#: One request at a time, in the crawl and in its replays, and pages read in the crawling process.
#: With more requests at once, or pages read in the document workers (whose answers come back when
#: they come), which of two paths to the same URL (an OPML outline, a page's link) gets there first
#: is a race, live as in a replay (two live crawls differ there too): the first is the feed, the
#: other a duplicate.
SEQUENTIAL = ("-s", "CONCURRENT_REQUESTS=1", "-s", "FEEDCENSUS_WORKERS=0")
#: Columns that may differ between a crawl and the replay of its archive, per table, and why.
ALLOWED: dict[str, dict[str, str]] = {
    "*": {"fetched_at": "when the row was made: the replay runs later"},
    "fetch_log": {
        # Checked below: next_due - fetched_at (the interval the feed's hints give) is the same.
        "next_due": "the fetch time plus the feed's interval",
    },
    "workers": {
        "started_at": "the process's own times",
        "finished_at": "the process's own times",
        "pid": "another process",
        "worker": "a fresh id per process",
    },
}


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The demo web crawled with --warc on a server that is stopped before any replay."""
    from crawler.demo.webserver import serve_demo

    work = tmp_path_factory.mktemp("replay")
    server = serve_demo()
    try:
        base = server.url
        proc = run_cli(
            "crawl", "--seeds", str(demo_seeds_file(work, server)), "--out", str(work / "live"), "--job-id", JOB,
            "--warc", str(work / "warc"), *QUICK_CRAWL, *SEQUENTIAL,
        )  # fmt: skip
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    yield {"work": work, "base": base, "warc": work / "warc", "live": work / "live"}


def replay(*args: str) -> Any:
    proc = run_cli("replay", *args)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


def tables(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.is_dir() and not p.name.startswith("_"))


def comparable(rows: list[dict[str, Any]], table: str) -> list[str]:
    skip = {*ALLOWED["*"], *ALLOWED.get(table, {})}
    return sorted(repr(sorted((k, repr(v)) for k, v in row.items() if k not in skip)) for row in rows)


def assert_same_rows(live: Path, out: Path) -> None:
    """Every table of ``out`` holds the rows of ``live``'s, but for the :data:`ALLOWED` columns."""
    assert tables(out) == tables(live)
    for table in tables(live):
        before, after = read_table(live, table).to_pylist(), read_table(out, table).to_pylist()
        assert before, table
        assert comparable(after, table) == comparable(before, table), table


def test_replaying_a_crawls_archive_gives_its_dataset_row_for_row(archived: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "replayed"
    proc = replay(str(archived["warc"] / "*.warc.gz"), "--out", str(out), "--job-id", JOB, *SEQUENTIAL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "0 URLs not in the archive" in proc.stderr

    live = archived["live"]
    assert_same_rows(live, out)

    fetch_log = read_table(out, "fetch_log").to_pylist()
    # The allowance is no hole: the interval each feed got is the same, only the clock moved.
    intervals = sorted((r["url"], r["next_due"] - r["fetched_at"]) for r in fetch_log if r["next_due"])
    live_log = read_table(live, "fetch_log").to_pylist()
    assert intervals == sorted((r["url"], r["next_due"] - r["fetched_at"]) for r in live_log if r["next_due"])
    # Rows point at the record they were replayed from (the same record the crawl's rows name).
    answered = [r for r in fetch_log if r["status"] is not None]
    assert answered and all(r["warc_filename"] and r["warc_record_length"] for r in answered)
    assert {r["outcome"] for r in fetch_log} >= {"feed", "page", "opml", "robots", "http_error", "redirect_loop"}


def test_explicit_urls_resolve_inside_the_archive(archived: dict[str, Any], tmp_path: Path) -> None:
    base = archived["base"]
    feed, missing = f"{base}/blog-a/feed.xml", f"{base}/not-in-the-archive.xml"
    out = tmp_path / "out"
    proc = replay(str(archived["warc"] / "*.warc.gz"), "--out", str(out), "--url", feed, "--url", missing)
    assert proc.returncode == 0, proc.stderr[-3000:]

    # The feed's channel page is fetched too (reflexive check): its link to the feed is a duplicate row.
    rows = {r["url"]: r for r in read_table(out, "fetch_log").to_pylist() if r["discovered_via"] in ("url", "robots")}
    assert (rows[feed]["outcome"], rows[feed]["status"], rows[feed]["discovered_via"]) == ("feed", 200, "url")
    assert rows[feed]["warc_filename"] is not None
    assert rows[missing]["outcome"] == "not_archived" and rows[missing]["status"] is None
    assert missing in rows[missing]["error"]
    assert rows[f"{base}/robots.txt"]["outcome"] == "robots"  # robots.txt too came from the archive
    [feed_row] = [r for r in read_table(out, "feeds").to_pylist() if r["url"] == feed]
    assert (feed_row["format"], feed_row["discovered_via"]) == ("rss", "url")
    assert "1 URLs not in the archive" in proc.stderr


RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Foreign</title>
<link>http://foreign.example/</link><description>d</description>
<item><title>One</title><link>http://foreign.example/1</link></item></channel></rss>"""
PAGE = b"""<!DOCTYPE html><html><head><title>Foreign</title>
<link rel="alternate" type="application/rss+xml" href="/feed.xml"></head><body></body></html>"""


def foreign_warc(path: Path) -> None:
    """A WARC as another crawler writes it (warcio, no feedcensus fields): a page, its gzip'd feed, robots.txt."""
    answers = [
        ("http://foreign.example/", "text/html", PAGE, []),
        ("http://foreign.example/feed.xml", "application/rss+xml", gzip.compress(RSS), [("Content-Encoding", "gzip")]),
        ("http://foreign.example/robots.txt", "text/plain", b"User-agent: *\nAllow: /\n", []),
    ]
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, ctype, body, extra in answers:
            headers = StatusAndHeaders(
                "200 OK", [("Content-Type", ctype), ("Content-Length", str(len(body))), *extra], protocol="HTTP/1.1"
            )
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body), http_headers=headers
            )
            writer.write_record(record)


def test_a_foreign_warc_replays_its_response_uris_as_inputs(tmp_path: Path) -> None:
    warc = tmp_path / "other-crawler.warc.gz"
    foreign_warc(warc)
    out = tmp_path / "out"
    proc = replay(str(warc), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]

    rows = read_table(out, "fetch_log").to_pylist()
    inputs = {(r["url"], r["outcome"]) for r in rows if r["discovered_via"] == "url"}
    assert inputs == {("http://foreign.example/", "page"), ("http://foreign.example/feed.xml", "feed")}
    assert [r["outcome"] for r in rows if r["url"].endswith("/robots.txt")] == ["robots"]
    [feed] = read_table(out, "feeds").to_pylist()
    assert (feed["format"], feed["item_count"], feed["well_formed"]) == ("rss", 1, True)  # gunzipped as live
    [link] = read_table(out, "links").to_pylist()
    assert link["href"] == "http://foreign.example/feed.xml"


def test_unusable_archives_are_refused_in_one_line(tmp_path: Path) -> None:
    not_warc = tmp_path / "notes.warc.gz"
    not_warc.write_bytes(gzip.compress(b"this is not a WARC file\r\n\r\n"))
    out = str(tmp_path / "out")
    assert_usage_error(replay(str(tmp_path / "missing.warc.gz"), "--out", out), "missing.warc.gz")
    assert_usage_error(replay(str(tmp_path / "nothing-*.warc.gz"), "--out", out), "no file matches")
    assert_usage_error(replay(str(not_warc), "--out", out), "notes.warc.gz")
    assert not (tmp_path / "out").exists()


def test_a_corrupt_record_mid_file_is_refused(archived: dict[str, Any], tmp_path: Path) -> None:
    [source] = archived["warc"].glob("*.warc.gz")
    data = bytearray(source.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = b"\x00" * 64
    bad = tmp_path / source.name
    bad.write_bytes(bytes(data))
    assert_usage_error(replay(str(bad), "--out", str(tmp_path / "out")), source.name)


def test_a_file_cut_short_replays_up_to_its_cut_record(archived: dict[str, Any], tmp_path: Path) -> None:
    [source] = archived["warc"].glob("*.warc.gz")
    index = build_index([source])
    # The last response record of the file, cut in its middle (as a crash leaves it).
    url, where = max(((u, w) for u, ws in index.responses.items() for w in ws), key=lambda uw: uw[1].offset)
    cut = tmp_path / source.name
    cut.write_bytes(source.read_bytes()[: where.offset + where.length // 2])
    out = tmp_path / "out"
    proc = replay(str(cut), "--out", str(out), "--url", url)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "cut short" in proc.stderr
    [row] = [r for r in read_table(out, "fetch_log").to_pylist() if r["url"] == url]
    assert row["outcome"] == "network_error" and "cut short" in row["error"]


def test_a_file_cut_between_two_records_says_so(archived: dict[str, Any], tmp_path: Path) -> None:
    """Cut on a record boundary (a crash between two records, a copy interrupted), a file read as if it were
    whole: the replay gave fewer inputs, exit 0 and no word. Its missing closing record now says so."""
    [source] = archived["warc"].glob("*.warc.gz")
    whole = build_index([source])
    assert whole.unclosed == []
    where = sorted((w for ws in whole.responses.values() for w in ws), key=lambda w: w.offset)[
        len(whole.responses) // 2
    ]
    cut = tmp_path / source.name
    cut.write_bytes(source.read_bytes()[: where.offset])  # everything before one response record
    assert build_index([cut]).unclosed == [source.name] and not build_index([cut]).cut
    proc = replay(str(cut), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (
        f"feedcensus replay: {source.name} ends without its closing record: it was cut after its last whole record"
        in (proc.stderr)
    )
    proc = replay(str(source), "--out", str(tmp_path / "out-whole"))
    assert proc.returncode == 0 and "closing record" not in proc.stderr, proc.stderr[-3000:]


def test_a_replay_runs_with_the_options_the_crawl_ran_with(tmp_path: Path) -> None:
    """A --no-reflexive crawl replayed with the default options asked the archive for every channel page the
    crawl never fetched (19 not_archived rows in the issue's crawl, 59 fetch_log rows instead of 40). Its warcinfo
    record now keeps the options that change what is requested, and the replay takes them unless told otherwise."""
    from crawler.demo.webserver import serve_demo

    server = serve_demo()
    try:
        # Feeds given as URLs: their channel pages are fetched only by the reflexive check (a seed page would be
        # fetched anyway, and the channel pages' rows would only be duplicates).
        base = server.url
        feeds = [f"{base}/blog-a/feed.xml", f"{base}/podcast-d/podcast.rss"]
        proc = run_cli(
            "crawl", *(a for feed in feeds for a in ("--url", feed)), "--out", str(tmp_path / "live"),
            "--job-id", JOB, "--warc", str(tmp_path / "warc"), "--no-reflexive", *QUICK_CRAWL, *SEQUENTIAL,
        )  # fmt: skip
    finally:
        server.stop()
    assert proc.returncode == 0, proc.stderr[-3000:]
    archives = str(tmp_path / "warc" / "*.warc.gz")

    out = tmp_path / "replayed"
    proc = replay(archives, "--out", str(out), "--job-id", JOB, *SEQUENTIAL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "feedcensus replay: the crawl's options, from its warcinfo record: --no-reflexive\n" in proc.stderr
    assert "0 URLs not in the archive" in proc.stderr
    assert_same_rows(tmp_path / "live", out)

    # Told otherwise on the command line, the replay does otherwise, and says so.
    told = tmp_path / "reflexive"
    proc = replay(archives, "--out", str(told), "--job-id", JOB, *SEQUENTIAL, "-s", "FEEDCENSUS_REFLEXIVE=true")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "given here instead: FEEDCENSUS_REFLEXIVE" in proc.stderr
    not_archived = sorted(r["url"] for r in read_table(told, "fetch_log").to_pylist() if r["outcome"] == "not_archived")
    assert not_archived == [f"{base}/blog-a/", f"{base}/podcast-d/"]


# --- the pure parts --------------------------------------------------------------------------


def test_the_request_settings_round_trip_through_warcinfo() -> None:
    from scrapy.settings import Settings

    settings = Settings({"FEEDCENSUS_REFLEXIVE": "false", "RETRY_HTTP_CODES": "500,503", "RETRY_TIMES": "0"})
    values = request_settings(settings)
    info = {SETTINGS_FIELD: settings_field(values)}
    recorded = recorded_settings(info)
    assert recorded == values
    assert recorded is not None
    assert recorded["FEEDCENSUS_REFLEXIVE"] is False and recorded["RETRY_TIMES"] == 0
    assert recorded["RETRY_HTTP_CODES"] == [500, 503]
    # An archive without the field, or with a field not of feedcensus's making, names no settings.
    assert recorded_settings({}) is None and recorded_settings({SETTINGS_FIELD: "[1]"}) is None
    odd = recorded_settings({SETTINGS_FIELD: '{"RETRY_TIMES": "x", "LOG_FILE": "/tmp/f", "FEEDCENSUS_GUESS": true}'})
    assert odd == {"FEEDCENSUS_GUESS": True}


def test_a_retried_url_gets_its_records_in_order_then_the_last_again(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path, job="j")
    url = "http://a.example/feed.xml"
    at = datetime(2026, 11, 22, tzinfo=UTC)
    for status, body in ((503, b"busy"), (200, RSS)):
        writer.write(Exchange(url, "GET", [("Host", "a.example")], status, [("Content-Type", "text/xml")], body, at,
                              ip_address="192.0.2.7"))  # fmt: skip
    writer.close()
    index = build_index(find_files([str(tmp_path / "*.warc.gz")]))
    reader = ArchiveReader(index)
    served = [reader.read(where) for n in range(3) if (where := index.location(url, n)) is not None]
    reader.close()
    assert [(r.status, r.body) for r in served] == [(503, b"busy"), (200, RSS), (200, RSS)]
    assert served[0].ip_address == "192.0.2.7" and index.addresses == {"a.example": "192.0.2.7"}
    assert index.location("http://a.example/other", 0) is None


def test_seeds_whose_file_is_gone_are_listed_anew(tmp_path: Path) -> None:
    kept = tmp_path / "seeds.txt"
    kept.write_text("http://a.example/\nhttp://b.example/\n", encoding="utf-8")
    gone = str(tmp_path / "gone.txt")

    def request(url: str, source: str, **extra: Any) -> ArchivedRequest:
        ctx = json.dumps({"via": "seed", "source": source, "depth": 0, "kind": "page"})
        return ArchivedRequest(url, ctx, extra.get("redirected_from"))

    index = ArchiveIndex(
        requests=[
            request("http://a.example/", str(kept)),
            request("http://c.example/", gone),
            request("http://c.example/", gone),  # a retry: one input
            request("http://d.example/", gone, redirected_from="http://c.example/"),  # a redirect: no input
            ArchivedRequest("http://e.example/", '{"via":"url","source":"input","depth":0,"kind":"any"}', None),
            ArchivedRequest("http://e.example/f", '{"via":"autodiscovery","source":"x","depth":1,"kind":"feed"}', None),
        ]
    )
    inputs = archive_inputs(index)
    assert inputs.seed_files == [str(kept)]
    assert inputs.seed_lists == [(gone, ["http://c.example/"])]
    assert (inputs.opml, inputs.urls) == ([], ["http://e.example/"])


def test_a_warc_gzipped_as_one_stream_is_refused_in_one_line(tmp_path: Path) -> None:
    """Such a file reads from its start but no record can be read at its offset: said before anything runs."""
    folder = tmp_path / "members"
    writer = WarcWriter(folder, job="j")
    for n in range(3):
        writer.write(
            Exchange(f"http://a.example/{n}", "GET", [], 200, [("Content-Type", "text/html")], b"<html></html>",
                     datetime(2026, 1, 1, tzinfo=UTC))
        )  # fmt: skip
    [name] = writer.close()
    one_stream = tmp_path / "one-stream.warc.gz"
    one_stream.write_bytes(gzip.compress(gzip.decompress((folder / name).read_bytes())))
    proc = run_cli("replay", str(one_stream), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert "gzip'd as one stream" in line and "recompress" in line


def test_seeds_whose_file_is_gone_keep_its_name_as_source(archived: dict[str, Any], tmp_path: Path) -> None:
    seeds = archived["work"] / "seeds.txt"
    moved = tmp_path / "elsewhere.txt"
    seeds.rename(moved)
    try:
        out = tmp_path / "replayed"
        proc = replay(str(archived["warc"] / "*.warc.gz"), "--out", str(out), "--job-id", JOB, *SEQUENTIAL)
    finally:
        moved.rename(seeds)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"seeds of {seeds} from the archive" in proc.stderr
    live = {
        r["url"]: r["source"]
        for r in read_table(archived["live"], "fetch_log").to_pylist()
        if r["discovered_via"] == "seed"
    }
    replayed = {
        r["url"]: r["source"] for r in read_table(out, "fetch_log").to_pylist() if r["discovered_via"] == "seed"
    }
    assert live and set(live.values()) == {str(seeds)}
    # Every seed the archive holds is replayed with its file's name (lines the crawl refused are not archived).
    assert replayed and set(replayed.values()) == {str(seeds)} and set(replayed) <= set(live)
