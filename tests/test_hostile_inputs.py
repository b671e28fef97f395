"""Bad input files stop the CLI with one clear line and exit code 2, before any crawling."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize(
    "content",
    [b"this is not XML at all { ] >", b"", b"\x89PNG\r\n\x1a\n\x00\x00", b"<html><body>a page</body></html>"],
)
def test_local_opml_that_is_not_opml_is_one_line_and_exit_2(tmp_path: Path, content: bytes) -> None:
    opml = tmp_path / "list.opml"
    opml.write_bytes(content)
    proc = run_cli("crawl", "--opml", str(opml), "--out", str(tmp_path / "out"), timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("feedcensus crawl: ") and str(opml) in lines[0], lines
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("flag", ["--opml", "--seeds"])
def test_missing_input_file_is_one_line_and_exit_2(tmp_path: Path, flag: str) -> None:
    proc = run_cli("crawl", flag, str(tmp_path / "nope.txt"), "--out", str(tmp_path / "out"), timeout=60)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "nope.txt" in proc.stderr


def test_bad_setting_is_one_line_and_exit_2(tmp_path: Path) -> None:
    proc = run_cli(
        "crawl", "--url", "http://127.0.0.1:9/", "--out", str(tmp_path / "out"), "-s", "NO_EQUALS", timeout=60
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "NAME=VALUE" in proc.stderr


@pytest.mark.parametrize(
    ("flags", "shown"),
    [
        (["--job-id", "a/../../escaped"], "'a/../../escaped'"),
        (["--job-id", "../escaped"], "'../escaped'"),
        (["--job-id", "x" * 300], "at most 200 bytes, not 300"),
        (["--job-id", ".hidden"], "'.hidden'"),
        (["-s", "FEEDCENSUS_JOB_ID=../escaped"], "'../escaped'"),
    ],
)
def test_a_job_id_that_is_no_folder_name_is_one_line_and_exit_2(tmp_path: Path, flags: list[str], shown: str) -> None:
    """The job id names a folder in every table (job_id=<id>): before, '../x' wrote Parquet outside --out,
    and a 300-character id failed only after the whole crawl (exit 3, rows lost)."""
    out, state = tmp_path / "data" / "out", tmp_path / "state"
    args = ["--url", "http://127.0.0.1:9/feed.xml", "--out", str(out), "--resume", str(state), *flags]
    proc = run_cli("crawl", *args, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("feedcensus crawl: job id ") and shown in lines[0], lines
    assert not out.exists() and not (tmp_path / "data" / "escaped").exists() and not (tmp_path / "escaped").exists()
    assert not state.exists()  # no resume state naming a job that can never run


def test_job_ids_the_writer_takes() -> None:
    from pipelines.dataset.jobids import default_job_id, job_id_problem

    # Ids older versions took stay usable (a job is resumed or joined by its id) unless they were unsafe.
    for ok in (default_job_id(), "census-4", "r", "2026.11_run-2", "run 1", "2024-01-01T00:00:00Z", "jöb", "A" * 200):
        assert job_id_problem(ok) is None, ok
    for bad in ("", "a/b", "..", ".hidden", "a\\b", "a%20b", "a\nb", "A" * 201, "é" * 101):
        assert job_id_problem(bad) is not None, bad


@pytest.mark.parametrize(
    ("setting", "shown"),
    [
        ("DOWNLOAD_TIMEOUT=-1", "DOWNLOAD_TIMEOUT takes a number above 0, not '-1'"),
        ("DOWNLOAD_TIMEOUT=nan", "DOWNLOAD_TIMEOUT takes a number, not 'nan'"),
        ("CONCURRENT_REQUESTS=0", "CONCURRENT_REQUESTS takes a number of at least 1, not '0'"),
        ("DOWNLOAD_MAXSIZE=-1", "DOWNLOAD_MAXSIZE takes a number of 0 or more, not '-1'"),
        ("FEEDCENSUS_PARSE_TIMEOUT=0", "FEEDCENSUS_PARSE_TIMEOUT takes a number above 0, not '0'"),
        ("FEEDCENSUS_PROGRESS_INTERVAL=inf", "FEEDCENSUS_PROGRESS_INTERVAL takes a number, not 'inf'"),
        ("FEEDCENSUS_FRONTIER_KEY_TTL=1", "FEEDCENSUS_FRONTIER_KEY_TTL takes a number of at least 60, not '1'"),
    ],
)
def test_a_number_no_crawl_can_run_with_is_one_line_and_exit_2(tmp_path: Path, setting: str, shown: str) -> None:
    """Before, DOWNLOAD_TIMEOUT=-1 was a traceback inside Twisted, DOWNLOAD_MAXSIZE=-1 made every fetch
    too_large and FEEDCENSUS_PARSE_TIMEOUT=0 every feed a parse_timeout, each after crawling."""
    out = tmp_path / "out"
    proc = run_cli("crawl", "--url", "http://127.0.0.1:9/feed.xml", "--out", str(out), "-s", setting, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert lines == [f"feedcensus crawl: -s {setting}: {shown}"], lines
    assert not out.exists()


@pytest.mark.parametrize("wait", ["nan", "-1", "soon"])
def test_a_worker_wait_that_is_no_number_of_seconds_is_refused(tmp_path: Path, wait: str) -> None:
    """``--wait nan`` waited for the job forever."""
    proc = run_cli(
        "worker", "--frontier", "redis://127.0.0.1:9/0", "--job", "j", "--out", str(tmp_path / "o"), "--wait", wait,
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith(f"--wait: takes a number of seconds, 0 or more, not '{wait}'")


@pytest.mark.parametrize("where", ["file", "under-file"])
def test_a_resume_folder_or_demo_output_that_cannot_be_a_folder_is_one_line_and_exit_2(
    tmp_path: Path, where: str
) -> None:
    """Before: a FileExistsError or NotADirectoryError traceback."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    folder = blocker if where == "file" else blocker / "sub"
    proc = run_cli("crawl", "--url", "http://127.0.0.1:9/f.xml", "--out", str(tmp_path / "o"), "--resume", str(folder))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == [
        f"feedcensus crawl: --resume {folder}: cannot keep the job's state there: "
        + ("File exists" if where == "file" else "Not a directory")
    ]
    proc = run_cli("demo", "--out", str(folder), timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines()[-1].startswith(f"feedcensus demo: --out {folder}: cannot write there: ")


@pytest.mark.parametrize(
    ("setting", "hint"),
    [
        ("FEEDCENSUS_PARSE_TIMOUT=3", "(did you mean FEEDCENSUS_PARSE_TIMEOUT?)"),
        ("FEEDCENSUS_NOPE=1", "(README.md lists them)"),
    ],
)
def test_a_feedcensus_setting_that_does_not_exist_is_refused(tmp_path: Path, setting: str, hint: str) -> None:
    """A typo in one of the project's own settings was taken silently, and the setting meant kept its default."""
    proc = run_cli(
        "crawl", "--url", "http://127.0.0.1:9/f.xml", "--out", str(tmp_path / "o"), "-s", setting, timeout=60
    )
    assert proc.returncode == 2
    name = setting.partition("=")[0]
    assert proc.stderr.strip().splitlines() == [
        f"feedcensus crawl: -s {setting}: no feedcensus setting is named {name} {hint}"
    ]


def test_an_option_and_a_setting_naming_two_different_things_are_refused(tmp_path: Path) -> None:
    """``-s FEEDCENSUS_OUT=B`` silently beat ``--out A`` (and the job id likewise)."""
    a, b = tmp_path / "a", tmp_path / "b"
    for flags, line in [
        (["--out", str(a), "-s", f"FEEDCENSUS_OUT={b}"], f"--out {a} and -s FEEDCENSUS_OUT={b} name two"),
        (
            ["--out", str(a), "--job-id", "x", "-s", "FEEDCENSUS_JOB_ID=y"],
            "--job-id x and -s FEEDCENSUS_JOB_ID=y name two",
        ),
    ]:
        proc = run_cli("crawl", "--url", "http://127.0.0.1:9/f.xml", *flags, timeout=60)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and line in proc.stderr, proc.stderr
        assert not a.exists() and not b.exists()


def test_resuming_a_folder_with_no_crawl_in_it_says_so(tmp_path: Path) -> None:
    """It said only "--out is required", which reads as if --resume needed --out."""
    folder = tmp_path / "no-such-state"
    proc = run_cli("crawl", "--resume", str(folder), timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"feedcensus crawl: --resume {folder}: no crawl to resume there (no state.json); "
        "to start a resumable crawl, give --out and its inputs too"
    ]
    assert not folder.exists()


def test_an_unusable_input_is_shown_escaped_and_cut_to_a_readable_length(tmp_path: Path) -> None:
    """A binary seeds file put its raw bytes (control characters too) on the terminal; a 9,000-character
    URL was shown whole."""
    seeds = tmp_path / "seeds.txt"
    seeds.write_bytes(b"\x00\x05garbage\x1b[31m\x07line\n")
    proc = run_cli("crawl", "--seeds", str(seeds), "--out", str(tmp_path / "o"), timeout=60)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert line.isprintable() and "\\x1b[31m" in line, line
    url = "ftp://a.example/" + "x" * 9000
    proc = run_cli("crawl", "--url", url, "--out", str(tmp_path / "o"), timeout=60)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert len(line) < 400 and "... (9,016 characters): URL longer than 8192 characters" in line, line
