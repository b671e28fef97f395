"""A small, fast HTTP/1.1 server on loopback that serves a :class:`~crawler.demo.routes.Web`.

It backs ``feedcensus demo``, the end-to-end tests and the benchmarks. Standard library only.
The routing table (which URL gets which answer) is :mod:`crawler.demo.routes`.

* A :class:`WebServer` runs a ``ThreadingHTTPServer`` in a background thread on one loopback
  address. Several sites can share one server under path prefixes (what the demo web does), or a
  site can be its own host: start one server per loopback address (127.0.0.2, 127.0.0.3... work on
  Linux without configuration) sharing the same ``Web``, with routes keyed ``127.0.0.2/path``.
* Validators: a route that answers 200 with its whole body gets its strong ``ETag`` and its
  ``Last-Modified`` (:mod:`crawler.demo.routes`), and a GET or HEAD carrying ``If-None-Match``
  that matches (or, without one, ``If-Modified-Since`` not earlier than ``Last-Modified``) gets a
  304 with no body. Both are stable across restarts and ports. ``Route(validators=False)`` opts out;
  an ``ETag`` or ``Last-Modified`` in the route's own headers is sent and compared instead.
* Fixture files may contain ``{{BASE}}`` (e.g. ``http://127.0.0.1:54321``) and ``{{HOST}}``
  (``127.0.0.1:54321``); the server replaces them in text-like bodies and in all header values
  when serving, since the port is only known then. Rendered bodies are cached per route.
* The demo web is dated relative to its demo day (:func:`demo_web`), so its feeds do not age.

Run ``python -m crawler.demo.webserver`` to serve the bundled demo web until interrupted.
"""

from __future__ import annotations

import collections
import contextlib
import email.utils
import gzip as gzip_module
import re
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import TCPServer
from typing import TYPE_CHECKING, Any, Self

from crawler.demo.dates import demo_day_midnight, today_utc
from crawler.demo.routes import Route, Web, is_text

if TYPE_CHECKING:
    from datetime import date
    from email.message import Message
    from types import TracebackType

__all__ = ["WebServer", "demo_root", "demo_seeds", "demo_site_root", "demo_web", "serve_demo"]

#: Placeholders replaced at serve time.
BASE_PLACEHOLDER = b"{{BASE}}"
HOST_PLACEHOLDER = b"{{HOST}}"
#: Headers a 304 repeats from the 200 it stands for (RFC 9110, section 15.4.5).
_NOT_MODIFIED_HEADERS = frozenset({"etag", "last-modified", "cache-control", "content-location", "expires", "vary"})
_ENTITY_TAG = re.compile(r'(?:W/)?"[^"]*"')

_NOT_FOUND_BODY = (
    b"<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n"
)


@dataclass(frozen=True, slots=True)
class _Rendered:
    route: Route
    headers: tuple[tuple[str, str], ...]
    body: bytes
    #: The ETag a conditional route is compared against (its own header, else the computed one,
    #: which ``headers`` then carries); None for a route that is not conditional.
    etag: str | None = None
    #: The route's own Last-Modified header, if it sets one.
    last_modified: str | None = None


def _http_date(seconds: int) -> str:
    return email.utils.formatdate(seconds, usegmt=True)


def _seconds(http_date: str | None) -> int | None:
    """An HTTP-date as Unix seconds; None when it is missing or not a date."""
    if not http_date:
        return None
    parts = email.utils.parsedate_tz(http_date)
    return int(email.utils.mktime_tz(parts)) if parts is not None else None


def _is_not_modified(request: Message, etag: str | None, last_modified: str) -> bool:
    """RFC 9110 section 13.2.2: If-None-Match decides when present (weak comparison); else If-Modified-Since."""
    if_none_match = request.get("If-None-Match")
    if if_none_match is not None:
        if if_none_match.strip() == "*":
            return True
        tags = {tag.removeprefix("W/") for tag in _ENTITY_TAG.findall(if_none_match)}
        return etag is not None and etag.removeprefix("W/") in tags
    since = _seconds(request.get("If-Modified-Since"))
    modified = _seconds(last_modified)
    return since is not None and modified is not None and modified <= since


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "feedcensus-testweb/1.0"
    sys_version = ""
    disable_nagle_algorithm = True
    wbufsize = 64 * 1024  # headers and small bodies leave in one write
    timeout = 60  # an idle keep-alive connection is dropped after this
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # no per-request logging
        pass

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_POST(self) -> None:
        self.server.owner._hit(self.path)
        self._discard_request_body()
        self.send_response(405)
        self.send_header("Allow", "GET, HEAD")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_PUT = do_DELETE = do_PATCH = do_POST

    def _discard_request_body(self) -> None:
        length = self.headers.get("Content-Length")
        if length and length.strip().isdigit():
            self.rfile.read(int(length))

    def _serve(self, *, head: bool) -> None:
        srv = self.server
        self._discard_request_body()
        target = self.path
        host = (self.headers.get("Host") or "").strip()
        host = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        srv.owner._hit(target)
        entry = srv.web.match(host, target)
        route, modified = entry if entry is not None else (srv.not_found, srv.web.epoch)
        stopping = srv.stopping
        if route.hang:
            stopping.wait()
            self.close_connection = True
            return
        if route.delay > 0 and stopping.wait(route.delay):
            self.close_connection = True
            return
        rendered = srv.owner._render(route)
        body = rendered.body
        conditional = route.conditional
        last_modified = (rendered.last_modified or _http_date(modified)) if conditional else ""
        if conditional and _is_not_modified(self.headers, rendered.etag, last_modified):
            self._send_not_modified(rendered, last_modified)
            return
        self.send_response(route.status)
        for name, value in rendered.headers:
            self.send_header(name, value)
        if conditional and rendered.last_modified is None:
            self.send_header("Last-Modified", last_modified)
        abrupt = route.content_length is not None or route.close_after is not None
        length = route.content_length if route.content_length is not None else len(body)
        self.send_header("Content-Length", str(length))
        if abrupt:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if not head:
            self._send_body(route, body, stopping)

    def _send_body(self, route: Route, body: bytes, stopping: threading.Event) -> None:
        """The body as the route says: cut short (``close_after``), a byte at a time (``drip``), or whole."""
        if route.close_after is not None:
            body = body[: route.close_after]
        if route.drip <= 0:
            self.wfile.write(body)
            return
        self.wfile.flush()
        for i in range(len(body)):
            if stopping.wait(route.drip):
                self.close_connection = True
                return
            self.wfile.write(body[i : i + 1])
            self.wfile.flush()

    def _send_not_modified(self, rendered: _Rendered, last_modified: str) -> None:
        """304: the validators and the caching headers of the 200 it stands for; no body, no Content-Length."""
        self.send_response(304)
        for name, value in rendered.headers:
            if name.lower() in _NOT_MODIFIED_HEADERS:
                self.send_header(name, value)
        if rendered.last_modified is None:
            self.send_header("Last-Modified", last_modified)
        self.end_headers()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], web: Web, owner: WebServer) -> None:
        self.web = web
        self.owner = owner
        self.stopping = threading.Event()
        self.not_found = Route(body=_NOT_FOUND_BODY, status=404, headers={"Content-Type": "text/html; charset=utf-8"})
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup that can stall.
        TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._open_lock:
            self._open.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (timeouts, resets) are normal here; stay quiet like the access log.
        pass

    def close_connections(self) -> None:
        with self._open_lock:
            open_now = list(self._open)
        for sock in open_now:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class WebServer:
    """Serve a :class:`Web` on ``host:port`` (port 0: any free port) from a background thread.

    Use as a context manager, or call :meth:`start` / :meth:`stop`. ``hits`` counts requests by
    request target (path, plus ``?query`` when there is one), 404s included.
    """

    def __init__(self, web: Web, host: str = "127.0.0.1", port: int = 0) -> None:
        self.web = web
        self.host = host
        self.port = port
        self.hits: collections.Counter[str] = collections.Counter()
        self._hits_lock = threading.Lock()
        self._cache: dict[int, _Rendered] = {}
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """Base URL without a trailing slash, e.g. ``http://127.0.0.1:54321``."""
        if self._httpd is None:
            raise RuntimeError("WebServer not started")
        return f"http://{self.host}:{self.port}"

    def url_for(self, path: str) -> str:
        """Absolute URL of a path on this server."""
        return self.url + (path if path.startswith("/") else "/" + path)

    @property
    def running(self) -> bool:
        return self._httpd is not None

    def start(self) -> Self:
        """Bind and start serving; returns self. Starting a running server does nothing."""
        if self._httpd is not None:
            return self
        httpd = _Server((self.host, self.port), self.web, self)
        self.port = int(httpd.server_address[1])
        self._cache.clear()
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=f"webserver-{self.port}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every connection, hanging and dripping ones included."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        httpd.stopping.set()
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def reset_hits(self) -> None:
        with self._hits_lock:
            self.hits.clear()

    def _hit(self, target: str) -> None:
        with self._hits_lock:
            self.hits[target] += 1

    def _render(self, route: Route) -> _Rendered:
        cached = self._cache.get(id(route))
        if cached is not None and cached.route is route:
            return cached
        base = self.url.encode("ascii")
        host = f"{self.host}:{self.port}".encode("ascii")
        headers: list[tuple[str, str]] = []
        own: dict[str, str] = {}
        for name, value in route.headers.items():
            value = value.replace("{{BASE}}", base.decode()).replace("{{HOST}}", host.decode())
            own[name.lower()] = value
            if name.lower() in ("content-length", "content-encoding"):
                continue
            headers.append((name, value))
        content_type = own.get("content-type", "")
        body = route.body
        if body and is_text(content_type):
            body = body.replace(BASE_PLACEHOLDER, base).replace(HOST_PLACEHOLDER, host)
        if route.gzip:
            body = gzip_module.compress(body, mtime=0)
            headers.append(("Content-Encoding", "gzip"))
        etag = None
        if route.conditional:
            etag = own.get("etag")
            if etag is None:
                etag = route.strong_etag()
                headers.append(("ETag", etag))
        rendered = _Rendered(route, tuple(headers), body, etag, own.get("last-modified"))
        self._cache[id(route)] = rendered
        return rendered


def demo_root() -> Path:
    """The bundled demo web folder (``crawler/demo/web``): ``site/``, ``seeds.txt``, ``EXPECTED.json``."""
    return Path(__file__).resolve().parent / "web"


def demo_site_root() -> Path:
    """The folder whose files the demo server serves (``crawler/demo/web/site``)."""
    return demo_root() / "site"


def demo_web(day: date | None = None) -> Web:
    """A fresh :class:`Web` holding the demo site dated for its demo day (add routes to it freely).

    ``day`` (default: today in UTC) is the demo day: the newest item of an active feed is a day or
    a few before it (:mod:`crawler.demo.dates`), and a route's first ``Last-Modified`` is its
    start. The same day gives the same bytes, ETags and Last-Modified at every start.
    """
    day = day or today_utc()
    web = Web(epoch=demo_day_midnight(day))
    web.add_dir(demo_site_root(), day=day)
    return web


def demo_seeds(base_url: str) -> list[str]:
    """The demo seed URLs (``demo_web/seeds.txt``) with ``{{BASE}}`` replaced by ``base_url``."""
    text = (demo_root() / "seeds.txt").read_text(encoding="utf-8")
    base = base_url.rstrip("/")
    return [
        line.strip().replace("{{BASE}}", base)
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def serve_demo(port: int = 0, day: date | None = None) -> WebServer:
    """Start a server on 127.0.0.1 serving the bundled demo web dated for ``day`` (default: today in
    UTC); the caller stops it. ``OSError`` when ``port`` is taken."""
    return WebServer(demo_web(day), port=port).start()


def main(argv: list[str] | None = None) -> None:
    import argparse
    import time
    from datetime import date as date_type

    parser = argparse.ArgumentParser(description="Serve the feedcensus demo web on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--day", type=date_type.fromisoformat, default=None, help="the demo day, YYYY-MM-DD (default: today in UTC)"
    )
    args = parser.parse_args(argv)
    server = serve_demo(args.port, args.day)
    print(f"demo web at {server.url}/  (seeds: {demo_root() / 'seeds.txt'}); Ctrl-C stops", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
