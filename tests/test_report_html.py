"""The HTML survey report is self-contained and renders offline in headless Chromium, charts drawn.

The demo web is crawled for real, ``feedcensus survey --out`` writes the
report, and Chromium (no network, no GPU) takes a screenshot of it; the
screenshot must contain the bar colour in a good number of pixels.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib import image as mpimg

from crawler.report.render import BAR_COLOUR, MARK_COLOURS
from tests.conftest import crawl_demo, run_cli

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


def chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory, demo_server: Any) -> Path:
    work = tmp_path_factory.mktemp("html")
    out = crawl_demo(work, demo_server, "html")
    report_dir = work / "report"
    proc = run_cli("survey", str(out), "--out", str(report_dir))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return report_dir / "survey.html"


def test_html_references_no_external_resource(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(?:src|href|srcset|action|data)\s*=\s*["']?\s*(?:https?:)?//""", text, re.I)
    assert not re.search(r"url\(|@import|@font-face", text, re.I)
    assert "<script" not in text.lower() and "<link" not in text.lower() and "<img" not in text.lower()
    # every in-page link points at a section of the page
    anchors = re.findall(r'href="([^"]*)"', text)
    assert anchors and all(a.startswith("#") and f'id="{a[1:]}"' in text for a in anchors)


def test_every_chart_is_drawn_inline(report: Path) -> None:
    text = report.read_text(encoding="utf-8")
    assert text.count("<svg") >= 8
    section = text.split('<section id="channel_elements">', 1)[1].split("</section>", 1)[0]
    table_rows = section.count("<tr>") - 1  # minus the header row
    bars = section.count(f'fill="{BAR_COLOUR}"') - 1  # minus the legend swatch
    assert table_rows > 10 and bars == min(table_rows, 40)
    assert f'fill="{MARK_COLOURS[0]}"' in section  # a published figure drawn beside ours (atom:link, ttl)


def test_report_renders_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    binary = chromium()
    if binary is None:
        pytest.skip("no Chromium binary found (apt-get install chromium)")
    shot = tmp_path / "survey.png"
    proc = subprocess.run(
        [
            binary,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1200,3000",
            report.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert shot.is_file(), f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    assert shot.stat().st_size > 20_000
    pixels = (mpimg.imread(str(shot))[:, :, :3] * 255).round().astype(np.int16)
    assert pixels.shape[:2] == (3000, 1200)
    bar = np.abs(pixels - np.array(rgb(BAR_COLOUR))).max(axis=2) <= 3
    assert bar.sum() > 20_000, f"only {bar.sum()} bar-coloured pixels"
    rows_with_bars = np.flatnonzero(bar.any(axis=1))
    assert rows_with_bars.size > 300, "bars on few pixel rows: charts not drawn"
    ink = (pixels.sum(axis=2) < 300).sum()  # dark text pixels
    assert ink > 10_000, "page text not rendered"
