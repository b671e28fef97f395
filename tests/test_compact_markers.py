"""`feedcensus compact` and the commit markers (`_commits/`): none left for merged commits, runs still in order.

Two real crawls of the demo web, written in many small commits, into one
root. The first run has the greater job id, so only the markers' times can
tell which ran first.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.compact import compact_dataset
from pipelines.dataset.markers import RUNNING_MARKER
from pipelines.dataset.store import list_jobs, open_table
from schemas.tables import TABLES
from tests.conftest import QUICK_CRAWL, copy_dataset, demo_seeds_file, run_cli

FIRST, SECOND = "zz-first", "aa-second"


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory, demo_server: Any) -> Path:
    work = tmp_path_factory.mktemp("markers")
    seeds = demo_seeds_file(work, demo_server)
    out = work / "out"
    for job in (FIRST, SECOND):
        proc = run_cli(
            "crawl", "--seeds", str(seeds), "--out", str(out), "--job-id", job, "--log-level", "WARNING",
            *QUICK_CRAWL, "-s", "FEEDCENSUS_BATCH_ROWS=5",
            "--refetch",  # the second run writes everything again, not only what changed
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
    # The runs started hours ago, the first before the second.
    now = time.time()
    for job, age in ((FIRST, 7200), (SECOND, 3600)):
        for i, marker in enumerate(sorted(commit_dir(out, job).iterdir())):
            os.utime(marker, (now - age + i, now - age + i))
    return out


@pytest.fixture
def dataset(two_runs: Path, tmp_path: Path) -> Path:
    return copy_dataset(two_runs, tmp_path / "out")


def commit_dir(out: Path, job: str) -> Path:
    return out / "_commits" / f"job_id={job}"


def marker_stems(out: Path, job: str) -> set[str]:
    return {p.name.removesuffix(".json") for p in commit_dir(out, job).glob("*.json")}


def part_stems(out: Path, job: str) -> set[str]:
    """The commit each part file of a run belongs to (``part-<seq>-<token>.parquet``)."""
    return {
        p.name.removeprefix("part-").removesuffix(".parquet")
        for table in TABLES
        for p in (out / table / f"job_id={job}").glob("part-*.parquet")
    }


def row_counts(out: Path, job: str) -> dict[str, int]:
    return {t: open_table(str(out), t, job).count_rows() for t in TABLES}


def test_the_crawls_left_many_commits(two_runs: Path) -> None:
    for job in (FIRST, SECOND):
        assert len(marker_stems(two_runs, job)) > 5
        assert marker_stems(two_runs, job) == part_stems(two_runs, job)
    assert list_jobs(str(two_runs)) == [FIRST, SECOND]


def test_compact_leaves_no_markers_of_the_commits_it_merged(dataset: Path) -> None:
    second_markers = sorted(commit_dir(dataset, SECOND).iterdir())
    second_state = [(p.name, p.read_bytes(), p.stat().st_mtime_ns) for p in second_markers]
    before = row_counts(dataset, FIRST)

    proc = run_cli("compact", str(dataset), "--job", FIRST)
    assert proc.returncode == 0, proc.stderr

    # Each marker left names files that exist: one per compacted file, nothing for the commits merged away.
    assert marker_stems(dataset, FIRST) == part_stems(dataset, FIRST)
    assert len(marker_stems(dataset, FIRST)) == len(TABLES)
    assert row_counts(dataset, FIRST) == before
    # The other run is untouched, markers included.
    assert [(p.name, p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(commit_dir(dataset, SECOND).iterdir())] == (
        second_state
    )


def test_runs_keep_their_order_after_compaction(dataset: Path) -> None:
    compact_dataset(str(dataset), FIRST)
    assert list_jobs(str(dataset)) == [FIRST, SECOND]
    compact_dataset(str(dataset))
    assert list_jobs(str(dataset)) == [FIRST, SECOND]
    for table in TABLES:
        assert list_jobs(str(dataset), table) == [FIRST, SECOND], table
    # the survey reports the latest run by default: the second, whose id sorts first
    proc = run_cli("survey", str(dataset))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"# Feed survey: job {SECOND},"), proc.stdout[:200]


def test_a_resume_after_compaction_keeps_every_row(dataset: Path) -> None:
    before = row_counts(dataset, FIRST)
    compact_dataset(str(dataset), FIRST)
    seqs = [int(stem.split("-", 1)[0]) for stem in marker_stems(dataset, FIRST)]
    writer = DatasetWriter(str(dataset), FIRST, resume=True)  # deletes files no marker names
    assert row_counts(dataset, FIRST) == before
    assert writer.take() is None
    writer.write("conformance", [{"feed_url": "u", "rule": "r", "severity": "error", "scope": "channel", "count": 1}])
    writer.close()
    assert row_counts(dataset, FIRST)["conformance"] == before["conformance"] + 1
    new = marker_stems(dataset, FIRST) - {f"{s:06d}" for s in seqs}
    assert max(int(stem.split("-", 1)[0]) for stem in new) > max(seqs)


def test_markers_of_a_partition_left_alone_stay(dataset: Path) -> None:
    """A partition skipped (a crawl writing it) keeps its files, so the markers naming them stay."""
    running = dataset / "items" / f"job_id={SECOND}"
    (running / RUNNING_MARKER).write_text("{}", encoding="utf-8")
    items_commits = {p.name.removeprefix("part-").removesuffix(".parquet") for p in running.glob("part-*.parquet")}
    before = row_counts(dataset, SECOND)
    result = compact_dataset(str(dataset), SECOND)
    assert [p.table for p in result.partitions if p.skipped] == ["items", "workers"]  # workers: one file, compact
    stems = marker_stems(dataset, SECOND)
    assert items_commits <= stems
    assert stems == part_stems(dataset, SECOND)
    for stem in items_commits:  # the old markers still list every table of their commit
        assert "items" in json.loads((commit_dir(dataset, SECOND) / f"{stem}.json").read_text())["files"]
    DatasetWriter(str(dataset), SECOND, resume=True)
    assert row_counts(dataset, SECOND) == before
