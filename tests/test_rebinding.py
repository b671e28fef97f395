"""DNS rebinding, crawled for real: the address the guard checks is the address the crawl connects to.

A page on the input host (127.0.0.1) links feeds on names under ``rebind.test``.
Inside the crawl process only, a shim (a ``sitecustomize`` module) answers each such
name with a public address at its first lookup and with 127.0.0.3 at every later
one, as a hostile DNS server with a zero TTL would. A second server on 127.0.0.3
stands for the service the page wants the crawler to reach: its hits must stay 0.

Nothing leaves loopback: the shim also fences the process's sockets, refusing
(``ECONNREFUSED``, before any packet) a connection to any address outside
127.0.0.0/8 and ::1, so the public answer is never connected to.

The names are spelled every way the check and the connection might read apart: a
trailing dot, upper case, percent-encoding, IDNA, and a redirect; and the crawl is
run with Scrapy's DNS cache on (the default), off, and too small to hold them.
Before the guard moved to the resolver (``crawler/handlers/guard.py``), the
middleware's lookup and the connection's disagreed and 127.0.0.3 was reached.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from crawler.demo.routes import Route, Web
from crawler.demo.webserver import WebServer
from tests.conftest import QUICK_CRAWL, read_table, run_cli

FEED = (
    b'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>'
    b"<link>http://example.com/</link><description>d</description></channel></rss>"
)
VICTIM = "127.0.0.3"
#: A global address the shim answers first. The fence refuses to connect to it: nothing is ever sent there.
PUBLIC = "93.184.215.14"

SHIM = """
import errno, ipaddress, os, socket, threading
from urllib.parse import unquote

_lock = threading.Lock()
_seen = set()
_log = os.environ["REBIND_LOG"]
_victim = os.environ["REBIND_VICTIM"]
_public = os.environ["REBIND_PUBLIC"]


def _key(name):
    n = unquote(str(name)).lower().rstrip(".")
    try:
        return n.encode("idna").decode("ascii")
    except UnicodeError:
        return n


def _answer(name):
    key = _key(name)
    if not key.endswith(".rebind.test"):
        return None
    with _lock:
        first = key not in _seen
        _seen.add(key)
        address = _public if first else _victim
        with open(_log, "a") as f:
            f.write(f"lookup {name} -> {address}\\n")
    return address


_gethostbyname = socket.gethostbyname
_getaddrinfo = socket.getaddrinfo


def gethostbyname(name):
    address = _answer(name)
    return _gethostbyname(name) if address is None else address


def getaddrinfo(host, port, *args, **kwargs):
    address = _answer(host) if host else None
    if address is None:
        return _getaddrinfo(host, port, *args, **kwargs)
    return _getaddrinfo(address, port, *args, **kwargs)


def _outside(address):
    try:
        ip = ipaddress.ip_address(address[0].split("%")[0])
    except (ValueError, TypeError, IndexError, AttributeError):
        return False
    return not ip.is_loopback


class FencedSocket(socket.socket):
    def connect(self, address):
        if _outside(address):
            with open(_log, "a") as f:
                f.write(f"fenced {address[0]}\\n")
            raise ConnectionRefusedError(errno.ECONNREFUSED, "fenced: not loopback")
        return super().connect(address)

    def connect_ex(self, address):
        if _outside(address):
            with open(_log, "a") as f:
                f.write(f"fenced {address[0]}\\n")
            return errno.ECONNREFUSED
        return super().connect_ex(address)


socket.gethostbyname = gethostbyname
socket.getaddrinfo = getaddrinfo
socket.socket = FencedSocket
"""

#: Each spelling on a name of its own, so each has its own first (public) answer.
SPELLINGS = {
    "plain": "http://plain{n}.rebind.test:{port}/feed.xml",
    "trailing dot": "http://dot{n}.rebind.test.:{port}/feed.xml",
    "upper case": "http://UPPER{n}.Rebind.TEST:{port}/feed.xml",
    "percent-encoded": "http://pct{n}%2erebind.test:{port}/feed.xml",
    "IDNA": "http://b\u00fccher{n}.rebind.test:{port}/feed.xml",
}


@pytest.fixture(scope="module")
def victim() -> Iterator[WebServer]:
    web = Web()
    web.add("/feed.xml", Route(body=FEED, headers={"Content-Type": "application/rss+xml"}))
    web.add("/robots.txt", Route(body=b"User-agent: *\nAllow: /\n", headers={"Content-Type": "text/plain"}))
    with WebServer(web, host=VICTIM) as server:
        yield server


def hostile_web(web: Web, port: int, copies: int) -> list[str]:
    """Add the page and a redirect on the input host to ``web``, linking every spelling ``copies`` times; the links."""
    links = [template.format(n=n, port=port) for n in range(copies) for template in SPELLINGS.values()]
    body = "<html><head>" + "".join(
        f'<link rel="alternate" type="application/rss+xml" href="{href}">' for href in links
    )
    body += "</head><body></body></html>"
    web.add("/page.html", Route(body=body.encode(), headers={"Content-Type": "text/html; charset=utf-8"}))
    target = f"http://redirected.rebind.test:{port}/feed.xml"
    web.add("/redirect", Route(status=302, headers={"Location": target}))
    return [*links, target]


def crawl(tmp: Path, main: WebServer, victim: WebServer, *settings: str) -> tuple[list[dict[str, Any]], str]:
    shim_dir = tmp / "shim"
    shim_dir.mkdir()
    (shim_dir / "sitecustomize.py").write_text(SHIM, encoding="utf-8")
    log = tmp / "rebind.log"
    log.touch()
    args = ["crawl", "--out", str(tmp / "out"), "--no-reflexive", *QUICK_CRAWL]
    args += ["-s", "DOWNLOAD_TIMEOUT=5", "-s", "RETRY_TIMES=1", "-s", "DNS_TIMEOUT=5"]
    args += ["--url", main.url_for("/page.html"), "--url", main.url_for("/redirect")]
    env = {"PYTHONPATH": str(shim_dir), "REBIND_LOG": str(log), "REBIND_VICTIM": VICTIM, "REBIND_PUBLIC": PUBLIC}
    for s in settings:
        args += ["-s", s]
    proc = run_cli(*args, timeout=180, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return read_table(tmp / "out", "fetch_log").to_pylist(), log.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "settings",
    [(), ("DNSCACHE_ENABLED=False",), ("DNSCACHE_SIZE=3",)],
    ids=["default cache", "cache off", "small cache"],
)
def test_a_name_that_rebinds_to_loopback_reaches_nothing(
    tmp_path: Path, victim: WebServer, settings: tuple[str, ...]
) -> None:
    victim.reset_hits()
    web = Web()
    links = hostile_web(web, victim.port, copies=2)
    with WebServer(web) as main:
        rows, log = crawl(tmp_path, main, victim, *settings)
    # The shim was used: every name was looked up, first answered with the public address, then loopback.
    assert f"-> {PUBLIC}" in log and f"-> {VICTIM}" in log, log
    # Nothing reached the service behind the rebinding names: not the feeds, not robots.txt.
    assert sum(victim.hits.values()) == 0, dict(victim.hits)
    rebinding = [r for r in rows if "rebind" in (r["url"] or "").lower() or "%2e" in (r["url"] or "")]
    assert rebinding, rows
    # Every link has its row: refused by the guard, a failed connection to the (fenced) public address, or a
    # host Twisted will not connect to (a percent-encoded dot).
    assert {r["outcome"] for r in rebinding} <= {"refused", "network_error", "invalid_url"}, [
        (r["url"], r["outcome"], r["error"]) for r in rebinding
    ]
    assert not [r for r in rebinding if r["outcome"] == "feed"]
    refused = [r for r in rebinding if r["outcome"] == "refused"]
    # Where the guard refused at connect time, the row says why (the address it was given), as the early check does.
    for r in refused:
        assert f"resolves to {VICTIM}" in r["error"] and "--allow-private-networks" in r["error"], r
    if settings:  # without a cache holding the public answer, every later lookup is loopback: refused
        assert len(refused) >= len(links) // 2, [(r["url"], r["outcome"], r["error"]) for r in rebinding]
    assert not (tmp_path / "out" / "feeds").exists() or not read_table(tmp_path / "out", "feeds").num_rows


def test_a_proxy_is_refused_in_one_line_unless_allowed(tmp_path: Path) -> None:
    """A proxy resolves names itself, out of the guard's sight: refused before anything is fetched, unless allowed."""
    feed_web = Web()
    feed_web.add("/feed.xml", Route(body=FEED, headers={"Content-Type": "application/rss+xml"}))
    with WebServer(feed_web) as site, WebServer(Web(), host="127.0.0.4") as proxy:
        env = {"http_proxy": f"http://user:secret@127.0.0.4:{proxy.port}", "no_proxy": ""}
        args = ["crawl", "--out", str(tmp_path / "out"), "--url", site.url_for("/feed.xml"), *QUICK_CRAWL]
        refused = run_cli(*args, "-s", "RETRY_TIMES=0", env=env, timeout=120)
        assert refused.returncode == 2, refused.stderr[-2000:]
        lines = [line for line in refused.stderr.splitlines() if line.strip()]
        assert len(lines) == 1, refused.stderr
        assert "proxy resolves the names" in lines[0] and "FEEDCENSUS_ALLOW_PROXY" in lines[0], lines[0]
        assert "secret" not in lines[0] and "user:***@127.0.0.4" in lines[0], lines[0]
        assert sum(site.hits.values()) == 0 and sum(proxy.hits.values()) == 0
        assert not (tmp_path / "out" / "fetch_log").exists()
        # Allowed: the proxy's own (loopback) address is trusted, as an input host is, and the requests go to it.
        allowed = run_cli(
            *args, "-s", "RETRY_TIMES=0", "-s", "FEEDCENSUS_ALLOW_PROXY=true", "--refetch", env=env, timeout=120
        )
        assert "Traceback" not in allowed.stderr, allowed.stderr[-2000:]
        assert sum(proxy.hits.values()) >= 1, allowed.stderr[-2000:]


def test_a_crawl_run_where_no_resolver_was_installed_installs_the_guard() -> None:
    """A CrawlerRunner (a notebook, a program with its own reactor) installs no resolver: the guard installs itself
    at the first request, so a crawl whose settings name the guard never runs without it (it failed open before)."""
    import subprocess
    import sys

    code = """
import asyncio
from scrapy.utils.reactor import install_reactor
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
from scrapy import Request
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler
import crawler.settings as project
from crawler.handlers.guard import installed_guard
from crawler.middlewares.netsafety import NetworkSafetyMiddleware
settings = Settings()
settings.setmodule(project, priority="project")
crawler = get_crawler(settings_dict=dict(settings))
middleware = NetworkSafetyMiddleware.from_crawler(crawler)
assert installed_guard() is None
# a public literal: judged without DNS, nothing is sent anywhere
asyncio.new_event_loop().run_until_complete(middleware.process_request(Request("http://93.184.215.14/feed.xml")))
guard = installed_guard()
assert guard is not None and guard.policy.allow_private is False
print("guarded")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == "guarded", proc.stderr[-2000:]
