"""`feedcensus lint` and `discover` as a user meets them: exit codes, readable output, local pages.

Every test runs the real command in a subprocess; the http cases use a real
loopback server.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from tests.conftest import run_cli

FEED = (
    b'<?xml version="1.0"?>\n<rss version="2.0"><channel><title>T</title><link>http://x/</link>'
    b"<description>d</description><item><title>a</title><guid>g1</guid></item></channel></rss>"
)
#: A feed with a finding whose example holds CR LF line ends and a tab (a description of two paragraphs).
FEED_CRLF = (
    b'<?xml version="1.0"?>\r\n<rss version="2.0"><channel><title>T</title><link>http://x/</link>'
    b"<description>First paragraph.\r\n\r\nSecond\tone &lt;b more</description>"
    b"<item><title>a</title><guid>g1</guid></item></channel></rss>"
)
PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>p</title>"
    b'<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
    b'<link rel="alternate" type="application/atom+xml" href="atom.xml">'
    b'<link rel="alternate" type="application/rss+xml" href="https://elsewhere.example/f.xml">'
    b"</head><body><p>x</p></body></html>"
)


@pytest.fixture
def docs(tmp_path: Path) -> dict[str, Path]:
    files = {
        "feed": FEED,
        "crlf": FEED_CRLF,
        "garbage": b"\x00\x01garbage, not markup at all\xff",
        "empty": b"",
        "html": PAGE,
        "truncated": b'<?xml version="1.0"?>\n<rss version="2.0"><channel><title>T</title><item><title>a',
    }
    paths = {}
    for name, body in files.items():
        path = tmp_path / f"{name}.xml"
        path.write_bytes(body)
        paths[name] = path
    return paths


@pytest.fixture(scope="module")
def site() -> Iterator[WebServer]:
    web = Web()
    web.add("/blog/", Route(body=PAGE, headers={"Content-Type": "text/html; charset=utf-8"}))
    web.add("/feed.xml", Route(body=FEED, headers={"Content-Type": "application/rss+xml"}))
    with WebServer(web) as server:
        yield server


# --------------------------------------------------------------------------- lint: exit codes


@pytest.mark.parametrize("name", ["garbage", "empty", "html"])
def test_lint_exits_1_on_a_document_that_is_not_a_feed(docs: dict[str, Path], name: str) -> None:
    proc = run_cli("lint", str(docs[name]))
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    # the verdict, then the findings (none without a root element): no empty channel:/items: lines
    line, *findings = proc.stdout.strip().splitlines()
    assert line.startswith(f"{docs[name]}: not a feed"), line
    assert findings == (["  error   root-not-feed x1: html"] if name == "html" else [])
    proc = run_cli("lint", "--json", str(docs[name]))
    assert proc.returncode == 1
    result = json.loads(proc.stdout)
    assert result["format"] == "unknown"
    assert [f["rule"] for f in result["findings"]] == (["root-not-feed"] if name == "html" else [])


def test_lint_names_the_root_of_a_document_that_is_not_a_feed(tmp_path: Path) -> None:
    """The W3C validator's UndefinedElement at the root: root-not-feed, or a missing channel under rdf:RDF."""
    rdf = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
    bodies = {
        "channel": "<channel><title>foo</title><link>http://example.com/</link></channel>",
        "misspelt": f'<rdf:rdf {rdf} xmlns="http://purl.org/rss/1.0/"></rdf:rdf>',
        "rdf": f'<rdf:RDF {rdf} xmlns="http://my.netscape.com/publish/formats/rss-0.91.dtd"><channel/></rdf:RDF>',
    }
    for name, body in bodies.items():
        (tmp_path / f"{name}.xml").write_text(body, encoding="utf-8")
    proc = run_cli("lint", "--json", *(str(tmp_path / f"{name}.xml") for name in bodies))
    assert proc.returncode == 1, proc.stderr
    found = [json.loads(line)["findings"] for line in proc.stdout.splitlines()]
    assert found == [
        [{"rule": "root-not-feed", "severity": "error", "scope": "document", "count": 1, "example": "channel"}],
        [{"rule": "root-not-feed", "severity": "error", "scope": "document", "count": 1, "example": "rdf:rdf"}],
        [{"rule": "rss1-channel-missing", "severity": "error", "scope": "rdf:RDF", "count": 1, "example": None}],
    ]
    # the rule is in the table `feedcensus rules` prints
    rules = {json.loads(line)["id"]: json.loads(line) for line in run_cli("rules", "--json").stdout.splitlines()}
    assert rules["root-not-feed"]["source"] == "rss2" and rules["root-not-feed"]["w3c"] == ["UndefinedElement"]


def test_lint_exits_0_on_feeds_even_broken_ones(docs: dict[str, Path]) -> None:
    proc = run_cli("lint", str(docs["feed"]), str(docs["truncated"]), str(docs["crlf"]))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert "NOT well-formed" in proc.stdout and "rss 2.0 well-formed, 1 item" in proc.stdout


def test_lint_exit_code_is_the_worst_of_its_documents(docs: dict[str, Path], tmp_path: Path, site: WebServer) -> None:
    proc = run_cli("lint", str(docs["feed"]), str(docs["html"]))
    assert proc.returncode == 1, proc.stdout
    proc = run_cli("lint", str(docs["html"]), str(tmp_path / "missing.xml"), str(docs["feed"]))
    assert proc.returncode == 2
    assert proc.stdout.count("\n") >= 2, "the readable documents are still linted"
    # an http document that cannot be read (404) is 2 as well; a readable feed over http is 0
    assert run_cli("lint", site.url_for("/nothing-here.xml")).returncode == 2
    ok = run_cli("lint", site.url_for("/feed.xml"))
    assert ok.returncode == 0 and "rss 2.0 well-formed, 1 item" in ok.stdout


# --------------------------------------------------------------------------- lint: human output


def test_lint_examples_are_shown_on_one_line(docs: dict[str, Path]) -> None:
    proc = run_cli("lint", str(docs["crlf"]))
    assert proc.returncode == 0, proc.stderr
    assert "\r" not in proc.stdout and "\t" not in proc.stdout
    finding_lines = [line for line in proc.stdout.splitlines() if line.startswith("  ") and " x" in line]
    (example,) = [line for line in finding_lines if "First paragraph." in line]
    assert "First paragraph.\\r\\n\\r\\nSecond\\tone" in example, example
    # every line of the human output is the header, channel, items or a finding: nothing spills over
    lines = proc.stdout.splitlines()
    assert len(lines) == 3 + len(finding_lines)
    # --json keeps the example as it is in the document
    raw = json.loads(run_cli("lint", "--json", str(docs["crlf"])).stdout)
    assert any("First paragraph.\r\n\r\nSecond\tone" in (f["example"] or "") for f in raw["findings"])


def test_lint_header_of_a_feed_without_version_has_no_double_space(tmp_path: Path) -> None:
    path = tmp_path / "noversion.xml"
    path.write_bytes(b"<rss><channel><title>T</title></channel></rss>")
    proc = run_cli("lint", str(path))
    first = proc.stdout.splitlines()[0]
    assert first == f"{path}: rss well-formed, 0 items", first


def test_lint_xml_error_does_not_repeat_the_line(docs: dict[str, Path]) -> None:
    proc = run_cli("lint", "--json", str(docs["truncated"]), str(docs["html"]))
    errors = [json.loads(line)["error"] for line in proc.stdout.splitlines()]
    assert all(errors), errors
    for error in errors:
        assert not re.search(r"line (\d+), line \1\b", error), error
        assert re.search(r", line \d+, column \d+$", error), error


# --------------------------------------------------------------------------- discover


def test_discover_local_file_keeps_relative_hrefs_relative(docs: dict[str, Path]) -> None:
    proc = run_cli("discover", str(docs["html"]))
    assert proc.returncode == 0, proc.stderr
    assert "file://" not in proc.stdout
    assert "href-unsupported-scheme" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{docs['html']}: 3 feed links"
    assert "/feed.xml" in lines[1] and "relative: give --base-url to resolve" in lines[1]
    assert "atom.xml" in lines[2] and "relative: give --base-url to resolve" in lines[2]
    assert "https://elsewhere.example/f.xml" in lines[3] and "relative" not in lines[3]

    data = json.loads(run_cli("discover", "--json", str(docs["html"])).stdout)
    links = data["links"]
    assert [(link["href"], link["href_raw"]) for link in links] == [
        (None, "/feed.xml"),
        (None, "atom.xml"),
        ("https://elsewhere.example/f.xml", "https://elsewhere.example/f.xml"),
    ]
    assert all("href-relative-without-base" in link["reasons"] for link in links[:2])
    assert all("href-unsupported-scheme" not in link["reasons"] for link in links)


def test_discover_local_file_with_base_url_matches_the_http_page(docs: dict[str, Path], site: WebServer) -> None:
    page_url = site.url_for("/blog/")
    over_http = json.loads(run_cli("discover", "--json", page_url).stdout)
    local = json.loads(run_cli("discover", "--json", "--base-url", page_url, str(docs["html"])).stdout)
    assert over_http["page"] == page_url and local["page"] == str(docs["html"])
    assert over_http["links"] == local["links"]
    assert [link["href"] for link in over_http["links"]] == [
        site.url_for("/feed.xml"),
        site.url_for("/blog/atom.xml"),
        "https://elsewhere.example/f.xml",
    ]
    human = run_cli("discover", page_url).stdout
    assert "relative" not in human and site.url_for("/feed.xml") in human


def test_discover_names_each_reasons_spec_and_the_links_it_leaves_out(tmp_path: Path) -> None:
    """A text/xml alternate link was left out without a word, and every good RSS link said atom-type-not-atom."""
    page = tmp_path / "page.html"
    page.write_bytes(
        b"<!DOCTYPE html><html><head><title>p</title>"
        b'<link rel="alternate" type="application/rss+xml" href="http://a.example/feed.xml">'
        b'<link rel="Alternate" type="application/rss+xml" href="http://a.example/other.xml">'
        b'<link rel="alternate" type="text/xml" href="http://a.example/feed.rss">'
        b'<link rel="alternate" type="application/rss+xml" href="ftp://a.example/f.xml">'
        b"</head><body><p>x</p></body></html>"
    )
    proc = run_cli("discover", str(page))
    assert proc.returncode == 0, proc.stderr
    assert "atom-type-not-atom" not in proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{page}: 3 feed links"
    assert lines[1] == "  0. http://a.example/feed.xml [application/rss+xml] rss=ok atom=n/a"
    assert lines[2] == (
        "  1. http://a.example/other.xml [application/rss+xml] rss=no atom=n/a RSS Autodiscovery: rss-rel-not-lowercase"
    )
    assert lines[3] == (
        "  2. ftp://a.example/f.xml [application/rss+xml] rss=ok atom=n/a crawler policy: href-unsupported-scheme "
        "(not followed)"
    )
    assert lines[4] == "  1 link left out, not followed:"
    assert lines[5].startswith(
        "  - http://a.example/feed.rss [text/xml] rel='alternate': type-generic-xml (text/xml or"
    )

    data = json.loads(run_cli("discover", "--json", str(page)).stdout)
    assert [link["reason_specs"] for link in data["links"]] == [
        {},
        {"rss-rel-not-lowercase": "rss"},
        {"href-unsupported-scheme": "crawler"},
    ]
    assert [link["followed"] for link in data["links"]] == [True, True, False]
    [left_out] = data["left_out"]
    assert (left_out["href"], left_out["type"], left_out["reason"], left_out["spec"]) == (
        "http://a.example/feed.rss",
        "text/xml",
        "type-generic-xml",
        "both",
    )


def test_discover_help_describes_every_option() -> None:
    proc = run_cli("discover", "--help")
    assert proc.returncode == 0
    json_line = next(line for line in proc.stdout.splitlines() if line.strip().startswith("--json"))
    assert len(json_line.split()) > 1, "--json has no help text"


class RawServer:
    """A TCP server on 127.0.0.1 that answers every connection with ``reply`` (bytes sent ``every`` seconds
    apart, one at a time, when ``every`` is set), then closes it: not necessarily HTTP."""

    def __init__(self, reply: bytes, every: float = 0.0) -> None:
        import socket
        import threading

        self.reply, self.every = reply, every
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/feed.xml"
        self.stopping = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.recv(65536)
                    if not self.every:
                        conn.sendall(self.reply)
                    for byte in self.reply if self.every else ():
                        if self.stopping.wait(self.every):
                            break
                        conn.sendall(bytes([byte]))
                except OSError:
                    pass

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.sock.close()


@pytest.mark.parametrize(
    ("reply", "shown"),
    [
        (b"hello there\r\n", "not a usable HTTP answer: BadStatusLine"),
        (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n<rss",
            "not a usable HTTP answer: IncompleteRead",
        ),
    ],
)
def test_an_answer_that_is_not_usable_http_is_one_line_and_exit_2(reply: bytes, shown: str) -> None:
    """Before: an http.client traceback."""
    with RawServer(reply) as server:
        for command in ("lint", "discover"):
            proc = run_cli(command, server.url, timeout=60)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"feedcensus {command}: {server.url}: {shown}"), lines


def test_a_server_that_drips_is_given_up_at_the_time_limit() -> None:
    """urllib's timeout is per read: a byte a second never reached it, and lint ran on (until Ctrl-C)."""
    import time

    from crawler.cli.documents import read_source
    from crawler.cli.errors import CliError

    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\n\r\n"
    with RawServer(head + b"<rss>" + b" " * 100 + b"</rss>", every=0.05) as server:
        started = time.monotonic()
        with pytest.raises(CliError, match=r"not read within the time limit \(1 s\)"):
            read_source(server.url, timeout=1.0)
        assert time.monotonic() - started < 2  # its headers alone take 2.7 s: the limit holds for them too


def test_a_body_shorter_than_its_content_length_is_not_linted_as_whole() -> None:
    with RawServer(b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n<rss version='2.0'/>") as server:
        proc = run_cli("lint", server.url, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"feedcensus lint: {server.url}: cut short: 480 bytes of its Content-Length did not come"
    ]


def test_a_local_file_is_read_up_to_the_limit_and_no_further(tmp_path: Path) -> None:
    """``lint /dev/zero`` grew by 1.7 GB a second and ignored Ctrl-C."""
    proc = run_cli("lint", "/dev/zero", timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == ["feedcensus lint: /dev/zero: larger than 33554432 bytes"]


def test_a_redirect_to_another_scheme_is_refused_in_one_line() -> None:
    """urllib follows a redirect to ftp://: lint reported the FTP host's failure ("Name or service not known")."""
    target = "ftp://127.0.0.1:1/feed.xml"
    with RawServer(f"HTTP/1.1 302 Found\r\nLocation: {target}\r\nContent-Length: 0\r\n\r\n".encode()) as server:
        for command in ("lint", "discover"):
            proc = run_cli(command, server.url, timeout=60)
            assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
            assert proc.stderr.strip().splitlines() == [
                f"feedcensus {command}: {server.url}: redirected to {target}: only http(s) URLs are followed"
            ]


def test_a_redirect_to_another_http_url_is_followed(site: WebServer) -> None:
    feed = site.url_for("/feed.xml")
    with RawServer(f"HTTP/1.1 301 Moved\r\nLocation: {feed}\r\nContent-Length: 0\r\n\r\n".encode()) as server:
        proc = run_cli("lint", server.url, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith(f"{server.url}: rss 2.0 well-formed, 1 item")  # the redirecting server sends no body
