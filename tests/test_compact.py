"""`feedcensus compact`: two real crawls of the demo web written in many small files, merged.

Every test works on its own copy of the two-run dataset and checks that the
rows of every table are the same before and after, in fewer files.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any, cast

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from pipelines.dataset import compact
from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.compact import OLD_FILES_GRACE, CompactResult, compact_dataset
from pipelines.dataset.markers import RUNNING_MARKER
from pipelines.dataset.store import open_table
from schemas.tables import TABLES, VERSION_KEY, SchemaVersionError, arrow_schema
from tests.conftest import QUICK_CRAWL, copy_dataset, demo_seeds_file, run_cli

JOBS = ("A", "B")


@pytest.fixture(autouse=True)
def no_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old files of a swap are deleted at once here, unless a test gives a grace: the tests that need
    one (a reader during the swap) give their own, and the others need not wait a second each."""
    monkeypatch.setattr(compact, "OLD_FILES_GRACE", 0.0)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory, demo_server: Any) -> Path:
    """Two crawls of the demo web into one root, five rows per file."""
    work = tmp_path_factory.mktemp("compact")
    seeds = demo_seeds_file(work, demo_server)
    out = work / "out"
    for job in JOBS:
        proc = run_cli(
            "crawl", "--seeds", str(seeds), "--out", str(out), "--job-id", job, "--log-level", "WARNING",
            *QUICK_CRAWL, "-s", "FEEDCENSUS_BATCH_ROWS=5",
            "--refetch",  # the second run writes everything again, not only what changed
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture
def dataset(two_runs: Path, tmp_path: Path) -> Path:
    return copy_dataset(two_runs, tmp_path / "out")


def parts(out: Path, table: str, job: str) -> list[Path]:
    return sorted((out / table / f"job_id={job}").glob("*.parquet"))


def snapshot(out: Path, job: str) -> dict[str, tuple[int, int]]:
    """Every file of a job's partitions (hidden ones too) with its size and mtime."""
    found = {}
    for table in TABLES:
        for path in (out / table / f"job_id={job}").iterdir():
            st = path.stat()
            found[str(path.relative_to(out))] = (st.st_size, st.st_mtime_ns)
    return found


def rows(out: Path, table: str, job: str) -> list[str]:
    """The rows of one table and job, order-free, read with the project's reader."""
    return sorted(
        json.dumps(r, default=str, sort_keys=True) for r in open_table(str(out), table, job).to_table().to_pylist()
    )


def everything(out: Path) -> dict[tuple[str, str], list[str]]:
    return {(t, j): rows(out, t, j) for t in TABLES for j in JOBS}


def test_the_crawls_left_many_small_files(two_runs: Path) -> None:
    for job in JOBS:
        assert len(parts(two_runs, "feeds", job)) > 3
        assert len(parts(two_runs, "element_usage", job)) > 3
        assert not list((two_runs / "feeds" / f"job_id={job}").glob(".*")), "a finished run left hidden files"


def test_compact_one_job_rewrites_only_that_job(dataset: Path) -> None:
    before = everything(dataset)
    files_before = {t: len(parts(dataset, t, "A")) for t in TABLES}
    untouched = snapshot(dataset, "B")
    proc = run_cli("compact", str(dataset), "--job", "A")
    assert proc.returncode == 0, proc.stderr
    # The workers table holds one file per process: already compact.
    compacted = f"Compacted {len(TABLES) - 1} of {len(TABLES)} partitions of 1 job(s)"
    assert compacted in proc.stdout and "Left alone: 1 already compact" in proc.stdout
    assert "feeds " in proc.stdout
    assert snapshot(dataset, "B") == untouched
    for table in TABLES:
        assert len(parts(dataset, table, "A")) == 1 < files_before[table] or files_before[table] == 1, table
    assert everything(dataset) == before


def assert_result_reports_the_compaction(result: CompactResult, files_before: int, rows_before: int) -> None:
    """compact_dataset's result counts every file and row, and prints as one line."""
    files_after = len(TABLES) * len(JOBS)
    assert isinstance(result, CompactResult)
    assert result.files_before == files_before
    assert result.files_after == files_after
    assert result.rows == rows_before
    assert "\n" not in str(result) and f"{files_before} files -> {files_after}" in str(result)


def assert_same_rows_in_one_file_each(
    dataset: Path, before: dict[tuple[str, str], list[str]], in_order: dict[tuple[str, str], list[dict[str, Any]]]
) -> None:
    """One file per table and job now, holding the same rows as before, in the same order."""
    assert sum(len(parts(dataset, t, j)) for t in TABLES for j in JOBS) == len(TABLES) * len(JOBS)
    assert everything(dataset) == before
    assert {k: open_table(str(dataset), *k).to_table().to_pylist() for k in in_order} == in_order, "rows reordered"


def assert_file_has_the_table_schema(path: Path, table: str, num_rows: int) -> None:
    """A compacted file carries the table's schema (version, field names, nullability, descriptions, types)
    and holds its ``num_rows`` rows in a single row group."""
    meta = pq.read_metadata(path)
    assert meta.metadata is not None
    assert meta.metadata[VERSION_KEY] == arrow_schema(table).metadata[VERSION_KEY]
    got = pq.read_schema(path)
    for have, want in zip(got, arrow_schema(table), strict=True):
        assert (have.name, have.nullable, have.metadata) == (want.name, want.nullable, want.metadata)
        assert have.type.equals(want.type), (have, want)  # a list's item may be named "element"
    assert meta.num_row_groups == 1 and meta.num_rows == num_rows


def test_compact_everything_keeps_every_row(dataset: Path) -> None:
    before = everything(dataset)
    in_order = {(t, j): open_table(str(dataset), t, j).to_table().to_pylist() for t in TABLES for j in JOBS}
    survey_before = run_cli("survey", str(dataset), "--job", "A")
    assert survey_before.returncode == 0, survey_before.stderr
    files_before = sum(len(parts(dataset, t, j)) for t in TABLES for j in JOBS)

    result = compact_dataset(str(dataset))
    assert_result_reports_the_compaction(result, files_before, sum(len(v) for v in before.values()))
    assert_same_rows_in_one_file_each(dataset, before, in_order)
    assert not [p for p in dataset.iterdir() if p.name.startswith(".compact-")], "staging folder left behind"

    # The survey of a run reads the same numbers from the compacted files.
    survey_after = run_cli("survey", str(dataset), "--job", "A")
    assert survey_after.returncode == 0, survey_after.stderr
    assert survey_after.stdout == survey_before.stdout
    # Each new file carries the schema (version, descriptions) and a sensible row group layout.
    for table in TABLES:
        for job in JOBS:
            (path,) = parts(dataset, table, job)
            assert_file_has_the_table_schema(path, table, len(before[(table, job)]))
    # A second compaction has nothing left to do.
    again = compact_dataset(str(dataset))
    assert again.compacted == () and again.files_after == again.files_before


def test_pyarrow_and_duckdb_read_the_compacted_dataset(dataset: Path) -> None:
    counts = {t: sum(len(rows(dataset, t, j)) for j in JOBS) for t in TABLES}
    compact_dataset(str(dataset))
    con = duckdb.connect()
    for table in TABLES:
        whole = ds.dataset(dataset / table, format="parquet", partitioning="hive").to_table()
        assert whole.num_rows == counts[table]
        # pyarrow's stubs make every value of a column Optional; a null here would fail sorted() as it did untyped
        assert sorted(set(cast("list[str]", whole.column("job_id").to_pylist()))) == list(JOBS)
        sql = (
            f"SELECT job_id, count(*) FROM read_parquet('{dataset}/{table}/**/*.parquet', hive_partitioning = true, "
            "hive_types = {'job_id': VARCHAR}) GROUP BY job_id ORDER BY job_id"
        )
        got = con.execute(sql).fetchall()
        assert sum(n for _, n in got) == counts[table], table
        assert [j for j, _ in got] == list(JOBS)


def test_file_and_row_group_sizes(dataset: Path) -> None:
    before = rows(dataset, "element_usage", "A")
    assert len(before) > 100
    result = compact_dataset(str(dataset), "A", file_rows=40, row_group_rows=16)
    assert {p.job_id for p in result.partitions} == {"A"}
    files = parts(dataset, "element_usage", "A")
    assert len(files) == -(-len(before) // 40)
    for path in files:
        meta = pq.read_metadata(path)
        groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        assert meta.num_rows == sum(groups) <= 40
        assert all(g <= 16 for g in groups)
        if path != files[-1]:
            assert groups == [16, 16, 8]
    assert rows(dataset, "element_usage", "A") == before


def test_a_partition_being_written_is_left_alone(dataset: Path) -> None:
    running = dataset / "items" / "job_id=B"
    (running / RUNNING_MARKER).write_text("{}", encoding="utf-8")
    files = sorted(p.name for p in running.iterdir())
    result = compact_dataset(str(dataset), "B")
    skipped = [p for p in result.partitions if p.skipped]
    assert [(p.table, p.skipped) for p in skipped] == [
        ("items", "being written by a crawl (.running marker)"),
        ("workers", "already compact"),  # one file per crawl process
    ]
    assert sorted(p.name for p in running.iterdir()) == files
    assert "1 being written by a crawl" in str(result)
    before = rows(dataset, "items", "B")
    forced = compact_dataset(str(dataset), "B", force=True)
    assert [p.table for p in forced.compacted] == ["items"]
    assert rows(dataset, "items", "B") == before
    assert (running / RUNNING_MARKER).exists(), "force moved the marker away"


def test_a_live_writer_marks_its_partitions(tmp_path: Path) -> None:
    writer = DatasetWriter(str(tmp_path / "out"), "live", batch_rows=1)
    writer.write("conformance", [{"feed_url": "u", "rule": "r", "severity": "error", "scope": "channel", "count": 1}])
    partition = tmp_path / "out" / "conformance" / "job_id=live"
    assert (partition / writer.running_marker).exists() and writer.running_marker.startswith(RUNNING_MARKER + "-")
    writer.write("conformance", [{"feed_url": "v", "rule": "r", "severity": "error", "scope": "channel", "count": 2}])
    result = compact_dataset(str(tmp_path / "out"))
    assert result.compacted == () and len(list(partition.glob("*.parquet"))) == 2
    writer.close()
    assert not (partition / writer.running_marker).exists()
    assert compact_dataset(str(tmp_path / "out")).files_after == 1


def test_unknown_job_and_missing_dataset_are_one_line_errors(dataset: Path, tmp_path: Path) -> None:
    proc = run_cli("compact", str(dataset), "--job", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"feedcensus compact: no job 'nope' in {dataset}; jobs: A, B"
    proc = run_cli("compact", str(tmp_path / "empty"))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "no dataset found" in proc.stderr


def test_a_newer_schema_is_refused(dataset: Path) -> None:
    schema = arrow_schema("feeds").with_metadata({VERSION_KEY: b"2.0"})
    table = pa.Table.from_pylist([], schema=schema)
    pq.write_table(table, dataset / "feeds" / "job_id=A" / "part-999999-future.parquet")
    with pytest.raises(SchemaVersionError, match=r"schema version 2\.0 is newer"):
        compact_dataset(str(dataset), "A")
    proc = run_cli("compact", str(dataset), "--job", "A")
    assert proc.returncode == 2 and "schema version 2.0 is newer" in proc.stderr and "Traceback" not in proc.stderr


def _sixty_small_files(partition: Path) -> None:
    """A conformance partition of 60 files of 3 rows each."""
    partition.mkdir(parents=True)
    schema = arrow_schema("conformance")
    for i in range(60):
        rows_ = [{"feed_url": f"f{i}", "rule": "r", "severity": "error", "scope": "item", "count": k} for k in range(3)]
        pq.write_table(pa.Table.from_pylist(rows_, schema=schema), partition / f"part-{i:06d}-x.parquet")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the one-step swap needs Linux renameat2")
def test_a_reader_that_opened_the_folder_before_the_swap_still_lists_every_old_file(tmp_path: Path) -> None:
    """Opening a folder and reading its entries are two steps; the swap can fall between them.

    The reader's open folder is the old one after the swap: its files must
    stay for the grace, not be deleted under the reader. Deleted, the reader
    lists some or none of them and counts too few rows without an error;
    kept, it lists them all and fails to open them by name (the partition
    now holds the new files): the "file not found" of docs/datasets.md.
    """
    out = tmp_path / "out"
    partition = out / "conformance" / "job_id=R"
    _sixty_small_files(partition)
    opened = os.scandir(partition)  # opendir now; the entries are read at the first next()
    done = threading.Event()

    def compact() -> None:
        compact_dataset(str(out), old_files_grace=5.0)
        done.set()

    compaction = threading.Thread(target=compact)
    compaction.start()
    try:
        deadline = time.monotonic() + 60
        # Swapped in, and the old folder moved into the staging folder: two steps (compactswap.py: _swap_local), which a
        # check right after the first could fall between (seen once in a full suite run).
        while not (
            any(".parquet" in p.name and "-c" in p.name for p in partition.iterdir())
            and any((staging / "old").is_dir() for staging in out.glob(".compact-*"))
        ):
            assert time.monotonic() < deadline, "the compaction never swapped the partition"
            time.sleep(0.001)
        with opened:
            listed = sorted(entry.path for entry in opened if entry.name.endswith(".parquet"))
        assert len(listed) == 60, f"the reader of the old folder listed {len(listed)} of its 60 files"
        with pytest.raises(FileNotFoundError):  # by name it reaches the new folder: an error, never rows
            pq.read_metadata(listed[0])
        assert not done.is_set(), "the compaction returned before the old files' grace was over"
        (staging,) = out.glob(".compact-*")  # what a compaction killed now leaves: see docs/datasets.md
        assert (staging / "partition").read_text() == "conformance/job_id=R\n"
        assert len(list((staging / "old").glob("*.parquet"))) == 60 and not (staging / "new").exists()
    finally:
        compaction.join()
    assert done.is_set()
    assert not list(out.glob(".compact-*")), "the old files outlived the compaction"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the one-step swap needs Linux renameat2")
def test_a_concurrent_reader_sees_all_old_or_all_new_rows(tmp_path: Path) -> None:
    """Readers listing the partition while it is swapped never count a mix of old and new files."""
    out = tmp_path / "out"
    schema = arrow_schema("conformance")
    partition = out / "conformance" / "job_id=R"
    expected = 60 * 3
    seen: list[int] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    slow: list[float] = []

    def reader() -> None:
        while not stop.is_set():
            began = time.monotonic()
            try:
                n = ds.dataset(partition, format="parquet", schema=schema).count_rows()
            except (FileNotFoundError, OSError) as exc:  # listed before the swap, opened after
                errors.append(exc)
                continue
            took = time.monotonic() - began
            if took < OLD_FILES_GRACE:
                seen.append(n)
            else:  # held off the CPU past the grace: the old files may be gone (see the test above)
                slow.append(took)

    for _ in range(10):
        shutil.rmtree(out, ignore_errors=True)
        _sixty_small_files(partition)
        seen.clear()
        stop.clear()
        thread = threading.Thread(target=reader)
        thread.start()
        try:
            # The default grace (1 s): a reader that opened the old folder just before the swap and was then held
            # off the CPU for longer than the grace lists it after its files are gone, and counts 0 rows. That is
            # outside the promise, so such a read (on a loaded machine) is left out of the count below.
            result = compact_dataset(str(out), old_files_grace=OLD_FILES_GRACE)
        finally:
            stop.set()
            thread.join()
        assert result.files_after == 1
        assert seen, f"the reader never finished a read within the grace ({len(slow)} slower ones)"
        assert all(n == expected for n in seen), f"a reader counted {set(seen)} rows, expected {expected}"
    for exc in errors:
        assert "No such file" in str(exc) or "not found" in str(exc).lower() or isinstance(exc, FileNotFoundError), exc


def test_two_writers_of_one_job_each_keep_their_own_marker(tmp_path: Path) -> None:
    """The workers of a distributed job share partitions: the first to finish leaves the other's marker."""
    row = {"feed_url": "u", "rule": "r", "severity": "error", "scope": "channel", "count": 1}
    first, second = (DatasetWriter(str(tmp_path / "out"), "shared", batch_rows=1) for _ in range(2))
    first.write("conformance", [row])
    second.write("conformance", [row])
    partition = tmp_path / "out" / "conformance" / "job_id=shared"
    first.close()  # no error for the marker it does not own
    assert (partition / second.running_marker).exists()
    assert compact_dataset(str(tmp_path / "out")).compacted == ()  # still being written
    second.close()
    assert not list(partition.glob(".running*"))
