"""A realistic loopback web for the scale and politeness benchmark (issue 41), and its server.

The sites and their bodies are ``loopweb.py``'s (a home page advertising one feed, and that feed);
what is added is how the hosts behave, so that a crawl meets what it meets on the web:

* **Many hosts.** Host ``h`` is the loopback address ``127.3.<h // 250>.<1 + h % 250>`` (an IP
  literal: no DNS; the crawl trusts the hosts named in its inputs, loopback included). A few
  **large hosts** hold many sites each (``--large 40,80``: 40 sites on host 0, 80 on host 1); the
  other sites are spread over the other hosts. Which host holds a site is a fixed shuffle, so a
  seeds file in site order does not list a large host's sites one after another.
* **Latency.** Every answer waits a log-normal time (median ``--latency`` seconds, 150 ms by
  default, sigma 0.6), and one in ``TAIL_EVERY`` waits 1-5 s more. A few **drip** hosts send their
  bodies ``DRIP_CHUNK`` bytes at a time, ``DRIP_PAUSE`` apart (a 48 KB feed takes about 5 s).
* **robots.txt.** Most hosts serve one that disallows ``/private/``; one in five answers 404; a
  few small hosts ask for ``Crawl-delay: CRAWL_DELAY``, and so does the first large host
  (``LARGE_CRAWL_DELAY``), so that one host paces many requests by it.
* **Slow down.** A few small hosts, and the second large host, answer **429 with Retry-After**
  (whole seconds) for a while: once the host has had ``trigger`` requests (robots.txt not counted),
  every request to it for the next ``retry_after`` seconds gets a 429 saying how long is left.
* **Conditional requests.** Feeds carry an ``ETag`` and a ``Last-Modified``; a GET with a matching
  ``If-None-Match`` (or, without one, an ``If-Modified-Since``) gets a 304, so a re-crawl of the
  feeds is all 304s.
* **The server's log.** Every request is a line of ``<logdir>/<run>.tsv``: host, path, status,
  arrival time, finish time (the last byte written; ``time.time()``), and the Retry-After a 429
  gave. ``GET /__log?run=NAME`` (on any host) starts a new log file and a fresh state (no host
  throttled yet), ``GET /__flush`` writes out what is buffered. ``scalelog.py`` reads the log.

Everything about the web is deterministic (``Plan``): the benchmark builds the same plan from the
same arguments to write its seeds and to know each host's delay.

    python benchmarks/realweb.py --sites 3000 --hosts 2000 --large 40,80 --logdir DIR [--ready FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import re
import resource
import socket
import sys
import time
from dataclasses import dataclass, field
from email.utils import formatdate, parsedate_to_datetime
from pathlib import Path
from typing import TextIO

from loopweb import Templates, is_atom

#: Log-normal spread of the latency (sigma of its log): with a 150 ms median, p90 ~0.32 s, p99 ~0.6 s.
SIGMA = 0.6
#: One answer in this many waits 1-5 s more: the tail.
TAIL_EVERY = 60
#: A drip host writes its bodies this many bytes at a time, this many seconds apart.
DRIP_CHUNK = 1024
DRIP_PAUSE = 0.1
#: robots.txt's Crawl-delay on the small hosts that ask for one, and on the first large host, seconds.
CRAWL_DELAY, LARGE_CRAWL_DELAY = 1.0, 0.5
#: A small throttled host answers 429 from its second request (robots.txt not counted) for this long.
SMALL_TRIGGER, SMALL_RETRY_AFTER = 2, 4
#: The throttled large host answers 429 from its 20th request for this long.
LARGE_TRIGGER, LARGE_RETRY_AFTER = 20, 10
#: A server closes a keep-alive connection idle this long (real servers do; it keeps file descriptors few).
KEEPALIVE = 5.0
LAST_MODIFIED = formatdate(1_760_000_000, usegmt=True)
_RUN_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,80}$")


def address(h: int) -> str:
    """The loopback address of host ``h``."""
    return f"127.3.{h // 250}.{1 + h % 250}"


@dataclass(frozen=True, slots=True)
class Host:
    index: int
    address: str
    sites: tuple[int, ...]
    robots: str  # "allow" | "missing" | "delay" (robots.txt with a Crawl-delay)
    drip: bool = False
    trigger: int = 0  # 0: never throttled; else the request (robots.txt not counted) from which it answers 429
    retry_after: int = 0
    crawl_delay: float = 0.0  # what its robots.txt asks for (robots == "delay")

    def robots_txt(self) -> bytes | None:
        if self.robots == "missing":
            return None
        delay = f"Crawl-delay: {self.crawl_delay:g}\n" if self.robots == "delay" else ""
        return f"User-agent: *\nDisallow: /private/\n{delay}".encode()


@dataclass(frozen=True, slots=True)
class Plan:
    """Which sites each host holds and how it behaves; the same arguments give the same plan."""

    sites: int
    hosts: int
    large: tuple[int, ...] = ()
    seed: int = 41
    by_address: dict[str, Host] = field(default_factory=dict, compare=False)
    host_of_site: list[int] = field(default_factory=list, compare=False)

    def __post_init__(self) -> None:
        small_hosts = self.hosts - len(self.large)
        if small_hosts < 1 or self.sites < sum(self.large) + small_hosts:
            raise ValueError(
                f"{self.sites} sites cannot give each of {self.hosts} hosts a site with large hosts of {self.large}"
            )
        order = list(range(self.sites))
        random.Random(self.seed).shuffle(order)
        holder = [0] * self.sites
        k = 0
        for h, size in enumerate(self.large):
            for site in order[k : k + size]:
                holder[site] = h
            k += size
        for n, site in enumerate(order[k:]):
            holder[site] = len(self.large) + n % small_hosts
        held: list[list[int]] = [[] for _ in range(self.hosts)]
        for site, h in enumerate(holder):
            held[h].append(site)
        self.host_of_site.extend(holder)
        for h in range(self.hosts):
            host = self._host(h, tuple(held[h]))
            self.by_address[host.address] = host

    def _host(self, h: int, sites: tuple[int, ...]) -> Host:
        if (
            h == 0 and self.large
        ):  # the first large host asks for a Crawl-delay: one host that paces many requests by it
            return Host(h, address(h), sites, "delay", crawl_delay=LARGE_CRAWL_DELAY)
        if h == 1 and len(self.large) > 1:  # the second one throttles
            return Host(h, address(h), sites, "allow", trigger=LARGE_TRIGGER, retry_after=LARGE_RETRY_AFTER)
        if h < len(self.large):
            return Host(h, address(h), sites, "allow")
        draw = random.Random(self.seed * 1_000_003 + h).random()
        # Disjoint bands of one draw: 3 % Crawl-delay, 2 % throttled, 1 % drip, 20 % no robots.txt.
        if draw < 0.03:
            return Host(h, address(h), sites, "delay", crawl_delay=CRAWL_DELAY)
        if draw < 0.05:
            return Host(h, address(h), sites, "allow", trigger=SMALL_TRIGGER, retry_after=SMALL_RETRY_AFTER)
        if draw < 0.06:
            return Host(h, address(h), sites, "allow", drip=True)
        return Host(h, address(h), sites, "missing" if draw < 0.26 else "allow")

    def host(self, site: int) -> Host:
        return self.by_address[address(self.host_of_site[site])]

    def home_url(self, site: int, port: int) -> str:
        return f"http://{self.host(site).address}:{port}/s{site}/"

    def feed_url(self, site: int, port: int) -> str:
        name = "atom.xml" if is_atom(site) else "feed.xml"
        return f"http://{self.host(site).address}:{port}/s{site}/{name}"

    def addresses(self) -> list[str]:
        return list(self.by_address)

    def counts(self) -> dict[str, int]:
        """How many hosts of each kind, for the benchmark's description of the web."""
        hosts = self.by_address.values()
        return {
            "hosts": len(self.by_address),
            "large": len(self.large),
            "crawl_delay": sum(h.robots == "delay" for h in hosts),
            "no_robots": sum(h.robots == "missing" for h in hosts),
            "throttled": sum(h.trigger > 0 for h in hosts),
            "drip": sum(h.drip for h in hosts),
        }


def etag(site: int) -> str:
    return f'"fc-{site}-1"'


def not_modified(headers: dict[bytes, bytes], site: int) -> bool:
    """RFC 9110 13.2.2: If-None-Match decides when present; else If-Modified-Since not before Last-Modified."""
    inm = headers.get(b"if-none-match")
    if inm is not None:
        tags = [t.strip().removeprefix("W/") for t in inm.decode("latin-1").split(",")]
        return etag(site) in tags or "*" in tags
    ims = headers.get(b"if-modified-since")
    if ims is None:
        return False
    try:
        return parsedate_to_datetime(ims.decode("latin-1")).timestamp() >= 1_760_000_000
    except (TypeError, ValueError):
        return False


# --- the server -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Answer:
    status: int
    ctype: bytes = b"text/plain"
    body: bytes = b""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    retry_after: int | None = None


_REASONS = {200: b"OK", 304: b"Not Modified", 404: b"Not Found", 429: b"Too Many Requests", 400: b"Bad Request"}


class RealWeb:
    def __init__(self, plan: Plan, port: int, logdir: Path, latency: float) -> None:
        self.plan = plan
        self.port = port
        self.logdir = logdir
        self.latency = latency
        self.templates = Templates.build()
        self.rngs: dict[str, random.Random] = {}
        self.counted: dict[str, int] = {}  # requests per host this run, robots.txt not counted
        self.window_end: dict[str, float] = {}  # a throttled host's 429 window, once opened
        self.buffer: list[str] = []
        self.log: TextIO | None = None

    # -- state and log
    def start_run(self, name: str) -> None:
        self.flush()
        if self.log is not None:
            self.log.close()
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.log = open(self.logdir / f"{name}.tsv", "w", encoding="utf-8")  # noqa: SIM115 (closed at the next run)
        self.rngs.clear()
        self.counted.clear()
        self.window_end.clear()

    def flush(self) -> None:
        if self.log is not None and self.buffer:
            self.log.write("".join(self.buffer))
            self.log.flush()
        self.buffer.clear()

    def record(self, host: str, path: str, status: int, arrival: float, retry_after: int | None) -> None:
        ra = "" if retry_after is None else str(retry_after)
        self.buffer.append(f"{host}\t{path}\t{status}\t{arrival:.6f}\t{time.time():.6f}\t{ra}\n")

    def delay(self, host: str) -> float:
        """How long this answer waits: log-normal around the median, sometimes seconds more."""
        rng = self.rngs.get(host)
        if rng is None:
            rng = self.rngs[host] = random.Random(f"{self.plan.seed}-{host}")
        wait = self.latency * math.exp(rng.gauss(0.0, SIGMA)) if self.latency > 0 else 0.0
        if rng.randrange(TAIL_EVERY) == 0:
            wait += rng.uniform(1.0, 5.0)
        return wait

    # -- answers
    def answer(self, host: Host, path: str, headers: dict[bytes, bytes], now: float) -> Answer:
        if path == "/robots.txt":
            body = host.robots_txt()
            return Answer(200, b"text/plain", body) if body is not None else Answer(404, body=b"not found")
        if host.trigger:
            n = self.counted[host.address] = self.counted.get(host.address, 0) + 1
            end = self.window_end.get(host.address)
            if end is None and n >= host.trigger:
                end = self.window_end[host.address] = now + host.retry_after
            if end is not None and now < end:
                left = max(1, math.ceil(end - now))
                return Answer(429, body=b"slow down", headers=[(b"Retry-After", b"%d" % left)], retry_after=left)
        return self.page(host, path, headers)

    def page(self, host: Host, path: str, headers: dict[bytes, bytes]) -> Answer:
        parts = path.split("/")  # "", "s12", "" | "feed.xml"
        if len(parts) != 3 or not parts[1].startswith("s") or not (parts[1][1:].isascii() and parts[1][1:].isdigit()):
            return Answer(404, body=b"not found")
        site = int(parts[1][1:])
        if site >= self.plan.sites or self.plan.host(site).address != host.address:
            return Answer(404, body=b"not found")
        base = f"http://{host.address}:{self.port}/s{site}".encode()
        if parts[2] == "":
            return Answer(200, b"text/html; charset=utf-8", self.templates.body(site, "home", base))
        atom = is_atom(site)
        if parts[2] != ("atom.xml" if atom else "feed.xml"):
            return Answer(404, body=b"not found")
        validators = [(b"ETag", etag(site).encode()), (b"Last-Modified", LAST_MODIFIED.encode())]
        if not_modified(headers, site):
            return Answer(304, headers=validators)
        ctype = b"application/atom+xml; charset=utf-8" if atom else b"application/rss+xml; charset=utf-8"
        return Answer(200, ctype, self.templates.body(site, "feed", base), validators)

    def control(self, path: str, query: str) -> Answer | None:
        """The benchmark's own requests (not logged): start a run's log, flush it."""
        if path == "/__log":
            name = query.removeprefix("run=")
            if not _RUN_NAME.match(name):
                return Answer(400, body=b"run=NAME, letters digits _ . -")
            self.start_run(name)
            return Answer(200, body=b"ok")
        if path == "/__flush":
            self.flush()
            return Answer(200, body=b"ok")
        return None

    # -- one connection
    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        local = writer.get_extra_info("sockname")[0]
        host = self.plan.by_address.get(local)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while host is not None and await self.one(host, reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            pass
        finally:
            writer.close()

    async def one(self, host: Host, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request and answer it; False when the connection is to be closed."""
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), KEEPALIVE)
        arrival = time.time()
        line, *rest = head[:-4].split(b"\r\n")
        pieces = line.split(b" ")
        if len(pieces) != 3:
            await self.send(writer, Answer(400, body=b"bad request"), head_only=False, drip=False)
            return False
        headers = {}
        for h in rest:
            name, _, value = h.partition(b":")
            headers[name.strip().lower()] = value.strip()
        target = pieces[1].decode("latin-1")
        path, _, query = target.partition("?")
        close = pieces[2] == b"HTTP/1.0" or headers.get(b"connection", b"").lower() == b"close"
        ctl = self.control(path, query)
        if ctl is not None:
            await self.send(writer, ctl, head_only=False, drip=False)
            return not close
        answer = self.answer(host, path, headers, arrival)
        await asyncio.sleep(self.delay(host.address))
        await self.send(writer, answer, head_only=pieces[0] == b"HEAD", drip=host.drip)
        self.record(host.address, path, answer.status, arrival, answer.retry_after)
        return not close

    async def send(self, writer: asyncio.StreamWriter, a: Answer, *, head_only: bool, drip: bool) -> None:
        extra = b"".join(b"%s: %s\r\n" % kv for kv in a.headers)
        length = b"" if a.status == 304 else b"Content-Length: %d\r\n" % len(a.body)
        writer.write(
            b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\n%sServer: realweb\r\n%s\r\n"
            % (a.status, _REASONS.get(a.status, b"OK"), a.ctype, length, extra)
        )
        body = b"" if head_only or a.status == 304 else a.body
        if drip:
            for k in range(0, len(body), DRIP_CHUNK):
                writer.write(body[k : k + DRIP_CHUNK])
                await writer.drain()
                await asyncio.sleep(DRIP_PAUSE)
        else:
            writer.write(body)
        await writer.drain()


async def _flusher(web: RealWeb) -> None:
    while True:
        await asyncio.sleep(1.0)
        web.flush()


async def serve(web: RealWeb, ready: Path | None) -> None:
    servers = [
        await asyncio.start_server(web.serve, addr, web.port, backlog=1024, reuse_address=True)
        for addr in web.plan.addresses()
    ]
    web.start_run("startup")
    flusher = asyncio.create_task(_flusher(web))
    if ready is not None:
        ready.write_text(json.dumps({"port": web.port, "hosts": len(servers)}))
    print(f"realweb: {web.plan.sites} sites on {len(servers)} hosts, port {web.port}", file=sys.stderr, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        flusher.cancel()
        web.flush()


def free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def parse_large(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the realistic benchmark web on loopback.")
    parser.add_argument("--sites", type=int, required=True)
    parser.add_argument("--hosts", type=int, required=True)
    parser.add_argument("--large", type=parse_large, default=(), help="sites on each large host, e.g. 40,80")
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--latency", type=float, default=0.15, help="median answer time, seconds (0: none)")
    parser.add_argument("--logdir", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ready", type=Path, help="write {port, hosts} JSON here once listening")
    args = parser.parse_args(argv)
    try:
        plan = Plan(args.sites, args.hosts, args.large, args.seed)
    except ValueError as exc:
        raise SystemExit(f"realweb: {exc}") from None
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if args.hosts + 256 > hard:
        raise SystemExit(f"realweb: {args.hosts} hosts need more file descriptors than the limit of {hard}")
    port = args.port or free_port(address(0))
    web = RealWeb(plan, port, args.logdir, args.latency)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(web, args.ready))


if __name__ == "__main__":
    main()
