"""``feedcensus.markdown_table``, the helper the notebooks show every result with, on values crawled
from the web: each row stays one row of the same cells, and each cell renders as the value itself.

The rendering is mistune's (nbconvert's Markdown parser, in the notebooks extra), with its GFM
table plugin. The old helper of the notebooks escaped ``|`` and ``\\n`` only: a ``\\r\\n`` in a
feed's date split "Examples of failures" into broken rows (checked below on that helper too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from feedcensus import markdown_cell, markdown_table

mistune = pytest.importorskip(
    "mistune", reason="the notebooks extra (nbconvert, which brings mistune) is not installed"
)

#: Values as feeds write them, and what a reader should see in the cell (line breaks as one space).
HOSTILE: list[tuple[object, str]] = [
    ("Mon, 01 Jun 2026\r\n08:00:00 GMT", "Mon, 01 Jun 2026 08:00:00 GMT"),
    ("a|b", "a|b"),
    ("line one\rline two\nline three", "line one line two line three"),
    ("ends in a backslash \\", "ends in a backslash \\"),
    ("\\|", "\\|"),
    ("`code` and ``two`` and a lone `", "`code` and ``two`` and a lone `"),
    ("<script>alert(1)</script> <b>bold</b>", "<script>alert(1)</script> <b>bold</b>"),
    ("&amp; &lt; &#124;", "&amp; &lt; &#124;"),
    ("*not emphasis* _nor this_ [not a link](x)", "*not emphasis* _nor this_ [not a link](x)"),
    ("u\u2028v\u2029w\x0bx\x0cy\x85z", "u v w x y z"),
    ("| starts with a pipe", "| starts with a pipe"),
    ("__init__ and a__b and snake_case_name", "__init__ and a__b and snake_case_name"),
    ("~~not struck~~ for $5 or $6", "~~not struck~~ for $5 or $6"),
    ("", ""),
    (None, ""),
    (12, "12"),
    (2.0 / 3, "0.67"),
]


def _text(node: dict[str, Any]) -> str:
    if "children" in node:
        return "".join(_text(child) for child in node["children"])
    if node["type"] == "codespan":
        return f"`{node['raw']}`"
    return str(node.get("raw", ""))


def rendered_cells(markdown: str) -> tuple[list[str], list[list[str]]]:
    """The header and body cells of the one table in ``markdown``, as text, as mistune reads them."""
    parse = mistune.create_markdown(renderer=None, plugins=["table"])
    tables = [node for node in parse(markdown) if node["type"] == "table"]
    assert len(tables) == 1, markdown
    head, body = tables[0]["children"]
    return [_text(c) for c in head["children"]], [[_text(c) for c in row["children"]] for row in body["children"]]


def test_every_hostile_value_stays_in_its_cell_and_reads_as_itself() -> None:
    rows = [(f"row {n}", value, "after") for n, (value, _) in enumerate(HOSTILE)]
    head, body = rendered_cells(markdown_table(["name", "value", "next"], rows, "Examples of failures"))
    assert head == ["name", "value", "next"]
    assert len(body) == len(HOSTILE)
    for n, (cells, (value, shown)) in enumerate(zip(body, HOSTILE, strict=True)):
        assert cells == [f"row {n}", shown, "after"], repr(value)


def test_a_cell_is_one_line() -> None:
    for value, _ in HOSTILE:
        assert "\n" not in markdown_cell(value) and "\r" not in markdown_cell(value)


def test_headings_and_titles_are_escaped_too() -> None:
    markdown = markdown_table(["a|b", "c\r\nd"], [(1, 2)], "Rules | failed")
    assert markdown.splitlines()[0] == "**Rules \\| failed**"
    head, body = rendered_cells(markdown)
    assert head == ["a|b", "c d"] and body == [["1", "2"]]


def _old_helper(columns: Sequence[str], rows: list[tuple[object, ...]]) -> str:
    """The notebooks' helper before feedcensus.markdown_table (its cell escaping, verbatim)."""

    def cell(v: object) -> str:
        if v is None:
            return ""
        if isinstance(v, float):
            return f"{v:.2f}"
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("helper", "broken"),
    [(_old_helper, True), (lambda columns, rows: markdown_table(columns, rows), False)],
    ids=["old helper", "markdown_table"],
)
def test_a_crlf_example_breaks_only_the_old_helper(
    helper: Callable[[Sequence[str], list[tuple[object, ...]]], str], broken: bool
) -> None:
    rows: list[tuple[object, ...]] = [("date-invalid", "Mon, 01 Jun 2026\r\n08:00 GMT"), ("version-missing", "x \\")]
    markdown = helper(["rule", "example"], rows)
    try:
        _, body = rendered_cells(markdown)
    except AssertionError:  # no table at all
        body = []
    intact = len(body) == 2 and body[0][1] == "Mon, 01 Jun 2026 08:00 GMT" and body[1][1] == "x \\"
    assert intact is not broken, body


def test_escaping_is_idempotent_for_plain_words() -> None:
    words = "dc:creator wfw:commentRss item-missing-guid conforms_rss_spec application/rss+xml 100%"
    assert markdown_cell(words) == words
    assert re.fullmatch(r"[\w:\-/+% ]+", markdown_cell(words))
