"""Benchmark 7b: reading WARC files back, and replaying a crawl from them (``feedcensus replay``).

The generated loopback web of benchmark 2 (``loopweb.py``): N sites, a home page advertising one
feed each, crawled once with ``--warc`` (politeness off, ``--no-reflexive``, the project's own
concurrency). Then, with the web server stopped:

* **reading**: every record of the archive read with warcio and with fastwarc (payloads of the
  response records read in full), in this process, alternating; CPU seconds (``process_time``).
* **index**: ``crawler.archive.read.build_index`` (what a replay does before it starts).
* **replay**: ``feedcensus replay`` of the archive into a fresh dataset (same options as the
  crawl), a subprocess: wall, CPU, MB of WARC per CPU-second (= per core: a replay is one
  process on one core) and records served per second. The crawl's own CPU is the same-run yardstick.
* **replay on two processes**: ``replay --frontier`` and one ``worker --replay`` on a fresh
  redis-server (``tests/redisserver.py``), side by side: wall of the pair vs one replay.
* **commoncrawl**: an index of the capture's feed records (from its ``fetch_log``, in Common
  Crawl's columns), each record fetched by a Range request from a local server
  (``crawler/demo/rangeserver.py``): wall, CPU per record (docs/common-crawl.md turns it into the
  cost of a full crawl).

The machine is shared: compare the ratios within one run, not absolute figures across runs.

    python benchmarks/bench_archive.py [--sites 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from bench_crawl import CONCURRENCY, CRAWL_DIR, POLITENESS_OFF, Web, measure, settings_args, write_inputs
from common import FEEDCENSUS, Measured, md_table, median, run_measured, tail


def read_warcio(path: Path) -> int:
    from warcio.archiveiterator import ArchiveIterator

    n = 0
    with path.open("rb") as fh:
        for record in ArchiveIterator(fh):
            record.raw_stream.read()
            n += 1
    return n


def read_fastwarc(path: Path) -> int:
    from fastwarc.warc import ArchiveIterator

    n = 0
    with path.open("rb") as fh:
        for record in ArchiveIterator(fh, parse_http=True):
            record.reader.read()
            n += 1
    return n


def index_ours(path: Path) -> int:
    from crawler.archive.read import build_index

    return build_index([path]).records


def cpu_of(fn: Callable[[Path], int], path: Path) -> tuple[float, int]:
    start = time.process_time()
    records = fn(path)
    return time.process_time() - start, records


def capture(sites: int) -> tuple[Path, Path, float]:
    """Crawl the loop web once with --warc; (the WARC file, the seeds file, the crawl's CPU seconds)."""
    base = CRAWL_DIR / f"archive-n{sites}"
    shutil.rmtree(base, ignore_errors=True)
    web = Web(sites)
    try:
        seeds, _ = write_inputs(web, sites)
        argv = [FEEDCENSUS, "crawl", "--seeds", str(seeds), "--out", str(base / "live"), "--warc", str(base / "warc")]
        argv += ["--no-reflexive", "--log-level", "WARNING", *settings_args({**POLITENESS_OFF, **CONCURRENCY})]
        run = measure(web, "ours+warc", sites, argv)
    finally:
        web.stop()
    if not run.valid:
        raise SystemExit(f"the capture crawl failed:\n{tail(run.m.stderr)}")
    [warc] = sorted((base / "warc").glob("*.warc.gz"))
    return warc, seeds, run.m.cpu


def replay(warc: Path, sites: int) -> tuple[Measured, int]:
    out = CRAWL_DIR / f"archive-n{sites}" / "replayed"
    shutil.rmtree(out, ignore_errors=True)
    argv = [FEEDCENSUS, "replay", str(warc), "--out", str(out), "--no-reflexive", "--log-level", "WARNING"]
    m = run_measured(argv + settings_args(CONCURRENCY))
    found = re.search(r"replay: (\d+) records served", m.stderr)
    if m.returncode != 0 or found is None:
        raise SystemExit(f"the replay failed:\n{tail(m.stderr)}")
    return m, int(found.group(1))


def replay_shared(warc: Path, sites: int) -> tuple[float, float, int]:
    """``replay --frontier`` and one ``worker --replay`` side by side on a fresh redis-server:
    (wall of the pair, CPU of both, responses the worker served)."""
    from bench_distributed import _measure_all, redis_server

    base = CRAWL_DIR / f"archive-n{sites}"
    out = base / "replayed-shared"
    shutil.rmtree(out, ignore_errors=True)
    server = redis_server(base / "redis")
    try:
        common = ["--out", str(out), "--job-id", "shared", "--no-reflexive", *settings_args(CONCURRENCY)]
        coordinator = [FEEDCENSUS, "replay", str(warc), "--frontier", server.url, "--log-file", str(base / "c.log")]
        worker = [FEEDCENSUS, "worker", "--frontier", server.url, "--job", "shared", "--replay", str(warc)]
        procs, wall = _measure_all(
            [
                ("coordinator", [*coordinator, *common], base / "c.log"),
                ("worker", [*worker, "--log-file", str(base / "w.log"), "--wait", "120", *common], base / "w.log"),
            ]
        )
    finally:
        server.stop()
    if any(p.m.returncode != 0 for p in procs):
        raise SystemExit(f"the shared replay failed:\n{tail(procs[0].m.stderr)}\n{tail(procs[1].m.stderr)}")
    found = re.search(r"responses: (\d+)", procs[1].m.stderr)
    return wall, sum(p.m.cpu for p in procs), int(found.group(1)) if found else 0


def by_index(sites: int) -> tuple[Measured, int, float]:
    """``feedcensus commoncrawl`` over an index of the capture's feed records, each fetched by a Range
    request from a local server: (the run, records fetched, mean record length in bytes)."""
    import pyarrow as pa
    import pyarrow.dataset as pads
    import pyarrow.parquet as pq

    from crawler.demo.rangeserver import RangeServer

    base = CRAWL_DIR / f"archive-n{sites}"
    log = pads.dataset(base / "live" / "fetch_log", format="parquet", partitioning="hive").to_table().to_pylist()
    rows = [
        {
            "url": r["final_url"],
            "warc_filename": r["warc_filename"],
            "warc_record_offset": r["warc_record_offset"],
            "warc_record_length": r["warc_record_length"],
            "content_mime_detected": "application/rss+xml",
        }
        for r in log
        if r["outcome"] == "feed" and r["warc_filename"]
    ]
    index = base / "index.parquet"
    pq.write_table(pa.Table.from_pylist(rows), index)
    out = base / "from-index"
    shutil.rmtree(out, ignore_errors=True)
    with RangeServer(base / "warc") as server:
        argv = [FEEDCENSUS, "commoncrawl", "--index", str(index), "--archive-base", server.url, "--out", str(out)]
        m = run_measured([*argv, "--log-level", "WARNING", *settings_args({**POLITENESS_OFF, **CONCURRENCY})])
    if m.returncode != 0:
        raise SystemExit(f"the census over the index failed:\n{tail(m.stderr)}")
    return m, len(rows), sum(r["warc_record_length"] for r in rows) / max(len(rows), 1)


def run(sites: int, repeats: int) -> str:
    """Capture, reading, replay and the census over an index; the Markdown of all four."""
    warc, _, crawl_cpu = capture(sites)
    mb = warc.stat().st_size / 1e6
    reads: dict[str, list[float]] = {"warcio": [], "fastwarc": [], "index (ours, fastwarc)": []}
    records = 0
    for _ in range(repeats):
        for name, fn in (("warcio", read_warcio), ("fastwarc", read_fastwarc), ("index (ours, fastwarc)", index_ours)):
            cpu, records = cpu_of(fn, warc)
            reads[name].append(cpu)
    replays = [replay(warc, sites) for _ in range(repeats)]
    shared = [replay_shared(warc, sites) for _ in range(repeats)]
    indexed = [by_index(sites) for _ in range(repeats)]
    out = [f"archive: {mb:.1f} MB, {records} records; {sites} sites crawled with --warc in {crawl_cpu:.1f} s CPU\n"]
    base = median(reads["warcio"])
    rows: list[list[object]] = []
    for name, cpus in reads.items():
        cpu = median(cpus)
        rows.append([name, f"{cpu:.3f}", f"{mb / cpu:.0f}", f"{records / cpu:,.0f}", f"{base / cpu:.1f}x"])
    out.append(md_table(["reading all records", "CPU s (median)", "MB/s per core", "records/s", "vs warcio"], rows))
    cpu = median([m.cpu for m, _ in replays])
    wall = median([m.wall for m, _ in replays])
    served = replays[0][1]
    out.append(
        md_table(
            ["replay", "wall s", "CPU s", "MB/s per core", "records/s (wall)", "records/s per core", "CPU vs crawl"],
            [
                [
                    f"{sites} sites, {served} responses",
                    f"{wall:.1f}",
                    f"{cpu:.1f}",
                    f"{mb / cpu:.2f}",
                    f"{served / wall:,.0f}",
                    f"{served / cpu:,.0f}",
                    f"{cpu / crawl_cpu:.2f}x",
                ]
            ],
        )
    )
    out.append(
        f"Reading is {median(reads['fastwarc']) / cpu:.1%} (fastwarc) or {base / cpu:.1%} (warcio) of a replay's CPU."
    )
    shared_wall = median([w for w, _, _ in shared])
    out.append(
        f"Replay on two processes (`replay --frontier` + one `worker --replay`, a fresh redis-server): "
        f"{shared_wall:.1f} s wall, {median([c for _, c, _ in shared]):.1f} s CPU of both, the worker served "
        f"{shared[0][2]} of the {served} responses; **{wall / shared_wall:.2f}x** one replay's rate."
    )
    cc_cpu = median([m.cpu for m, _, _ in indexed])
    cc_wall = median([m.wall for m, _, _ in indexed])
    _, fetched, mean_length = indexed[0]
    out.append(
        md_table(
            [
                "commoncrawl (Range requests to 127.0.0.1)",
                "wall s",
                "CPU s",
                "records/s (wall)",
                "CPU ms per record",
                "mean record KB",
            ],
            [
                [
                    f"{fetched} feed records",
                    f"{cc_wall:.1f}",
                    f"{cc_cpu:.1f}",
                    f"{fetched / cc_wall:,.0f}",
                    f"{cc_cpu / fetched * 1000:.2f}",
                    f"{mean_length / 1000:.1f}",
                ]
            ],
        )
    )
    return "\n\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sites", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    print(run(args.sites, args.repeats))


if __name__ == "__main__":
    main()
