"""Run the benchmarks (issue 7, and the sections added since) and rewrite ``benchmarks/RESULTS.md``.

    /work/main/.venv/bin/python benchmarks/run_all.py            # everything, ~30-40 minutes
    /work/main/.venv/bin/python benchmarks/run_all.py --quick    # small sizes, a few minutes
    /work/main/.venv/bin/python benchmarks/run_all.py --only parse,peer

Each benchmark prints its tables as it ends. ``--only`` rewrites only the sections it ran and keeps
the others from the previous RESULTS.md (each section says when it was measured).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from analysis import ANALYSIS
from common import BENCH_DIR, WORK, machine_lines, md_table

RESULTS = BENCH_DIR / "RESULTS.md"
SECTIONS = [
    "parse",
    "crawl",
    "memory",
    "peer",
    "incremental",
    "distributed",
    "capture",
    "archive",
    "profile",
    "scaling",
    "stages",
    "figures",
    "census",
    "scale",
    "atomchecks",
]
TITLES = {
    "parse": "1. Parse path vs peers and the lxml limit",
    "crawl": "2. Crawl throughput vs raw Scrapy",
    "memory": "3. Memory as the work grows",
    "peer": "4. Against the peer survey tool",
    "incremental": "5. What a re-crawl costs (issue 12)",
    "distributed": "6. Distributed crawls: one Redis frontier, one and two processes (issue 13)",
    "capture": "7a. What WARC capture costs a crawl (issue 14)",
    "archive": "7b. Reading archives: WARC readers, replay, and the census over an index (issue 14)",
    "profile": "8. The reactor thread, with the per-feed work on it and in worker processes (issue 15)",
    "scaling": "9. Cores and document workers (issue 15)",
    "stages": "10. The per-feed path stage by stage, before the architecture refactor and now (issue 10)",
    # no runner: written by hand, kept as it is by every run
    "figures": "11. Figures that were in code comments (issue 38)",
    "census": "12. A census of listed sites three ways: every record, feed records, archived pages + live feeds (issue 39)",
    "scale": "13. Scale and politeness on a realistic web (issue 41)",
    "atomchecks": "14. What the Atom checks and the HTML security checks cost (issue 40)",
}


def section_block(name: str, body: str, when: str) -> str:
    return f"<!-- section:{name} -->\n## {TITLES[name]}\n\nMeasured {when}.\n\n{body.rstrip()}\n\n{ANALYSIS[name]}<!-- /section:{name} -->\n"


def old_sections() -> dict[str, str]:
    if not RESULTS.exists():
        return {}
    text = RESULTS.read_text()
    return {
        m.group(1): m.group(0) + "\n" for m in re.finditer(r"<!-- section:(\w+) -->.*?<!-- /section:\1 -->", text, re.S)
    }


#: Targets per section: (target, measured, met).
Targets = dict[str, list[tuple[str, str, bool]]]


def _parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """The options, and the sections to run (in the order given)."""
    parser = argparse.ArgumentParser(description="Run the benchmarks and rewrite benchmarks/RESULTS.md.")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes: parse 2 rounds, crawl 500/2,000, memory up to 5,000, peer 300, distributed 2,000",
    )
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}")
    parser.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md alone")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    return args, only


def _stamp(quick: bool) -> str:
    """When a section was measured (and whether with small sizes)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC") + (" (--quick)" if quick else "")


def _run_parse(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_parse

    print("== 1. parse", file=sys.stderr, flush=True)
    p = bench_parse.run(rounds=2 if quick else 5, feedparser_rounds=1)
    print(p.markdown)
    blocks["parse"] = section_block("parse", p.markdown, _stamp(quick))
    targets["parse"] = p.targets


def _run_crawl(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    """Benchmarks 2 and 3 share one generated web and reuse each other's runs."""
    import bench_crawl

    sizes = ([500, 2000] if quick else [1000, 10_000]) if "crawl" in only else []
    memory = ([500, 2000, 5000] if quick else [1000, 10_000, 50_000]) if "memory" in only else []
    print("== 2./3. crawl and memory", file=sys.stderr, flush=True)
    c = bench_crawl.run(sizes, memory, repeats=1 if quick else 3, shaped=bool(sizes))
    if "crawl" in only:
        print(c.markdown_crawl)
        blocks["crawl"] = section_block("crawl", c.markdown_crawl, _stamp(quick))
        targets["crawl"] = [t for t in c.targets if "bare" in t[0]]
    if "memory" in only:
        print(c.markdown_memory)
        blocks["memory"] = section_block("memory", c.markdown_memory, _stamp(quick))
        targets["memory"] = [t for t in c.targets if "RSS" in t[0]]


def _run_incremental(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_incremental

    print("== 5. incremental", file=sys.stderr, flush=True)
    _, text = bench_incremental.run()
    print(text)
    blocks["incremental"] = section_block("incremental", text, _stamp(quick))


def _run_distributed(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_distributed

    print("== 6. distributed", file=sys.stderr, flush=True)
    d = bench_distributed.run(sites=2000 if quick else 10_000, repeats=1 if quick else 2)
    print(d.markdown)
    blocks["distributed"] = section_block("distributed", d.markdown, _stamp(quick))
    targets["distributed"] = d.targets


def _run_capture(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_capture

    print("== 7a. capture", file=sys.stderr, flush=True)
    sites = 500 if quick else 2000
    text = bench_capture.markdown(bench_capture.run(sites, 1 if quick else 3), sites)
    print(text)
    blocks["capture"] = section_block("capture", text, _stamp(quick))


def _run_archive(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_archive

    print("== 7b. archive", file=sys.stderr, flush=True)
    text = bench_archive.run(500 if quick else 10_000, 1)
    print(text)
    blocks["archive"] = section_block("archive", text, _stamp(quick))


def _run_peer(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_peer

    print("== 4. peer", file=sys.stderr, flush=True)
    r = bench_peer.run(300 if quick else 1000)
    print(r.markdown)
    blocks["peer"] = section_block("peer", r.markdown, _stamp(quick))


def _run_profile(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_profile

    print("== 8. profile", file=sys.stderr, flush=True)
    text = bench_profile.run(1000 if quick else 3000)
    print(text)
    blocks["profile"] = section_block("profile", text, _stamp(quick))


def _run_stages(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_stages

    print("== 10. stages", file=sys.stderr, flush=True)
    text = bench_stages.run(WORK, rounds=3 if quick else 7)
    print(text)
    blocks["stages"] = section_block("stages", text, _stamp(quick))


def _run_scaling(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_cores

    print("== 9. scaling", file=sys.stderr, flush=True)
    text = bench_cores.scaling(2000 if quick else 10_000)
    print(text)
    blocks["scaling"] = section_block("scaling", text, _stamp(quick))


def _run_scale(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    """bench_scale.py writes its own labelled block into RESULTS.md (block "latest"); the section is kept from there."""
    import bench_scale
    import scalerig

    print("== 11. scale", file=sys.stderr, flush=True)
    if not os.access(scalerig.CGROUP_ROOT, os.W_OK):
        print(f"   skipped: needs root and a cgroup v1 CPU hierarchy at {scalerig.CGROUP_ROOT}", file=sys.stderr)
        return
    size = ["--sites", "1200", "--hosts", "1000", "--large", "30,60"] if quick else []
    result = bench_scale.main([*size, "--label", "latest"])
    targets["scale"] = result.targets


#: (sections any of which start it, runner), in the order they run.
RUNNERS: list[tuple[set[str], Callable[[list[str], bool, dict[str, str], Targets], None]]] = [
    ({"parse"}, _run_parse),
    ({"crawl", "memory"}, _run_crawl),
    ({"peer"}, _run_peer),
    ({"incremental"}, _run_incremental),
    ({"distributed"}, _run_distributed),
    ({"capture"}, _run_capture),
    ({"archive"}, _run_archive),
    ({"profile"}, _run_profile),
    ({"scaling"}, _run_scaling),
    ({"stages"}, _run_stages),
    ({"scale"}, _run_scale),
]


def _target_rows(targets: Targets, old: dict[str, str], previous: str) -> dict[str, list[list[str]]]:
    """Target rows per section: measured now, or kept from the previous RESULTS.md for a section not run."""
    by_section: dict[str, list[list[str]]] = {}
    for name in SECTIONS:
        if name in targets:
            by_section[name] = [[t, m, "met" if ok else "**MISSED**"] for t, m, ok in targets[name]]
        elif name in old:
            found = re.search(r"<!-- targets:" + name + r"\n(.*?)/targets -->", previous, re.S)
            if found and found.group(1).strip():
                by_section[name] = [row.split("\t") for row in found.group(1).strip().splitlines()]
    return by_section


def _results_text(
    argv: list[str] | None, elapsed: float, blocks: dict[str, str], by_section: dict[str, list[list[str]]]
) -> str:
    target_rows = [row for rows in by_section.values() for row in rows]
    target_md = md_table(["target", "measured", "verdict"], target_rows) if target_rows else "(none measured)"
    hidden = "".join(
        f"<!-- targets:{name}\n" + "\n".join("\t".join(r) for r in rows) + "\n/targets -->\n"
        for name, rows in by_section.items()
    )
    return (
        "# Benchmark results\n\n"
        "Written by `python benchmarks/run_all.py` (see benchmarks/README.md); do not edit by hand. "
        "Performance is judged as ratios measured in one run on the same machine.\n\n"
        "## Machine\n\n"
        + "\n".join(machine_lines())
        + f"\n- Last run: `{' '.join(['run_all.py', *(argv or sys.argv[1:])])}`, "
        f"{elapsed / 60:.1f} min\n\n## Targets\n\n{target_md}\n\n{hidden}\n"
        + "\n".join(blocks[n] for n in SECTIONS if n in blocks)
    )


def write_results(argv: list[str] | None, elapsed: float, blocks: dict[str, str], targets: Targets) -> None:
    """Rewrite RESULTS.md: the sections run now, the others kept from the previous file."""
    old = old_sections()
    for name in SECTIONS:
        if name not in blocks and name in old:
            blocks[name] = old[name]
    previous = RESULTS.read_text() if RESULTS.exists() else ""
    by_section = _target_rows(targets, old, previous)
    Path(RESULTS).write_text(_results_text(argv, elapsed, blocks, by_section))
    print(f"wrote {RESULTS}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args, only = _parse_args(argv)
    blocks: dict[str, str] = {}
    targets: Targets = {}
    started = time.monotonic()
    for sections, runner in RUNNERS:
        if sections & set(only):
            runner(only, args.quick, blocks, targets)
    elapsed = time.monotonic() - started
    print(f"== done in {elapsed / 60:.1f} min", file=sys.stderr)
    if not args.no_write:
        write_results(argv, elapsed, blocks, targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
