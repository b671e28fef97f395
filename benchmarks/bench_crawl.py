"""Benchmarks 2 and 3: crawl throughput vs a bare Scrapy spider, and peak memory as the crawl grows.

A generated loopback web (``loopweb.py``, its own process, CPU measured apart) with N sites spread
over 100 loopback addresses; each site is a home page advertising one feed (~48 KB, ~20 items).

* ``feedcensus crawl --seeds`` over the N home pages (autodiscovery finds the feeds), politeness off:
  ``-s ROBOTSTXT_OBEY=False -s AUTOTHROTTLE_ENABLED=False --no-reflexive``.
* ``bare_spider.py`` fetching the same 2N URLs (home pages and feeds), doing nothing with them.
* ``shaped_spider.py``, Scrapy with the census's shape: the N home pages as start requests, one item
  and the feed's request from each, one item from each feed, nothing read (what Scrapy's machinery for
  the census's items and requests costs, apart from the census's own work).

All three with the project's own concurrency and download settings (``SHARED_SETTINGS``, read from
``crawler/settings.py``, ``CONCURRENT_ITEMS`` included), each a subprocess: wall time, user+sys CPU and peak RSS (``wait4``), responses
counted by the server. Runs alternate bare/ours/shaped so that load from other processes hits them alike; the two
references also have the Scrapy components off that the project turns off (bare_spider.py).

    python benchmarks/bench_crawl.py [--sizes 1000,10000] [--memory-sizes 1000,10000,50000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import loopweb
from common import FEEDCENSUS, PYTHON, WORK, Measured, md_table, median, run_measured, tail

HOSTS = 100
#: Given to every crawler: the project's own values of Scrapy's concurrency and download limits, and of the
#: interpreter's thread switch interval and garbage collector threshold (bare_spider.py enables the
#: project's extensions for them).
SHARED_SETTINGS = (
    "CONCURRENT_REQUESTS",
    "CONCURRENT_REQUESTS_PER_DOMAIN",
    "CONCURRENT_ITEMS",
    "DOWNLOAD_TIMEOUT",
    "DOWNLOAD_MAXSIZE",
    "DOWNLOAD_WARNSIZE",
    "FEEDCENSUS_SWITCH_INTERVAL",  # the interpreter's, not Scrapy's: bare_spider.py applies it with the project's extension
    "FEEDCENSUS_GC_THRESHOLD",  # the same: the cyclic garbage collector's, applied by the project's extension
)


def project_settings() -> dict[str, str]:
    import crawler.settings as project

    return {name: str(getattr(project, name)) for name in SHARED_SETTINGS if hasattr(project, name)}


CONCURRENCY = project_settings()
POLITENESS_OFF = {"ROBOTSTXT_OBEY": "False", "AUTOTHROTTLE_ENABLED": "False"}
#: A what-if run (``--tuned``): settings to try against the project's own. Now: Python's own thread switch
#: interval (5 ms) instead of the project's 0.5 ms (crawler/extensions/switching.py), to show what that buys.
TUNED = {"FEEDCENSUS_SWITCH_INTERVAL": "0"}
CRAWL_DIR = WORK / "crawl"
#: The reference crawlers (Scrapy alone), which write no feeds.
REFERENCES = ("bare", "shaped")


class Web:
    """The generated web in a subprocess; ``stats()`` reads its counters, ``cpu()`` its CPU seconds."""

    def __init__(self, sites: int, hosts: int = HOSTS) -> None:
        self.sites = sites
        self.hosts = hosts
        ready = WORK / f"loopweb-{os.getpid()}-{time.monotonic_ns()}.ready"
        ready.unlink(missing_ok=True)
        WORK.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [PYTHON, str(Path(loopweb.__file__)), "--sites", str(sites), "--hosts", str(hosts), "--ready", str(ready)],
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not ready.exists() or not ready.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("loopweb did not start")
            time.sleep(0.05)
        self.port = int(json.loads(ready.read_text())["port"])
        ready.unlink()

    def _get(self, path: str) -> bytes:
        with urllib.request.urlopen(f"http://127.0.1.1:{self.port}{path}", timeout=10) as r:
            return bytes(r.read())

    def reset(self) -> None:
        self._get("/__reset")

    def stats(self) -> dict[str, float]:
        return dict(json.loads(self._get("/__stats")))

    def cpu(self) -> float:
        import psutil

        t = psutil.Process(self.proc.pid).cpu_times()
        return float(t.user + t.system)

    def home(self, i: int) -> str:
        return loopweb.home_url(i, self.hosts, self.port)

    def feed(self, i: int) -> str:
        return loopweb.feed_url(i, self.hosts, self.port)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@dataclass(slots=True)
class Run:
    crawler: str  # bare | shaped | ours | ours-recrawl | ours-tuned
    sites: int
    m: Measured
    responses: int  # as counted by the server
    window: float  # first to last request at the server
    server_cpu: float
    load_before: float
    load_after: float
    feeds: int | None = None  # ours: feeds written, from the summary
    extra: dict[str, str] = field(default_factory=dict)
    #: Which round of back-to-back runs it belongs to (runs of one round met about the same load).
    round: int = 0
    #: ours: the document workers (FEEDCENSUS_WORKERS), from the summary's "workers:" line. Their
    #: CPU is in ``m.cpu`` too: they are the crawl's own child processes, which ``wait4`` counts.
    workers: int = 0
    worker_cpu: float = 0.0
    worker_rss_mib: float = 0.0

    @property
    def cpu(self) -> float:
        """CPU seconds of the crawl process and its document workers."""
        return self.m.cpu

    @property
    def crawl_cpu(self) -> float:
        """CPU seconds of the crawl process alone (the reactor thread and its helper threads)."""
        return self.m.cpu - self.worker_cpu

    @property
    def valid(self) -> bool:
        """Exit 0, every request answered, and (ours) one feed written per site: else it measured something else."""
        ok = self.m.returncode == 0 and self.responses >= 2 * self.sites
        return ok and (self.crawler in REFERENCES or self.feeds == self.sites)

    @property
    def per_min(self) -> float:
        return self.responses / self.m.wall * 60

    @property
    def per_min_window(self) -> float:
        return self.responses / self.window * 60 if self.window > 0 else float("nan")


def write_inputs(web: Web, sites: int) -> tuple[Path, Path]:
    d = CRAWL_DIR / f"n{sites}"
    d.mkdir(parents=True, exist_ok=True)
    seeds = d / "seeds.txt"
    urls = d / "urls.txt"
    seeds.write_text("".join(f"{web.home(i)}\n" for i in range(sites)))
    urls.write_text("".join(f"{web.home(i)}\n{web.feed(i)}\n" for i in range(sites)))
    return seeds, urls


def settings_args(settings: dict[str, str]) -> list[str]:
    return [a for k, v in settings.items() for a in ("-s", f"{k}={v}")]


def measure(web: Web, crawler: str, sites: int, argv: list[str]) -> Run:
    web.reset()
    cpu0 = web.cpu()
    load0 = os.getloadavg()[0]
    print(f"  {crawler:12} {sites:>6} sites ...", end="", file=sys.stderr, flush=True)
    m = run_measured(argv)
    st = web.stats()
    run = Run(
        crawler=crawler,
        sites=sites,
        m=m,
        responses=int(st["requests"]),
        window=float(st["last"] - st["first"]) if st["requests"] else 0.0,
        server_cpu=web.cpu() - cpu0,
        load_before=load0,
        load_after=os.getloadavg()[0],
    )
    logs = CRAWL_DIR / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / f"{crawler}-{sites}-{time.strftime('%H%M%S')}.log").write_text(m.stdout + m.stderr)
    found = re.search(r"feeds: (\d+)", m.stderr)
    run.feeds = int(found.group(1)) if found else None
    pool = WORKERS_LINE.search(m.stderr)
    if pool:
        run.workers, run.worker_cpu, run.worker_rss_mib = int(pool[1]), float(pool[2]), float(pool[3])
    print(
        f" {m.wall:6.1f} s wall, {m.cpu:6.1f} s CPU, {m.max_rss_mib:6.0f} MiB, {run.responses} responses, "
        f"{run.per_min:,.0f}/min, exit {m.returncode}",
        file=sys.stderr,
        flush=True,
    )
    if not run.valid:
        print(f"  INVALID run (feeds written: {run.feeds}):\n{tail(m.stderr)}", file=sys.stderr)
    return run


#: The summary line of the document workers (crawler/extensions/progress.py: workers_line).
WORKERS_LINE = re.compile(
    r"workers: (\d+) process(?:es)? read \d+ feeds and pages \(CPU ([\d.]+) s, peak RSS of one (\d+) MiB"
)


def run_bare(web: Web, sites: int, urls: Path) -> Run:
    argv = [PYTHON, str(Path(__file__).with_name("bare_spider.py")), str(urls), *settings_args(CONCURRENCY)]
    return measure(web, "bare", sites, argv)


def run_shaped(web: Web, sites: int, urls: Path) -> Run:
    argv = [PYTHON, str(Path(__file__).with_name("shaped_spider.py")), str(urls), *settings_args(CONCURRENCY)]
    return measure(web, "shaped", sites, argv)


def ours_argv(seeds: Path, out: Path, *flags: str, tuned: bool = False) -> list[str]:
    """``feedcensus crawl`` of ``seeds`` into ``out`` as every run of ours is made: with document workers
    (the default, auto, named so the run says what it measured), the references' settings, ``flags``."""
    settings = {**POLITENESS_OFF, **CONCURRENCY, "FEEDCENSUS_WORKERS": "auto", **(TUNED if tuned else {})}
    argv = [FEEDCENSUS, "crawl", "--seeds", str(seeds), "--out", str(out), "--no-reflexive", "--log-level", "WARNING"]
    return [*argv, *flags, *settings_args(settings)]


def run_ours(web: Web, sites: int, seeds: Path, *, tuned: bool = False) -> Run:
    out = CRAWL_DIR / f"n{sites}" / ("out-tuned" if tuned else "out")
    shutil.rmtree(out, ignore_errors=True)
    run = measure(web, "ours-tuned" if tuned else "ours", sites, ours_argv(seeds, out, tuned=tuned))
    shutil.rmtree(out, ignore_errors=True)
    return run


def first_crawl(web: Web, sites: int, seeds: Path) -> Path:
    """An untimed first crawl into a dataset of its own, which each re-crawl starts from (a copy of it)."""
    out = CRAWL_DIR / f"n{sites}" / "out-first"
    shutil.rmtree(out, ignore_errors=True)
    print(f"  {'first':12} {sites:>6} sites (untimed, for the re-crawls) ...", file=sys.stderr, flush=True)
    subprocess.run(ours_argv(seeds, out), check=True, capture_output=True)
    return out


def run_recrawl(web: Web, sites: int, seeds: Path, first: Path) -> Run:
    """What a scheduled job's next run costs: the same seeds again into a copy of the first crawl's
    dataset, with ``--ignore-hints`` so that every feed is due. The loop web sends no validators and
    the same bodies, so each feed is downloaded, found unchanged by its hash and not parsed."""
    out = CRAWL_DIR / f"n{sites}" / "out-recrawl"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(first, out)
    run = measure(web, "ours-recrawl", sites, ours_argv(seeds, out, "--ignore-hints"))
    shutil.rmtree(out, ignore_errors=True)
    return run


@dataclass(slots=True)
class CrawlResult:
    runs: list[Run]
    memory_runs: list[Run]
    markdown_crawl: str = ""
    markdown_memory: str = ""
    targets: list[tuple[str, str, bool]] = field(default_factory=list)


def best(runs: list[Run], crawler: str, sites: int) -> Run | None:
    """The fastest of the repeats (least disturbed by other load on the machine)."""
    chosen = [r for r in runs if r.crawler == crawler and r.sites == sites and r.valid]
    return min(chosen, key=lambda r: r.m.wall) if chosen else None


def run(
    sizes: list[int],
    memory_sizes: list[int],
    repeats: int = 3,
    tuned: bool = False,
    shaped: bool = True,
    recrawl: bool = True,
) -> CrawlResult:
    web = Web(max([*sizes, *memory_sizes]))
    runs: list[Run] = []
    memory_runs: list[Run] = []
    try:
        for n in sizes:
            seeds, urls = write_inputs(web, n)
            first = first_crawl(web, n, seeds) if recrawl else None
            for k in range(repeats if n <= 1_000 else max(1, repeats - 1)):
                this_round = [run_bare(web, n, urls), run_ours(web, n, seeds)]
                if shaped:
                    this_round.append(run_shaped(web, n, urls))
                if first is not None:
                    this_round.append(run_recrawl(web, n, seeds, first))
                if tuned:  # in the same round, so that the what-if meets the same load
                    this_round.append(run_ours(web, n, seeds, tuned=True))
                for done in this_round:
                    done.round = k
                runs += this_round
            if first is not None:
                shutil.rmtree(first, ignore_errors=True)
        for n in memory_sizes:
            fastest = best(runs, "ours", n)
            if fastest is not None:
                memory_runs.append(fastest)
                continue
            seeds, _ = write_inputs(web, n)
            memory_runs.append(run_ours(web, n, seeds))
    finally:
        web.stop()
    result = CrawlResult(runs, memory_runs)
    render(result, sizes, memory_sizes)
    return result


def render(r: CrawlResult, sizes: list[int], memory_sizes: list[int]) -> None:
    """Fill in the two Markdown sections and the targets (crawl ratios first, then memory growth)."""
    r.markdown_crawl = _crawl_markdown(r, sizes)
    r.markdown_memory = _memory_markdown(r, memory_sizes)


RUN_HEADERS = [
    "sites",
    "crawler",
    "responses",
    "wall s",
    "responses/min (wall)",
    "responses/min (server window)",
    "CPU s (user+sys): crawl + workers",
    "CPU ms/response",
    "peak RSS MiB",
    "server CPU s",
    "load avg before / after",
    "feeds written",
]
RATIO_HEADERS = [
    "sites",
    "pairs",
    "bare /min (median)",
    "ours /min (median)",
    "ours / bare, rate: median (range)",
    "ours / bare, responses per CPU-second: median (range)",
    "shaped / bare, rate: median (range)",
    "ours / shaped, rate: median (range)",
    "re-crawl /min (median)",
    "re-crawl / bare, rate: median (range)",
    "what-if / bare, rate: median",
    "ours / what-if, rate: median (range)",
    "ours / what-if, responses per CPU-second: median (range)",
]
MEMORY_HEADERS = [
    "feeds",
    "responses",
    "wall s",
    "peak RSS MiB (wait4; + document workers, each)",
    "RSS at 25/50/75/99 % of the run, MiB (all processes)",
    "median RSS MiB",
    "feeds written",
]


def _feeds_cell(run: Run, invalid: str) -> object:
    return ("" if run.feeds is None else run.feeds) if run.valid else invalid


def _run_row(run: Run) -> list[object]:
    return [
        f"{run.sites:,}",
        run.crawler,
        run.responses,
        f"{run.m.wall:.1f}",
        f"{run.per_min:,.0f}",
        f"{run.per_min_window:,.0f}",
        f"{run.crawl_cpu:.1f} + {run.worker_cpu:.1f}" if run.workers else f"{run.m.cpu:.1f}",
        f"{run.cpu / run.responses * 1000:.2f}" if run.responses else "-",
        f"{run.m.max_rss_mib:.0f}" + (f" (+ {run.workers} x {run.worker_rss_mib:.0f})" if run.workers else ""),
        f"{run.server_cpu:.1f}",
        f"{run.load_before:.1f} / {run.load_after:.1f}",
        _feeds_cell(run, f"INVALID ({run.feeds}), excluded"),
    ]


def _cpu_per_response(run: Run) -> float:
    return run.cpu / run.responses


def _tuned_cells(runs: list[Run], n: int) -> list[object]:
    """The what-if columns (``TUNED``), over the rounds where all three ran: what-if / bare by rate, and
    ours / what-if by rate and by responses per CPU-second; "-" without such a round."""
    rounds = _rounds(runs, n, ("bare", "ours", "ours-tuned"))
    if not rounds:
        return ["-", "-", "-"]
    gains = [o.per_min / t.per_min for _, o, t in rounds]
    cpu_gains = [_cpu_per_response(t) / _cpu_per_response(o) for _, o, t in rounds]
    return [
        f"{median([t.per_min / b.per_min for b, _, t in rounds]):.2f}x",
        f"{median(gains):.2f}x ({min(gains):.2f}-{max(gains):.2f}), rounds: {len(rounds)}",
        f"{median(cpu_gains):.2f}x ({min(cpu_gains):.2f}-{max(cpu_gains):.2f})",
    ]


def _shaped_cells(runs: list[Run], n: int) -> list[object]:
    """The shaped spider's columns, over the rounds where bare, ours and shaped all ran: shaped / bare
    and ours / shaped, by rate; "-" without such a round."""
    rounds = _rounds(runs, n, ("bare", "ours", "shaped"))
    if not rounds:
        return ["-", "-"]
    floor = [s.per_min / b.per_min for b, _, s in rounds]
    ours = [o.per_min / s.per_min for _, o, s in rounds]
    return [
        f"{median(floor):.2f}x ({min(floor):.2f}-{max(floor):.2f})",
        f"{median(ours):.2f}x ({min(ours):.2f}-{max(ours):.2f})",
    ]


def _recrawl_cells(runs: list[Run], n: int) -> list[object]:
    """The re-crawl's columns, over the rounds where bare, ours and the re-crawl all ran: its rate, and
    re-crawl / bare by rate; "-" without such a round."""
    rounds = _rounds(runs, n, ("bare", "ours", "ours-recrawl"))
    if not rounds:
        return ["-", "-"]
    rates = [r.per_min / b.per_min for b, _, r in rounds]
    return [
        f"{median([r.per_min for _, _, r in rounds]):,.0f}",
        f"{median(rates):.2f}x ({min(rates):.2f}-{max(rates):.2f})",
    ]


def _rounds(runs: list[Run], n: int, crawlers: tuple[str, ...]) -> list[tuple[Run, ...]]:
    """The rounds at ``n`` sites in which each of ``crawlers`` has a valid run: those runs, in that order."""
    by_round: dict[int, dict[str, Run]] = {}
    for run in runs:
        if run.sites == n and run.valid and run.crawler in crawlers:
            by_round.setdefault(run.round, {})[run.crawler] = run
    return [tuple(got[c] for c in crawlers) for _, got in sorted(by_round.items()) if len(got) == len(crawlers)]


def _ratio_row(r: CrawlResult, n: int) -> list[object] | None:
    """The ours / bare row at ``n`` sites (and its target, added to ``r``), None without a valid pair."""
    pairs = _rounds(r.runs, n, ("bare", "ours"))  # back to back in one round
    if not pairs:
        return None
    rates = [o.per_min / b.per_min for b, o in pairs]
    cpus = [_cpu_per_response(b) / _cpu_per_response(o) for b, o in pairs]
    ratio = median(rates)
    r.targets.append((f"ours >= 0.75x bare spider, {n:,} sites", f"{ratio:.2f}x", ratio >= 0.75))
    return [
        f"{n:,}",
        len(pairs),
        f"{median([b.per_min for b, _ in pairs]):,.0f}",
        f"{median([o.per_min for _, o in pairs]):,.0f}",
        f"{ratio:.2f}x ({min(rates):.2f}-{max(rates):.2f})",
        f"{median(cpus):.2f}x ({min(cpus):.2f}-{max(cpus):.2f})",
        *_shaped_cells(r.runs, n),
        *_recrawl_cells(r.runs, n),
        *_tuned_cells(r.runs, n),
    ]


def _crawl_markdown(r: CrawlResult, sizes: list[int]) -> str:
    table = md_table(RUN_HEADERS, [_run_row(run) for run in r.runs])
    ratio_rows = [row for n in sizes if (row := _ratio_row(r, n)) is not None]
    keep = [True] * 6 + [any(run.crawler == "shaped" for run in r.runs)] * 2
    keep += [any(run.crawler == "ours-recrawl" for run in r.runs)] * 2
    keep += [any(run.crawler == "ours-tuned" for run in r.runs)] * 3
    headers = [h for h, k in zip(RATIO_HEADERS, keep, strict=True) if k]
    ratio_rows = [[c for c, k in zip(row, keep, strict=True) if k] for row in ratio_rows]
    ratios = md_table(headers, ratio_rows)
    shaped = ""
    if keep[6]:
        shaped = (
            " Each round also runs `shaped` (shaped_spider.py): Scrapy with the census's shape and none of its "
            "work, the home pages as start requests, from each an item and its feed's request, from each feed an "
            "item. shaped / bare is what Scrapy's own machinery for those items and requests costs; ours / shaped "
            "is what the census's own work costs on top."
        )
    recrawl = ""
    if keep[8]:
        recrawl = (
            " Each round also runs `ours-recrawl`: what a scheduled job's next run costs, the same seeds again "
            "into a copy of an untimed first crawl's dataset with `--ignore-hints` (every feed due). The loop web "
            "sends no validators and the same bodies, so every feed is downloaded again, found unchanged by its "
            "hash and not parsed; the earlier job's state is read from the dataset's index (built at the start "
            "of the run, as a scheduled job's next run does)."
        )
    what_if = ""
    if keep[-1]:
        what_if = (
            f" Each round also runs the what-if `ours-tuned`, ours with {TUNED}: Python's own thread switch "
            "interval (5 ms) instead of the project's 0.5 ms (the bare spider has 0.5 ms in every round), so the "
            "ours / what-if columns are what the shorter interval buys, within each round."
        )
    return (
        f"Loopback web: sites spread over {HOSTS} addresses (127.0.1.1-127.0.1.{HOSTS}), one port, path prefix per "
        f"site; 2 requests per site (home page + feed). Settings for all (the project's values): {CONCURRENCY}; the "
        "references also have off the Scrapy components the project turns off. Politeness off for all. Bare, "
        "ours (and shaped) run back to back in rounds; a ratio is the median over the rounds, the range in "
        "brackets (runs move with the machine's other load, see the load averages); every run is in the full "
        f"table.{shaped}{recrawl}{what_if}\n\n"
        f"{ratios}\n\n{table}\n"
    )


def _memory_row(run: Run) -> list[object]:
    samples = run.m.rss_samples
    quarter = [
        f"{samples[min(len(samples) - 1, int(len(samples) * q))][1]:.0f}" if samples else "-"
        for q in (0.25, 0.5, 0.75, 0.99)
    ]
    return [
        f"{run.sites:,}",
        run.responses,
        f"{run.m.wall:.0f}",
        f"{run.m.max_rss_mib:.0f}" + (f" (+ {run.workers} x {run.worker_rss_mib:.0f})" if run.workers else ""),
        " / ".join(quarter),
        f"{median([s[1] for s in samples]):.0f}" if samples else "-",
        _feeds_cell(run, f"INVALID ({run.feeds})"),
    ]


def _memory_markdown(r: CrawlResult, memory_sizes: list[int]) -> str:
    mem = md_table(MEMORY_HEADERS, [_memory_row(run) for run in r.memory_runs])
    by_n = {run.sites: run for run in r.memory_runs}
    if len(memory_sizes) >= 2 and memory_sizes[-2] in by_n and memory_sizes[-1] in by_n:
        a, b = by_n[memory_sizes[-2]], by_n[memory_sizes[-1]]
        growth = b.m.max_rss_mib / a.m.max_rss_mib - 1
        r.targets.append((f"peak RSS growth {a.sites:,} -> {b.sites:,} feeds < 25%", f"{growth:+.0%}", growth < 0.25))
    reused = [f"{run.sites:,}" for run in r.memory_runs if any(run is done for done in r.runs)]
    source = (
        f"the {' and '.join(reused)}-feed runs are benchmark 2's fastest, reused"
        if reused
        else "each size run for this table alone"
    )
    return (
        f"`feedcensus crawl` as in benchmark 2 ({source}), peak RSS from "
        "the kernel (`ru_maxrss` via `wait4`), RSS polled every 0.5 s for the in-run samples.\n\n" + mem + "\n"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--memory-sizes", default="1000,10000,50000")
    parser.add_argument("--repeats", type=int, default=3, help="bare/ours pairs at <= 1,000 sites (one fewer above)")
    parser.add_argument(
        "--tuned", action="store_true", help=f"also run ours with {TUNED} in every round (the what-if columns)"
    )
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    memory = [int(s) for s in args.memory_sizes.split(",") if s]
    result = run(sizes, memory, args.repeats, tuned=args.tuned)
    print(result.markdown_crawl)
    print(result.markdown_memory)
    print(md_table(["target", "measured", "met"], [[t, m, "yes" if ok else "NO"] for t, m, ok in result.targets]))


if __name__ == "__main__":
    main()
