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
