"""The loopback test web server (crawler.demo.webserver) and the bundled demo web."""

from __future__ import annotations

import calendar
import email.utils
import gzip
import http.client
import importlib.util
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lxml.html
import pytest

from crawler.demo.dates import render_dates
from crawler.demo.routes import VALIDATORS_EPOCH, Route, Web
from crawler.demo.webserver import WebServer, demo_root, demo_seeds, demo_site_root, demo_web, serve_demo

EXPECTED = json.loads((demo_root() / "EXPECTED.json").read_text(encoding="utf-8"))
FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/rdf+xml")
#: The demo day of the module's demo web (its dates are relative to it: crawler/demo/dates.py), fixed
#: once so that a run across midnight compares with the day the server was started for.
DEMO_DAY = datetime.now(UTC).date()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_PLAIN = urllib.request.build_opener(_NoRedirect)


def fetch(url: str, timeout: float = 5.0, *, follow: bool = True) -> tuple[int, dict[str, str], bytes, str]:
    """GET url; return (status, headers, body, final url) for any status."""
    opener = urllib.request.build_opener() if follow else _PLAIN
    try:
        with opener.open(url, timeout=timeout) as resp:
            return resp.status, dict(resp.headers.items()), resp.read(), resp.url
    except urllib.error.HTTPError as err:
        with err:
            return err.code, dict(err.headers.items()), err.read(), err.url


@pytest.fixture(scope="module")
def demo() -> Iterator[WebServer]:
    server = serve_demo(day=DEMO_DAY)
    yield server
    server.stop()


@pytest.fixture
def make_server() -> Iterator[Callable[..., WebServer]]:
    servers: list[WebServer] = []

    def start(web: Web, host: str = "127.0.0.1") -> WebServer:
        server = WebServer(web, host=host).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


# --- the demo web -----------------------------------------------------------------------------


def test_demo_url_and_seeds(demo: WebServer) -> None:
    assert demo.url.startswith("http://127.0.0.1:")
    assert int(demo.url.rsplit(":", 1)[1]) == demo.port > 0
    seeds = demo_seeds(demo.url)
    assert seeds == [demo.url + path for path in EXPECTED["seeds"]]
    assert len(seeds) == 8 and all("{{" not in s for s in seeds)


@pytest.mark.parametrize("path", sorted(EXPECTED["feeds"]))
def test_demo_feeds_served(demo: WebServer, path: str) -> None:
    expected = EXPECTED["feeds"][path]
    status, headers, body, _ = fetch(demo.url + path)
    assert status == 200
    assert headers["Content-Type"] == expected["content_type"]
    if headers.get("Content-Encoding") == "gzip":
        body = gzip.decompress(body)
    assert b"{{BASE}}" not in body and b"{{HOST}}" not in body and b"{{DATE-" not in body
    assert demo.url.encode() in body  # every feed names its own site
    raw = (demo_site_root() / ("podcast-d/atom.xml" if "?" in path else path.lstrip("/"))).read_bytes()
    assert body == render_dates(raw, DEMO_DAY).replace(b"{{BASE}}", demo.url.encode())


def test_demo_gzip_feed(demo: WebServer) -> None:
    status, headers, body, _ = fetch(demo.url + "/blog-a/atom.xml")
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert int(headers["Content-Length"]) == len(body)
    assert gzip.decompress(body).startswith(b'<?xml version="1.0" encoding="utf-8"?>\n<feed')


@pytest.mark.parametrize("path", sorted(EXPECTED["pages"]))
def test_demo_pages_links_match_expected(demo: WebServer, path: str) -> None:
    status, headers, body, final = fetch(demo.url + path)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    doc = lxml.html.fromstring(body, base_url=final)
    assert doc.findtext(".//title") == EXPECTED["pages"][path]["title"]
    base_el = doc.find(".//base")
    base = urllib.parse.urljoin(final, base_el.get("href")) if base_el is not None else final
    found = []
    for link in doc.iter("link"):
        rel = link.get("rel", "")
        type_ = link.get("type", "")
        if "alternate" not in rel.lower().split() or type_.strip().lower().split(";")[0].strip() not in FEED_TYPES:
            continue
        href = urllib.parse.urljoin(base, link.get("href", "").strip())
        assert href.startswith(demo.url + "/")
        found.append(
            {
                "href": href[len(demo.url) :],
                "rel": rel,
                "type": type_,
                "title": link.get("title"),
                "in_head": getattr(link.getparent(), "tag", None) == "head",
            }
        )
    # href_raw is the attribute as written; followed is what the crawl does with the link, not the page
    expected = [
        {k: v for k, v in link.items() if k not in ("href_raw", "followed")}
        for link in EXPECTED["pages"][path]["links"]
    ]
    assert found == expected


def test_demo_dead_ends(demo: WebServer) -> None:
    for path, spec in EXPECTED["dead_ends"].items():
        status, headers, _, _ = fetch(demo.url + path, follow=False)
        assert status == spec["status"], path
        if "location" in spec:
            assert headers["Location"] == spec["location"].replace("{{BASE}}", demo.url)
        if "content_type" in spec:
            assert headers["Content-Type"] == spec["content_type"]
    status, _, body, final = fetch(demo.url + "/blog-a/rss")
    assert (status, final) == (200, demo.url + "/blog-a/feed.xml") and body.startswith(b"<?xml")
    with pytest.raises(urllib.error.HTTPError, match="redirect"):
        urllib.request.urlopen(demo.url + "/loop/a", timeout=5)


def test_demo_robots_and_opml(demo: WebServer) -> None:
    status, headers, body, _ = fetch(demo.url + "/robots.txt")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert b"Disallow: /private/" in body
    for path, spec in EXPECTED["opml"].items():
        status, _, body, _ = fetch(demo.url + path)
        assert status == 200
        for feed in spec["feeds"] + spec["includes"]:
            assert f'"{demo.url}{feed}"'.encode() in body
    # every URL an OPML list names is served (feeds, includes, and the htmlUrl pages)
    for spec in EXPECTED["opml"].values():
        for path in spec["feeds"] + spec["includes"] + spec["html_only"]:
            expected_status = EXPECTED["dead_ends"].get(path, {}).get("status", 200)
            assert fetch(demo.url + path)[0] == (200 if expected_status == 301 else expected_status), path


def test_demo_expected_feeds_are_reachable_and_fresh() -> None:
    assert len(EXPECTED["expected_feeds"]) == 11
    formats = {(f["format"], f["version"]) for f in EXPECTED["feeds"].values()}
    assert formats == {
        ("rss", "2.0"),
        ("rss", "0.91"),
        ("rss", "0.92"),
        ("rss", ""),
        ("rdf", "1.0"),
        ("rdf", "0.90"),
        ("atom", "1.0"),
        ("atom", "0.3"),
    }
    assert not EXPECTED["feeds"]["/news-b/rss091.xml"]["well_formed"]
    assert all(f["linked_from"] for f in EXPECTED["feeds"].values())
    # EXPECTED.json is what the generator writes from the fixture files today.
    spec = importlib.util.spec_from_file_location("_make_expected", demo_root() / "_make_expected.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render() == (demo_root() / "EXPECTED.json").read_text(encoding="utf-8"), (
        "EXPECTED.json is stale: run python crawler/demo/web/_make_expected.py"
    )


def test_demo_directory_redirect_and_404(demo: WebServer) -> None:
    status, headers, _, _ = fetch(demo.url + "/shop-e", follow=False)
    assert status == 301 and headers["Location"] == demo.url + "/shop-e/"
    status, headers, body, _ = fetch(demo.url + "/no/such/feed.xml")
    assert status == 404 and b"Not Found" in body
    assert fetch(demo.url + "/_headers.json")[0] == 404  # control files are not served
    assert demo.hits["/no/such/feed.xml"] == 1


# --- the server -------------------------------------------------------------------------------


def test_substitution_headers_head_and_post(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/page.txt", Route(b"base={{BASE}} host={{HOST}}", headers={"Content-Type": "text/plain"}))
    web.add("/bin", Route(b"{{BASE}}", headers={"Content-Type": "image/png"}))
    web.add("/go", Route(status=302, headers={"Location": "{{BASE}}/page.txt"}))
    server = make_server(web)
    host = server.url.removeprefix("http://")
    assert fetch(server.url + "/page.txt")[2] == f"base={server.url} host={host}".encode()
    assert fetch(server.url + "/bin")[2] == b"{{BASE}}"  # binary bodies are left alone
    status, headers, _, _ = fetch(server.url + "/go", follow=False)
    assert status == 302 and headers["Location"] == server.url + "/page.txt"
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("HEAD", "/page.txt")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read() == b""
        assert int(resp.headers["Content-Length"]) == len(f"base={server.url} host={host}")
        conn.request("POST", "/page.txt", body=b"x=1")
        resp = conn.getresponse()
        assert resp.status == 405 and resp.read() == b""
        conn.request("GET", "/page.txt")  # same keep-alive connection still works
        assert conn.getresponse().read().startswith(b"base=")
    finally:
        conn.close()
    assert server.hits["/page.txt"] == 4


def test_keep_alive_reuses_connection(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/a", Route(b"aaa", headers={"Content-Type": "text/plain"}))
    server = make_server(web)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", "/a")
        first = conn.getresponse()
        assert first.version == 11 and first.read() == b"aaa"
        sock = conn.sock
        conn.request("GET", "/a?x=1")
        assert conn.getresponse().read() == b"aaa"  # query falls back to the path's route
        assert conn.sock is sock
    finally:
        conn.close()
    assert server.hits == {"/a": 1, "/a?x=1": 1}


def test_delay_and_drip(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/slow", Route(b"late", delay=0.3))
    web.add("/drip", Route(b"abcdef", drip=0.05))
    server = make_server(web)
    t0 = time.monotonic()
    assert fetch(server.url + "/slow")[2] == b"late"
    assert time.monotonic() - t0 >= 0.3
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        urllib.request.urlopen(server.url + "/slow", timeout=0.1)
    t0 = time.monotonic()
    assert fetch(server.url + "/drip")[2] == b"abcdef"
    assert time.monotonic() - t0 >= 6 * 0.05 - 0.01


def test_hang_times_out_and_stop_is_prompt(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/hang", Route(b"never", hang=True))
    web.add("/drip", Route(b"x" * 1000, drip=1.0))
    server = make_server(web)
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        urllib.request.urlopen(server.url + "/hang", timeout=0.2)
    # Two clients left hanging (one waiting for an answer, one mid-drip) and one idle keep-alive.
    clients = [socket.create_connection(("127.0.0.1", server.port), timeout=5) for _ in range(3)]
    clients[0].sendall(b"GET /hang HTTP/1.1\r\nHost: x\r\n\r\n")
    clients[1].sendall(b"GET /drip HTTP/1.1\r\nHost: x\r\n\r\n")
    time.sleep(0.2)
    t0 = time.monotonic()
    server.stop()
    assert time.monotonic() - t0 < 2.0
    try:
        assert clients[0].recv(100) == b""  # closed without an answer
        received = b""
        while chunk := clients[1].recv(4096):
            received += chunk
        assert received.startswith(b"HTTP/1.1 200") and len(received.split(b"\r\n\r\n", 1)[1]) < 1000
        assert clients[2].recv(100) == b""
    finally:
        for c in clients:
            c.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=1).close()


def test_close_after_and_content_length_lies(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/cut", Route(b"0123456789" * 10, close_after=25))
    web.add("/long", Route(b"short", content_length=50))
    web.add("/shortlie", Route(b"0123456789", content_length=4))
    server = make_server(web)
    for path, got in (("/cut", 25), ("/long", 5)):
        with urllib.request.urlopen(server.url + path, timeout=5) as resp:
            with pytest.raises(http.client.IncompleteRead) as info:
                resp.read()
            assert len(info.value.partial) == got
    status, headers, body, _ = fetch(server.url + "/shortlie")
    assert status == 200 and headers["Content-Length"] == "4" and body == b"0123"
    assert headers["Connection"] == "close"


def test_gzip_route(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/z", Route(b"<rss>{{BASE}}</rss>" * 50, headers={"Content-Type": "text/xml"}, gzip=True))
    server = make_server(web)
    status, headers, body, _ = fetch(server.url + "/z")
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert int(headers["Content-Length"]) == len(body) < 50 * 20
    assert gzip.decompress(body) == f"<rss>{server.url}</rss>".encode() * 50


def test_virtual_hosts_on_other_loopback_addresses(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/x", Route(b"default", headers={"Content-Type": "text/plain"}))
    web.add("127.0.0.2/x", Route(b"site two", headers={"Content-Type": "text/plain"}))
    web.add("http://127.0.0.3:8080/x", Route(b"site three", headers={"Content-Type": "text/plain"}))
    one = make_server(web)
    two = make_server(web, host="127.0.0.2")
    three = make_server(web, host="127.0.0.3")
    assert two.url.startswith("http://127.0.0.2:")
    assert fetch(one.url + "/x")[2] == b"default"
    assert fetch(two.url + "/x")[2] == b"site two"
    assert fetch(three.url + "/x")[2] == b"site three"
    # Routing follows the Host header, not the address the request arrived on.
    conn = http.client.HTTPConnection("127.0.0.1", one.port, timeout=5)
    try:
        conn.request("GET", "/x", headers={"Host": "127.0.0.2"})
        assert conn.getresponse().read() == b"site two"
    finally:
        conn.close()
    assert one.hits["/x"] == 2 and two.hits["/x"] == 1


def test_200_concurrent_requests(demo: WebServer) -> None:
    demo_paths = sorted(EXPECTED["feeds"]) + sorted(EXPECTED["pages"])
    urls = [demo.url + demo_paths[i % len(demo_paths)] for i in range(200)]
    before = sum(demo.hits.values())
    barrier = threading.Barrier(200, timeout=10)

    def get(url: str) -> int:
        barrier.wait()
        return fetch(url, timeout=10)[0]

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=200) as pool:
        statuses = list(pool.map(get, urls))
    assert statuses == [200] * 200
    assert sum(demo.hits.values()) - before == 200
    assert time.monotonic() - t0 < 10


def test_add_dir_prefix_and_overrides(tmp_path: Path, make_server: Callable[..., WebServer]) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "index.html").write_text("<p>{{BASE}}</p>")
    (tmp_path / "feed.rss").write_bytes(b"<rss/>")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG{{BASE}}")
    (tmp_path / "_private.txt").write_text("no")
    (tmp_path / "_headers.json").write_text(
        json.dumps(
            {
                "_comment": "ignored",
                "/feed.rss": {"headers": {"Content-Type": "text/html"}, "delay": 0.01},
                "/old": {"status": 301, "headers": {"Location": "/x/feed.rss"}},
                "/copy": {"file": "/feed.rss", "status": 203},
            }
        )
    )
    web = Web()
    web.add_dir(tmp_path, prefix="/x/")
    assert web.keys() == [
        "/x/copy",
        "/x/feed.rss",
        "/x/logo.png",
        "/x/old",
        "/x/sub",
        "/x/sub/",
        "/x/sub/index.html",
    ]
    server = make_server(web)
    status, headers, body, _ = fetch(server.url + "/x/sub/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert body == f"<p>{server.url}</p>".encode()
    status, headers, body, _ = fetch(server.url + "/x/feed.rss")
    assert (status, headers["Content-Type"], body) == (200, "text/html", b"<rss/>")
    assert fetch(server.url + "/x/logo.png")[1]["Content-Type"] == "image/png"
    assert fetch(server.url + "/x/logo.png")[2] == b"\x89PNG{{BASE}}"
    status, headers, _, _ = fetch(server.url + "/x/old", follow=False)
    assert (status, headers["Location"]) == (301, "/x/feed.rss")
    status, headers, body, _ = fetch(server.url + "/x/copy")
    assert (status, headers["Content-Type"], body) == (203, "text/html", b"<rss/>")
    assert fetch(server.url + "/x/_private.txt")[0] == 404


def test_add_dir_rejects_unknown_override(tmp_path: Path) -> None:
    (tmp_path / "_headers.json").write_text(json.dumps({"/a": {"stauts": 500}}))
    with pytest.raises(ValueError, match="stauts"):
        Web().add_dir(tmp_path)


def test_start_stop_idempotent_and_context_manager() -> None:
    web = Web()
    web.add("/", Route(b"root"))
    server = WebServer(web)
    with pytest.raises(RuntimeError):
        _ = server.url
    with server as running:
        assert running is server and server.running
        assert server.start() is server
        assert fetch(server.url_for("/"))[2] == b"root"
    assert not server.running
    server.stop()  # a second stop does nothing


# --- validators: ETag, Last-Modified, 304 ---------------------------------------------------------


def request(
    server: WebServer, path: str, headers: dict[str, str] | None = None, method: str = "GET"
) -> tuple[int, dict[str, str], bytes]:
    """One request on a fresh connection; (status, headers, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, dict(resp.headers.items()), resp.read()
    finally:
        conn.close()


def http_date(seconds: float) -> str:
    return email.utils.formatdate(seconds, usegmt=True)


def test_validators_and_conditional_get(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    body = b"<rss>{{BASE}}</rss>"
    web.add("/feed.xml", Route(body, headers={"Content-Type": "application/rss+xml", "Cache-Control": "max-age=60"}))
    server = make_server(web)
    status, headers, got = request(server, "/feed.xml")
    assert status == 200 and got == f"<rss>{server.url}</rss>".encode()
    etag = headers["ETag"]
    assert etag.startswith('"') and etag.endswith('"') and not etag.startswith("W/") and len(etag) == 34
    assert headers["Last-Modified"] == http_date(VALIDATORS_EPOCH) == "Sun, 01 Jun 2025 00:00:00 GMT"
    assert web.last_modified("/feed.xml") == VALIDATORS_EPOCH

    def status_of(req: dict[str, str], method: str = "GET") -> int:
        return request(server, "/feed.xml", req, method)[0]

    # If-None-Match: a match (weak comparison, in a list, or *) is a 304; anything else a 200
    assert status_of({"If-None-Match": etag}) == 304
    assert status_of({"If-None-Match": f'"other", W/{etag}'}) == 304
    assert status_of({"If-None-Match": "*"}) == 304
    assert status_of({"If-None-Match": '"other"'}) == 200
    assert status_of({"If-None-Match": etag.strip('"')}) == 200  # not an entity-tag: no match
    # If-Modified-Since: 304 when Last-Modified is not later; a bad date is ignored
    assert status_of({"If-Modified-Since": http_date(VALIDATORS_EPOCH)}) == 304
    assert status_of({"If-Modified-Since": http_date(VALIDATORS_EPOCH + 86400)}) == 304
    assert status_of({"If-Modified-Since": http_date(VALIDATORS_EPOCH - 1)}) == 200
    assert status_of({"If-Modified-Since": "yesterday"}) == 200
    # If-None-Match decides when both are sent
    assert status_of({"If-None-Match": '"other"', "If-Modified-Since": http_date(VALIDATORS_EPOCH)}) == 200
    assert status_of({"If-None-Match": etag, "If-Modified-Since": http_date(0)}) == 304
    assert status_of({"If-None-Match": etag}, method="HEAD") == 304
    # a 304 has no body, repeats the validators and caching headers, and keeps the connection usable
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", "/feed.xml", headers={"If-None-Match": etag})
        resp = conn.getresponse()
        assert resp.status == 304 and resp.read() == b""
        assert resp.headers["ETag"] == etag and resp.headers["Last-Modified"] == http_date(VALIDATORS_EPOCH)
        assert resp.headers["Cache-Control"] == "max-age=60"
        assert resp.headers["Content-Type"] is None and resp.headers["Content-Length"] is None
        conn.request("GET", "/feed.xml")
        resp = conn.getresponse()
        assert resp.status == 200 and resp.read() == f"<rss>{server.url}</rss>".encode()
    finally:
        conn.close()


def test_validators_are_stable_across_restarts_and_ports() -> None:
    paths = sorted(EXPECTED["feeds"])
    seen: list[dict[str, tuple[str, str]]] = []
    for _ in range(2):
        with WebServer(demo_web()) as server:
            validators = {}
            for path in paths:
                headers = request(server, path)[1]
                validators[path] = (headers["ETag"], headers["Last-Modified"])
            seen.append(validators)
    assert seen[0] == seen[1]  # another server, another port, the same validators
    etags = [etag for etag, _ in seen[0].values()]
    assert len(set(etags)) == len(etags) == 11  # one per feed


def test_changing_a_route_while_serving_changes_its_validators(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/feed.xml", Route(b"<rss>one</rss>", headers={"Content-Type": "application/rss+xml"}))
    server = make_server(web)
    _, first, _ = request(server, "/feed.xml")
    # same body, other headers: the validators stay
    web.change("/feed.xml", headers={"Content-Type": "text/xml"})
    status, same, _ = request(server, "/feed.xml", {"If-None-Match": first["ETag"]})
    assert status == 304 and (same["ETag"], same["Last-Modified"]) == (first["ETag"], first["Last-Modified"])
    # a new body: a new ETag, a Last-Modified one second later; the old validators no longer match
    web.add("/feed.xml", Route(b"<rss>two</rss>", headers={"Content-Type": "application/rss+xml"}))
    status, second, body = request(server, "/feed.xml", {"If-None-Match": first["ETag"]})
    assert (status, body) == (200, b"<rss>two</rss>")
    assert second["ETag"] != first["ETag"]
    assert second["Last-Modified"] == http_date(VALIDATORS_EPOCH + 1) == http_date(web.last_modified("/feed.xml") or 0)
    assert request(server, "/feed.xml", {"If-Modified-Since": first["Last-Modified"]})[0] == 200
    assert request(server, "/feed.xml", {"If-Modified-Since": second["Last-Modified"]})[0] == 304
    assert request(server, "/feed.xml", {"If-None-Match": second["ETag"]})[0] == 304
    new = web.change("/feed.xml", body=b"<rss>three</rss>")
    assert web.get("/feed.xml") is new
    _, third, body = request(server, "/feed.xml")
    assert body == b"<rss>three</rss>" and third["ETag"] not in (first["ETag"], second["ETag"])
    assert third["Last-Modified"] == http_date(VALIDATORS_EPOCH + 2)
    with pytest.raises(KeyError):
        web.change("/nothing", body=b"x")


def test_routes_without_validators(make_server: Callable[..., WebServer]) -> None:
    web = Web()
    web.add("/plain", Route(b"exact", headers={"Content-Type": "text/plain"}, validators=False))
    web.add("/moved", Route(status=301, headers={"Location": "/plain"}))
    web.add("/error", Route(b"oops", status=500))
    web.add("/lie", Route(b"0123456789", content_length=4))
    web.add("/cut", Route(b"0123456789", close_after=3))
    web.add("/drip", Route(b"ab", drip=0.01))
    web.add("/own", Route(b"<rss/>", headers={"ETag": '"v1"', "Last-Modified": "Tue, 03 Jun 2025 09:40:00 GMT"}))
    web.add("/zipped", Route(b"<rss/>", gzip=True))
    server = make_server(web)
    for path in ("/plain", "/moved", "/error", "/lie", "/drip", "/nothing"):
        status, headers, _ = request(server, path, {"If-None-Match": "*", "If-Modified-Since": http_date(2e9)})
        assert status != 304 and "ETag" not in headers and "Last-Modified" not in headers, path
    with pytest.raises(http.client.IncompleteRead):
        request(server, "/cut", {"If-None-Match": "*"})
    # a route's own validators are sent as they are, and compared
    status, headers, _ = request(server, "/own")
    assert (status, headers["ETag"], headers["Last-Modified"]) == (200, '"v1"', "Tue, 03 Jun 2025 09:40:00 GMT")
    assert list(headers).count("ETag") == 1
    assert request(server, "/own", {"If-None-Match": '"v1"'})[0] == 304
    assert request(server, "/own", {"If-None-Match": '"v2"'})[0] == 200
    assert request(server, "/own", {"If-Modified-Since": "Tue, 03 Jun 2025 09:40:00 GMT"})[0] == 304
    assert request(server, "/own", {"If-Modified-Since": "Tue, 03 Jun 2025 09:39:59 GMT"})[0] == 200
    status, headers, _ = request(server, "/own", {"If-None-Match": '"v1"'})
    assert (status, headers["ETag"], headers["Last-Modified"]) == (304, '"v1"', "Tue, 03 Jun 2025 09:40:00 GMT")
    # the gzip coding is part of the representation: another tag than the same body plain
    zipped = request(server, "/zipped")[1]["ETag"]
    assert zipped != Route(b"<rss/>").strong_etag() and zipped == Route(b"<rss/>", gzip=True).strong_etag()
    assert request(server, "/zipped", {"If-None-Match": zipped})[0] == 304


def test_demo_feeds_send_validators_and_dead_ends_do_not(demo: WebServer) -> None:
    for path in EXPECTED["feeds"]:
        status, headers, _ = request(demo, path)
        assert status == 200 and headers["ETag"] and headers["Last-Modified"], path
        assert request(demo, path, {"If-None-Match": headers["ETag"]})[0] == 304, path
        assert request(demo, path, {"If-Modified-Since": headers["Last-Modified"]})[0] == 304, path
    # the one feed whose fixture sets its own validators keeps them, dated like its lastBuildDate (3 days
    # before the demo day: crawler/demo/dates.py)
    headers = request(demo, "/blog-a/feed.xml")[1]
    built = DEMO_DAY - timedelta(days=3)
    assert (headers["ETag"], headers["Last-Modified"]) == (
        f'"alpha-feed-{built:%Y%m%d}"',
        email.utils.formatdate(calendar.timegm(built.timetuple()) + 9 * 3600 + 40 * 60, usegmt=True),
    )
    dead_ends = {path: spec for path, spec in EXPECTED["dead_ends"].items() if spec["status"] != 200}
    assert len(dead_ends) >= 5
    for path, spec in dead_ends.items():
        status, headers, _ = request(demo, path, {"If-None-Match": "*"})
        assert status == spec["status"] and "ETag" not in headers and "Last-Modified" not in headers, path
