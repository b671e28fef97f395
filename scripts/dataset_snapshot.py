"""Crawl the demo web and the 198 benchmark feeds; dump every table, canonicalised, for a before/after diff.

    .venv/bin/python scripts/dataset_snapshot.py DEST_DIR [-s NAME=VALUE ...]
        # writes DEST_DIR/demo.txt and DEST_DIR/bench.txt; the -s settings go to both crawls

Run it before and after a refactor (the old commit in a `git worktree`, with `PYTHONPATH` pointing at it)
and `diff -r` the two folders: every row of every table, sorted, with timestamps, job ids, the server's
address and temporary paths taken out. Fixed ports keep the URLs the same from run to run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds

try:
    from crawler.demo.routes import Web
    from crawler.demo.webserver import WebServer, demo_seeds, demo_site_root
except ImportError:  # commits before the routing table had its own module (crawler/demo/routes.py)
    try:
        from crawler.demo.webserver import Web, WebServer, demo_seeds, demo_site_root  # type: ignore[attr-defined,no-redef]
    except ImportError:  # commits before the folders were reorganised
        from crawler.webserver import Web, WebServer, demo_seeds, demo_site_root  # type: ignore[no-redef,import-not-found]

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "benchmark_feeds"
# A table an older commit does not write is dumped as "missing".
TABLES = ["feeds", "items", "element_usage", "links", "pages", "conformance", "fetch_log"]


def dump(out: Path, dest: Path, base: str) -> None:
    """Every table under ``out`` as sorted JSON lines, without the columns that change from run to run."""
    work = str(out.parent)
    with dest.open("w") as fh:
        for table in TABLES:
            if not (out / table).exists():
                fh.write(f"## {table} missing\n")
                continue
            tab = ds.dataset(out / table, format="parquet", partitioning="hive").to_table()
            keep = [f.name for f in tab.schema if not pa.types.is_timestamp(f.type) and f.name != "job_id"]
            lines = sorted(
                json.dumps(row, sort_keys=True, default=str).replace(base, "{BASE}").replace(work, "{WORK}")
                for row in tab.select(keep).to_pylist()
            )
            fh.write(f"## {table} {len(lines)} rows\n")
            fh.writelines(line + "\n" for line in lines)


def crawl(args: list[str], out: Path) -> None:
    settings = ["-s", "AUTOTHROTTLE_ENABLED=False", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8", *sys.argv[2:]]
    command = [sys.executable, "-m", "crawler.cli", "crawl", *args, "--out", str(out), "--job-id", "snap", *settings]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    print(f"crawl into {out}: exit {proc.returncode}", file=sys.stderr)


def main() -> None:
    dest = Path(sys.argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp())
    web = Web()
    web.add_dir(demo_site_root())
    with WebServer(web, port=18765) as server:
        (work / "seeds.txt").write_text("\n".join(demo_seeds(server.url)) + "\n")
        crawl(["--seeds", str(work / "seeds.txt")], work / "demo")
        dump(work / "demo", dest / "demo.txt", server.url)
    web = Web()
    web.add_dir(CORPUS, prefix="/bench/")
    with WebServer(web, port=18766) as server:
        urls = [
            a
            for f in sorted(CORPUS.iterdir())
            if f.suffix not in (".tsv", ".md")
            for a in ("--url", f"{server.url}/bench/{f.name}")
        ]
        crawl([*urls, "--no-reflexive"], work / "bench")
        dump(work / "bench", dest / "bench.txt", server.url)


if __name__ == "__main__":
    main()
