"""Markdown tables that survive real data: the one cell escaper the notebooks show results with.

A value crawled from the web can hold anything: a ``\\r\\n`` or a ``|`` in a feed's
date or e-mail field would otherwise end a table row or add a column, and a
``<tag>`` would be taken for HTML by the notebook's renderer. :func:`markdown_cell`
turns one value into text that stays inside its cell; :func:`markdown_table`
builds a GitHub-flavoured Markdown table from column names and rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["markdown_cell", "markdown_table"]

#: Every line break a Markdown renderer (or Python's ``str.splitlines``) may honour: CR LF, CR, LF,
#: vertical tab, form feed, NEL, and the Unicode line and paragraph separators. Each run becomes one space.
_LINE_BREAKS = re.compile(r"[\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]+")
#: Characters that would end the cell (``|``), start a code span, emphasis, strikethrough, a link, HTML,
#: an entity or (in Jupyter) math, or escape the next one (``\\``); and an underscore that could open or
#: close emphasis (one not between two letters or digits: ``conforms_rss_spec`` stays as it is). Each gets
#: a backslash, which CommonMark allows before any ASCII punctuation and renders as the character itself.
_SPECIAL = re.compile(r"[\\`|*~<>\[\]&$]|(?<![^\W_])_|_(?![^\W_])")


def markdown_cell(value: object) -> str:
    """``value`` as the text of one Markdown table cell: ``None`` is empty, a float has two decimals,
    line breaks become spaces and Markdown's special characters are escaped."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    text = _LINE_BREAKS.sub(" ", str(value))
    return _SPECIAL.sub(lambda m: "\\" + m.group(0), text).strip()


def markdown_table(columns: Sequence[object], rows: Iterable[Sequence[object]], title: str = "") -> str:
    """A Markdown table of ``rows`` under ``columns`` (each row one line, however odd its values),
    after a bold ``title`` when there is one."""
    lines = [f"**{markdown_cell(title)}**", ""] if title else []
    lines.append("| " + " | ".join(markdown_cell(c) for c in columns) + " |")
    lines.append("|" + "---|" * len(columns))
    lines += ["| " + " | ".join(markdown_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
