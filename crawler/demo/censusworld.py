"""A loopback world for a census of listed sites (``feedcensus commoncrawl --sites --live``), with its answers.

:func:`open_world` builds, in a folder:

* an **archive** in Common Crawl's layout: gzip'd WARC files under ``crawl-data/CC-MAIN-2026-12/...``,
  one gzip member per record (request and response records, as ``crawl --warc`` writes them),
  served by :class:`~crawler.demo.rangeserver.RangeServer`;
* its **index** (``index.parquet``) in Common Crawl's columns: ``url``, ``url_host_name``,
  ``url_host_registered_domain``, ``url_host_tld``, ``fetch_status``, ``content_mime_type``,
  ``content_mime_detected``, ``content_charset``, ``warc_filename``, ``warc_record_offset``,
  ``warc_record_length``. Besides pages and feeds it holds records a census must not read: an
  archived redirect (``fetch_status`` 301) and an image per site, and sites that are not listed;
* a **top list** (``top.csv``, ``rank,domain`` lines: the Tranco list's shape);
* the **live web** (:class:`LiveWeb`): site ``i`` lives on its own loopback address
  :func:`host_of` (127.1.0.1, 127.1.0.2, ...; the address is the site's "registrable domain", as an
  IP address is its own site), all on one port. Only sites with a live feed (or a gone one) listen.

What site ``i`` is depends on ``i % 10`` alone (:func:`kind_of`), so the right answers are known
without running anything (:class:`Answers`): 40 % of the listed sites have no archived page (one in
ten of those still has an archived feed), and of those with pages: ``silent`` pages advertise no
feed; ``same``: the home page and every other page advertise ``/feed.xml``, archived and unchanged
live; ``moved``: ``/rss`` is archived and now redirects (301) to ``/feed/rss.xml``; ``gone``:
``/feed.atom`` answers 410 (or 404), never archived; ``changed``: ``/feed.xml`` is archived with
3 items and has 5 now; ``inner``: only its one other page, ``/blog/``, advertises ``/blog/feed.xml`` (found
with ``--pages 1`` or more), not archived. One ``silent`` site in two serves a feed at ``/feed`` that no
page advertises (found by ``--guess``). Deterministic: the same bytes for the same port.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

#: When the archive fetched everything.
ARCHIVED_AT: Final = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
#: Where the WARC files go under the folder, and the index names them (Common Crawl's layout).
WARC_PREFIX: Final = "crawl-data/CC-MAIN-2026-12/segments/1772000000000.00/warc"
#: The kind of a listed site by ``i % 10``; 0-3 have no archived page.
KINDS: Final = ("none", "none", "none", "none", "silent", "same", "moved", "gone", "changed", "inner")
#: Kinds whose pages advertise a feed, the path it is advertised at, and whether the archive holds it.
ADVERTISED: Final = {
    "same": ("/feed.xml", True),
    "moved": ("/rss", True),
    "gone": ("/feed.atom", False),
    "changed": ("/feed.xml", True),
    "inner": ("/blog/feed.xml", False),
}
MOVED_TO: Final = "/feed/rss.xml"
#: Kinds whose feed is fetched live and parsed (the moved one after its redirect).
LIVE_PARSED: Final = ("same", "moved", "changed", "inner")


#: The path a ``silent`` site with ``i % 20 == 14`` serves a feed at, advertised nowhere (found by ``--guess``).
GUESSABLE: Final = "/feed"


def is_live(i: int) -> bool:
    """Whether site ``i`` listens on the live web (it has a feed there, or a gone one)."""
    return kind_of(i) in ADVERTISED or (kind_of(i) == "silent" and i % 20 == 14)


def kind_of(i: int) -> str:
    """What listed site ``i`` is: ``none``, ``feed-only`` (no page, an archived feed), or a kind of site with pages."""
    kind = KINDS[i % 10]
    return "feed-only" if kind == "none" and i % 20 == 3 else kind


def host_of(i: int) -> str:
    """The loopback address of site ``i`` (127.1.0.1 ... 127.1.0.200, 127.1.1.1 ...)."""
    return f"127.1.{i // 200}.{i % 200 + 1}"


#: Words of the filler text (``filler`` > 0: pages and items of about the size of real ones, for the benchmark).
_WORDS: Final = [
    "feed",
    "census",
    "archive",
    "crawl",
    "site",
    "page",
    "item",
    "channel",
    "web",
    "record",
    "index",
    "range",
    "live",
    "moved",
    "gone",
    "changed",
    "post",
    "news",
    "blog",
    "update",
    "release",
    "note",
    "weekly",
    "daily",
    "story",
    "report",
    "world",
    "local",
    "science",
    "sport",
    "music",
    "film",
    "book",
]


def _filler(seed: str, words: int) -> str:
    """``words`` words drawn deterministically from ``seed`` (text that compresses about as prose does)."""
    rng = random.Random(seed)
    return " ".join(rng.choice(_WORDS) + ("." if rng.random() < 0.1 else "") for _ in range(words))


def _rss(title: str, link: str, items: int, filler: int = 0) -> bytes:
    entries = "".join(
        f"<item><title>Post {n}</title><link>{link}post/{n}</link><guid>{link}post/{n}</guid>"
        f"<pubDate>Sun, {n:02d} Mar 2026 08:00:00 GMT</pubDate>"
        f"<description>Post number {n}. {_filler(link + str(n), filler)}</description></item>"
        for n in range(items, 0, -1)
    )
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>{title}</title>'
        f"<link>{link}</link><description>The feed of {title}</description>{entries}</channel></rss>\n"
    ).encode()


def _page(title: str, feed: tuple[str, str] | None, filler: int = 0) -> bytes:
    link = f'<link rel="alternate" type="{feed[1]}" title="Feed" href="{feed[0]}">' if feed else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>{link}</head>'
        f"<body><h1>{title}</h1><p>{'Words about the site. ' * 20}</p><p>{_filler(title, filler)}</p></body></html>\n"
    ).encode()


@dataclass(frozen=True)
class Record:
    """One archived exchange and its index row's facts."""

    url: str
    status: int
    content_type: str
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


@dataclass
class Site:
    i: int
    host: str
    base: str
    kind: str
    records: list[Record] = field(default_factory=list)
    #: path -> (status, headers, body) of the live web.
    live: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)


def site(i: int, port: int, filler: int = 0) -> Site:
    """Site ``i``: its archived records and its live routes (``filler``: words added to each page and item)."""
    host = host_of(i)
    base = f"http://{host}:{port}/"
    s = Site(i, host, base, kind_of(i))
    title = f"Site {i}"
    advertised = ADVERTISED.get(s.kind)
    feed_type = "application/atom+xml" if s.kind == "gone" else "application/rss+xml"
    if s.kind not in ("none", "feed-only"):
        on_home = advertised if advertised and s.kind != "inner" else None
        home_link = (on_home[0], feed_type) if on_home else None
        s.records.append(Record(base, 200, "text/html; charset=utf-8", _page(title, home_link, filler)))
        extra = [] if s.kind == "inner" else ["about", *(f"post/{n}" for n in range(1, 1 + i % 3))]
        for path in extra:
            link = home_link if s.kind == "same" else None
            s.records.append(
                Record(base + path, 200, "text/html; charset=utf-8", _page(f"{title}: {path}", link, filler))
            )
        if s.kind == "inner" and advertised:
            s.records.append(
                Record(base + "blog/", 200, "text/html", _page(f"{title}: blog", (advertised[0], feed_type)))
            )
        # Records a census must not read: an archived redirect and an image.
        s.records.append(Record(base + "old", 301, "text/html", b"", (("Location", base),)))
        s.records.append(Record(base + "logo.png", 200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(64)))
    if s.kind == "feed-only":
        s.records.append(Record(base + "feed.xml", 200, "application/rss+xml", _rss(title, base, 3, filler)))
    if s.kind == "silent" and i % 20 == 14:
        s.live[GUESSABLE] = (200, {"Content-Type": "application/rss+xml"}, _rss(title, base, 2, filler))
    if advertised:
        path, archived = advertised
        if archived:
            s.records.append(Record(base + path.lstrip("/"), 200, "application/rss+xml", _rss(title, base, 3, filler)))
        s.live.update(_live(s, path, title, filler))
    return s


def _live(s: Site, path: str, title: str, filler: int) -> dict[str, tuple[int, dict[str, str], bytes]]:
    rss = {"Content-Type": "application/rss+xml; charset=utf-8"}
    if s.kind == "moved":
        return {
            path: (301, {"Location": s.base + MOVED_TO.lstrip("/")}, b""),
            MOVED_TO: (200, rss, _rss(title, s.base, 3)),
        }
    if s.kind == "gone":
        return {path: (410 if s.i % 20 == 7 else 404, {"Content-Type": "text/plain"}, b"gone\n")}
    return {path: (200, rss, _rss(title, s.base, 5 if s.kind == "changed" else 3, filler))}


@dataclass(frozen=True)
class Answers:
    """What a census of the listed sites with ``--pages 1`` or more and ``--live`` must find."""

    listed: int
    with_page: int
    advertising: int
    archive_captured: int
    live_parsed: int
    #: Listed sites with no archived page (their domains).
    no_page: frozenset[str]
    #: Every feed URL an archived page advertises -> the HTTP status its live fetch ends with.
    advertised: dict[str, int]
    #: Advertised feeds that moved since the archive: old URL -> where they are now.
    moved: dict[str, str]
    #: Feed URLs the archive holds a record of (for listed sites).
    archived_feeds: frozenset[str]
    #: Advertised feeds whose live copy differs from the archived one: URL -> (archived items, live items).
    changed: dict[str, tuple[int, int]]
    #: Live feeds no page advertises, at a path ``--guess`` tries (their sites' pages advertise nothing).
    guessable: frozenset[str]


def _advertised(sites: list[Site]) -> tuple[dict[str, int], dict[str, str], dict[str, tuple[int, int]]]:
    """Every advertised feed URL -> its final live status; the moved ones -> where to; the changed ones."""
    advertised: dict[str, int] = {}
    moved: dict[str, str] = {}
    changed: dict[str, tuple[int, int]] = {}
    for s in sites:
        if s.kind not in ADVERTISED:
            continue
        path = ADVERTISED[s.kind][0]
        url = s.base + path.lstrip("/")
        status = s.live[path][0]
        advertised[url] = 200 if status == 301 else status
        if s.kind == "moved":
            moved[url] = s.base + MOVED_TO.lstrip("/")
        elif s.kind == "changed":
            changed[url] = (3, 5)
    return advertised, moved, changed


def _count(sites: list[Site], kinds: tuple[str, ...] | dict[str, Any]) -> int:
    return sum(1 for s in sites if s.kind in kinds)


def answers(sites: list[Site]) -> Answers:
    """The right answers for ``sites`` (the listed ones), from their description alone."""
    advertised, moved, changed = _advertised(sites)
    archived = {r.url for s in sites for r in s.records if r.content_type.startswith("application/rss+xml")}
    no_page = ("none", "feed-only")
    return Answers(
        listed=len(sites),
        with_page=len(sites) - _count(sites, no_page),
        advertising=_count(sites, ADVERTISED),
        archive_captured=sum(1 for s in sites if any(r.url in archived for r in s.records)),
        live_parsed=_count(sites, LIVE_PARSED),
        no_page=frozenset(s.host for s in sites if s.kind in no_page),
        advertised=advertised,
        moved=moved,
        archived_feeds=frozenset(archived),
        changed=changed,
        guessable=frozenset(s.base + GUESSABLE.lstrip("/") for s in sites if GUESSABLE in s.live),
    )


def write_archive(folder: Path, sites: list[Site], listed: int) -> None:
    """The WARC files, ``index.parquet`` and ``top.csv`` of ``sites`` (the first ``listed`` are in the list)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from crawler.archive.warc import Exchange, WarcWriter

    writer = WarcWriter(folder / WARC_PREFIX, job="census-world", max_bytes=256 * 1024)
    rows = []
    for s in sites:
        for r in s.records:
            headers = [("Content-Type", r.content_type), *r.headers]
            where = writer.write(Exchange(r.url, "GET", [("Host", s.host)], r.status, headers, r.body, ARCHIVED_AT))
            mime = r.content_type.split(";")[0]
            rows.append(
                {
                    "url": r.url,
                    "url_host_name": s.host,
                    "url_host_registered_domain": s.host,
                    "url_host_tld": s.host.rsplit(".", 1)[-1],
                    "fetch_status": r.status,
                    "content_mime_type": mime,
                    "content_mime_detected": mime if r.status == 200 else "text/html",
                    "content_charset": "UTF-8" if r.body else None,
                    "warc_filename": f"{WARC_PREFIX}/{where.filename}",
                    "warc_record_offset": where.offset,
                    "warc_record_length": where.length,
                }
            )
    writer.close()
    pq.write_table(pa.Table.from_pylist(rows), folder / "index.parquet")
    (folder / "top.csv").write_text("".join(f"{s.i + 1},{s.host}\n" for s in sites[:listed]), encoding="utf-8")


Route = tuple[int, dict[str, str], bytes]


class LiveWeb:
    """The live web of a world: one asyncio thread listening on many loopback addresses at one port.

    ``routes`` maps (address, path) to (status, headers, body); anything else is a 404. HTTP/1.1
    with keep-alive. ``hits`` counts requests by (address, path).
    """

    def __init__(self, hosts: list[str]) -> None:
        self.hosts = hosts
        self.routes: dict[tuple[str, str], Route] = {}
        self.hits: Counter[tuple[str, str]] = Counter()
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="census-live-web", daemon=True)
        self._server: asyncio.Server | None = None

    def start(self) -> LiveWeb:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(timeout=30)
        return self

    async def _listen(self) -> asyncio.Server:
        first = await asyncio.start_server(self._serve, host=self.hosts[0] if self.hosts else "127.1.0.1", port=0)
        self.port = int(first.sockets[0].getsockname()[1])
        first.close()
        await first.wait_closed()
        return await asyncio.start_server(
            self._serve, host=self.hosts or ["127.1.0.1"], port=self.port, reuse_address=True, backlog=1024
        )

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        address = str(writer.get_extra_info("sockname")[0])
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                target = head.split(b" ", 2)[1].decode("latin-1") if head.count(b" ") >= 2 else "/"
                path = target.split("?", 1)[0]
                self.hits[(address, path)] += 1
                status, headers, body = self.routes.get((address, path), (404, {"Content-Type": "text/plain"}, b"no\n"))
                lines = [
                    f"HTTP/1.1 {status} X",
                    f"Content-Length: {len(body)}",
                    *(f"{k}: {v}" for k, v in headers.items()),
                ]
                writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
                await writer.drain()
        writer.close()

    def stop(self) -> None:
        async def close(server: asyncio.Server) -> None:
            server.close()
            await server.wait_closed()

        if self._server is not None:
            asyncio.run_coroutine_threadsafe(close(self._server), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()


@dataclass
class World:
    folder: Path
    web: LiveWeb
    sites: list[Site]
    answers: Answers

    @property
    def index(self) -> Path:
        return self.folder / "index.parquet"

    @property
    def top_list(self) -> Path:
        return self.folder / "top.csv"

    def close(self) -> None:
        self.web.stop()

    def __enter__(self) -> World:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_world(folder: Path, listed: int = 200, unlisted: int = 50, filler: int = 0) -> World:
    """Build the world in ``folder`` and start its live web (close it after: a context manager).
    ``filler``: words of text added to each page and each feed item (0: small documents, for tests)."""
    total = listed + unlisted
    web = LiveWeb([host_of(i) for i in range(total) if is_live(i)]).start()
    sites = [site(i, web.port, filler) for i in range(total)]
    for s in sites:
        for path, route in s.live.items():
            web.routes[(s.host, path)] = route
    folder.mkdir(parents=True, exist_ok=True)
    write_archive(folder, sites, listed)
    return World(folder, web, sites, answers(sites[:listed]))
