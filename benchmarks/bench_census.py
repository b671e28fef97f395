"""Benchmark 12: a census of N listed sites three ways, on the loopback census world (issue 39).

The world (``crawler/demo/censusworld.py``) with ``--sites`` listed sites and as many unlisted ones,
pages of about 10 KB and feed items of about 10 KB before compression (``filler``: 1,500 words), WARC files in Common Crawl's
layout served by ``crawler/demo/rangeserver.py``, the live web on 127.1.x.y. Three ways to a census:

1. **the peer's method** (mnot's feed-survey): every record of every WARC file. Measured here: the
   bytes of every file (what it downloads) and the CPU of reading every record with warcio in this
   process (a lower bound of its per-record work: it parses the feeds on top). Requests: one per file.
2. **today's ``feedcensus commoncrawl``**: the listed sites' feed records only (an index of those
   rows), one Range request each. Measured: a subprocess's wall and CPU, the Range requests and
   their bytes (the record lengths).
3. **archived pages + live feeds** (``commoncrawl --sites --pages 2 --live``): per listed site its
   home page and two more page records, its feed records, then the advertised feeds fetched live.
   Measured: the same, plus the live requests (robots.txt included) and the bytes of the live
   answers (fetch_log ``bytes``).

Then the figures per listed site are multiplied by the peer's 196,598 sites: computed, not measured.
The peer's cost does not depend on the list: it reads every file of the crawl.

    python benchmarks/bench_census.py [--sites 1000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from common import PYTHON, REPO, WORK, md_table, run_measured, tail

PEER_SITES = 196_598
ARGS = ("-s", "AUTOTHROTTLE_ENABLED=False", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8", "--log-level", "WARNING")


def every_record(folder: Path) -> tuple[int, int, int, float]:
    """The peer's read: (files, bytes, records, CPU seconds) for every record of every WARC file."""
    from warcio.archiveiterator import ArchiveIterator

    files = sorted(folder.rglob("*.warc.gz"))
    records = 0
    start = time.process_time()
    for path in files:
        with path.open("rb") as fh:
            for record in ArchiveIterator(fh):
                record.content_stream().read()
                records += 1
    return len(files), sum(p.stat().st_size for p in files), records, time.process_time() - start


def ranges(requests: list[tuple[str, str | None]]) -> tuple[int, int]:
    """(Range requests, bytes they asked for)."""
    asked = [r for _, r in requests if r and r.startswith("bytes=")]
    return len(asked), sum(int(b) - int(a) + 1 for a, b in (r.removeprefix("bytes=").split("-") for r in asked))


def census_run(argv: list[str], out: Path, server: Any) -> dict[str, Any]:
    from tests.conftest import read_table

    server.requests.clear()
    measured = run_measured([PYTHON, "-m", "crawler.cli", *argv, "--out", str(out), "--job-id", "b", *ARGS], cwd=REPO)
    if measured.returncode != 0:
        sys.exit(f"census failed: {tail(measured.stderr)}")
    requests, range_bytes = ranges(server.requests)
    log = read_table(out, "fetch_log").to_pylist()
    live = [r for r in log if r["discovered_via"] in ("archive-link", "robots") and r["outcome"] != "duplicate"]
    feeds = read_table(out, "feeds").to_pylist()
    return {
        "wall": measured.wall,
        "cpu": measured.cpu,
        "range_requests": requests,
        "range_bytes": range_bytes,
        "live_requests": len(live),
        "live_bytes": sum(r["bytes"] or 0 for r in live),
        "archived_feeds": sum(1 for f in feeds if f["discovered_via"] == "archive"),
        "live_feeds": sum(1 for f in feeds if f["discovered_via"] == "archive-link"),
        "advertised": len({r["url"] for r in log if r["discovered_via"] == "archive-link"}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=1000)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from crawler.demo.censusworld import open_world
    from crawler.demo.rangeserver import RangeServer

    base = WORK / "census"
    shutil.rmtree(base, ignore_errors=True)
    n = args.sites
    with open_world(base / "world", listed=n, unlisted=n, filler=1500) as world, RangeServer(world.folder) as server:
        files, total_bytes, records, read_cpu = every_record(world.folder)
        index = pq.read_table(world.index)
        listed = {line.split(",")[1] for line in world.top_list.read_text().split()}
        in_list = pc.is_in(index["url_host_registered_domain"], value_set=pa.array(sorted(listed)))
        feeds_only = index.filter(
            pc.and_(in_list, pc.equal(index["content_mime_detected"], pa.scalar("application/rss+xml")))
        )
        pq.write_table(feeds_only, base / "feeds-index.parquet")
        pq.write_table(feeds_only.slice(0, 1), base / "one-index.parquet")
        common = ["commoncrawl", "--archive-base", server.url]
        # The process's start and end, to take out of the per-record CPU: a census of one record.
        start_up = census_run([*common, "--index", str(base / "one-index.parquet")], base / "one", server)["cpu"]
        today = census_run([*common, "--index", str(base / "feeds-index.parquet")], base / "today", server)
        census = census_run(
            [*common, "--index", str(world.index), "--sites", str(world.top_list), "--pages", "2", "--live",
             "--allow-private-networks"],
            base / "census", server,
        )  # fmt: skip
        answers = world.answers
    all_feeds = sum(1 for m in index["content_mime_detected"].to_pylist() if m == "application/rss+xml")
    rows = [
        ["1. every record (peer)", files, f"{total_bytes / 1e6:.1f}", f"{all_feeds / (2 * n):.2f} (archived)",
         f"{1000 * read_cpu / records:.3f} (read only)", records],
        ["2. feed records (today)", today["range_requests"], f"{today['range_bytes'] / 1e6:.1f}",
         f"{today['archived_feeds'] / n:.2f} (archived)", f"{1000 * (today['cpu'] - start_up) / today['range_requests']:.2f}",
         today["range_requests"]],
        ["3. pages + live feeds", f"{census['range_requests']} + {census['live_requests']} live",
         f"{census['range_bytes'] / 1e6:.1f} + {census['live_bytes'] / 1e6:.1f} live",
         f"{census['advertised'] / n:.2f} advertised, {census['live_feeds'] / n:.2f} live",
         f"{1000 * (census['cpu'] - start_up) / (census['range_requests'] + census['live_requests']):.2f}",
         census["range_requests"] + census["live_requests"]],
    ]  # fmt: skip
    print(f"## census of {n} listed sites ({n} more unlisted in the archive); world answers: "
          f"{answers.with_page} with pages, {answers.advertising} advertising, {answers.archive_captured} "
          f"archive captured, {answers.live_parsed} live parsed")  # fmt: skip
    print(md_table(["method", "requests", "MB read", "feeds per listed site", "CPU ms per record", "records"], rows))
    print(f"\nwall: today {today['wall']:.1f} s, census {census['wall']:.1f} s; CPU: today {today['cpu']:.1f} s, "
          f"census {census['cpu']:.1f} s; a census of one record (start-up, taken out of the CPU per record) "
          f"{start_up:.1f} s; warcio read of every record {read_cpu:.2f} s")  # fmt: skip
    scale = PEER_SITES / n
    computed = [
        ["2. feed records (today)", f"{today['range_requests'] * scale:,.0f}",
         f"{today['range_bytes'] * scale / 1e9:.1f} GB", f"{(today['cpu'] - start_up) * scale / 3600:.2f} CPU-h"],
        ["3. pages + live feeds", f"{census['range_requests'] * scale:,.0f} + {census['live_requests'] * scale:,.0f} live",
         f"{census['range_bytes'] * scale / 1e9:.1f} + {census['live_bytes'] * scale / 1e9:.1f} GB",
         f"{(census['cpu'] - start_up) * scale / 3600:.2f} CPU-h"],
    ]  # fmt: skip
    print(f"\n## computed for the peer's {PEER_SITES:,} sites (per-site figures above x {scale:.1f})")
    print(md_table(["method", "requests", "bytes", "CPU"], computed))


if __name__ == "__main__":
    main()
