"""WARC capture (``crawl --warc DIR``): the writer on its own, then a real crawl archived and read back.

The archive is read with warcio's own reader, not with our writer's code, and checked against
what the web server counted: every response it sent is a record, each record can be read alone
from its offset, a gzip'd body is kept as it came, and a WARC file that cannot be written stops
the crawl with exit code 3.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import resource
import subprocess
import sys
from base64 import b32encode
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator

from crawler.archive.warc import Exchange, Location, WarcWriter
from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from tests.conftest import QUICK_CRAWL, REPO, demo_seeds_file, read_table, run_cli

AT = datetime(2026, 11, 22, 12, 0, 0, 123456, tzinfo=UTC)
RSS = b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>http://a/</link></channel></rss>'


def exchange(url: str, body: bytes = RSS, **extra: Any) -> Exchange:
    fields: dict[str, Any] = {
        "url": url,
        "method": "GET",
        "request_headers": [("User-Agent", "feedcensus-test"), ("Host", urlsplit(url).netloc)],
        "status": 200,
        "response_headers": [("Content-Type", "application/rss+xml"), ("Content-Length", str(len(body)))],
        "body": body,
        "fetched_at": AT,
        "ip_address": "127.0.0.1",
        **extra,
    }
    return Exchange(**fields)


def records(path: Path) -> list[Any]:
    """Every record of a WARC file as (type, WARC headers, HTTP headers, payload as stored), read with warcio."""
    out = []
    with path.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            out.append((rec.rec_type, rec.rec_headers, rec.http_headers, rec.raw_stream.read()))
    return out


def record_at(folder: Path, where: Location) -> Any:
    """The one record at ``where``, read alone: seek, read its length, gunzip (as a Range request would)."""
    with (folder / where.filename).open("rb") as fh:
        fh.seek(where.offset)
        member = fh.read(where.length)
    [rec] = records_of(gzip.decompress(member))
    return rec


def records_of(data: bytes) -> list[Any]:
    return [(r.rec_type, r.rec_headers, r.http_headers, r.raw_stream.read()) for r in ArchiveIterator(io.BytesIO(data))]


def test_each_response_record_reads_alone_from_its_offset(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path, job="j1", info={"software": "feedcensus/test"})
    urls = ["http://a.example/feed.xml", "http://b.example/?q=1", "http://c.example/atom"]
    where = [writer.write(exchange(u, body=RSS + u.encode())) for u in urls]
    writer.close()

    for url, loc in zip(urls, where, strict=True):
        kind, warc, http, content = record_at(tmp_path, loc)
        assert (kind, warc.get_header("WARC-Target-URI"), http.get_statuscode()) == ("response", url, "200")
        assert content == RSS + url.encode()
        assert warc.get_header("WARC-Date") == "2026-11-22T12:00:00.123456Z"
        assert warc.get_header("WARC-IP-Address") == "127.0.0.1"
        digest = "sha1:" + b32encode(hashlib.sha1(content).digest()).decode()
        assert warc.get_header("WARC-Payload-Digest") == digest
    assert len({loc.filename for loc in where}) == 1 and where[0].offset > 0  # after the warcinfo record


def test_a_request_record_follows_each_response_and_names_it(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path, job="j1")
    url = "http://a.example/dir/feed.xml?x=1&y=2"
    writer.write(
        exchange(url, response_headers=[("Transfer-Encoding", "chunked"), ("Content-Type", "text/xml")]),
    )
    [name] = writer.close()
    kinds = records(tmp_path / name)
    assert [k[0] for k in kinds] == ["warcinfo", "response", "request", "metadata"]  # the file's closing record
    _, response, response_http, _ = kinds[1]
    _, request, request_http, _ = kinds[2]
    assert request.get_header("WARC-Concurrent-To") == response.get_header("WARC-Record-ID")
    assert request_http.protocol == "GET" and request_http.statusline == "/dir/feed.xml?x=1&y=2 HTTP/1.1"
    assert request_http.get_header("Host") == "a.example"
    # The body is no longer chunked, so the header saying it was is left out.
    assert response_http.get_header("Transfer-Encoding") is None
    assert response_http.get_header("Content-Type") == "text/xml"


def test_files_rotate_by_size_and_each_starts_with_warcinfo(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path, job="weekly/2026-11", info={"software": "feedcensus/test"}, max_bytes=1)
    where = [writer.write(exchange(f"http://a.example/{n}")) for n in range(3)]
    names = writer.close()
    assert len(names) == 3 and [loc.filename for loc in where] == names
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    for name in names:
        assert name.startswith("feedcensus-weekly_2026-11-") and name.endswith(".warc.gz")
        first = records(tmp_path / name)[0]
        assert first[0] == "warcinfo" and first[1].get_header("WARC-Filename") == name
        info = first[3].decode()
        assert "isPartOf: weekly/2026-11" in info and "software: feedcensus/test" in info
        assert "format: WARC File Format 1.1" in info


def test_a_file_cut_short_is_readable_up_to_its_last_whole_record(tmp_path: Path) -> None:
    writer = WarcWriter(tmp_path, job="j1")
    where = [writer.write(exchange(f"http://a.example/{n}")) for n in range(3)]
    [name] = writer.close()
    path = tmp_path / name
    path.write_bytes(path.read_bytes()[: where[2].offset + where[2].length // 2])  # a crash mid-record
    seen = [(kind, warc.get_header("WARC-Target-URI")) for kind, warc, _, _ in records(path)]
    assert seen == [
        ("warcinfo", None),
        ("response", "http://a.example/0"),
        ("request", "http://a.example/0"),
        ("response", "http://a.example/1"),
        ("request", "http://a.example/1"),
    ]  # warcio stops quietly at the cut member
    assert record_at(tmp_path, where[1])[3] == RSS


# --- a real crawl ----------------------------------------------------------------------------------------


def archived(folder: Path) -> list[Any]:
    out = []
    for path in sorted(folder.glob("*.warc.gz")):
        out += records(path)
    return out


def test_a_crawl_archives_every_response_the_server_sent(tmp_path: Path, demo_server: Any) -> None:
    demo_server.reset_hits()
    warc = tmp_path / "warc"
    proc = run_cli(
        "crawl", "--seeds", str(demo_seeds_file(tmp_path, demo_server)), "--out", str(tmp_path / "out"),
        "--job-id", "w1", "--warc", str(warc), *QUICK_CRAWL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    recs = archived(warc)
    responses = Counter(urlsplit(r[1].get_header("WARC-Target-URI")).path for r in recs if r[0] == "response")
    requests = Counter(urlsplit(r[1].get_header("WARC-Target-URI")).path for r in recs if r[0] == "request")
    hits = Counter({path.partition("?")[0]: n for path, n in demo_server.hits.items() if n})
    # Each answer the server sent is one response record and one request record: redirects, errors,
    # retried attempts and robots.txt included (a hang or a reset connection sends no answer).
    assert responses == requests
    assert +(hits - responses) == Counter(), "answers the archive lacks"
    assert "/robots.txt" in responses
    # Each request record says why the census asked (its fetch context); Scrapy's robots.txt requests carry none.
    contexts = {
        urlsplit(r[1].get_header("WARC-Target-URI")).path: r[1].get_header("Feedcensus-Context")
        for r in recs
        if r[0] == "request"
    }
    assert contexts["/robots.txt"] is None
    seeds = {p: json.loads(c) for p, c in contexts.items() if c and json.loads(c)["via"] == "seed"}
    assert seeds and all(c["depth"] == 0 for c in seeds.values())
    assert any(c and json.loads(c)["via"] == "autodiscovery" for c in contexts.values())
    # Each row about a response points at its record: read alone, it is that response.
    out = tmp_path / "out"
    fetched = [r for r in read_table(out, "fetch_log").to_pylist() if r["status"] is not None]
    feeds = read_table(out, "feeds").to_pylist()
    assert fetched and feeds
    for row in fetched + feeds:
        assert row["warc_filename"] is not None, row
        where = Location(row["warc_filename"], row["warc_record_offset"], row["warc_record_length"])
        kind, header, http, _ = record_at(warc, where)
        assert kind == "response" and header.get_header("WARC-Target-URI") == row["final_url"], row
        assert int(http.get_statuscode()) == row["status"]
    assert {r["outcome"] for r in fetched} >= {"feed", "page", "opml", "robots", "http_error"}
    infos = [r for r in recs if r[0] == "warcinfo"]
    assert infos and all(b"isPartOf: w1" in r[3] and b"robots: obey" in r[3] for r in infos)


def test_a_gzipped_body_is_archived_as_it_came(tmp_path: Path) -> None:
    web = Web()
    web.add("/feed.xml", Route(RSS, headers={"Content-Type": "application/rss+xml"}, gzip=True))
    with WebServer(web) as server:
        warc = tmp_path / "warc"
        proc = run_cli(
            "crawl", "--url", server.url_for("/feed.xml"), "--out", str(tmp_path / "out"), "--warc", str(warc),
            "-s", "ROBOTSTXT_OBEY=False", "--no-reflexive",
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    [(_, _, http, content)] = [r for r in archived(warc) if r[0] == "response"]
    assert http.get_header("Content-Encoding") == "gzip"
    assert content[:2] == b"\x1f\x8b" and gzip.decompress(content) == RSS


def test_an_unusable_warc_folder_is_one_line_and_exit_2(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    proc = run_cli("crawl", "--url", "http://127.0.0.1:9/f.xml", "--out", str(tmp_path / "out"), "--warc", str(blocker))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"feedcensus crawl: --warc {blocker}: cannot make the folder: File exists"
    ]


def test_a_warc_file_that_cannot_be_written_stops_the_crawl_with_exit_3(tmp_path: Path, demo_server: Any) -> None:
    """A real failure: the process may write no file past 32 KB (RLIMIT_FSIZE), which the WARC file reaches
    (39 KB) and the dataset's Parquet files do not (25 KB at most, the feeds table)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (32_000, 32_000))

    warc = tmp_path / "warc"
    argv = [
        sys.executable, "-m", "crawler.cli", "crawl", "--seeds", str(demo_seeds_file(tmp_path, demo_server)),
        "--out", str(tmp_path / "out"), "--job-id", "w", "--warc", str(warc), *QUICK_CRAWL,
    ]  # fmt: skip
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, preexec_fn=limit, timeout=300, check=False)
    assert proc.returncode == 3, proc.stderr[-3000:]
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith(f"feedcensus crawl: cannot write WARC files to {warc}: OSError:"), last
    assert "Traceback" not in proc.stderr and "Error caught on signal handler" not in proc.stderr
    [name] = [p.name for p in warc.iterdir()]
    kinds = [kind for kind, _, _, _ in records(warc / name)]
    assert kinds[0] == "warcinfo" and "response" in kinds  # what was written before the failure reads back


_CUT_CHILD = """
import json, os, resource, sys
sys.path.insert(0, os.getcwd())
from tests.test_warc import exchange
from crawler.archive.warc import WarcWriter
resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, 20_000))
written = []
for n in range(int(sys.argv[1])):
    writer = WarcWriter(sys.argv[2] + f"/{n}", job="cut")
    body = bytes((i * 7 + n) % 251 for i in range(700 + 97 * n))  # incompressible, a size per writer
    count = 0
    try:
        while True:
            writer.write(exchange(f"http://a.example/{count}", body))
            count += 1
    except OSError:
        written.append(count)
print(json.dumps(written))
"""


def test_a_write_that_fails_leaves_the_file_ending_on_its_last_whole_record(tmp_path: Path) -> None:
    """A file size limit cuts a record anywhere in its gzip member (a place that depends on the record
    sizes): the writer cuts the partial record off again, so every file reads back whole, with every
    exchange written before the failure, whichever the place."""
    writers = 12
    proc = subprocess.run(
        [sys.executable, "-c", _CUT_CHILD, str(writers), str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = json.loads(proc.stdout)
    assert len(written) == writers and all(n > 0 for n in written)
    for n, count in enumerate(written):
        [path] = list((tmp_path / str(n)).iterdir())
        gzip.decompress(path.read_bytes())  # every gzip member whole: the file does not end in a cut record
        kinds = [kind for kind, _, _, _ in records(path)]
        # warcinfo, then a response and a request per exchange; the failed exchange's response may be whole
        assert kinds[0] == "warcinfo" and kinds[1 : 1 + 2 * count] == ["response", "request"] * count, (n, kinds)
        assert len(kinds) - 1 - 2 * count in (0, 1), (n, kinds)


def test_credentials_on_a_request_are_never_archived(tmp_path: Path) -> None:
    from scrapy import Request
    from scrapy.http import Response
    from scrapy.utils.test import get_crawler

    from crawler.middlewares.warc import WarcCaptureMiddleware

    crawler = get_crawler(settings_dict={"FEEDCENSUS_WARC_DIR": str(tmp_path), "FEEDCENSUS_JOB_ID": "j"})
    capture = WarcCaptureMiddleware.from_crawler(crawler)
    request = Request(
        "http://a.example/feed.xml",
        headers={
            "Authorization": "Basic YWxpY2U6aHVudGVyMg==",
            "Proxy-Authorization": "Basic YWxpY2U6aHVudGVyMg==",
            "User-Agent": "feedcensus-test",
        },
    )
    capture.process_response(request, Response(request.url, body=RSS, request=request))
    capture.engine_stopped()
    [name] = capture.writer.files
    [(_, _, http, _)] = [r for r in records(tmp_path / name) if r[0] == "request"]
    assert http.get_header("User-Agent") == "feedcensus-test"
    assert http.get_header("Authorization") is None and http.get_header("Proxy-Authorization") is None
    assert b"YWxpY2U6aHVudGVyMg" not in gzip.decompress((tmp_path / name).read_bytes())
