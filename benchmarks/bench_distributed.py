"""6. Distributed crawls (issue 13): one Redis frontier shared by one and by two crawl processes.

The generated loopback web of benchmark 2 (``loopweb.py``, its own process) with N sites, crawled
five ways, each into a fresh dataset with its own job id:

* ``plain``: ``feedcensus crawl --seeds`` alone, Scrapy's in-memory scheduler (the baseline);
* ``frontier x1``: the same crawl with ``--frontier URL``: one process, its queue in Redis;
* ``frontier x2``: that coordinator plus one ``feedcensus worker`` started with it: two processes;
* ``seeded x1`` / ``seeded x2``: one / two ``feedcensus worker`` processes on a job whose queue already
  holds every seed (pushed beforehand, untimed, the way the coordinator pushes them: ``FrontierQueue``,
  the input hosts shared, the job marked seeded). A coordinator queues its inputs only as fast as
  Scrapy asks for start requests, which on this fast web is about as fast as it crawls them, so a
  worker started with it finds little to do; these two runs measure the frontier's scaling without that.

Each frontier run gets a fresh ``redis-server`` on 127.0.0.1 (``tests/redisserver.py``: append-only
file on, as docs/distributed.md advises). Settings as benchmark 2: the project's concurrency and
download settings, robots.txt and AutoThrottle off, ``--no-reflexive``. Measured per run: wall time
(first process started to last one ended), responses counted by the web server, CPU of the crawl
processes (``wait4``), of the web server and of redis-server, Redis commands per response
(``INFO commandstats`` before and after: every command Redis executed, those inside the frontier's
Lua scripts included) and round trips per response (the workers' own count,
``feedcensus/frontier/redis_commands`` in their log files), feeds written (the ``workers`` table).

Then what Redis holds per queued request: a fresh redis-server, 20,000 requests made as the
crawl makes them (``crawler.requests.make_request``, seed home pages and the feeds autodiscovery
would find) pushed with the scheduler's own queue and codec (``FrontierQueue``, ``RequestCodec``)
and never consumed; ``used_memory`` before and after, divided, and extrapolated to 10 million.

    python benchmarks/bench_distributed.py [--sites 10000] [--repeats 1] [--queue 20000]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench_crawl import CONCURRENCY, HOSTS, POLITENESS_OFF, Web, settings_args
from common import FEEDCENSUS, REPO, WORK, Measured, md_table, median, run_measured, tail

DIST_DIR = WORK / "distributed"
#: The issue's target: two processes on one frontier reach this throughput of one.
TARGET = 1.7
#: How far the queue-memory figure is extrapolated.
EXTRAPOLATE = 10_000_000
MODES = ("plain", "frontier x1", "frontier x2", "seeded x1", "seeded x2")
#: A command every process runs with (the crawl processes add their inputs, output and job).
COMMON_FLAGS = ["--no-reflexive", *settings_args({**POLITENESS_OFF, **CONCURRENCY})]
_STAT_COMMANDS = re.compile(r"'feedcensus/frontier/redis_commands': (\d+)")
_JOINED = re.compile(r"worker (\S+) joined job")
_OPENED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) \[scrapy\.core\.engine\] INFO: Spider opened", re.M)


def redis_server(folder: Path) -> Any:
    """A fresh redis-server on 127.0.0.1 with its data in ``folder`` (tests/redisserver.py)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.redisserver import RedisServer

    shutil.rmtree(folder, ignore_errors=True)
    return RedisServer(folder).start()


def redis_client(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url, decode_responses=True)


def command_counts(client: Any) -> dict[str, int]:
    """Calls per command since the server started (``INFO commandstats``), without INFO itself."""
    stats = client.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info"}


@dataclass(slots=True)
class Proc:
    role: str  # alone | coordinator | worker
    m: Measured
    log: Path
    round_trips: int | None = None  # Redis commands this process sent (its stats dump)
    worker: str | None = None  # its id in the job (and in the workers table)
    started: float = 0.0  # time.time() when it was started
    opened: float | None = None  # seconds from its start to "Spider opened" (a worker first waits for the job)


@dataclass(slots=True)
class DistRun:
    mode: str
    sites: int
    procs: list[Proc]
    wall: float
    responses: int  # as counted by the web server
    server_cpu: float
    load_before: float
    load_after: float
    redis_cpu: float | None = None
    redis_commands: dict[str, int] = field(default_factory=dict)  # executed, per command
    workers: list[dict[str, Any]] = field(default_factory=list)  # the job's workers rows

    @property
    def feeds(self) -> int:
        return sum(int(w.get("feeds") or 0) for w in self.workers)

    @property
    def cpu(self) -> float:
        return sum(p.m.cpu for p in self.procs)

    @property
    def per_min(self) -> float:
        return self.responses / self.wall * 60 if self.wall > 0 else float("nan")

    @property
    def executed_per_response(self) -> float | None:
        return sum(self.redis_commands.values()) / self.responses if self.redis_commands and self.responses else None

    @property
    def round_trips_per_response(self) -> float | None:
        trips = [p.round_trips for p in self.procs]
        if not self.responses or any(t is None for t in trips) or not trips:
            return None
        return sum(t or 0 for t in trips) / self.responses

    @property
    def complete(self) -> bool:
        """Every site's home page and feed fetched and one feed written per site, whatever the exit codes."""
        return self.responses >= 2 * self.sites and self.feeds == self.sites

    @property
    def clean(self) -> bool:
        return self.complete and all(p.m.returncode == 0 for p in self.procs)


def write_seeds(web: Web, sites: int) -> Path:
    d = DIST_DIR / f"n{sites}"
    d.mkdir(parents=True, exist_ok=True)
    seeds = d / "seeds.txt"
    seeds.write_text("".join(f"{web.home(i)}\n" for i in range(sites)))
    return seeds


def read_workers(out: Path, job: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    files = sorted((out / "workers" / f"job_id={job}").glob("*.parquet"))
    return [row for f in files for row in pq.read_table(f).to_pylist()]


def read_log(p: Proc) -> None:
    """From a process's log file: its last ``feedcensus/frontier/redis_commands`` (the final stats dump), its
    worker id, and when its spider opened (the log's local time, to the second)."""
    try:
        text = p.log.read_text(errors="replace")
    except OSError:
        return
    trips, joined, opened = _STAT_COMMANDS.findall(text), _JOINED.search(text), _OPENED.search(text)
    p.round_trips = int(trips[-1]) if trips else None
    p.worker = joined.group(1) if joined else None
    if opened:
        p.opened = max(0.0, time.mktime(time.strptime(opened.group(1), "%Y-%m-%d %H:%M:%S")) - p.started)


def _measure_all(argvs: list[tuple[str, list[str], Path]]) -> tuple[list[Proc], float]:
    """Run the commands side by side (started in order); their results and the wall time of the lot."""
    started = time.perf_counter()
    with ThreadPoolExecutor(len(argvs)) as pool:
        futures = []
        for role, argv, log in argvs:
            futures.append((role, log, time.time(), pool.submit(run_measured, argv)))
            time.sleep(0.05)  # the coordinator first: a worker waits for the job to be seeded anyway
        procs = [Proc(role, f.result(), log, started=t) for role, log, t, f in futures]
    return procs, time.perf_counter() - started


def crawl_argv(seeds: Path, out: Path, job: str, log: Path, frontier: str | None) -> list[str]:
    argv = [FEEDCENSUS, "crawl", "--seeds", str(seeds), "--out", str(out), "--job-id", job, "--log-file", str(log)]
    return argv + (["--frontier", frontier] if frontier else []) + COMMON_FLAGS


def worker_argv(out: Path, job: str, log: Path, frontier: str) -> list[str]:
    argv = [FEEDCENSUS, "worker", "--frontier", frontier, "--job", job, "--out", str(out), "--log-file", str(log)]
    return [*argv, "--wait", "120", *COMMON_FLAGS]


def _commands(
    mode: str, seeds: Path, out: Path, job: str, base: Path, url: str | None
) -> list[tuple[str, list[str], Path]]:
    """(role, argv, log file) of each process of a run."""
    if url is None:
        return [("alone", crawl_argv(seeds, out, job, base / "crawl.log", None), base / "crawl.log")]
    if mode.startswith("seeded"):
        preseed(url, job, seeds)
        logs = [base / f"worker{i}.log" for i in range(1, 3 if mode.endswith("x2") else 2)]
        return [(f"worker {i}", worker_argv(out, job, log, url), log) for i, log in enumerate(logs, 1)]
    argvs = [("coordinator", crawl_argv(seeds, out, job, base / "crawl.log", url), base / "crawl.log")]
    if mode.endswith("x2"):
        argvs.append(("worker", worker_argv(out, job, base / "worker.log", url), base / "worker.log"))
    return argvs


def run_mode(web: Web, mode: str, sites: int, seeds: Path, repeat: int) -> DistRun:
    """One crawl of the web, in a fresh dataset (and with a fresh redis-server for a frontier)."""
    import psutil

    tag = mode.replace(" ", "")
    base = DIST_DIR / f"n{sites}" / f"{tag}-r{repeat}"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    out, job = base / "out", f"{tag}-{repeat}"
    server = None if mode == "plain" else redis_server(base / "redis")
    try:
        url = server.url if server is not None else None
        before = command_counts(redis_client(url)) if url else {}
        argvs = _commands(mode, seeds, out, job, base, url)
        web.reset()
        cpu0, load0 = web.cpu(), os.getloadavg()[0]
        print(f"  {mode:12} {sites:>6} sites ...", end="", file=sys.stderr, flush=True)
        procs, wall = _measure_all(argvs)
        st = web.stats()
        run = DistRun(mode, sites, procs, wall, int(st["requests"]), web.cpu() - cpu0, load0, os.getloadavg()[0])
        if server is not None and url is not None:
            after = command_counts(redis_client(url))
            run.redis_commands = {k: n - before.get(k, 0) for k, n in after.items() if n - before.get(k, 0) > 0}
            t = psutil.Process(server.proc.pid).cpu_times()
            run.redis_cpu = float(t.user + t.system)
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(base / "redis", ignore_errors=True)  # its append-only file: the job's frontier
    for p in procs:
        read_log(p)
    run.workers = read_workers(out, job)
    _report(run)
    shutil.rmtree(out, ignore_errors=True)
    return run


def _report(run: DistRun) -> None:
    codes = ",".join(str(p.m.returncode) for p in run.procs)
    print(
        f" {run.wall:6.1f} s wall, {run.cpu:6.1f} s CPU, {run.responses} responses, {run.per_min:,.0f}/min, "
        f"feeds {run.feeds}, exit {codes}",
        file=sys.stderr,
        flush=True,
    )
    if not run.complete:
        print(f"  INCOMPLETE run:\n{tail(run.procs[0].m.stderr)}", file=sys.stderr)
    for p in run.procs:
        if p.m.returncode != 0:
            last = tail(p.m.stderr, 1)
            print(f"  {p.role} exited {p.m.returncode}: {last}", file=sys.stderr)


# --- what a queued request costs in Redis ------------------------------------------------------


@dataclass(slots=True)
class QueueMemory:
    urls: str  # which URLs were queued
    requests: int
    member_bytes: float  # mean size of a queue entry (URL + newline + request JSON)
    used_memory: int  # used_memory after - before, bytes
    queue_bytes: int  # MEMORY USAGE of the queue zset
    dupefilter_bytes: int  # MEMORY USAGE of the duplicate filter set

    @property
    def per_request(self) -> float:
        return self.used_memory / self.requests

    @property
    def extrapolated_gb(self) -> float:
        return self.per_request * EXTRAPOLATE / 1e9


def typical_urls(n: int) -> list[tuple[str, str]]:
    """Home page and feed URLs of common length (37 and 48 characters): ``https://www.site-0000042.example.org/``."""
    return [
        (f"https://www.site-{i:07d}.example.org/", f"https://www.site-{i:07d}.example.org/feed/rss.xml")
        for i in range(n)
    ]


class Pusher:
    """Requests made as the crawl makes them (seed home pages, the feeds autodiscovery finds on them),
    pushed into a job's queue with the scheduler's own queue and codec (``FrontierQueue``, ``RequestCodec``)."""

    def __init__(self, url: str, job: str, seeds_file: Path) -> None:
        from scrapy.utils.request import RequestFingerprinter

        from crawler.fetch.inputs import read_inputs
        from crawler.frontier import Frontier, FrontierQueue, RequestCodec
        from crawler.spiders.census import CensusSpider

        self.inputs = read_inputs([str(seeds_file)], [], [])
        self.contexts = dict(self.inputs.requests)  # each home page's context, as the crawl reads it
        self.spider = CensusSpider()
        self.fingerprint = RequestFingerprinter().fingerprint
        self.frontier = Frontier.connect(url, job, "bench-pusher")
        self.queue = FrontierQueue(self.frontier, self.spider, RequestCodec())

    def push(self, url: str, ctx: Any, *, is_input: bool = False) -> int:
        """Queue one request; the size of its queue entry (URL, newline, request JSON)."""
        from crawler.requests import make_request

        request = make_request(url, ctx, callback=self.spider.parse, errback=self.spider.on_error)
        self.queue.push(request, self.fingerprint(request).hex(), is_input=is_input)
        return len(url) + 1 + len(self.queue.encode(request))

    def seed(self, home: str) -> int:
        return self.push(home, self.contexts[home], is_input=True)

    def feed(self, home: str, feed: str) -> int:
        from schemas.vocab import Expect, Via

        return self.push(feed, self.contexts[home].child(Via.AUTODISCOVERY, home, Expect.FEED))


def preseed(url: str, job: str, seeds_file: Path) -> None:
    """What a coordinator does before it crawls, done beforehand: every seed queued, the input hosts shared
    (the workers trust them), the job marked seeded."""
    pusher = Pusher(url, job, seeds_file)
    pusher.frontier.share_hosts(pusher.inputs.hosts)
    for home in pusher.contexts:
        pusher.seed(home)
    pusher.frontier.mark_seeded()
    pusher.frontier.close()


def queue_memory(label: str, pairs: list[tuple[str, str]], seeds_file: Path) -> QueueMemory:
    """Push a seed request and an autodiscovered-feed request per pair; Redis's memory before and after."""
    seeds_file.write_text("".join(f"{home}\n" for home, _ in pairs))
    server = redis_server(DIST_DIR / "redis-memory")
    try:
        pusher = Pusher(server.url, "memory", seeds_file)
        client = redis_client(server.url)
        pusher.seed(pairs[0][0])  # the scripts are loaded and the keys exist before the first reading
        before = int(client.info("memory")["used_memory"])
        sizes: list[int] = []
        for home, feed in pairs[1:]:
            sizes += [pusher.seed(home), pusher.feed(home, feed)]
        after = int(client.info("memory")["used_memory"])
        frontier = pusher.frontier
        q = int(client.memory_usage(frontier.key("queue"), samples=0) or 0)
        d = int(client.memory_usage(frontier.key("dupefilter"), samples=0) or 0)
        assert frontier.queued() == 2 * len(pairs) - 1, "every request is queued once"
        frontier.close()
    finally:
        server.cleanup()
        shutil.rmtree(DIST_DIR / "redis-memory", ignore_errors=True)
    n = len(sizes)
    return QueueMemory(label, n, sum(sizes) / n, after - before, q, d)


# --- the whole benchmark -----------------------------------------------------------------------


@dataclass(slots=True)
class DistributedResult:
    runs: list[DistRun]
    memory: list[QueueMemory]
    markdown: str = ""
    targets: list[tuple[str, str, bool]] = field(default_factory=list)


def run(sites: int = 10_000, repeats: int = 1, queue: int = 20_000) -> DistributedResult:
    DIST_DIR.mkdir(parents=True, exist_ok=True)
    web = Web(sites)
    runs: list[DistRun] = []
    try:
        seeds = write_seeds(web, sites)
        for k in range(repeats):
            order = MODES if k % 2 == 0 else tuple(reversed(MODES))  # the machine's other load hits all alike
            runs.extend(run_mode(web, mode, sites, seeds, k) for mode in order)
        half = queue // 2 + 1  # one pair's requests go in before the first reading
        loop_pairs = [(web.home(i), web.feed(i)) for i in range(half)]
    finally:
        web.stop()
    print("  queue memory ...", file=sys.stderr, flush=True)
    memory = [
        queue_memory("benchmark web (loopback)", loop_pairs, DIST_DIR / "memory-seeds-loop.txt"),
        queue_memory("typical length", typical_urls(half), DIST_DIR / "memory-seeds-typical.txt"),
    ]
    result = DistributedResult(runs, memory)
    result.markdown = render(result, sites)
    return result


RUN_HEADERS = [
    "run",
    "processes",
    "wall s",
    "responses",
    "responses/min",
    "crawler CPU s",
    "CPU ms/response",
    "responses per process",
    "spider opened after s",
    "redis-server CPU s",
    "web server CPU s",
    "Redis commands/response (executed)",
    "round trips/response",
    "feeds written",
    "exit codes",
    "load avg before / after",
]


def _fmt(value: float | None, spec: str = ".1f") -> str:
    return "-" if value is None else format(value, spec)


def _run_row(r: DistRun) -> list[object]:
    responses = {str(w["worker"]): int(w.get("responses") or 0) for w in r.workers}
    split = ", ".join(f"{p.role} {responses.get(p.worker or '', '?')}" for p in r.procs)
    return [
        r.mode,
        len(r.procs),
        f"{r.wall:.1f}",
        r.responses,
        f"{r.per_min:,.0f}",
        f"{r.cpu:.1f}",
        f"{r.cpu / r.responses * 1000:.2f}" if r.responses else "-",
        split if len(r.procs) > 1 else "-",
        " / ".join(_fmt(p.opened, ".0f") for p in r.procs),
        _fmt(r.redis_cpu),
        f"{r.server_cpu:.1f}",
        _fmt(r.executed_per_response, ".2f"),
        _fmt(r.round_trips_per_response, ".2f"),
        r.feeds if r.complete else f"INCOMPLETE ({r.feeds})",
        ", ".join(f"{p.role} {p.m.returncode}" for p in r.procs),
        f"{r.load_before:.1f} / {r.load_after:.1f}",
    ]


def _ratios(result: DistributedResult, sites: int) -> str:
    """The ratio rows (median over the repeats, range in brackets); the 2-vs-1 ratios are also targets."""
    by_mode = {m: [r for r in result.runs if r.mode == m and r.complete] for m in MODES}
    rows: list[list[object]] = []
    for label, a, b in (
        ("coordinator + worker / coordinator alone", "frontier x2", "frontier x1"),
        ("2 workers / 1 worker, job seeded beforehand", "seeded x2", "seeded x1"),
        ("1 process: frontier / plain", "frontier x1", "plain"),
        ("2 processes on a frontier / 1 plain", "frontier x2", "plain"),
    ):
        pairs = list(zip(by_mode[a], by_mode[b], strict=False))
        if not pairs:
            rows.append([label, "-", "-"])
            continue
        rates = [x.per_min / y.per_min for x, y in pairs]
        cpus = [(y.cpu / y.responses) / (x.cpu / x.responses) for x, y in pairs]
        ratio = median(rates)
        if a.endswith("x2") and b.endswith("x1"):
            what = "coordinator + 1 worker" if a.startswith("frontier") else "2 workers on a seeded job"
            result.targets.append((f"{what} >= {TARGET}x 1 process, {sites:,} sites", f"{ratio:.2f}x", ratio >= TARGET))
        rows.append([label, f"{ratio:.2f}x ({min(rates):.2f}-{max(rates):.2f})", f"{median(cpus):.2f}x"])
    return md_table(["ratio", "rate (responses/min)", "responses per crawler CPU-second"], rows)


def _commands_line(result: DistributedResult) -> str:
    """Which Redis commands two workers executed, per response, most frequent first."""
    runs = [r for r in result.runs if r.mode == "seeded x2" and r.redis_commands and r.responses]
    if not runs:
        return ""
    r = runs[0]
    top = sorted(r.redis_commands.items(), key=lambda kv: -kv[1])[:8]
    return (
        "Commands Redis executed per response with two workers (`seeded x2`): "
        + ", ".join(f"{name} {n / r.responses:.2f}" for name, n in top)
        + " (`evalsha` are the frontier's Lua scripts, the commands they run are counted under their own names).\n"
    )


def _memory_rows(memory: list[QueueMemory]) -> list[list[object]]:
    return [
        [
            m.urls,
            f"{m.requests:,}",
            f"{m.member_bytes:.0f}",
            f"{m.used_memory / 2**20:.1f}",
            f"{m.per_request:.0f}",
            f"{m.queue_bytes / m.requests:.0f} / {m.dupefilter_bytes / m.requests:.0f}",
            f"{m.extrapolated_gb:.1f}",
        ]
        for m in memory
    ]


MEMORY_HEADERS = [
    "URLs",
    "requests queued",
    "queue entry bytes (URL + JSON), mean",
    "used_memory growth MiB",
    "bytes per queued request",
    "of which queue zset / duplicate filter (MEMORY USAGE)",
    f"{EXTRAPOLATE / 1e6:.0f} million queued requests, GB",
]


def _busy_line(result: DistributedResult) -> str:
    """Cores each kind of run kept busy: (crawl processes + redis-server + web server CPU) / wall, median."""
    cells = []
    for mode in MODES:
        runs = [r for r in result.runs if r.mode == mode and r.wall > 0]
        if runs:
            busy = median([(r.cpu + (r.redis_cpu or 0.0) + r.server_cpu) / r.wall for r in runs])
            cells.append(f"{mode} {busy:.2f}")
    pairs = _pair_lines(result)
    return (
        "Cores kept busy, (crawl processes + redis-server + web server CPU) / wall, median per kind of run: "
        + ", ".join(cells)
        + f" (of {os.cpu_count()}). "
        + pairs
        + "\n"
    )


def _pair_lines(result: DistributedResult) -> str:
    """Each seeded x2 / x1 pair with its load averages: a single-worker run slowed by other load flatters its pair."""
    twos = [r for r in result.runs if r.mode == "seeded x2" and r.complete]
    ones = [r for r in result.runs if r.mode == "seeded x1" and r.complete]
    parts = [
        f"{a.per_min / b.per_min:.2f}x (load {b.load_before:.1f} / {a.load_before:.1f} before the 1- / 2-worker run, "
        f"{b.cpu / b.responses * 1000:.2f} / {a.cpu / a.responses * 1000:.2f} CPU ms per response)"
        for a, b in zip(twos, ones, strict=False)
    ]
    return ("Seeded pairs, 2 workers / 1: " + "; ".join(parts) + ".") if parts else ""


def render(result: DistributedResult, sites: int) -> str:
    runs = md_table(RUN_HEADERS, [_run_row(r) for r in result.runs])
    ratios = _ratios(result, sites)
    memory = md_table(MEMORY_HEADERS, _memory_rows(result.memory))
    unclean = [p for r in result.runs for p in r.procs if p.m.returncode != 0]
    note = ""
    if unclean:
        note = (
            f"\n{len(unclean)} process(es) exited non-zero although the run was complete (every page and feed "
            "fetched, one feed row per site): see the exit codes column and the analysis below.\n"
        )
    return (
        f"{sites:,} sites on {HOSTS} loopback addresses (2 requests per site), each run into a fresh dataset with its "
        f"own job id; a fresh redis-server (append-only file on) per frontier run. `frontier x1`/`x2`: `crawl "
        "--frontier` alone / with one `feedcensus worker` started with it; `seeded x1`/`x2`: one / two `feedcensus "
        "worker` on a job whose every seed was queued beforehand (untimed, with the scheduler's queue and codec). "
        "Settings for every process (the "
        f"project's values): {CONCURRENCY}, robots.txt and AutoThrottle off, `--no-reflexive`. Wall time runs from "
        "the first process started to the last one ended; responses are counted by the web server.\n\n"
        f"{ratios}\n\n{runs}\n{note}\n{_busy_line(result)}\n{_commands_line(result)}\n"
        f"Redis memory per queued request: a fresh redis-server, requests pushed with the scheduler's queue and "
        "codec and never consumed (half seed home pages, half the feeds autodiscovery finds on them), "
        "`used_memory` before and after. Each queued request also puts its fingerprint in the job's duplicate "
        "filter, which stays (one entry per request ever queued) until the job's keys expire.\n\n"
        f"{memory}\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=1, help="rounds of the three runs (order alternates)")
    parser.add_argument("--queue", type=int, default=20_000, help="requests queued for the memory figure")
    args = parser.parse_args(argv)
    result = run(args.sites, args.repeats, args.queue)
    print(result.markdown)
    print(md_table(["target", "measured", "met"], [[t, m, "yes" if ok else "NO"] for t, m, ok in result.targets]))


if __name__ == "__main__":
    main()
