"""What the conformance checks cost per feed format, for several source trees side by side.

    .venv/bin/python benchmarks/bench_checks_by_format.py [--turns 3] [--rounds 5] TREE [TREE ...]

    git archive 9e0f9da | tar -x -C benchmarks/.work/before     # an old tree to compare with (once)
    .venv/bin/python benchmarks/bench_checks_by_format.py benchmarks/.work/before .

Each tree parses the 198 benchmark feeds once (``parse_feed(..., with_notes=True)``), then times
``check_feed`` on every feed, summed per format (``rss``, ``atom``, ``rdf``), in CPU time (``process_time``:
steadier than wall time on a shared machine), keeping each format's best of ``--rounds`` rounds. Every
turn starts one fresh child process per tree (``sys.path[0]`` = the tree), the trees taking turns, and the
table lists every turn, so the spread shows. ``bench_stages.py`` times the whole per-feed path; this splits
its checks stage by format, to tell the cost of Atom rules from that of RSS ones.

A measurement tool, to be run on a quiet machine: never a timed test.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FEEDS = REPO.parent / "shared" / "corpus" / "benchmark_feeds"
FORMATS = ("rss", "atom", "rdf")


def child(tree: Path, rounds: int) -> dict[str, float]:
    """In a child process whose sys.path[0] is ``tree``: format -> best summed check_feed CPU seconds."""
    import pipelines
    from pipelines.document.checks import check_feed
    from pipelines.document.feedparse import parse_feed

    where = Path(pipelines.__file__).resolve()
    if not where.is_relative_to(tree.resolve()):
        sys.exit(f"bench_checks_by_format: pipelines came from {where}, not from {tree}")
    parsed = []
    for path in sorted(p for p in FEEDS.iterdir() if p.name != "manifest.tsv"):
        body = path.read_bytes()
        result = parse_feed(
            body, "http://www.example.com/feed.xml", {"content-type": "application/xml"}, with_notes=True
        )
        parsed.append((str(result.format), body, result))
    best: dict[str, float] = {}
    for _ in range(rounds):
        spent: dict[str, float] = {}
        for fmt, body, result in parsed:
            started = time.process_time()
            check_feed(result.root, format=result.format, body=body, notes=result.notes)
            spent[fmt] = spent.get(fmt, 0.0) + time.process_time() - started
        for fmt, seconds in spent.items():
            best[fmt] = min(best.get(fmt, seconds), seconds)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trees", nargs="+", metavar="TREE", help="a source tree of the project")
    ap.add_argument("--turns", type=int, default=3, help="fresh child processes per tree, taking turns (default 3)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per child, the best one kept (default 5)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(Path(args.trees[0]), args.rounds)))
        return
    print("| turn | tree | " + " | ".join(f"{fmt} ms" for fmt in FORMATS) + " |")
    print("|---|---|" + "---|" * len(FORMATS))
    for turn in range(1, args.turns + 1):
        for tree in args.trees:
            root = str(Path(tree).resolve())
            done = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--child", "--rounds", str(args.rounds), root],
                capture_output=True,
                text=True,
                cwd=root,
                env={"PYTHONPATH": root, "PATH": ""},
                check=False,
            )
            if done.returncode != 0:
                sys.exit(f"bench_checks_by_format: {tree}: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
            best = json.loads(done.stdout)
            cells = " | ".join(str(round(1000 * best.get(fmt, 0.0))) for fmt in FORMATS)
            print(f"| {turn} | {tree} | {cells} |", flush=True)


if __name__ == "__main__":
    main()
