"""Files a person can hold in their head (issue 38), checked on every source file of the project.

``crawler/``, ``pipelines/``, ``schemas/`` and ``feedcensus/``: no file over about 600 lines, every
function at most 20 in radon's cyclomatic complexity (which, unlike ruff's limit, counts boolean
operators), and every file ranked A or B by radon's maintainability index.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from radon.complexity import cc_visit
from radon.metrics import mi_rank, mi_visit

REPO = Path(__file__).resolve().parents[1]
#: "About 600": a file may pass it by a few lines, not by a concern.
MAX_LINES = 620
MAX_COMPLEXITY = 20
SOURCES = sorted(p for top in ("crawler", "pipelines", "schemas", "feedcensus") for p in (REPO / top).rglob("*.py"))
IDS = [str(p.relative_to(REPO)) for p in SOURCES]


@pytest.mark.parametrize("path", SOURCES, ids=IDS)
def test_a_source_file_is_short_simple_and_maintainable(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MAX_LINES, "split it by concern (docs/architecture.md)"
    tangled = [f"{b.name} ({b.complexity})" for b in cc_visit(text) if b.complexity > MAX_COMPLEXITY]
    assert tangled == [], "split these functions"
    assert mi_rank(mi_visit(text, multi=True)) in ("A", "B")
