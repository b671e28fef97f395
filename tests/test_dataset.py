"""Runs accumulate: a second crawl into the same --out adds a partition and leaves the first alone."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from crawler.demo.webserver import demo_seeds
from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.store import list_jobs, open_table
from schemas.tables import TABLES
from tests.conftest import QUICK_CRAWL, run_cli


def crawl(seeds: Path, out: Path, *job: str) -> None:
    args = ["crawl", "--seeds", str(seeds), "--out", str(out), "--log-level", "WARNING"]
    args += [*QUICK_CRAWL, "--refetch"]  # each run writes every row, not only changes
    if job:
        args += ["--job-id", job[0]]
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr[-3000:]


def surveyed_job(stdout: str) -> str | None:
    """The job a survey report names in its title line."""
    m = re.search(r"\bjob (\S+?)[,)]?(?:\s|$)", stdout.splitlines()[0] if stdout else "")
    return m.group(1) if m else None


def tables_of(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("|")]


def files_of(out: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(out)): (p.stat().st_size, p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, demo_server: Any) -> dict[str, Any]:
    """Run "r1" crawls the whole demo web, run "r2" (later, same --out) only its first site."""
    work = tmp_path_factory.mktemp("runs")
    all_seeds, one_seed = work / "all.txt", work / "one.txt"
    seeds = demo_seeds(demo_server.url)
    all_seeds.write_text("\n".join(seeds) + "\n", encoding="utf-8")
    one_seed.write_text(seeds[0] + "\n", encoding="utf-8")
    out = work / "out"
    crawl(all_seeds, out, "r1")
    first_files = files_of(out)
    first_survey = run_cli("survey", str(out))
    crawl(one_seed, out, "r2")
    return {"out": out, "first_files": first_files, "first_survey": first_survey, "one_seed": one_seed}


def test_a_second_run_adds_a_partition_without_touching_the_first(runs: dict[str, Any]) -> None:
    out: Path = runs["out"]
    now = files_of(out)
    for path, stat in runs["first_files"].items():
        assert now.get(path) == stat, f"{path} of the first run changed"
    added = set(now) - set(runs["first_files"])
    assert added, "the second run wrote nothing"
    # Besides its partition, only the incremental-crawl index beside the dataset (docs/datasets.md).
    assert all("job_id=r2" in path or path.startswith("_state/") for path in added), sorted(added)
    assert list_jobs(str(out)) == ["r1", "r2"]
    for table in ("feeds", "items", "fetch_log"):
        assert (out / table / "job_id=r1").is_dir() and (out / table / "job_id=r2").is_dir()
        both = open_table(str(out), table).to_table()
        assert set(both.column("job_id").to_pylist()) == {"r1", "r2"}
        assert both.num_rows == sum(open_table(str(out), table, job).count_rows() for job in ("r1", "r2"))
    assert open_table(str(out), "feeds", "r2").count_rows() < open_table(str(out), "feeds", "r1").count_rows()


def test_survey_reports_the_latest_run_or_the_one_asked_for(runs: dict[str, Any]) -> None:
    out: Path = runs["out"]
    first = runs["first_survey"]
    assert first.returncode == 0 and surveyed_job(first.stdout) == "r1"
    latest = run_cli("survey", str(out))
    assert latest.returncode == 0, latest.stderr
    assert surveyed_job(latest.stdout) == "r2" and tables_of(latest.stdout) != tables_of(first.stdout)
    again = run_cli("survey", str(out), "--job", "r1")
    assert again.returncode == 0, again.stderr
    assert tables_of(again.stdout) == tables_of(first.stdout)  # the prose also lists every job in the dataset
    missing = run_cli("survey", str(out), "--job", "r9")
    assert missing.returncode == 2 and "no job 'r9'" in missing.stderr and "r1, r2" in missing.stderr


def test_the_default_job_id_is_the_utc_start_time(runs: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "out"
    crawl(runs["one_seed"], out)
    (job,) = list_jobs(str(out))
    assert re.fullmatch(r"20\d{6}T\d{6}Z", job), job
    for table in TABLES:
        partitions = [p.name for p in (out / table).iterdir()] if (out / table).exists() else []
        assert partitions in ([], [f"job_id={job}"]), table
        if partitions:
            assert not list((out / table / partitions[0]).glob(".*")), "a finished run left hidden files"
    survey = run_cli("survey", str(out))
    assert survey.returncode == 0 and surveyed_job(survey.stdout) == job


def test_latest_run_is_the_one_started_last_whatever_its_name(tmp_path: Path) -> None:
    for job in ("zzz-first", "aaa-second"):
        w = DatasetWriter(str(tmp_path), job)
        w.write("fetch_log", [{"url": "http://x/", "outcome": "page", "fetched_at": datetime.now(UTC)}])
        w.close()
        time.sleep(0.05)
    assert list_jobs(str(tmp_path)) == ["zzz-first", "aaa-second"]


def test_a_gcs_output_gives_up_within_its_retry_limit() -> None:
    """pyarrow's Google Cloud Storage client retries for minutes by default, deaf to Ctrl-C (on a machine
    without credentials ``--out gs://...`` seemed to hang): the dataset's URI gets a limit unless it has one."""
    from datetime import timedelta

    from pipelines.dataset.store import GCS_RETRY_LIMIT_SECONDS, resolve_root, with_gcs_retry_limit

    assert with_gcs_retry_limit("gs://b/x") == f"gs://b/x?retry_limit_seconds={GCS_RETRY_LIMIT_SECONDS}"
    assert (
        with_gcs_retry_limit("gs://b/x?scheme=http")
        == f"gs://b/x?scheme=http&retry_limit_seconds={GCS_RETRY_LIMIT_SECONDS}"
    )
    assert with_gcs_retry_limit("gs://b/x?retry_limit_seconds=300") == "gs://b/x?retry_limit_seconds=300"
    assert with_gcs_retry_limit("s3://b/x") == "s3://b/x"
    fs, path = resolve_root("gs://b/x")  # no request is made until the first file operation
    reduced = fs.__reduce__()  # (constructor, args): a str only for a module-level object
    assert isinstance(reduced, tuple)
    assert path == "b/x" and reduced[1][0]["retry_time_limit"] == timedelta(seconds=GCS_RETRY_LIMIT_SECONDS)
