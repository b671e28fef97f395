"""`feedcensus survey DIR --out REPORT`: says where each file went, and prints the Markdown only when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import crawl_demo, run_cli

JOB = "surveyout"


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory, demo_server: object) -> Path:
    return crawl_demo(tmp_path_factory.mktemp("survey-out"), demo_server, JOB)


def test_without_out_the_markdown_is_printed(crawl: Path) -> None:
    proc = run_cli("survey", str(crawl))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"# Feed survey: job {JOB},")
    assert "wrote" not in proc.stdout


def test_out_names_each_file_written_and_prints_no_markdown(crawl: Path, tmp_path: Path) -> None:
    report = tmp_path / "report"
    proc = run_cli("survey", str(crawl), "--out", str(report))
    assert proc.returncode == 0, proc.stderr
    assert "# Feed survey" not in proc.stdout and "|" not in proc.stdout
    written = sorted(report.iterdir())
    assert {p.name for p in written} >= {"survey.md", "survey.html"}
    assert len([p for p in written if p.suffix == ".csv"]) >= 5
    lines = proc.stdout.splitlines()
    assert len(lines) == len(written), proc.stdout
    named = set()
    for line in lines:
        assert line.startswith("wrote "), line
        path = Path(line.removeprefix("wrote ").split(" ", 1)[0])
        assert path.is_file() and path.parent == report, line
        named.add(path)
    assert named == set(written)
    # the Markdown written is the survey a plain `survey` prints
    assert (report / "survey.md").read_text(encoding="utf-8") == run_cli("survey", str(crawl)).stdout.removesuffix("\n")


def test_out_with_print_also_prints_the_markdown(crawl: Path, tmp_path: Path) -> None:
    report = tmp_path / "report"
    proc = run_cli("survey", str(crawl), "--out", str(report), "--print")
    assert proc.returncode == 0, proc.stderr
    # stdout stays the Markdown alone (redirectable); where the files went goes to stderr
    assert proc.stdout == run_cli("survey", str(crawl)).stdout
    assert [line.startswith("wrote ") for line in proc.stderr.splitlines()] == [True] * len(list(report.iterdir()))


def test_out_that_cannot_be_written_is_one_line(crawl: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    proc = run_cli("survey", str(crawl), "--out", str(blocker / "report"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
