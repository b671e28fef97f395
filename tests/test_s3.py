"""--out on S3: a crawl of the demo web written to a moto S3 server on 127.0.0.1 and read back."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import duckdb
import pyarrow.dataset as ds
import pyarrow.fs as pafs
import pytest

from pipelines.dataset.compact import compact_dataset
from pipelines.dataset.store import list_jobs, open_table
from schemas.tables import SCHEMA_VERSION, TABLES, VERSION_KEY
from tests.conftest import QUICK_CRAWL, demo_seeds_file, processes_that_wrote, read_table, run_cli

server_module = pytest.importorskip("moto.server", reason="moto[server] is needed for the S3 tests")

BUCKET = "census"
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


@pytest.fixture(scope="module")
def s3(monkeypatch_module: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A moto S3 server on 127.0.0.1 (any free port) with one bucket; AWS credentials in the environment."""
    for key, value in AWS_ENV.items():
        monkeypatch_module.setenv(key, value)
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"{host}:{port}"
        fs = pafs.S3FileSystem(
            access_key="testing",
            secret_key="testing",
            region="us-east-1",
            endpoint_override=endpoint,
            scheme="http",
            allow_bucket_creation=True,
        )
        fs.create_dir(BUCKET)
        yield {"fs": fs, "endpoint": endpoint}
    finally:
        server.stop()


@pytest.fixture(scope="module")
def monkeypatch_module() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def uri(s3: dict[str, Any], prefix: str) -> str:
    return f"s3://{BUCKET}/{prefix}?endpoint_override={s3['endpoint']}&scheme=http"


@pytest.fixture(scope="module")
def crawled(s3: dict[str, Any], demo_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The demo web crawled twice to S3 (job s3a in small files, then s3b) and once to a local folder."""
    work = tmp_path_factory.mktemp("s3")
    seeds = demo_seeds_file(work, demo_server)
    common = ["--seeds", str(seeds), "--log-level", "WARNING", *QUICK_CRAWL, "--refetch"]
    out = uri(s3, "runs/census")
    for job, batch in (("s3a", "10"), ("s3b", "20000")):
        proc = run_cli(
            "crawl", *common, "--out", out, "--job-id", job, "-s", f"FEEDCENSUS_BATCH_ROWS={batch}", env=AWS_ENV
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    local = work / "local"
    proc = run_cli("crawl", *common, "--out", str(local), "--job-id", "s3b")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"uri": out, "local": local}


def test_the_crawl_lands_in_the_bucket_hive_partitioned(s3: dict[str, Any], crawled: dict[str, Any]) -> None:
    fs: pafs.S3FileSystem = s3["fs"]
    keys = [i.path for i in fs.get_file_info(pafs.FileSelector(f"{BUCKET}/runs/census", recursive=True)) if i.is_file]
    parts = [k for k in keys if k.endswith(".parquet")]
    assert parts and all("/job_id=s3a/" in k or "/job_id=s3b/" in k for k in parts)
    assert {k.split("/")[3] for k in parts} == set(TABLES)
    assert not [k for k in keys if k.rsplit("/", 1)[-1].startswith(".")], "hidden temporaries or markers left behind"
    assert list_jobs(crawled["uri"]) == ["s3a", "s3b"]


def test_pyarrow_reads_back_what_a_local_crawl_writes(s3: dict[str, Any], crawled: dict[str, Any]) -> None:
    fs: pafs.S3FileSystem = s3["fs"]
    for table in TABLES:
        remote = ds.dataset(f"{BUCKET}/runs/census/{table}", filesystem=fs, format="parquet", partitioning="hive")
        got = remote.to_table(filter=ds.field("job_id") == "s3b")
        want = read_table(crawled["local"], table)
        assert got.num_rows == want.num_rows, table
        assert got.num_rows > 0, table
        assert got.schema.remove_metadata().equals(want.schema.remove_metadata()), table
        fragment = next(iter(remote.get_fragments()))
        assert fragment.physical_schema.metadata[VERSION_KEY] == SCHEMA_VERSION.encode()
    # pyarrow's stubs make every value Optional; these feeds all have a final_url (sorted() would fail on a null)
    remote_feeds = open_table(crawled["uri"], "feeds", "s3b").to_table()
    urls = sorted(cast("list[str]", remote_feeds.column("final_url").to_pylist()))
    assert urls == sorted(cast("list[str]", read_table(crawled["local"], "feeds").column("final_url").to_pylist()))


def tables_of(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("|")]


def test_survey_and_compact_work_on_the_uri(crawled: dict[str, Any], s3: dict[str, Any]) -> None:
    remote = run_cli("survey", crawled["uri"], "--job", "s3b", env=AWS_ENV)
    assert remote.returncode == 0, remote.stderr
    # The same files, downloaded: the survey read through S3 must equal the survey read from disk. (Not a
    # second crawl's survey: which route reaches a feed listed and linked both is a race between crawls.)
    copy = crawled["local"].parent / "downloaded"
    pafs.copy_files(f"{BUCKET}/runs/census", str(copy), source_filesystem=s3["fs"])
    local = run_cli("survey", str(copy), "--job", "s3b")
    assert local.returncode == 0, local.stderr
    assert tables_of(remote.stdout) == tables_of(local.stdout) and tables_of(remote.stdout)

    before = {t: sorted(map(str, open_table(crawled["uri"], t, "s3a").to_table().to_pylist())) for t in TABLES}
    fs: pafs.S3FileSystem = s3["fs"]
    files = len(fs.get_file_info(pafs.FileSelector(f"{BUCKET}/runs/census/items/job_id=s3a")))
    assert files > 1
    result = compact_dataset(crawled["uri"], "s3a")
    assert result.compacted and result.files_after < result.files_before
    assert len(fs.get_file_info(pafs.FileSelector(f"{BUCKET}/runs/census/items/job_id=s3a"))) == 1
    after = {t: sorted(map(str, open_table(crawled["uri"], t, "s3a").to_table().to_pylist())) for t in TABLES}
    assert after == before
    assert not [i for i in fs.get_file_info(pafs.FileSelector(f"{BUCKET}/runs/census")) if ".compact-" in i.path]


def test_a_local_path_is_not_mistaken_for_a_uri(tmp_path: Path) -> None:
    proc = run_cli("survey", str(tmp_path / "nothing"))
    assert proc.returncode == 2 and "no crawl found" in proc.stderr


def test_two_workers_of_a_distributed_crawl_write_one_readable_dataset(
    s3: dict[str, Any], demo_server: Any, tmp_path: Path
) -> None:
    """A coordinator and a worker on a Redis frontier, both writing to S3: one dataset, read back whole."""
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.redisserver import RedisServer

    seeds = demo_seeds_file(tmp_path, demo_server)
    out = uri(s3, "runs/distributed")
    quick = [*QUICK_CRAWL, "-s", "FEEDCENSUS_FRONTIER_HEARTBEAT=0.5", "--log-level", "WARNING"]
    env = {**os.environ, **AWS_ENV, "PYTHONUNBUFFERED": "1"}
    with RedisServer(tmp_path / "redis") as redis:
        args = [sys.executable, "-m", "crawler.cli"]
        crawl = [*args, "crawl", "--seeds", str(seeds), "--out", out, "--job-id", "d", "--frontier", redis.url, *quick]
        work = [*args, "worker", "--frontier", redis.url, "--job", "d", "--out", out, *quick]
        procs = [
            subprocess.Popen(a, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for a in (crawl, work)
        ]
        results = [p.communicate(timeout=180) for p in procs]
    coordinator, worker = zip(procs, results, strict=True)
    assert coordinator[0].returncode == 0, coordinator[1][1][-3000:]
    # The worker exits 1 when every URL it leased failed (README, exit codes): the coordinator often
    # fetches all of the small demo web first, and on a busy machine leaves the worker its redirect loop.
    code, err = worker[0].returncode, worker[1][1]
    assert code == 0 or (code == 1 and "nothing usable was fetched" in err), err[-3000:]
    workers = open_table(out, "workers", "d").to_table().to_pylist()
    assert len(workers) == processes_that_wrote(err)
    assert all(w["frontier"] and "@" not in w["frontier"] for w in workers)
    log = open_table(out, "fetch_log", "d").to_table()
    assert log.num_rows > 0
    con = duckdb.connect()
    con.register("log", log)
    # Every URL was fetched by one process only: one row that is not a duplicate drop (robots.txt apart:
    # each process fetches its own).
    dupes = con.execute(
        "SELECT url, count(*) FROM log WHERE outcome NOT IN ('robots', 'duplicate') GROUP BY url HAVING count(*) > 1"
    )
    assert dupes.fetchall() == []
    feeds = open_table(out, "feeds", "d").to_table()
    assert feeds.num_rows == sum(w["feeds"] for w in workers) > 0


def test_open_dataset_reads_the_uri(crawled: dict[str, Any]) -> None:
    """``feedcensus.open_dataset`` takes the same URIs as ``--out``: each table, DuckDB views and the survey."""
    pl = pytest.importorskip("polars", reason="the notebooks extra (polars) is not installed")
    pytest.importorskip("pandas", reason="the notebooks extra (pandas) is not installed")
    import feedcensus

    data = feedcensus.open_dataset(crawled["uri"])
    assert data.root == crawled["uri"] and data.jobs == ["s3a", "s3b"]
    con = data.duckdb()
    for table in TABLES:
        want = read_table(crawled["local"], table).num_rows
        assert data.table(table, job="s3b").num_rows == want > 0, table
        frame = data.to_polars(table, job="s3b")
        assert frame.schema["job_id"] == pl.String and frame.height == want, table
        assert con.sql(f"SELECT count(*) FROM {table} WHERE job_id = 's3b'").fetchall() == [(want,)], table
    frames = data.survey_frames(job="s3b")
    assert frames["formats"]["feeds"].sum() == read_table(crawled["local"], "feeds").num_rows
