"""Politeness as the server saw it: reading ``realweb.py``'s request log (issue 41).

A log line is one request: host, path, status, arrival time, finish time, and the ``Retry-After``
of a 429 (empty otherwise), tab-separated. Per host this module works out:

* **peak in flight**: the most requests that had arrived and were not yet answered at one moment
  (a request that finishes at the instant another arrives does not overlap it);
* **gaps**: the time between one request's arrival and the next one's, the minimum and the median;
* **Retry-After violations**: requests that arrived while the host had asked to be left alone,
  that is after a 429 was answered and before its ``Retry-After`` ran out. Requests already in
  flight when the 429 went out arrived before it and do not count;
* **robots.txt fetches**.

``summarise`` puts the hosts together against the crawl's per-host limit and each host's delay
(the larger of the crawl's ``DOWNLOAD_DELAY`` and the host's robots.txt ``Crawl-delay``). Scrapy
spreads a delay over 0.5-1.5 times its value, so a gap is short when it is under half the delay.
Pure: plain data in, plain data out (``tests/test_bench_scale.py``).

    python benchmarks/scalelog.py LOG.tsv [--limit 2] [--delay 0.25]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Request:
    host: str
    path: str
    status: int
    start: float  # arrival at the server
    end: float  # last byte written
    retry_after: float | None = None  # a 429's Retry-After, seconds


@dataclass(frozen=True, slots=True)
class HostFigures:
    host: str
    requests: int
    peak: int
    min_gap: float | None  # None with fewer than two requests
    median_gap: float | None
    in_window: int  # arrivals during a Retry-After window
    robots: int
    refused: int  # 429 answers
    first: float | None = None  # the host's first arrival and last finish
    last: float | None = None


def read_log(path: Path) -> list[Request]:
    """The requests of one log file; a line that is not six tab-separated fields is skipped."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) != 6:
            continue
        host, req_path, status, start, end, ra = parts
        out.append(Request(host, req_path, int(status), float(start), float(end), float(ra) if ra else None))
    return out


def peak_in_flight(requests: Iterable[Request]) -> int:
    """The most requests in flight at once: arrivals +1, finishes -1, a finish first at a tie."""
    events = sorted([(r.start, 1) for r in requests] + [(r.end, -1) for r in requests])
    peak = now = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def gaps(requests: Iterable[Request]) -> list[float]:
    """Seconds between consecutive arrivals."""
    starts = sorted(r.start for r in requests)
    return [b - a for a, b in itertools.pairwise(starts)]


def windows(requests: Iterable[Request]) -> list[tuple[float, float]]:
    """The host's quiet windows: from each 429's finish for its Retry-After, overlapping ones merged."""
    spans = sorted((r.end, r.end + r.retry_after) for r in requests if r.status == 429 and r.retry_after)
    merged: list[tuple[float, float]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def in_windows(requests: Iterable[Request]) -> int:
    """Requests that arrived strictly inside one of the host's quiet windows."""
    reqs = list(requests)
    spans = windows(reqs)
    return sum(1 for r in reqs if any(a < r.start < b for a, b in spans))


def host_figures(host: str, requests: list[Request]) -> HostFigures:
    g = gaps(requests)
    return HostFigures(
        host=host,
        requests=len(requests),
        peak=peak_in_flight(requests),
        min_gap=min(g) if g else None,
        median_gap=statistics.median(g) if g else None,
        in_window=in_windows(requests),
        robots=sum(1 for r in requests if r.path == "/robots.txt"),
        refused=sum(1 for r in requests if r.status == 429),
        first=min((r.start for r in requests), default=None),
        last=max((r.end for r in requests), default=None),
    )


def by_host(requests: Iterable[Request]) -> dict[str, HostFigures]:
    grouped: dict[str, list[Request]] = defaultdict(list)
    for r in requests:
        grouped[r.host].append(r)
    return {h: host_figures(h, rs) for h, rs in sorted(grouped.items())}


@dataclass(frozen=True, slots=True)
class Summary:
    hosts: int
    requests: int
    limit: int
    max_peak: int
    hosts_over_limit: int
    min_gap: float | None  # the shortest gap at any host
    median_gap: float | None  # median over hosts of each host's median gap
    short_gap_hosts: int  # hosts with a gap under half their delay
    in_window: int  # requests during a Retry-After window, all hosts
    max_in_window: int  # the most at one host
    window_hosts: int  # hosts that got any
    throttled_hosts: int  # hosts that answered 429 at least once
    refused: int  # 429 answers
    robots: int  # robots.txt fetches, all hosts
    robots_max: int  # the most robots.txt fetches at one host
    robots_repeat_hosts: int  # hosts whose robots.txt was fetched more than once
    statuses: dict[int, int]


def summarise(
    requests: list[Request], figures: Mapping[str, HostFigures], limit: int, delays: Mapping[str, float]
) -> Summary:
    """All hosts together; ``delays`` per host address (a host not in it: no delay, any gap is fine)."""
    figs = list(figures.values())
    mins = [f.min_gap for f in figs if f.min_gap is not None]
    medians = [f.median_gap for f in figs if f.median_gap is not None]
    statuses: dict[int, int] = defaultdict(int)
    for r in requests:
        statuses[r.status] += 1
    return Summary(
        hosts=len(figs),
        requests=len(requests),
        limit=limit,
        max_peak=max((f.peak for f in figs), default=0),
        hosts_over_limit=sum(1 for f in figs if f.peak > limit),
        min_gap=min(mins) if mins else None,
        median_gap=statistics.median(medians) if medians else None,
        short_gap_hosts=sum(1 for f in figs if f.min_gap is not None and f.min_gap < delays.get(f.host, 0.0) / 2),
        in_window=sum(f.in_window for f in figs),
        max_in_window=max((f.in_window for f in figs), default=0),
        window_hosts=sum(1 for f in figs if f.in_window),
        throttled_hosts=sum(1 for f in figs if f.refused),
        refused=sum(f.refused for f in figs),
        robots=sum(f.robots for f in figs),
        robots_max=max((f.robots for f in figs), default=0),
        robots_repeat_hosts=sum(1 for f in figs if f.robots > 1),
        statuses=dict(sorted(statuses.items())),
    )


def time_to_share(requests: list[Request], since: float, share: float) -> float | None:
    """Seconds from ``since`` until ``share`` of the requests had been answered (their finish times)."""
    ends = sorted(r.end for r in requests)
    if not ends:
        return None
    k = max(0, min(len(ends) - 1, int(len(ends) * share + 0.999999) - 1))
    return ends[k] - since


def worst_hosts(figures: Mapping[str, HostFigures], n: int = 3) -> list[HostFigures]:
    """The hosts with the highest peak, then the most requests: where a budget is tested hardest."""
    return sorted(figures.values(), key=lambda f: (-f.peak, -f.requests, f.host))[:n]


def _fmt(x: float | None, unit: float = 1.0, digits: int = 3) -> str:
    return "-" if x is None else f"{x * unit:.{digits}f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Per-host politeness from a realweb.py request log.")
    parser.add_argument("log", type=Path)
    parser.add_argument("--limit", type=int, default=2, help="the crawl's per-host concurrency limit")
    parser.add_argument("--delay", type=float, default=0.0, help="the crawl's DOWNLOAD_DELAY, for every host")
    args = parser.parse_args(argv)
    requests = read_log(args.log)
    figures = by_host(requests)
    s = summarise(requests, figures, args.limit, dict.fromkeys(figures, args.delay))
    for field_name in Summary.__slots__:
        print(f"{field_name}: {getattr(s, field_name)}")
    for f in worst_hosts(figures, 5):
        print(
            f"{f.host}: {f.requests} requests, peak {f.peak}, gaps min {_fmt(f.min_gap)} s median "
            f"{_fmt(f.median_gap)} s, {f.in_window} in a Retry-After window, robots.txt {f.robots}"
        )


if __name__ == "__main__":
    main()
