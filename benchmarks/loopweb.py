"""A generated loopback web for the crawl benchmarks, and a light server for it.

Site ``i`` of ``N`` lives on loopback address ``host_for(i)`` (spread over ``hosts`` addresses
127.0.1.1, 127.0.1.2, ... so Scrapy sees many domains, hence many download slots) under the path
prefix ``/s<i>/``: a home page of about 20 KB whose ``<head>`` advertises one feed, and that feed
(~20 items, 30-60 KB, RSS 2.0 with the common namespaces for 70 % of sites, Atom 1.0 for the rest).
Everything is deterministic: site ``i`` is the same bytes in every run.

The server is asyncio on one thread with pre-rendered templates (a response costs one
``bytes.join`` and one write), listening on every host address at the same port with a listen
backlog of 4096, HTTP/1.1 keep-alive. It runs in its own process so that its CPU is measured
apart from the crawler's. ``GET /__stats`` (any host) returns JSON counters since the last
``GET /__reset``: requests, bytes, first and last request times (``time.time()``).

    python benchmarks/loopweb.py --sites 1000 --hosts 100 [--port 0] [--ready FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import socket
import sys
import time
from dataclasses import dataclass
from html import escape
from pathlib import Path

#: Distinct feed/page templates; site i uses template i % VARIANTS (with its own URLs written in).
VARIANTS = 64
ATOM_SHARE = 0.3
SITE = b"\x00SITE\x00"  # placeholder for the site's base URL, e.g. http://127.0.1.7:40000/s7

WORDS = [
    "feed",
    "census",
    "crawler",
    "syndication",
    "channel",
    "item",
    "guid",
    "enclosure",
    "podcast",
    "episode",
    "summary",
    "update",
    "archive",
    "article",
    "weekly",
    "notes",
    "release",
    "server",
    "client",
    "protocol",
    "network",
    "latency",
    "cache",
    "index",
    "search",
    "engine",
    "site",
    "page",
    "link",
    "author",
    "editor",
    "category",
    "tag",
    "comment",
    "reply",
    "thread",
    "community",
    "project",
    "open",
    "source",
    "python",
    "data",
    "parquet",
    "arrow",
    "table",
    "column",
    "schema",
    "version",
    "history",
    "design",
    "review",
    "draft",
    "publish",
    "subscribe",
    "reader",
    "garden",
    "recipe",
    "travel",
    "city",
    "river",
    "mountain",
    "music",
    "album",
    "concert",
    "review",
    "film",
    "science",
    "space",
    "climate",
    "energy",
    "policy",
    "market",
    "startup",
    "product",
    "launch",
    "feature",
    "bug",
    "fix",
    "performance",
    "memory",
    "benchmark",
    "profile",
    "test",
]
CATEGORIES = [
    "Technology",
    "Science",
    "Culture",
    "Politics",
    "Sports",
    "Music",
    "Travel",
    "Food",
    "Business",
    "Open Source",
]


def host_for(i: int, hosts: int) -> str:
    h = i % hosts
    return f"127.0.{1 + h // 250}.{1 + h % 250}"


def host_list(hosts: int) -> list[str]:
    return [host_for(i, hosts) for i in range(hosts)]


def is_atom(i: int) -> bool:
    return (i * 2654435761 % 1000) / 1000 < ATOM_SHARE


def feed_path(i: int) -> str:
    return f"/s{i}/atom.xml" if is_atom(i) else f"/s{i}/feed.xml"


def home_url(i: int, hosts: int, port: int) -> str:
    return f"http://{host_for(i, hosts)}:{port}/s{i}/"


def feed_url(i: int, hosts: int, port: int) -> str:
    return f"http://{host_for(i, hosts)}:{port}{feed_path(i)}"


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _paragraphs(rng: random.Random, n: int, words: int) -> str:
    return "".join(
        f'<p>{_words(rng, words).capitalize()}. <a href="SITE/x">{rng.choice(WORDS)}</a></p>' for _ in range(n)
    )


def _date(rng: random.Random, k: int) -> tuple[str, str]:
    t = 1_760_000_000 - k * 86400 - rng.randrange(86400)
    tm = time.gmtime(t)
    return time.strftime("%a, %d %b %Y %H:%M:%S +0000", tm), time.strftime("%Y-%m-%dT%H:%M:%SZ", tm)


def rss_template(v: int) -> bytes:
    rng = random.Random(v)
    title = _words(rng, 3).title()
    n_items = rng.randint(17, 23)
    podcast = v % 5 == 0
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:atom="http://www.w3.org/2005/Atom" '
        'xmlns:sy="http://purl.org/rss/1.0/modules/syndication/" xmlns:slash="http://purl.org/rss/1.0/modules/slash/" '
        'xmlns:wfw="http://wellformedweb.org/CommentAPI/" xmlns:media="http://search.yahoo.com/mrss/"'
        + (' xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"' if podcast else "")
        + ">\n<channel>\n",
        f'<title>{title}</title>\n<atom:link href="SITE/feed.xml" rel="self" type="application/rss+xml"/>\n',
        f"<link>SITE/</link>\n<description>{_words(rng, 12)}</description>\n",
        f"<lastBuildDate>{_date(rng, 0)[0]}</lastBuildDate>\n<language>en-US</language>\n",
        "<sy:updatePeriod>hourly</sy:updatePeriod>\n<sy:updateFrequency>1</sy:updateFrequency>\n",
        "<generator>https://wordpress.org/?v=6.4</generator>\n",
        f"<image><url>SITE/logo.png</url><title>{title}</title><link>SITE/</link><width>32</width><height>32</height></image>\n",
    ]
    if podcast:
        out.append(f"<itunes:author>{_words(rng, 2).title()}</itunes:author><itunes:explicit>false</itunes:explicit>\n")
    for k in range(n_items):
        slug = "-".join(rng.choice(WORDS) for _ in range(4)) + f"-{k}"
        rfc, _ = _date(rng, k)
        body = _paragraphs(rng, rng.randint(3, 6), rng.randint(20, 35))
        cats = "".join(f"<category><![CDATA[{c}]]></category>" for c in rng.sample(CATEGORIES, rng.randint(1, 4)))
        out.append(
            f"<item>\n<title>{_words(rng, rng.randint(4, 9)).capitalize()}</title>\n<link>SITE/{slug}/</link>\n"
            f"<comments>SITE/{slug}/#comments</comments>\n<dc:creator><![CDATA[{_words(rng, 2).title()}]]></dc:creator>\n"
            f'<pubDate>{rfc}</pubDate>\n{cats}\n<guid isPermaLink="false">SITE/?p={v * 1000 + k}</guid>\n'
            f"<description><![CDATA[{_words(rng, 40)} [&#8230;]]]></description>\n"
            f"<content:encoded><![CDATA[{body}]]></content:encoded>\n"
            f"<wfw:commentRss>SITE/{slug}/feed/</wfw:commentRss>\n<slash:comments>{rng.randint(0, 40)}</slash:comments>\n"
        )
        if podcast or k % 3 == 0:
            out.append(
                f'<enclosure url="SITE/media/{slug}.{"mp3" if podcast else "jpg"}" length="{rng.randint(10**4, 10**8)}" '
                f'type="{"audio/mpeg" if podcast else "image/jpeg"}"/>\n'
                f'<media:content url="SITE/media/{slug}.jpg" medium="image"><media:title type="html">{slug}</media:title></media:content>\n'
            )
        if podcast:
            out.append(f"<itunes:duration>{rng.randint(600, 5400)}</itunes:duration>\n")
        out.append("</item>\n")
    out.append("</channel>\n</rss>\n")
    return "".join(out).replace("SITE", "\x00SITE\x00").encode()


def atom_template(v: int) -> bytes:
    rng = random.Random(v)
    title = _words(rng, 3).title()
    n_items = rng.randint(17, 23)
    out = [
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en" '
        'xmlns:media="http://search.yahoo.com/mrss/" xmlns:thr="http://purl.org/syndication/thread/1.0">\n',
        f'<title type="text">{title}</title>\n<subtitle>{_words(rng, 10)}</subtitle>\n',
        f"<updated>{_date(rng, 0)[1]}</updated>\n<id>SITE/</id>\n",
        '<link rel="alternate" type="text/html" href="SITE/"/>\n<link rel="self" type="application/atom+xml" href="SITE/atom.xml"/>\n',
        '<generator uri="https://jekyllrb.com/" version="4.3">Jekyll</generator>\n',
        f"<author><name>{_words(rng, 2).title()}</name><uri>SITE/about/</uri></author>\n",
    ]
    for k in range(n_items):
        slug = "-".join(rng.choice(WORDS) for _ in range(4)) + f"-{k}"
        _, iso = _date(rng, k)
        body = escape(_paragraphs(rng, rng.randint(3, 6), rng.randint(20, 35)))
        cats = "".join(f'<category term="{c}"/>' for c in rng.sample(CATEGORIES, rng.randint(1, 4)))
        out.append(
            f'<entry>\n<title type="html">{_words(rng, rng.randint(4, 9)).capitalize()}</title>\n'
            f'<link href="SITE/{slug}/" rel="alternate" type="text/html"/>\n'
            f"<published>{iso}</published>\n<updated>{iso}</updated>\n<id>SITE/{slug}</id>\n"
            f'<content type="html" xml:base="SITE/{slug}/">{body}</content>\n'
            f"<author><name>{_words(rng, 2).title()}</name></author>\n{cats}\n"
            f'<summary type="html">{_words(rng, 40)}</summary>\n<thr:total>{rng.randint(0, 30)}</thr:total>\n'
            f'<media:thumbnail url="SITE/media/{slug}.jpg"/>\n</entry>\n'
        )
    out.append("</feed>\n")
    return "".join(out).replace("SITE", "\x00SITE\x00").encode()


def home_template(v: int, atom: bool) -> bytes:
    rng = random.Random(10_000 + v)
    title = _words(rng, 3).title()
    ftype, fpath = ("application/atom+xml", "atom.xml") if atom else ("application/rss+xml", "feed.xml")
    teasers = "".join(
        f'<article class="post"><h2><a href="SITE/{rng.choice(WORDS)}-{k}/">{_words(rng, 6).capitalize()}</a></h2>'
        f'<time datetime="2025-10-{1 + k % 28:02d}">Oct {1 + k % 28}</time><p>{_words(rng, 45)}</p></article>\n'
        for k in range(20)
    )
    html = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{title}</title>\n<meta name="description" content="{_words(rng, 15)}">\n'
        '<link rel="stylesheet" href="SITE/assets/main.css">\n<link rel="icon" href="SITE/favicon.ico">\n'
        f'<link rel="alternate" type="{ftype}" title="{title} feed" href="SITE/{fpath}">\n'
        '<link rel="canonical" href="SITE/">\n<script src="SITE/assets/app.js" defer></script>\n'
        f'</head>\n<body>\n<header><nav><a href="SITE/">Home</a> <a href="SITE/about/">About</a> '
        f'<a href="SITE/{fpath}">Subscribe</a></nav></header>\n<main>\n{teasers}</main>\n'
        f"<footer><p>{_words(rng, 20)}</p></footer>\n</body>\n</html>\n"
    )
    return html.replace("SITE", "\x00SITE\x00").encode()


@dataclass(frozen=True, slots=True)
class Templates:
    rss: list[list[bytes]]
    atom: list[list[bytes]]
    home_rss: list[list[bytes]]
    home_atom: list[list[bytes]]

    @classmethod
    def build(cls) -> Templates:
        return cls(
            rss=[rss_template(v).split(SITE) for v in range(VARIANTS)],
            atom=[atom_template(v).split(SITE) for v in range(VARIANTS)],
            home_rss=[home_template(v, False).split(SITE) for v in range(VARIANTS)],
            home_atom=[home_template(v, True).split(SITE) for v in range(VARIANTS)],
        )

    def body(self, i: int, kind: str, base: bytes) -> bytes:
        atom = is_atom(i)
        if kind == "home":
            parts = (self.home_atom if atom else self.home_rss)[i % VARIANTS]
        else:
            parts = (self.atom if atom else self.rss)[i % VARIANTS]
        return base.join(parts)


# --- the server ------------------------------------------------------------------------------

HTML_TYPE = b"text/html; charset=utf-8"
RSS_TYPE = b"application/rss+xml; charset=utf-8"
ATOM_TYPE = b"application/atom+xml; charset=utf-8"


class Counters:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.bytes = 0
        self.not_found = 0
        self.first = 0.0
        self.last = 0.0


class LoopWeb:
    def __init__(self, sites: int, hosts: int, port: int) -> None:
        self.sites = sites
        self.hosts = hosts
        self.port = port
        self.templates = Templates.build()
        self.counters = Counters()

    def respond(self, local_ip: str, target: bytes) -> tuple[int, bytes, bytes, bytes]:
        """(status, content type, body, extra header lines) for a GET of ``target`` on ``local_ip``."""
        path = target.split(b"?", 1)[0]
        c = self.counters
        if path == b"/__stats":
            data = {
                "requests": c.requests,
                "bytes": c.bytes,
                "not_found": c.not_found,
                "first": c.first,
                "last": c.last,
            }
            return 200, b"application/json", json.dumps(data).encode(), b""
        if path == b"/__reset":
            c.reset()
            return 200, b"text/plain", b"ok", b""
        now = time.time()
        if not c.requests:
            c.first = now
        c.last = now
        c.requests += 1
        parts = path.split(b"/")  # b"", b"s12", b"" | b"feed.xml"
        if len(parts) == 2 and parts[1].startswith(b"s") and parts[1][1:].isdigit():
            # /s12 -> /s12/, as real servers answer a folder without its slash (feed-survey drops it).
            i = int(parts[1][1:])
            if i < self.sites and host_for(i, self.hosts) == local_ip:
                location = f"http://{local_ip}:{self.port}/s{i}/".encode()
                return 301, HTML_TYPE, b"", b"Location: " + location + b"\r\n"
        if len(parts) == 3 and parts[1].startswith(b"s") and parts[1][1:].isdigit():
            i = int(parts[1][1:])
            if i < self.sites and host_for(i, self.hosts) == local_ip:
                base = f"http://{local_ip}:{self.port}/s{i}".encode()
                leaf = parts[2]
                if leaf == b"":
                    return 200, HTML_TYPE, self.templates.body(i, "home", base), b""
                if (leaf == b"atom.xml") == is_atom(i) and leaf in (b"atom.xml", b"feed.xml"):
                    return 200, ATOM_TYPE if is_atom(i) else RSS_TYPE, self.templates.body(i, "feed", base), b""
        c.not_found += 1
        return 404, HTML_TYPE, b"<!DOCTYPE html><title>Not Found</title><h1>Not Found</h1>\n", b""


_REASONS = {200: b"OK", 301: b"Moved Permanently", 404: b"Not Found", 400: b"Bad Request"}


class HttpProtocol(asyncio.Protocol):
    def __init__(self, web: LoopWeb) -> None:
        self.web = web
        self.buf = b""
        self.transport: asyncio.Transport | None = None
        self.local_ip = ""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.local_ip = transport.get_extra_info("sockname")[0]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buf += data
        transport = self.transport
        assert transport is not None
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buf) > 65536:
                    transport.close()
                return
            head, self.buf = self.buf[:end], self.buf[end + 4 :]
            line, _, headers = head.partition(b"\r\n")
            pieces = line.split(b" ")
            if len(pieces) != 3:
                self._send(400, b"text/plain", b"bad request", close=True, head=False)
                return
            method, target, version = pieces
            lower = headers.lower()
            close = version == b"HTTP/1.0" or b"connection: close" in lower
            status, ctype, body, extra = self.web.respond(self.local_ip, target)
            self._send(status, ctype, body, close=close, head=method == b"HEAD", extra=extra)
            if close:
                return

    def _send(self, status: int, ctype: bytes, body: bytes, *, close: bool, head: bool, extra: bytes = b"") -> None:
        transport = self.transport
        assert transport is not None
        self.web.counters.bytes += len(body)
        header = b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nServer: loopweb\r\n%s%s\r\n" % (
            status,
            _REASONS.get(status, b"OK"),
            ctype,
            len(body),
            extra,
            b"Connection: close\r\n" if close else b"",
        )
        transport.write(header if head else header + body)
        if close:
            transport.close()


async def serve(web: LoopWeb, hosts: list[str], ready: Path | None) -> None:
    loop = asyncio.get_running_loop()
    servers = []
    for host in hosts:
        srv = await loop.create_server(lambda: HttpProtocol(web), host, web.port, backlog=4096, reuse_address=True)
        servers.append(srv)
    if ready is not None:
        ready.write_text(json.dumps({"port": web.port, "hosts": len(hosts)}))
    print(f"loopweb: {web.sites} sites on {len(hosts)} hosts, port {web.port}", file=sys.stderr, flush=True)
    await asyncio.Event().wait()


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the generated benchmark web on loopback.")
    parser.add_argument("--sites", type=int, required=True)
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ready", type=Path, help="write {port, hosts} JSON here once listening")
    args = parser.parse_args(argv)
    hosts = host_list(args.hosts)
    port = args.port or free_port(hosts[0])
    web = LoopWeb(args.sites, args.hosts, port)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(web, hosts, args.ready))


if __name__ == "__main__":
    main()
