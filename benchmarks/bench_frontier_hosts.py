"""What the job's per-host budget costs as the hosts grow (issue 41): a take, a give-back, Redis memory.

A fresh redis-server per size. ``--requests`` requests are queued over H hosts (the same number per
host, so every host is in ``ready``), then takes of 16 with their give-backs, as a worker makes them, are
timed from this process (one round trip each, over loopback), and Redis's ``used_memory`` growth is
divided by the hosts and the requests. The claim to check: a take's cost does not grow with the
number of hosts or of queued requests (``ZRANGEBYSCORE ... LIMIT``: O(log hosts + taken)).

    python benchmarks/bench_frontier_hosts.py [--hosts 1000,10000,100000] [--requests 300000] [--takes 2000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from bench_distributed import redis_server
from common import REPO, WORK, md_table


def measure(hosts: int, takes: int, per_host: int) -> list[object]:
    sys.path.insert(0, str(REPO))
    from crawler.frontier import Frontier, Push

    with redis_server(WORK / "frontier-hosts" / f"h{hosts}") as server:
        frontier = Frontier.connect(server.url, "bench", "w1")
        frontier.register()
        frontier.set_budget(2, 0.0)
        before = int(frontier.redis.info("memory")["used_memory"])
        batch: list[Push] = []
        for h in range(hosts):
            for k in range(per_host):
                url = f"http://h{h}.example/feed{k}.xml"
                batch.append(Push(url=url, encoded="{}", fingerprint=f"{h}:{k}"))
                if len(batch) == 500:
                    frontier.push_many(batch)
                    batch = []
        if batch:
            frontier.push_many(batch)
        after = int(frontier.redis.info("memory")["used_memory"])
        queued = hosts * per_host
        times: list[float] = []
        done: list[tuple[str, float | None]] = []
        for _ in range(takes):
            started = time.perf_counter()
            got = frontier.take(16, done=done)
            times.append(time.perf_counter() - started)
            done = [(str(url.split("/")[2]), None) for url, _ in got]  # their responses came in
        frontier.close()
    times.sort()
    return [
        f"{hosts:,}",
        f"{queued:,}",
        f"{statistics.median(times) * 1000:.3f}",
        f"{times[int(len(times) * 0.99)] * 1000:.3f}",
        f"{(after - before) / queued:.0f}",
        f"{(after - before) / hosts:,.0f}",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", default="1000,10000,100000")
    parser.add_argument("--takes", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=300_000, help="requests queued, spread evenly over the hosts")
    args = parser.parse_args(argv)
    if args.takes * 16 > args.requests:
        parser.error("--takes x 16 must stay below --requests: every take must find requests")
    rows = [measure(int(h), args.takes, max(1, args.requests // int(h))) for h in args.hosts.split(",")]
    print(
        md_table(
            [
                "hosts",
                "requests queued",
                "take of 16 + give-backs, median ms",
                "p99 ms",
                "Redis bytes per request",
                "per host",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    Path(WORK).mkdir(parents=True, exist_ok=True)
    main()
