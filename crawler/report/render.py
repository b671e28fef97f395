"""Rendering a :class:`~crawler.report.model.Survey`: Markdown, CSV and one self-contained HTML page.

The HTML page holds its CSS and its charts (inline SVG drawn here, no
JavaScript): it references no external resource, so it renders offline.
"""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path
from typing import Any

from crawler.fetch.words import counted
from crawler.report.model import Chart, Column, Survey, Table
from crawler.report.reference import BOARD_2007, SURVEY_2005

__all__ = ["BAR_COLOUR", "MARK_COLOURS", "chart_rows", "svg_chart", "to_csv", "to_html", "to_markdown", "write_report"]

#: Fill of every chart bar (tests look for it in screenshots).
BAR_COLOUR = "#2b6cb0"
#: Colours of the published-figure ticks, in the order of a chart's marks.
MARK_COLOURS = ("#c0392b", "#e67e22")


# --- values ---------------------------------------------------------------------------


def cell(value: Any, column: Column) -> str:
    """A value as text: percentages with two decimals, missing values empty."""
    if value is None:
        return ""
    if column.kind == "pct":
        return f"{float(value):.2f}"
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    return str(value)


# --- Markdown -------------------------------------------------------------------------


def markdown_table(table: Table) -> str:
    if not table.rows:
        return "_No rows._"

    def md(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(md(c.title) for c in table.columns) + " |"
    sep = "|" + "|".join("---:" if c.kind in ("int", "pct") else "---" for c in table.columns) + "|"
    body = ["| " + " | ".join(md(cell(r.get(c.key), c)) for c in table.columns) + " |" for r in table.rows]
    return "\n".join([head, sep, *body])


def _heading(survey: Survey) -> list[str]:
    t = survey.totals
    lines = [
        f"# Feed survey: job {survey.job_id}, format {survey.fmt}",
        "",
        f"{counted(t.get('feeds', 0), 'feed')} in the job (all formats); "
        f"{counted(t.get('format_feeds', 0), survey.fmt + ' feed')} with {counted(t.get('format_items', 0), 'item')}; "
        f"{counted(t.get('pages', 0), 'web page')} fetched. "
        f"Jobs in the dataset: {', '.join(survey.jobs)}.",
    ]
    if survey.fmt == "rss":
        lines += ["", f"Published figures beside ours: {BOARD_2007}; {SURVEY_2005}."]
    return lines


def to_markdown(survey: Survey) -> str:
    parts = _heading(survey)
    for table in survey.tables:
        parts += ["", f"## {table.title}", ""]
        if table.intro:
            parts += [table.intro, ""]
        parts.append(markdown_table(table))
        for note in table.notes:
            parts += ["", f"> {note}"]
    return "\n".join(parts).rstrip() + "\n"


# --- CSV ------------------------------------------------------------------------------


def to_csv(table: Table) -> str:
    """One table as CSV: a header of column keys, then the rows (percentages with two decimals)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([c.key for c in table.columns])
    for r in table.rows:
        w.writerow([cell(r.get(c.key), c) for c in table.columns])
    return buf.getvalue()


# --- HTML and SVG ---------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #1a202c; line-height: 1.4; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #cbd5e0; }
nav ol { columns: 2; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #e2e8f0; padding: 2px 6px; vertical-align: top; }
th { background: #edf2f7; text-align: left; position: sticky; top: 0; }
td:first-child { white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr:nth-child(even) td { background: #f7fafc; }
p.note { font-size: 0.85em; color: #4a5568; border-left: 3px solid #cbd5e0; padding-left: 0.6em; }
p.intro { margin: 0.3em 0; }
figure { margin: 0.8em 0; } figcaption { font-size: 0.8em; color: #4a5568; }
svg text { font-family: inherit; font-size: 12px; fill: #1a202c; }
svg.chart { display: block; width: 100%; height: auto; }
div.wide { overflow-x: auto; max-width: 100%; }
@media (max-width: 600px) { body { margin: 1em auto; padding: 0 0.5em; } nav ol { columns: 1; } }
"""

_LABEL_W = 300
_BAR_W = 540
_ROW_H = 18
_BAR_H = 12
_TOP = 22
_MAX_LABEL = 46


def _short(text: str, limit: int = _MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def chart_rows(table: Table, chart: Chart) -> tuple[list[Any], int, int]:
    """The rows a chart draws, how many rows have a value to chart, and how many of those are left out as 0 %
    with no published figure to show beside them (a bar of nothing says less than the caption's count)."""
    valued = [r for r in table.rows if r.get(chart.value) is not None]
    drawn = [r for r in valued if float(r[chart.value]) > 0 or any(r.get(key) for key, _ in chart.marks)]
    return drawn[: chart.max_rows], len(drawn), len(valued) - len(drawn)


def svg_chart(table: Table, chart: Chart) -> str:
    """An inline SVG horizontal bar chart of ``chart.value`` (percent, 0-100), or '' when nothing to draw.

    The drawing is sized by its ``viewBox`` only: CSS (``svg.chart``) makes it as wide as the page allows, up to
    its natural width, and the height follows, so a narrow window shows the whole chart, smaller."""
    rows = chart_rows(table, chart)[0]
    if not rows:
        return ""
    width = _LABEL_W + _BAR_W + 70
    height = _TOP + len(rows) * _ROW_H + 26
    esc = html.escape
    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" style="max-width: {width}px" '
        f'preserveAspectRatio="xMinYMin meet" role="img" aria-label="{esc(table.title)}" shape-rendering="crispEdges">'
    ]
    # scale: 0, 25, 50, 75, 100 %
    for tick in range(0, 101, 25):
        x = _LABEL_W + _BAR_W * tick / 100
        out.append(f'<line x1="{x:.1f}" y1="{_TOP - 4}" x2="{x:.1f}" y2="{height - 22}" stroke="#e2e8f0"/>')
        out.append(f'<text x="{x:.1f}" y="{_TOP - 8}" text-anchor="middle">{tick}%</text>')
    for i, r in enumerate(rows):
        y = _TOP + i * _ROW_H
        label = str(r.get(chart.label) or "")
        value = float(r[chart.value])
        w = max(_BAR_W * min(value, 100.0) / 100, 1.0 if value > 0 else 0.0)
        out.append(
            f'<text x="{_LABEL_W - 6}" y="{y + _BAR_H - 1}" text-anchor="end"><title>{esc(label)}</title>'
            f"{esc(_short(label))}</text>"
        )
        if w > 0:  # a row at 0 % is drawn only for the published figure beside it: its mark, no bar
            out.append(
                f'<rect x="{_LABEL_W}" y="{y}" width="{w:.1f}" height="{_BAR_H}" fill="{BAR_COLOUR}">'
                f"<title>{esc(label)}: {value:.2f}%</title></rect>"
            )
        out.append(f'<text x="{_LABEL_W + _BAR_W + 64}" y="{y + _BAR_H - 1}" text-anchor="end">{value:.2f}%</text>')
        for (key, name), colour in zip(chart.marks, MARK_COLOURS, strict=False):
            ref = r.get(key)
            if ref is None:
                continue
            x = _LABEL_W + _BAR_W * min(float(ref), 100.0) / 100
            out.append(
                f'<rect x="{x - 1.5:.1f}" y="{y - 2}" width="3" height="{_BAR_H + 4}" fill="{colour}">'
                f"<title>{esc(name)}: {float(ref):.2f}%</title></rect>"
            )
    legend_y = height - 8
    out.append(f'<rect x="{_LABEL_W}" y="{legend_y - 9}" width="10" height="10" fill="{BAR_COLOUR}"/>')
    out.append(f'<text x="{_LABEL_W + 14}" y="{legend_y}">this crawl</text>')
    x = _LABEL_W + 100
    for (_, name), colour in zip(chart.marks, MARK_COLOURS, strict=False):
        out.append(f'<rect x="{x}" y="{legend_y - 10}" width="3" height="12" fill="{colour}"/>')
        out.append(f'<text x="{x + 8}" y="{legend_y}">{esc(name)}</text>')
        x += 30 + 7 * len(name)
    out.append("</svg>")
    return "".join(out)


def html_table(table: Table) -> str:
    if not table.rows:
        return "<p><em>No rows.</em></p>"
    esc = html.escape
    head = "".join(f"<th>{esc(c.title)}</th>" for c in table.columns)
    body = []
    for r in table.rows:
        tds = []
        for c in table.columns:
            cls = ' class="n"' if c.kind in ("int", "pct") else ""
            tds.append(f"<td{cls}>{esc(cell(r.get(c.key), c))}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    # In a box of its own that scrolls sideways: a wide table does not widen the page on a narrow screen.
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def to_html(survey: Survey) -> str:
    """The whole report as one self-contained HTML page (inline CSS and SVG, no script, no external resource)."""
    esc = html.escape
    head = [line for line in _heading(survey) if line]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(head[0].lstrip('# '))}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(head[0].lstrip('# '))}</h1>",
        *(f'<p class="intro">{esc(line)}</p>' for line in head[1:]),
        "<nav><ol>",
        *(f'<li><a href="#{esc(t.name)}">{esc(t.title)}</a></li>' for t in survey.tables),
        "</ol></nav>",
    ]
    for t in survey.tables:
        parts.append(f'<section id="{esc(t.name)}"><h2>{esc(t.title)}</h2>')
        if t.intro:
            parts.append(f'<p class="intro">{esc(t.intro)}</p>')
        if t.chart is not None:
            svg = svg_chart(t, t.chart)
            if svg:
                _, shown, zeros = chart_rows(t, t.chart)
                titles = {c.key: c.title for c in t.columns}
                caption = f"{titles.get(t.chart.value, t.chart.value)}, on a 0-100% scale"
                if shown > t.chart.max_rows:
                    caption += f"; the first {t.chart.max_rows} of the {shown} charted rows of the table below"
                if zeros:
                    caption += f"; {zeros} {t.chart.zero_rows if zeros != 1 else t.chart.zero_row} not drawn"
                parts.append(f"<figure>{svg}<figcaption>{esc(caption)}</figcaption></figure>")
        parts.append(html_table(t))
        parts.extend(f'<p class="note">{esc(note)}</p>' for note in t.notes)
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(survey: Survey, report_dir: Path, *, markdown: str | None = None) -> list[Path]:
    """Write survey.md, survey.html (and the same page as index.html, which a web server or a browser
    opening the folder shows first, as the demo's report does) and ``<table>.csv`` for every table into
    ``report_dir``; return the paths."""
    report_dir.mkdir(parents=True, exist_ok=True)
    written = []
    md_path = report_dir / "survey.md"
    md_path.write_text(markdown if markdown is not None else to_markdown(survey), encoding="utf-8")
    written.append(md_path)
    page = to_html(survey)
    for name in ("index.html", "survey.html"):
        html_path = report_dir / name
        html_path.write_text(page, encoding="utf-8")
        written.append(html_path)
    for t in survey.tables:
        p = report_dir / f"{t.name}.csv"
        p.write_text(to_csv(t), encoding="utf-8", newline="")
        written.append(p)
    return written
