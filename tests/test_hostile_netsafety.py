"""Network safety, crawled for real: URLs found in content may not reach private addresses.

The input host (127.0.0.1) is named by the user, so it is allowed. A page and
an OPML list on it point at 127.0.0.2 (a second real server, whose hits must
stay 0), 10.0.0.1, 169.254.169.254, [::1] and loopback spelled as names and
numbers; a redirect leads to 127.0.0.2. Every one is recorded ``refused`` before
any connection. Non-loopback targets are never contacted: they are refused
before a socket is opened, which the fetch_log rows show (a connection attempt
would end as ``timeout`` or ``network_error``). With ``--allow-private-networks``
the 127.0.0.2 feed is fetched.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from tests.conftest import QUICK_CRAWL, read_table, run_cli

FEED = b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title><link>http://example.com/</link><description>d</description></channel></rss>'


def loopback_alias() -> str | None:
    """A name other than localhost that resolves to loopback offline (from /etc/hosts), if any."""
    try:
        lines = Path("/etc/hosts").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split("#", 1)[0].split()
        if len(fields) < 2 or not fields[0].startswith("127."):
            continue
        for name in fields[1:]:
            if "localhost" in name or not name.replace("-", "").replace(".", "").isalnum():
                continue
            try:
                if socket.gethostbyname(name).startswith("127."):
                    return name
            except OSError:
                continue
    return None


def link(href: str) -> str:
    return f'<link rel="alternate" type="application/rss+xml" href="{href}">'


def html(*hrefs: str) -> Route:
    body = "<html><head>" + "".join(link(h) for h in hrefs) + "</head><body></body></html>"
    return Route(body=body.encode(), headers={"Content-Type": "text/html; charset=utf-8"})


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[WebServer, WebServer]]:
    inner = Web()
    for p in ("/feed.xml", "/redirected.xml", "/allowed.xml"):
        inner.add(p, Route(body=FEED, headers={"Content-Type": "application/rss+xml"}))
    inner.add("/inc.opml", Route(body=b'<opml version="2.0"><body/></opml>', headers={"Content-Type": "text/x-opml"}))
    other = WebServer(inner, host="127.0.0.2").start()
    web = Web()
    main = WebServer(web).start()
    p1, b2 = main.port, other.url
    alias = loopback_alias()
    hrefs = [
        f"{b2}/feed.xml",
        "http://10.0.0.1/feed.xml",
        "http://169.254.169.254/latest/meta-data/",
        f"http://[::1]:{p1}/alias/v6.xml",
        f"http://localhost:{p1}/alias/localhost.xml",
        f"http://2130706433:{p1}/alias/decimal.xml",
        f"http://%6c%6fcalhost:{p1}/alias/percent.xml",
        "http://metadata.google.internal/computeMetadata/v1/",
        f"http://127.0.0.1:{p1}/ok.xml",
    ]
    if alias:
        hrefs.append(f"http://{alias}:{p1}/alias/resolved.xml")
    web.add("/page.html", html(*hrefs))
    web.add("/allow.html", html(f"{b2}/allowed.xml"))
    web.add("/ok.xml", Route(body=FEED, headers={"Content-Type": "application/rss+xml"}))
    web.add("/redirect", Route(status=302, headers={"Location": f"{b2}/redirected.xml"}))
    web.add(
        "/list.opml",
        Route(
            body=(
                f'<opml version="2.0"><body><outline type="include" url="{b2}/inc.opml"/>'
                '<outline type="rss" xmlUrl="http://10.0.0.1/opml-feed.xml"/></body></opml>'
            ).encode(),
            headers={"Content-Type": "text/x-opml"},
        ),
    )
    for p in (
        "/alias/v6.xml",
        "/alias/localhost.xml",
        "/alias/decimal.xml",
        "/alias/percent.xml",
        "/alias/resolved.xml",
    ):
        web.add(p, Route(body=FEED, headers={"Content-Type": "application/rss+xml"}))
    try:
        yield main, other
    finally:
        main.stop()
        other.stop()


def crawl(tmp: Path, main: WebServer, *extra: str, inputs: list[str]) -> list[dict[str, Any]]:
    args = ["crawl", "--out", str(tmp / "out"), "--no-reflexive", *QUICK_CRAWL]
    args += ["-s", "DOWNLOAD_TIMEOUT=3", "-s", "RETRY_TIMES=0", "-s", "DNS_TIMEOUT=3"]
    args += ["--refetch"]  # a test may crawl twice into one dataset: each crawl fetches everything
    for u in inputs:
        args += ["--opml" if u.endswith(".opml") else "--url", u]
    proc = run_cli(*args, *extra, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return read_table(tmp / "out", "fetch_log").to_pylist()


def test_private_targets_found_in_content_are_refused(tmp_path: Path, servers: tuple[WebServer, WebServer]) -> None:
    main, other = servers
    main.reset_hits()
    other.reset_hits()
    log = crawl(
        tmp_path, main, inputs=[main.url_for("/page.html"), main.url_for("/redirect"), main.url_for("/list.opml")]
    )
    by_url = {r["url"]: r for r in log}
    refused = {r["url"] for r in log if r["outcome"] == "refused"}
    expected = {
        f"{other.url}/feed.xml",
        "http://10.0.0.1/feed.xml",
        "http://169.254.169.254/latest/meta-data/",
        f"http://[::1]:{main.port}/alias/v6.xml",
        f"http://localhost:{main.port}/alias/localhost.xml",
        f"http://2130706433:{main.port}/alias/decimal.xml",
        f"http://%6c%6fcalhost:{main.port}/alias/percent.xml",
        "http://metadata.google.internal/computeMetadata/v1/",
        main.url_for("/redirect"),
        f"{other.url}/inc.opml",
        "http://10.0.0.1/opml-feed.xml",
    }
    alias = loopback_alias()
    if alias:
        expected.add(f"http://{alias}:{main.port}/alias/resolved.xml")
    assert expected <= refused, sorted(expected - refused)
    for u in expected:
        r = by_url[u]
        assert "--allow-private-networks" in r["error"], r
        assert r["status"] is None and r["bytes"] is None, r
    if alias:
        assert f"{alias} resolves to 127." in by_url[f"http://{alias}:{main.port}/alias/resolved.xml"]["error"]
    redirect = by_url[main.url_for("/redirect")]
    assert redirect["final_url"] == f"{other.url}/redirected.xml"
    # The input host itself is fine.
    assert by_url[main.url_for("/ok.xml")]["outcome"] == "feed"
    # Nothing reached 127.0.0.2, nor the loopback aliases of the input host.
    assert sum(other.hits.values()) == 0, dict(other.hits)
    assert not any(p.startswith("/alias/") for p in main.hits), dict(main.hits)
    assert all(urlsplit(r["url"]).hostname for r in log)


def test_allow_private_networks_lets_them_through(tmp_path: Path, servers: tuple[WebServer, WebServer]) -> None:
    main, other = servers
    main.reset_hits()
    other.reset_hits()
    log = crawl(tmp_path, main, "--allow-private-networks", inputs=[main.url_for("/allow.html")])
    by_url = {r["url"]: r for r in log}
    assert by_url[f"{other.url}/allowed.xml"]["outcome"] == "feed"
    assert other.hits["/allowed.xml"] == 1


def test_only_http_is_fetched_even_when_private_networks_are_allowed(
    tmp_path: Path, servers: tuple[WebServer, WebServer]
) -> None:
    main, _ = servers
    main.web.add(
        "/schemes.html",
        html("file:///etc/passwd", f"ftp://127.0.0.1:{main.port}/x.xml", "data:application/rss+xml,<rss/>"),
    )
    log = crawl(
        tmp_path, main, "--allow-private-networks", inputs=[main.url_for("/schemes.html"), "file:///etc/passwd"]
    )
    assert {r["url"]: r["outcome"] for r in log if r["discovered_via"] != "robots"} == {
        main.url_for("/schemes.html"): "page",
        "file:///etc/passwd": "unsupported_scheme",
    }
    links = read_table(tmp_path / "out", "links").to_pylist()
    assert len(links) == 3 and not any(r["followed"] for r in links)


def test_a_url_with_a_port_no_request_can_be_made_for_is_a_row_and_the_rest_is_crawled(tmp_path: Path) -> None:
    """A page, an OPML list and a feed's channel link naming ``host:99999``: before, Scrapy refused the
    request as it was made, the page's or list's other links were dropped with it, and the run said
    ``errors: none`` and exited 0 (a whole local OPML list stopped the crawl)."""
    bad = "http://127.0.0.1:99999"
    rss = "application/rss+xml"
    web = Web()
    with WebServer(web) as server:
        feed = (
            f'<?xml version="1.0"?><rss version="2.0"><channel><title>F</title><link>{bad}/home</link></channel></rss>'
        )
        web.add("/good.xml", Route(feed.encode(), headers={"Content-Type": rss}))
        web.add("/listed.xml", Route(feed.encode(), headers={"Content-Type": rss}))
        links = (
            f'<link rel="alternate" type="{rss}" href="{bad}/feed"><link rel="alternate" type="{rss}" href="/good.xml">'
        )
        web.add(
            "/page.html", Route(f"<html><head>{links}</head></html>".encode(), headers={"Content-Type": "text/html"})
        )
        outlines = f'<outline xmlUrl="{bad}/x.xml"/><outline xmlUrl="{server.url_for("/listed.xml")}"/>'
        opml = f'<?xml version="1.0"?><opml version="2.0"><head/><body>{outlines}</body></opml>'
        web.add("/list.opml", Route(opml.encode(), headers={"Content-Type": "text/x-opml"}))
        local = tmp_path / "local.opml"
        local.write_text(opml.replace(server.url_for("/listed.xml"), server.url_for("/good.xml")))
        out = tmp_path / "out"
        good, listed = server.url_for("/good.xml"), server.url_for("/listed.xml")
        proc = run_cli(
            "crawl", "--url", server.url_for("/page.html"), "--url", server.url_for("/list.opml"), "--opml", str(local),
            "--out", str(out), *QUICK_CRAWL, timeout=120,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "Spider error" not in proc.stderr
    outcomes = {(r["url"], r["outcome"]) for r in read_table(out, "fetch_log").to_pylist()}
    assert (good, "feed") in outcomes  # named after the bad link on the page
    assert (listed, "feed") in outcomes  # named after the bad outline
    assert (f"{bad}/x.xml", "invalid_url") in outcomes  # the outline, from the list fetched and the local one
    assert (f"{bad}/home", "invalid_url") in outcomes  # the channel page the reflexive check would fetch
    link = next(r for r in read_table(out, "links").to_pylist() if r["href"] == f"{bad}/feed")
    assert link["followed"] is False and "href-bad-port" in link["reasons"]


def test_a_url_scrapy_cannot_make_a_request_for_is_a_row_not_a_spider_error(tmp_path: Path) -> None:
    """The census spider's ``follow`` (URLs found in content) records what Scrapy's ``Request`` refuses."""
    from scrapy.utils.test import get_crawler

    from crawler.spiders.census import CensusSpider
    from schemas.items import FetchContext, FetchRecord
    from schemas.vocab import Expect, Via

    crawler = get_crawler(CensusSpider, {"FEEDCENSUS_OUT": str(tmp_path / "out")})
    spider = CensusSpider.from_crawler(crawler, urls=["http://a.example/"])
    ctx = FetchContext(via=Via.AUTODISCOVERY, source="http://a.example/", depth=1, kind=Expect.FEED)
    out = spider.follow("http://a.example:99999/feed", ctx)  # follow trusts its caller: no URL check of its own
    assert isinstance(out, FetchRecord) and out.outcome == "invalid_url" and "Port out of range" in (out.error or "")


def test_a_failure_holding_twisted_failures_is_described_by_what_they_hold() -> None:
    """ResponseFailed holds a list of Failures, and Scrapy's DownloadFailedError is made from its text: the
    fetch_log error read ``[<twisted.python.failure.Failure twisted.internet.error.ConnectionDone: ...>]``."""
    from scrapy.exceptions import DownloadFailedError
    from twisted.internet.error import ConnectionDone
    from twisted.python.failure import Failure
    from twisted.web._newclient import ResponseFailed

    from crawler.outcomes import classify_exception

    lost = ResponseFailed([Failure(ConnectionDone())])  # type: ignore[no-untyped-call]  # Twisted's are unannotated
    assert classify_exception(lost) == (
        "network_error",
        None,
        "connection closed or reset mid-response: ConnectionDone: Connection was closed cleanly.",
    )
    try:
        try:
            raise ResponseFailed([Failure(ValueError("Value contains non-decimal digits: b'abc'"))])  # type: ignore[no-untyped-call]  # as above
        except ResponseFailed as exc:
            raise DownloadFailedError(str(exc)) from exc  # as Scrapy's download handler wraps it
    except DownloadFailedError as wrapped:
        outcome, _, error = classify_exception(wrapped)
    assert (outcome, error) == (
        "network_error",
        "DownloadFailedError: ValueError: Value contains non-decimal digits: b'abc'",
    )
