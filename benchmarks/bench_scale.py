"""13. Scale and politeness on a realistic web (issue 41): throughput, scaling, and what the hosts saw.

The web is ``realweb.py`` (its own process): thousands of loopback hosts, latency with a tail, drip
hosts, a few large hosts, robots.txt with Crawl-delay on some, 429 + Retry-After on some, 304s for
conditional requests; it logs every request, and ``scalelog.py`` reads politeness off that log.
Every crawl gets the same politeness settings: the project's concurrency values, robots.txt and
AutoThrottle on (the project's defaults), ``CONCURRENT_REQUESTS_PER_DOMAIN=--limit``,
``DOWNLOAD_DELAY=--delay``, ``--no-reflexive``. Runs, one after another:

* **(a)** ``bare_spider.py`` (Scrapy alone, fetching every home page and feed, with the same settings)
  and a plain ``feedcensus crawl --seeds``: the ratio of their rates;
* **(b)** 1, 2 and 4 crawl processes on one Redis frontier (``crawl --frontier URL --job-id J`` plus
  ``worker --frontier URL --job J``; a fresh ``redis-server`` per run), each process with its
  children held to ``--quota`` of a core by a cgroup v1 CPU quota counted over ``--period`` ms
  (``/sys/fs/cgroup/cpu/fc-bench-*``, root only), so each stands in for a small machine: rate, the
  2/1 and 4/1 ratios, Redis CPU (``INFO cpu``) and commands executed (``INFO commandstats``) per
  response;
* **(c)** a crawl of the feeds themselves (an OPML list) into a fresh dataset, then the same again
  with ``--ignore-hints``, where every feed answers 304: the time ratio.

Each run gets its own log file; per run: requests the server answered, rate, and per host the
peak in flight, gaps between arrivals, requests inside a Retry-After window, robots.txt fetches.
The plain and bare runs are not held to a quota; every process is still put in a cgroup (quota
-1) so that the benchmark can stop what it started. The cgroups are removed at the end.

    python benchmarks/bench_scale.py [--sites 3000 --hosts 2000 --large 40,80] [--label after] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import realweb
import scalelog
from bench_crawl import CONCURRENCY, settings_args
from common import BENCH_DIR, FEEDCENSUS, PYTHON, WORK, Measured, git_head, md_table, run_measured, tail
from scalerig import CGROUP_ROOT, PERIOD_US, CpuGroups, Web, in_group

SCALE_DIR = WORK / "scale"
RESULTS = BENCH_DIR / "RESULTS.md"
SECTION = "scale"
TITLE = "13. Scale and politeness on a realistic web (issue 41)"
#: The issue's targets.
TARGET_BARE, TARGET_FOUR = 0.9, 3.2
_TRIPS = re.compile(r"'feedcensus/frontier/redis_commands': (\d+)")
#: The round trips that reserved a start at a host (crawler/downloader.py), out of those above.
_RESERVED = re.compile(r"'feedcensus/frontier/starts_reserved': (\d+)")


# --- one run ----------------------------------------------------------------------------------------


@dataclass(slots=True)
class Run:
    name: str
    procs: list[Measured]
    wall: float
    summary: scalelog.Summary
    figures: dict[str, scalelog.HostFigures]
    feeds: int  # distinct feeds answered 200 or 304
    server_cpu: float
    t90: float | None  # seconds from the start until 90 % of the requests were answered
    redis_cpu: float | None = None
    redis_commands: int | None = None  # executed, INFO commandstats after - before
    round_trips: int | None = None  # sent, the processes' own counts
    reserved: int = 0  # of which reserved a start (a request without a fresh ticket)
    top_commands: dict[str, int] = field(default_factory=dict)

    @property
    def rate(self) -> float:
        return self.summary.requests / self.wall if self.wall > 0 else float("nan")

    @property
    def rate90(self) -> float:
        """The rate up to 90 % of the requests: without the long tail of the largest, slowest hosts."""
        return 0.9 * self.summary.requests / self.t90 if self.t90 else float("nan")

    @property
    def cpu(self) -> float:
        return sum(m.cpu for m in self.procs)

    @property
    def ok(self) -> bool:
        return all(m.returncode == 0 for m in self.procs)


@dataclass(slots=True)
class Options:
    limit: int
    delay: float
    quota_us: int  # per period_us
    timeout: float
    #: The CFS period the quota is counted over (scalerig.PERIOD_US: 10 ms unless --period says otherwise).
    period_us: int = PERIOD_US
    #: Give the workers the same ``-s`` settings as the coordinator (needed today); False: they join with the
    #: job's own settings (``--frontier`` and ``--job`` alone, as issue 41 asks).
    worker_settings: bool = True
    #: Keep each frontier run's folder (its dataset, the processes' logs, Redis's) under this one, to look into it.
    keep: Path | None = None

    def flags(self) -> list[str]:
        """The settings every crawl gets."""
        s = {**CONCURRENCY, "CONCURRENT_REQUESTS_PER_DOMAIN": str(self.limit), "DOWNLOAD_DELAY": str(self.delay)}
        return settings_args(s)

    def bare_flags(self) -> list[str]:
        """The same for the bare spider, with the politeness the project turns on by default made explicit."""
        import crawler.settings as project

        s = {
            **CONCURRENCY,
            "CONCURRENT_REQUESTS_PER_DOMAIN": str(self.limit),
            "DOWNLOAD_DELAY": str(self.delay),
            "ROBOTSTXT_OBEY": str(project.ROBOTSTXT_OBEY),
            "AUTOTHROTTLE_ENABLED": str(project.AUTOTHROTTLE_ENABLED),
            "AUTOTHROTTLE_START_DELAY": str(project.AUTOTHROTTLE_START_DELAY),
            "AUTOTHROTTLE_TARGET_CONCURRENCY": str(project.AUTOTHROTTLE_TARGET_CONCURRENCY),
            "AUTOTHROTTLE_MAX_DELAY": str(project.AUTOTHROTTLE_MAX_DELAY),
            "RETRY_TIMES": str(project.RETRY_TIMES),
            "RETRY_HTTP_CODES": ",".join(map(str, project.RETRY_HTTP_CODES)),
            "USER_AGENT": project.USER_AGENT,
        }
        return settings_args(s)


def _measure(argvs: list[list[str]], groups: CpuGroups, quota_us: int, opts: Options) -> tuple[list[Measured], float]:
    """Run the commands side by side, each in its own CPU group; their results and the wall time of the lot.
    Past ``opts.timeout`` seconds everything in the groups is killed (the run then shows non-zero exits)."""
    cgs = [groups.make(quota_us, opts.period_us) for _ in argvs]
    timeout = opts.timeout
    done = threading.Event()

    def watchdog() -> None:
        if not done.wait(timeout):
            print(f"  timeout after {timeout:.0f} s: stopping the run", file=sys.stderr, flush=True)
            groups.kill_all()

    threading.Thread(target=watchdog, daemon=True).start()
    started = time.perf_counter()
    with ThreadPoolExecutor(len(argvs)) as pool:
        futures = [pool.submit(run_measured, in_group(g, argv)) for g, argv in zip(cgs, argvs, strict=True)]
        results = [f.result() for f in futures]
    wall = time.perf_counter() - started
    done.set()
    return results, wall


def run_group(web: Web, groups: CpuGroups, name: str, argvs: list[list[str]], opts: Options, quota_us: int) -> Run:
    """Run the commands side by side on a fresh log of the web, and read the log."""
    log = web.start_run(name.replace(" ", "-"))
    cpu0 = web.cpu()
    print(f"  {name:14} ...", end="", file=sys.stderr, flush=True)
    since = time.time()
    procs, wall = _measure(argvs, groups, quota_us, opts)
    web.flush()
    requests = scalelog.read_log(log)
    figures = scalelog.by_host(requests)
    delays = {a: max(opts.delay, h.crawl_delay) for a, h in web.plan.by_address.items()}
    summary = scalelog.summarise(requests, figures, opts.limit, delays)
    feeds = len({r.path for r in requests if r.status in (200, 304) and r.path.endswith(".xml")})
    t90 = scalelog.time_to_share(requests, since, 0.9)
    codes = ",".join(str(m.returncode) for m in procs)
    print(f" {wall:6.1f} s, {summary.requests} requests, {feeds} feeds, exit {codes}", file=sys.stderr, flush=True)
    for m in procs:
        if m.returncode != 0:
            print(tail(m.stderr, 5), file=sys.stderr)
    return Run(name, procs, wall, summary, figures, feeds, web.cpu() - cpu0, t90)


def plain_run(web: Web, groups: CpuGroups, name: str, argv: list[str], opts: Options) -> Run:
    return run_group(web, groups, name, [argv], opts, -1)


def frontier_run(web: Web, groups: CpuGroups, n: int, seeds: Path, opts: Options) -> Run:
    from bench_distributed import command_counts, redis_client, redis_server

    base = SCALE_DIR / f"frontier-x{n}"
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    out, job = base / "out", f"scale-x{n}-{int(time.time())}"
    server = redis_server(base / "redis")
    try:
        client = redis_client(server.url)
        before, cpu0 = command_counts(client), _redis_cpu(client)
        logs = [base / f"proc{i}.log" for i in range(n)]
        argvs = [
            [
                FEEDCENSUS,
                "crawl",
                "--seeds",
                str(seeds),
                "--out",
                str(out),
                "--job-id",
                job,
                "--frontier",
                server.url,
                "--log-file",
                str(logs[0]),
                "--no-reflexive",
                *opts.flags(),
            ]
        ]
        argvs += [
            [
                FEEDCENSUS,
                "worker",
                "--frontier",
                server.url,
                "--job",
                job,
                "--out",
                str(out),
                "--wait",
                "120",
                "--log-file",
                str(log),
                "--no-reflexive",
                *(opts.flags() if opts.worker_settings else []),
            ]
            for log in logs[1:]
        ]
        run = run_group(web, groups, f"frontier x{n}", argvs, opts, opts.quota_us)
        after = command_counts(client)
        run.redis_cpu = _redis_cpu(client) - cpu0
        delta = {k: v - before.get(k, 0) for k, v in after.items() if v - before.get(k, 0) > 0}
        run.redis_commands = sum(delta.values())
        run.top_commands = dict(sorted(delta.items(), key=lambda kv: -kv[1])[:6])
        trips = [_round_trips(log) for log in logs]
        run.round_trips = None if any(t is None for t in trips) else sum(t or 0 for t in trips)
        run.reserved = sum(_round_trips(log, _RESERVED) or 0 for log in logs)
        client.close()
    finally:
        server.cleanup()
        if opts.keep is not None:
            opts.keep.mkdir(parents=True, exist_ok=True)
            shutil.move(base, opts.keep / f"{base.name}-{int(time.time())}")
        shutil.rmtree(base, ignore_errors=True)
    return run


def _redis_cpu(client: Any) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def _round_trips(log: Path, stat: re.Pattern[str] = _TRIPS) -> int | None:
    try:
        found = stat.findall(log.read_text(errors="replace"))
    except OSError:
        return None
    return int(found[-1]) if found else None


# --- the whole benchmark ----------------------------------------------------------------------------


@dataclass(slots=True)
class Result:
    plan: realweb.Plan
    opts: Options
    runs: dict[str, Run] = field(default_factory=dict)
    targets: list[tuple[str, str, bool]] = field(default_factory=list)
    seconds: float = 0.0


def write_inputs(plan: realweb.Plan, port: int) -> tuple[Path, Path, Path]:
    SCALE_DIR.mkdir(parents=True, exist_ok=True)
    seeds, urls, opml = SCALE_DIR / "seeds.txt", SCALE_DIR / "urls.txt", SCALE_DIR / "feeds.opml"
    seeds.write_text("".join(f"{plan.home_url(i, port)}\n" for i in range(plan.sites)))
    urls.write_text("".join(f"{plan.home_url(i, port)}\n{plan.feed_url(i, port)}\n" for i in range(plan.sites)))
    outlines = "\n".join(
        f'<outline type="rss" text="s{i}" xmlUrl="{plan.feed_url(i, port)}"/>' for i in range(plan.sites)
    )
    opml.write_text(f'<?xml version="1.0"?>\n<opml version="2.0"><head/><body>\n{outlines}\n</body></opml>\n')
    return seeds, urls, opml


def run(plan: realweb.Plan, opts: Options, procs: list[int], latency: float, parts: str = "abc") -> Result:
    result = Result(plan, opts)
    started = time.monotonic()
    shutil.rmtree(SCALE_DIR, ignore_errors=True)
    groups = CpuGroups()
    web = Web(plan, latency, SCALE_DIR / "logs")
    try:
        seeds, urls, opml = write_inputs(plan, web.port)
        crawl = [FEEDCENSUS, "crawl", "--no-reflexive", *opts.flags()]
        if "a" in parts:
            bare = [PYTHON, str(BENCH_DIR / "bare_spider.py"), str(urls), *opts.bare_flags()]
            result.runs["bare"] = plain_run(web, groups, "bare", bare, opts)
            out = SCALE_DIR / "plain-out"
            argv = [*crawl, "--seeds", str(seeds), "--out", str(out), "--job-id", "plain"]
            result.runs["plain"] = plain_run(web, groups, "plain", argv, opts)
            shutil.rmtree(out, ignore_errors=True)
        if "b" in parts:
            for n in procs:
                result.runs[f"frontier x{n}"] = frontier_run(web, groups, n, seeds, opts)
        if "c" in parts:
            out = SCALE_DIR / "feeds-out"
            first = [*crawl, "--opml", str(opml), "--out", str(out), "--job-id", "first"]
            result.runs["feeds first"] = plain_run(web, groups, "feeds first", first, opts)
            again = [*crawl, "--opml", str(opml), "--out", str(out), "--job-id", "again", "--ignore-hints"]
            result.runs["feeds again"] = plain_run(web, groups, "feeds again", again, opts)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        groups.kill_all()
        groups.remove()
        web.stop()
    result.seconds = time.monotonic() - started
    _targets(result)
    return result


def _targets(result: Result) -> None:
    runs, t = result.runs, result.targets
    if "bare" in runs and "plain" in runs:
        a, b = runs["plain"], runs["bare"]
        ratio = a.rate / b.rate
        cell = f"{ratio:.2f}x (to 90 %: {a.rate90 / b.rate90:.2f}x)"
        t.append((f"plain crawl >= {TARGET_BARE}x bare Scrapy, same settings", cell, ratio >= TARGET_BARE))
    one, four = runs.get("frontier x1"), runs.get("frontier x4")
    if one and four:
        ratio = four.rate90 / one.rate90
        cell = f"{ratio:.2f}x (whole run: {four.rate / one.rate:.2f}x)"
        t.append((f"4 quota-limited processes >= {TARGET_FOUR}x 1, to 90 % of requests", cell, ratio >= TARGET_FOUR))
    for name, r in runs.items():
        if name == "bare":
            continue
        s = r.summary
        ok = s.max_peak <= s.limit and not s.short_gap_hosts and s.max_in_window <= 1
        cell = f"peak {s.max_peak}, {s.short_gap_hosts} hosts with short gaps, at most {s.max_in_window} in a window"
        t.append((f"{name}: peak <= {s.limit}, gaps >= delay/2, <= 1 request in a Retry-After window", cell, ok))
    if "feeds first" in runs and "feeds again" in runs:
        ratio = runs["feeds again"].wall / runs["feeds first"].wall
        t.append(("re-crawl, all 304, no slower than the first crawl", f"{ratio:.2f}x the time", ratio <= 1.0))


def _window_cell(s: scalelog.Summary) -> str:
    return f"{s.in_window} at {s.window_hosts} of {s.throttled_hosts} throttled hosts (max {s.max_in_window})"


def _crawl_delay_short(r: Run, plan: realweb.Plan) -> int:
    """Hosts asking for a robots.txt Crawl-delay that got a gap under half of it."""
    return sum(
        1
        for f in r.figures.values()
        if f.min_gap is not None and f.host in plan.by_address and f.min_gap < plan.by_address[f.host].crawl_delay / 2
    )


def _large_cell(f: scalelog.HostFigures | None) -> str:
    if f is None:
        return "-"
    span = (f.last or 0.0) - (f.first or 0.0)
    return (
        f"{f.requests} req, peak {f.peak}, gaps {_gap(f.min_gap)} / {_gap(f.median_gap)} ms, "
        f"{f.in_window} in window, {span:.0f} s"
    )


_LARGE_NOTE = {0: f", Crawl-delay {realweb.LARGE_CRAWL_DELAY:g}", 1: ", 429"}


def _large_rows(result: Result) -> list[list[object]]:
    addrs = [realweb.address(h) for h in range(len(result.plan.large))]
    return [[name, *(_large_cell(r.figures.get(a)) for a in addrs)] for name, r in result.runs.items()]


def _gap(x: float | None) -> str:
    return "-" if x is None else f"{x * 1000:.0f}"


def _per_response(x: float | int | None, r: Run, scale: float = 1.0) -> str:
    return "-" if x is None or not r.summary.requests else f"{x * scale / r.summary.requests:.3f}"


RUN_HEADERS = [
    "run",
    "wall s",
    "requests",
    "feeds",
    "requests/s (to 90 %)",
    "crawler CPU s",
    "peak in flight (hosts over)",
    "min / median gap ms",
    "hosts with a gap < delay/2 (Crawl-delay hosts)",
    "in Retry-After windows",
    "robots.txt max per host (hosts > 1)",
    "statuses",
    "exit",
]


def _run_row(r: Run, plan: realweb.Plan) -> list[object]:
    s = r.summary
    return [
        r.name,
        f"{r.wall:.1f}",
        s.requests,
        r.feeds,
        f"{r.rate:.1f} ({r.rate90:.1f})",
        f"{r.cpu:.1f}",
        f"{s.max_peak} ({s.hosts_over_limit})",
        f"{_gap(s.min_gap)} / {_gap(s.median_gap)}",
        f"{s.short_gap_hosts} ({_crawl_delay_short(r, plan)})",
        _window_cell(s),
        f"{s.robots_max} ({s.robots_repeat_hosts})",
        " ".join(f"{k}:{v}" for k, v in s.statuses.items()),
        ",".join(str(m.returncode) for m in r.procs),
    ]


def _redis_rows(result: Result) -> list[list[object]]:
    rows: list[list[object]] = []
    one = result.runs.get("frontier x1")
    for name, r in result.runs.items():
        if r.redis_commands is None:
            continue
        ratio = f"{r.rate / one.rate:.2f}x ({r.rate90 / one.rate90:.2f}x)" if one else "-"
        top = ", ".join(f"{k} {v / max(r.summary.requests, 1):.2f}" for k, v in r.top_commands.items())
        rows.append(
            [
                name,
                ratio,
                _per_response(r.redis_cpu, r, 1000),
                _per_response(r.redis_commands, r),
                f"{_per_response(r.round_trips, r)} ({_per_response(r.reserved, r)})",
                top,
            ]
        )
    return rows


READING = (
    "Requests are what the server answered (robots.txt, 429s and retries included), counted from its log; "
    "the bare spider asks for every home page and feed from the start, without waiting for a page to name its feed. "
    "Requests/s over the whole run and, in brackets, until 90 % of them were answered: the last 10 % is the "
    "tail of the largest hosts, which a per-host budget paces whatever the number of processes. Gaps are "
    "between arrivals at one host; a gap is short under half the host's delay (`DOWNLOAD_DELAY`, or its "
    "robots.txt `Crawl-delay` when larger). A request in a Retry-After window arrived after a 429 was "
    "answered and before its Retry-After ran out. Per large host: requests, peak in flight, min / median gap, "
    "requests in its Retry-After window, seconds from its first request to its last answer. Redis figures per "
    "request the server answered: CPU from `INFO cpu`, commands executed from `INFO commandstats` (those run "
    "inside Lua scripts counted under their own names), round trips from the processes' own "
    "`feedcensus/frontier/redis_commands` stat, in brackets those that reserved a start at a host "
    "(`feedcensus/frontier/starts_reserved`: a request without a fresh ticket, see crawler/downloader.py)."
)


def markdown(result: Result, command: str, label: str) -> str:
    plan, opts = result.plan, result.opts
    c = plan.counts()
    runs = md_table(RUN_HEADERS, [_run_row(r, plan) for r in result.runs.values()])
    large = md_table(
        ["run", *(f"large host {h} ({n} sites{_LARGE_NOTE.get(h, '')})" for h, n in enumerate(plan.large))],
        _large_rows(result),
    )
    redis = md_table(
        [
            "run",
            "rate vs x1 (to 90 %)",
            "Redis CPU ms / request",
            "Redis commands executed / request",
            "round trips sent / request (reserving a start)",
            "top commands / request",
        ],
        _redis_rows(result),
    )
    targets = md_table(["target", "measured", "met"], [[a, b, "yes" if ok else "NO"] for a, b, ok in result.targets])
    quota = (
        "no limit"
        if opts.quota_us < 0
        else f"{opts.quota_us / opts.period_us:.2f} of a core (a CFS quota over {opts.period_us / 1000:g} ms periods)"
    )
    joined = (
        "workers given the same `-s` settings"
        if opts.worker_settings
        else "workers joined with `--frontier` and `--job` alone"
    )
    load = os.getloadavg()
    return (
        f"<!-- scale:{label} -->\n### {label}: feedcensus at {git_head()}\n\n"
        f"Measured {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} in {result.seconds / 60:.1f} min with "
        f"`{command}`. The machine ({os.cpu_count()} cores) was shared with other engineers' work "
        f"(load average {load[0]:.1f} / {load[1]:.1f} at the end), so rates and CPU are noisy; the politeness "
        "figures come from the server's log and do not depend on load.\n\n"
        f"Web: {plan.sites:,} sites on {c['hosts']:,} hosts; {c['large']} large hosts holding "
        f"{', '.join(map(str, plan.large)) or 'no'} sites; {c['crawl_delay']} with a robots.txt `Crawl-delay` "
        f"({realweb.CRAWL_DELAY:g} s; {realweb.LARGE_CRAWL_DELAY:g} s on large host 0), {c['no_robots']} without robots.txt, {c['throttled']} answering 429 with "
        f"Retry-After for a while, {c['drip']} dripping their bodies. Settings for every crawl: "
        f"`CONCURRENT_REQUESTS_PER_DOMAIN={opts.limit}`, `DOWNLOAD_DELAY={opts.delay:g}`, robots.txt and "
        f"AutoThrottle on, the project's concurrency values. Frontier processes held to {quota} each; {joined}.\n\n"
        f"{runs}\n\n{READING}\n\n{large}\n\n{redis}\n\n{targets}\n<!-- /scale:{label} -->\n"
    )


def update_results(block: str, label: str) -> None:
    """Put ``block`` into RESULTS.md's scale section, replacing the block of the same label (others stay)."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    section = re.search(rf"<!-- section:{SECTION} -->.*?<!-- /section:{SECTION} -->\n?", text, re.S)
    if section is None:
        body = (
            f"<!-- section:{SECTION} -->\n## {TITLE}\n\nWritten by `benchmarks/bench_scale.py` (see its docstring "
            "and benchmarks/README.md). Each labelled block is one run of it; a run replaces the block of its label.\n\n"
            f"<!-- /section:{SECTION} -->\n"
        )
        text = text.rstrip("\n") + "\n\n" + body
        section = re.search(rf"<!-- section:{SECTION} -->.*?<!-- /section:{SECTION} -->\n?", text, re.S)
        assert section is not None
    old = section.group(0)
    mark = re.compile(rf"<!-- scale:{re.escape(label)} -->.*?<!-- /scale:{re.escape(label)} -->\n", re.S)
    if mark.search(old):
        new = mark.sub(lambda _: block, old)
    else:
        new = old.replace(f"<!-- /section:{SECTION} -->", block + f"\n<!-- /section:{SECTION} -->")
    RESULTS.write_text(text.replace(old, new))
    print(f"wrote {RESULTS} (block {label!r})", file=sys.stderr)


def options(args: argparse.Namespace) -> Options:
    """The runs' options from the command line's; ValueError for a CPU quota the kernel would refuse."""
    if not 1 <= args.period <= 1000:
        raise ValueError("--period: 1 to 1000 ms (what the kernel takes)")
    period_us = round(args.period * 1000)
    quota_us = -1 if args.quota <= 0 else int(args.quota * period_us)
    if 0 <= quota_us < 1000:
        raise ValueError("--quota x --period: at least 1 ms of CPU a period (the kernel's least quota)")
    return Options(
        args.limit,
        args.delay,
        quota_us,
        args.timeout,
        period_us=period_us,
        worker_settings=not args.workers_without_settings,
        keep=args.keep,
    )


def main(argv: list[str] | None = None) -> Result:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sites", type=int, default=3000)
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--large", type=realweb.parse_large, default=(40, 80), help="sites on each large host")
    parser.add_argument("--latency", type=float, default=0.15, help="the web's median answer time, seconds")
    parser.add_argument("--limit", type=int, default=2, help="CONCURRENT_REQUESTS_PER_DOMAIN")
    parser.add_argument("--delay", type=float, default=0.25, help="DOWNLOAD_DELAY, seconds")
    parser.add_argument("--procs", default="1,2,4", help="frontier runs: processes in each")
    parser.add_argument("--quota", type=float, default=0.25, help="cores per frontier process (cgroup CPU quota)")
    parser.add_argument(
        "--period", type=float, default=PERIOD_US / 1000, help="the CFS period the quota is counted over, ms (1-1000)"
    )
    parser.add_argument("--parts", default="abc", help="a: bare vs plain, b: frontier runs, c: 304 re-crawl")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run is stopped")
    parser.add_argument(
        "--workers-without-settings",
        action="store_true",
        help="start the workers without the -s settings, to use the job's own (once the job's settings travel with it)",
    )
    parser.add_argument("--label", default="latest", help="the RESULTS.md block to write (e.g. before, after)")
    parser.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md alone")
    parser.add_argument("--keep", type=Path, help="keep each frontier run's dataset and logs in this folder")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"[\w-]+", args.label):
        parser.error("--label: letters, digits, _ and - only")
    if "b" in args.parts and not os.access(CGROUP_ROOT, os.W_OK):
        raise SystemExit(
            f"bench_scale: the frontier runs need a writable cgroup v1 CPU hierarchy at {CGROUP_ROOT} (root)"
        )
    try:
        plan = realweb.Plan(args.sites, args.hosts, args.large)
    except ValueError as exc:
        raise SystemExit(f"bench_scale: {exc}") from None
    try:
        opts = options(args)
    except ValueError as exc:
        parser.error(str(exc))
    procs = [int(p) for p in args.procs.split(",") if p.strip()]
    result = run(plan, opts, procs, args.latency, args.parts)
    command = " ".join(["python benchmarks/bench_scale.py", *(argv if argv is not None else sys.argv[1:])])
    block = markdown(result, command, args.label)
    print(block)
    if not args.no_write:
        update_results(block, args.label)
    return result


if __name__ == "__main__":
    main()
