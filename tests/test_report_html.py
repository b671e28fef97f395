"""The HTML survey report is self-contained and renders offline in headless Chromium, charts drawn.

The demo web is crawled for real, ``feedcensus survey --out`` writes the
report, and Chromium (no network, no GPU) takes a screenshot of it; the
screenshot must contain the bar colour in a good number of pixels.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib import image as mpimg

from crawler.report.model import Chart, Column, Table
from crawler.report.render import BAR_COLOUR, MARK_COLOURS, chart_rows, svg_chart
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
    unpacked = os.environ.get("FEEDCENSUS_CHROMIUM")  # scripts/provision.sh's, where it could not install one
    if unpacked and os.access(unpacked, os.X_OK):
        return unpacked
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


def test_survey_out_writes_index_html_as_the_demo_does(report: Path) -> None:
    """`survey --out` wrote survey.html only; the demo's report opens at index.html. Both are written now."""
    index = report.parent / "index.html"
    assert index.is_file() and index.read_bytes() == report.read_bytes()


def test_charts_scale_down_to_a_narrow_window(report: Path) -> None:
    """Fixed width="910" charts were cut at a 500 px window: each is sized by its viewBox alone now, as wide as the
    page allows up to its natural width, its height following."""
    text = report.read_text(encoding="utf-8")
    tags = re.findall(r"<svg\b[^>]*>", text)
    assert len(tags) >= 8
    for tag in tags:
        view = re.search(r'viewBox="0 0 (\d+) (\d+)"', tag)
        assert view is not None, tag
        assert not re.search(r"\s(?:width|height)=", tag), tag  # no fixed size in pixels
        assert 'class="chart"' in tag and f"max-width: {view[1]}px" in tag, tag
    assert re.search(r"svg\.chart\s*\{[^}]*width:\s*100%[^}]*height:\s*auto", text)
    # Tables too wide for the window scroll in a box of their own instead of widening the page.
    assert text.count("<table>") == text.count('<div class="wide"><table>') > 8


def test_no_bar_of_zero_and_the_rule_chart_counts_the_rules_left_out(report: Path) -> None:
    """The rule chart drew about 30 bars of zero width: only failing rules are drawn, the caption counts the rest."""
    text = report.read_text(encoding="utf-8")
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', text)]
    assert widths and min(widths) > 0
    with (report.parent / "rule_failures.csv").open(encoding="utf-8") as fh:
        failing = [int(row["feeds"]) for row in csv.DictReader(fh)]
    zeros = failing.count(0)
    assert zeros > 5 and len(failing) > zeros  # the demo web fails some rules and not others
    section = text.split('<section id="rule_failures">', 1)[1].split("</section>", 1)[0]
    bars = section.count(f'fill="{BAR_COLOUR}"') - 1  # minus the legend swatch
    assert bars == min(len(failing) - zeros, 40)
    assert f"; {zeros} rules no feed fails not drawn</figcaption>" in section
    assert f"{zeros} of the {len(failing)} rules fail on no rss feed" in section


def test_a_chart_leaves_out_zero_rows_unless_a_published_figure_stands_beside_them() -> None:
    table = Table(
        "t",
        "T",
        (Column("label", "label"), Column("pct", "%", "pct"), Column("ref", "ref", "pct")),
        (
            {"label": "some", "pct": 12.5, "ref": None},
            {"label": "none", "pct": 0.0, "ref": None},
            {"label": "none but published", "pct": 0.0, "ref": 40.0},
            {"label": "no value", "pct": None, "ref": None},
        ),
    )
    chart = Chart("label", "pct", (("ref", "published"),))
    drawn, shown, zeros = chart_rows(table, chart)
    assert [r["label"] for r in drawn] == ["some", "none but published"] and (shown, zeros) == (2, 1)
    svg = svg_chart(table, chart)
    assert ">none<" not in svg and ">none but published<" in svg
    assert svg_chart(Table("z", "Z", table.columns, ({"label": "x", "pct": 0.0, "ref": None},)), chart) == ""


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
