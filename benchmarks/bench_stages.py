"""Benchmark 10: the per-feed document path stage by stage, for several source trees side by side.

    .venv/bin/python benchmarks/bench_stages.py [--rounds 5] [--without-identity] TREE [TREE ...]

    git worktree add /tmp/before d221c6b       # an old tree to compare with (once)
    .venv/bin/python benchmarks/bench_stages.py --rounds 5 /tmp/before .

``run_all.py --only stages`` compares this tree with :data:`BEFORE` (the last commit before the
architecture refactor of issue 10), extracted with ``git archive`` into ``benchmarks/.work``.

For every tree, over the 198 benchmark feeds: parse (``parse_feed(..., with_notes=True)``), checks
(``check_feed``), free (dropping the tree), rows (``feed_rows``) and arrow (one ``RecordBatch`` per table),
each summed over the feeds of a round; fastfeedparser.parse is timed over the same bodies in the same
process, so each tree also gets the ratio "fastfeedparser / our total". It prints a Markdown table of
medians, with the rows produced per table, so a refactor can show with figures that parsing is no slower
and that the trees produce the same rows.

Every round starts one fresh child process per tree (``--child``, with ``sys.path[0]`` = the tree), the
trees taking turns: round 1 A, B, round 2 A, B... Machine load drifts; alternating spreads the drift
over all trees instead of charging it to the last one. Each child does one warm-up round, not counted.

The pitfall: the venv's editable install of the project (a meta-path finder in site-packages) finds any
module an old tree lacks in the installed tree instead, silently mixing two trees in one measurement. A
child therefore refuses (exit 2, one line naming the stray module) when a loaded ``pipelines``,
``schemas`` or ``crawler`` module is not inside its tree. Old module names are tried before the new ones
for the same reason.

``--without-identity`` makes the parser's per-item identity step (``_identify``: content hash, identity,
body lengths; work added after the refactor) a no-op, to tell the cost of new work from the cost of the
code's shape. Trees without ``_identify`` are measured as they are, and the output says so.

A measurement tool, to be run on a quiet machine: never a timed test.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
FEEDS = REPO.parent / "shared" / "corpus" / "benchmark_feeds"
#: The last commit before issue 10's refactor (folders, one writer, table-driven parser): the "before".
BEFORE = "d221c6b"
STAGES = ("parse", "checks", "free", "rows", "arrow")
PACKAGES = ("pipelines", "schemas", "crawler")
# Each module the path uses, old name first: a new name looked for in an old tree is found in /work/main.
MODULES = {
    "feedparse": ("pipelines.feedparse", "pipelines.document.feedparse"),
    "checks": ("pipelines.checks", "pipelines.document.checks"),
    "rows": ("pipelines.rows", "pipelines.document.rows"),
    "items": ("crawler.items", "schemas.items"),
    "tables": ("schemas.tables",),
}


class Fail(Exception):
    """A one-line error for stderr; the exit code is 2."""


def load_bodies() -> list[tuple[str, bytes]]:
    return [(f.name, f.read_bytes()) for f in sorted(FEEDS.iterdir()) if f.name != "manifest.tsv"]


def import_first(names: tuple[str, ...]) -> ModuleType:
    """The first of ``names`` that exists; a module that exists but fails to import is an error."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError as e:
            if not (e.name and (name == e.name or name.startswith(f"{e.name}."))):
                raise Fail(f"importing {name}: {e}") from None
    raise Fail(f"none of {', '.join(names)} can be imported")


def check_strays(tree: Path) -> None:
    """Fail when a loaded project module comes from outside ``tree`` (the editable install's finder)."""
    strays = []
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] in PACKAGES:
            file = getattr(mod, "__file__", None)
            places = [file] if file else list(getattr(mod, "__path__", []))
            strays += [f"{name} ({p})" for p in places if not Path(p).resolve().is_relative_to(tree)]
    if strays:
        more = f" and {len(strays) - 1} more" if len(strays) > 1 else ""
        raise Fail(f"stray module {strays[0]}{more}: not inside {tree}")


def one_round(mods: dict[str, ModuleType], bodies: list[tuple[str, bytes]], schemas: dict[str, Any]) -> dict[str, Any]:
    """One pass over the feeds: the seconds of each stage, and the rows made per table."""
    parse, check, make_rows = mods["feedparse"].parse_feed, mods["checks"].check_feed, mods["rows"].feed_rows
    with_version = "version" in inspect.signature(check).parameters
    t = dict.fromkeys(STAGES, 0.0)
    rows: dict[str, list[Any]] = {}
    for name, body in bodies:
        url = f"https://bench.example/{name}"
        headers = {"content-type": "application/rss+xml"}
        doc = mods["items"].FeedDocument(
            url=url, final_url=url, status=200, headers=headers, body=body, discovered_via="url", source=None, depth=0
        )
        t0 = time.perf_counter()
        parsed = parse(doc.body, doc.final_url, doc.headers, with_notes=True)
        t1 = time.perf_counter()
        findings: list[Any] = []
        if parsed.root is not None:
            extra = {"version": parsed.version} if with_version else {}
            findings = check(parsed.root, format=parsed.format, body=doc.body, now=None, notes=parsed.notes, **extra)
        t2 = time.perf_counter()
        parsed.root = parsed.notes = None
        t3 = time.perf_counter()
        for table, table_rows in make_rows(doc, parsed, findings).rows.items():
            rows.setdefault(table, []).extend(table_rows)
        t4 = time.perf_counter()
        for stage, seconds in zip(STAGES[:4], (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            t[stage] += seconds
    t0 = time.perf_counter()
    for table, table_rows in rows.items():
        pa.RecordBatch.from_pylist(table_rows, schema=schemas[table])
    t["arrow"] = time.perf_counter() - t0
    return {**t, "rows_out": {table: len(r) for table, r in rows.items()}}


def time_ffp(bodies: list[tuple[str, bytes]]) -> float:
    ffp = importlib.import_module("fastfeedparser")
    t0 = time.perf_counter()
    for _, body in bodies:
        with contextlib.suppress(Exception):
            ffp.parse(body)
    return time.perf_counter() - t0


def child(tree: Path, without_identity: bool) -> None:
    """Import the path from ``tree`` alone, warm up, time one round, print it as one JSON line."""
    sys.path[0] = str(tree)
    mods = {role: import_first(names) for role, names in MODULES.items()}
    check_strays(tree)
    feedparse: Any = mods["feedparse"]
    # the module whose item reader calls _identify: the module itself, or (since issue 38) the package's read.py
    feedparse = sys.modules.get(feedparse.__name__ + ".read", feedparse)
    identity = "absent"
    if hasattr(feedparse, "_identify"):
        identity = "off" if without_identity else "on"
        if without_identity:
            feedparse._identify = lambda it, r: None
    schemas = {table: mods["tables"].arrow_schema(table) for table in mods["tables"].TABLES}
    bodies = load_bodies()
    one_round(mods, bodies, schemas)  # warm-up: lazy imports, caches
    time_ffp(bodies)
    gc.collect()
    result = one_round(mods, bodies, schemas)
    result["ffp"] = time_ffp(bodies)
    check_strays(tree)  # again: the round may have imported more
    print(json.dumps({"tree": str(tree), "identity": identity, **result}))


def run_child(tree: Path, without_identity: bool) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", str(tree), *(["--without-identity"] if without_identity else [])]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"]
        raise Fail(f"{tree}: {lines[-1].removeprefix('bench_stages: ')}")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def label(tree: Path, identity: str) -> str:
    """The tree's path, and its commit when it is the top of a git checkout (``+changes``: tracked files
    differ from it). A tree extracted into a folder of another checkout (``before_tree``) is named by its path."""
    git = ["git", "-C", str(tree)]
    top = subprocess.run([*git, "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False)
    commit = ""
    if top.returncode == 0 and Path(top.stdout.strip()).resolve() == tree.resolve():
        proc = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
        commit = f" @ {proc.stdout.strip()}"
        if subprocess.run([*git, "diff", "--quiet", "HEAD", "--"], check=False).returncode:
            commit += "+changes"
    name = "this tree" if tree == REPO else tree.name if tree.is_relative_to(REPO) else str(tree)
    return f"{name}{commit}{' (identity off)' if identity == 'off' else ''}"


def table_row(tree: Path, runs: list[dict[str, Any]], tables: list[str]) -> str:
    ms = {key: statistics.median(r[key] for r in runs) * 1000 for key in (*STAGES, "ffp")}
    total = statistics.median(sum(r[s] for s in STAGES) for r in runs) * 1000
    counts = [str(runs[-1]["rows_out"].get(table, "-")) for table in tables]
    cells = [label(tree, runs[-1]["identity"]), *(f"{ms[s]:.0f}" for s in STAGES), f"{total:.0f}"]
    return "| " + " | ".join([*cells, f"{ms['ffp']:.0f}", f"{ms['ffp'] / total:.2f}", *counts]) + " |"


def compare(trees: list[Path], rounds: int, without_identity: bool) -> str:
    """The Markdown table of ``trees`` measured side by side (Fail when a tree cannot be measured)."""
    for tree in trees:
        if not tree.is_dir():
            raise Fail(f"{tree}: no such directory")
    bodies = load_bodies()
    load_before = os.getloadavg()
    runs: list[list[dict[str, Any]]] = [[] for _ in trees]
    for _ in range(rounds):
        for i, tree in enumerate(trees):
            runs[i].append(run_child(tree, without_identity))
    load_after = os.getloadavg()
    mb = sum(len(b) for _, b in bodies) / 1e6
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    loads = " ".join(f"{x:.2f}" for x in load_before), " ".join(f"{x:.2f}" for x in load_after)
    lines = [
        f"{rounds} rounds (medians), {len(bodies)} feeds, {mb:.1f} MB, {when} UTC, load {loads[0]} -> {loads[1]}\n"
    ]
    tables = list(dict.fromkeys(t for r in runs for t in r[-1]["rows_out"]))
    head = ["tree", *(f"{s} ms" for s in STAGES), "total ms", "ffp ms", "ffp/total", *(f"{t} rows" for t in tables)]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    lines += [table_row(tree, tree_runs, tables) for tree, tree_runs in zip(trees, runs, strict=True)]
    for tree, tree_runs in zip(trees, runs, strict=True):
        if without_identity and tree_runs[-1]["identity"] == "absent":
            lines.append(f"\n{label(tree, 'on')} has no _identify: --without-identity changes nothing there.")
    return "\n".join(lines)


def before_tree(work: Path, commit: str = BEFORE) -> Path:
    """``commit``'s source tree, extracted once into ``work`` with ``git archive`` (no worktree, no .git change);
    into a temporary folder first, renamed when whole, so an interrupted extraction is never taken for a tree."""
    tree = work / f"tree-{commit}"
    if tree.is_dir():
        return tree
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", commit, "pipelines", "schemas", "crawler"], capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise Fail(f"git archive {commit}: {archive.stderr.decode(errors='replace').strip() or 'failed'}")
    work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=work) as partial:
        subprocess.run(["tar", "-x", "-C", partial], input=archive.stdout, check=True)
        Path(partial).rename(tree)
        Path(partial).mkdir()  # for TemporaryDirectory to remove
    return tree


def run(work: Path, rounds: int = 5) -> str:
    """Benchmark 10 for run_all.py: :data:`BEFORE` and this tree, as they are and with identity off."""
    trees = [before_tree(work), REPO]
    return (
        f"As they are:\n\n{compare(trees, rounds, False)}\n\n"
        f"This tree without the per-item identity step (`--without-identity`):\n\n{compare(trees, rounds, True)}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("trees", nargs="+", metavar="TREE", help="a source tree of the project (e.g. a git worktree)")
    ap.add_argument("--rounds", type=int, default=5, help="counted rounds per tree (default 5)")
    ap.add_argument("--without-identity", action="store_true", help="make the parser's _identify a no-op")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    trees = [Path(t).resolve() for t in args.trees]
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    try:
        if args.child:
            child(trees[0], args.without_identity)
        else:
            print(compare(trees, args.rounds, args.without_identity))
    except Fail as e:
        print(f"bench_stages: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
