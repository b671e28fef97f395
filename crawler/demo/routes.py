"""The routing table of the demo and test web: which URL gets which answer. Standard library only.

* A :class:`Web` maps a path (``/blog-a/feed.xml``, optionally with a query) or a ``host/path``
  (for virtual hosts, matched against the request's Host header) to a :class:`Route`: the body,
  status and headers of the answer, and how it misbehaves (delays, drips, lies, hangs).
  :meth:`Web.add_dir` serves a directory of files, with per-file overrides (status, headers,
  redirects, hostile behaviours) from a ``_headers.json`` in that directory.
* Validators: every route's first ``Last-Modified`` is :data:`VALIDATORS_EPOCH` (or
  ``Web(epoch=...)``), one second later each time :meth:`Web.add` replaces it with a different body;
  its strong ``ETag`` is a hash of its body. :meth:`Web.add` (or :meth:`Web.change`) replaces a
  route while a server runs.
* Dates: ``Web.add_dir(root, day=...)`` writes out the ``{{DATE-N:FORMAT}}`` placeholders of text
  files and header values for that day (:mod:`crawler.demo.dates`) when it reads them.

:mod:`crawler.demo.webserver` serves a :class:`Web` over HTTP.
"""

from __future__ import annotations

import hashlib
import json
import urllib.parse
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from crawler.demo.dates import render_dates

if TYPE_CHECKING:
    from datetime import date

__all__ = ["CONTENT_TYPES", "VALIDATORS_EPOCH", "Entry", "Route", "Web", "is_text"]

#: Content-Type by file extension for :meth:`Web.add_dir` (override per file in ``_headers.json``).
CONTENT_TYPES: dict[str, str] = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".xhtml": "application/xhtml+xml",
    ".xml": "application/xml",
    ".rss": "application/rss+xml",
    ".rdf": "application/rdf+xml",
    ".atom": "application/atom+xml",
    ".opml": "text/x-opml",
    ".txt": "text/plain; charset=utf-8",
    ".json": "application/json",
    ".css": "text/css",
    ".js": "text/javascript",
    ".ico": "image/x-icon",
    ".png": "image/png",
    ".gif": "image/gif",
    ".jpg": "image/jpeg",
    ".svg": "image/svg+xml",
}
DEFAULT_CONTENT_TYPE = "application/octet-stream"
#: Name of the per-directory override file read by :meth:`Web.add_dir` (never served).
HEADERS_FILE = "_headers.json"
#: ``Last-Modified`` of a route when first added (Unix time: Sun, 01 Jun 2025 00:00:00 GMT).
VALIDATORS_EPOCH = 1_748_736_000


@dataclass(frozen=True, slots=True, eq=False)
class Route:
    """What the server answers for one URL.

    ``eq=False``: routes compare and hash by identity (the server caches rendered bodies per route).
    """

    body: bytes = b""
    status: int = 200
    #: Response headers, e.g. Content-Type, Location. Values may hold ``{{BASE}}`` / ``{{HOST}}``.
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to wait before answering.
    delay: float = 0.0
    #: Send the body one byte every ``drip`` seconds (headers go out at once).
    drip: float = 0.0
    #: Accept the request and never answer, until the server stops.
    hang: bool = False
    #: Send this Content-Length instead of the true one (a lie); the connection is closed after.
    content_length: int | None = None
    #: Close the connection after this many body bytes (Content-Length stays the true length).
    close_after: int | None = None
    #: Gzip the body and send ``Content-Encoding: gzip`` (whatever the request's Accept-Encoding).
    gzip: bool = False
    #: Send ``ETag`` and ``Last-Modified`` and answer conditional requests with 304 (see the module
    #: docstring). Only a 200 that sends its whole body at once gets them: never a route that hangs,
    #: drips, lies about its Content-Length or closes early. False: the route's headers are its own.
    validators: bool = True

    @property
    def conditional(self) -> bool:
        """Whether this route gets validators and answers conditional requests."""
        return (
            self.validators
            and self.status == 200
            and not self.hang
            and self.drip <= 0
            and self.content_length is None
            and self.close_after is None
        )

    def strong_etag(self) -> str:
        """The ETag the server computes: a hash of the body as stored (before ``{{BASE}}`` is replaced).

        It stays the same across restarts and ports, and changes with the body (or its gzip coding).
        """
        digest = hashlib.sha256((b"gzip:" if self.gzip else b"identity:") + self.body).hexdigest()
        return f'"{digest[:32]}"'


_ROUTE_FIELDS = frozenset(f.name for f in fields(Route))


class Entry(NamedTuple):
    """A route and its ``Last-Modified``, as the table holds them."""

    route: Route
    #: Last-Modified, Unix seconds.
    modified: int


def is_text(content_type: str) -> bool:
    """Whether a Content-Type is text-like (its body's placeholders are replaced)."""
    ct = content_type.split(";", 1)[0].strip().lower()
    return ct.startswith("text/") or ct.endswith(("xml", "json", "javascript")) or "+xml" in ct


def _route_key(url_or_path: str) -> str:
    """``/p`` -> ``/p``; ``http://h:1/p`` -> ``h/p``; ``h/p`` -> ``h/p`` (host lower-cased)."""
    if "://" in url_or_path:
        parts = urllib.parse.urlsplit(url_or_path)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return f"{(parts.hostname or '').lower()}{target}"
    if url_or_path.startswith("/"):
        return url_or_path
    host, slash, rest = url_or_path.partition("/")
    return f"{host.lower()}{slash or '/'}{rest}"


class Web:
    """A host-aware routing table: the "web" a :class:`WebServer` serves.

    Keys are paths (``/a/b.xml``, ``/a/?format=atom``) or ``host/path`` for virtual hosts. A request
    is matched, in order, on ``host + path?query``, ``host + path``, ``path?query``, ``path``
    (then the same with the path percent-decoded).
    """

    def __init__(self, epoch: int = VALIDATORS_EPOCH) -> None:
        self._routes: dict[str, Entry] = {}
        #: The ``Last-Modified`` (Unix seconds) of a route when first added.
        self.epoch = epoch

    def add(self, url_or_path: str, route: Route) -> None:
        """Serve ``route`` at a path, a ``host/path`` or a full URL (its host and path are used).

        Safe while a server runs: the next request gets the new route. Replacing a route with one
        whose body (or gzip flag) differs moves its ``Last-Modified`` one second on, and its
        computed ``ETag`` follows the body.
        """
        key = _route_key(url_or_path)
        old = self._routes.get(key)
        modified = self.epoch
        if old is not None:
            same = (old.route.body, old.route.gzip) == (route.body, route.gzip)
            modified = old.modified if same else old.modified + 1
        self._routes[key] = Entry(route, modified)

    def change(self, url_or_path: str, **changes: Any) -> Route:
        """Replace fields of the route stored under this key (e.g. ``body=``); returns the new route.

        ``KeyError`` when there is none.
        """
        old = self.get(url_or_path)
        if old is None:
            raise KeyError(url_or_path)
        route = replace(old, **changes)
        self.add(url_or_path, route)
        return route

    def get(self, url_or_path: str) -> Route | None:
        """The route stored under exactly this key, if any."""
        entry = self._routes.get(_route_key(url_or_path))
        return entry.route if entry is not None else None

    def last_modified(self, url_or_path: str) -> int | None:
        """The Unix time the server sends as this key's ``Last-Modified`` (unless the route sets its own)."""
        entry = self._routes.get(_route_key(url_or_path))
        return entry.modified if entry is not None else None

    def keys(self) -> list[str]:
        """Every route key, sorted."""
        return sorted(self._routes)

    def __len__(self) -> int:
        return len(self._routes)

    def resolve(self, host: str, target: str) -> Route | None:
        """The route for a request with this Host (without port) and request target."""
        entry = self.match(host, target)
        return entry.route if entry is not None else None

    def match(self, host: str, target: str) -> Entry | None:
        """The entry for a request with this Host (without port) and request target (what the server serves)."""
        host = host.lower()
        path = target.split("?", 1)[0]
        candidates = [target, path]
        unquoted = urllib.parse.unquote(path)
        if unquoted != path:
            candidates.append(unquoted)
        routes = self._routes
        if host:
            for c in candidates:
                entry = routes.get(host + c)
                if entry is not None:
                    return entry
        for c in candidates:
            entry = routes.get(c)
            if entry is not None:
                return entry
        return None

    def add_dir(self, root: Path, prefix: str = "/", *, day: date | None = None) -> None:
        """Serve every file under ``root`` at ``prefix`` + its relative path.

        ``day``: write out the ``{{DATE-N:FORMAT}}`` placeholders of text files and of the
        overrides' header values and bodies for that day (:mod:`crawler.demo.dates`); None leaves
        them as written.

        Files and folders whose name starts with ``_`` or ``.`` are not served. ``index.html`` is
        also served at its folder's URL (``/site/``), and ``/site`` redirects there. A
        ``_headers.json`` in ``root`` maps paths (relative to ``prefix``, starting with ``/``) to
        overrides: ``status``, ``headers`` (merged over the file's), ``body`` (text), ``file`` (serve
        another file's body), and any other :class:`Route` field (``delay``, ``gzip``...). Paths
        with no file become routes of their own (redirects, 500 pages, ...). Keys starting with
        ``_`` are comments.
        """
        root = Path(root)
        base = "/" + prefix.strip("/")
        base = "" if base == "/" else base
        for file in sorted(root.rglob("*")):
            rel = file.relative_to(root)
            if not file.is_file() or any(part.startswith(("_", ".")) for part in rel.parts):
                continue
            url_path = f"{base}/{rel.as_posix()}"
            ctype = CONTENT_TYPES.get(file.suffix.lower(), DEFAULT_CONTENT_TYPE)
            body = file.read_bytes()
            if day is not None and is_text(ctype):
                body = render_dates(body, day)
            route = Route(body=body, headers={"Content-Type": ctype})
            self.add(url_path, route)
            if file.name in ("index.html", "index.htm"):
                folder = url_path.rsplit("/", 1)[0]
                self.add(folder + "/", route)
                if folder and self.get(folder) is None:
                    self.add(folder, Route(status=301, headers={"Location": "{{BASE}}" + folder + "/"}))
        overrides_file = root / HEADERS_FILE
        if overrides_file.is_file():
            text = overrides_file.read_bytes()
            if day is not None:
                text = render_dates(text, day)
            overrides: dict[str, Any] = json.loads(text.decode("utf-8"))
            for path, spec in overrides.items():
                if path.startswith("_"):
                    continue
                self.add(base + path, self._override(base, path, spec))

    def _override(self, base: str, path: str, spec: dict[str, Any]) -> Route:
        unknown = set(spec) - _ROUTE_FIELDS - {"file"}
        if unknown or not path.startswith("/"):
            raise ValueError(f"{HEADERS_FILE}: bad entry {path!r}: unknown keys {sorted(unknown)}")
        source = base + spec["file"] if "file" in spec else base + path
        route = self.get(source) or Route(headers={"Content-Type": "text/html; charset=utf-8"})
        changes: dict[str, Any] = {k: v for k, v in spec.items() if k not in ("file", "headers", "body")}
        if "headers" in spec:
            changes["headers"] = {**route.headers, **spec["headers"]}
        if "body" in spec:
            changes["body"] = spec["body"].encode("utf-8")
        return replace(route, **changes)
