"""The layers of docs/architecture.md, checked on every import in the code.

Every ``import`` and ``from ... import`` in ``crawler/``, ``pipelines/``,
``schemas/`` and ``feedcensus/`` is read with ``ast`` (at module level, inside functions and under
``TYPE_CHECKING`` alike) and judged against the table below, which is the
one in docs/architecture.md.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

#: Layer of each part, lowest first: a module may import its own layer and the ones below.
LAYERS: dict[str, int] = {
    "schemas": 0,
    "pipelines.document": 1,
    "pipelines.dataset": 1,
    "crawler.fetch": 2,
    "crawler.archive": 2,
    "crawler.outcomes": 3,
    "crawler.stats": 3,
    "crawler.fingerprint": 3,
    "crawler.downloader": 3,
    "crawler.settingchecks": 3,
    "crawler.requests": 3,
    "crawler.frontier": 3,
    "crawler.spiders": 3,
    "crawler.middlewares": 3,
    "crawler.handlers": 3,
    "crawler.extensions": 3,
    "crawler.settings": 3,
    "pipelines.feed": 3,
    "pipelines.history": 3,
    "pipelines.reflexive": 3,
    "pipelines.writer": 3,
    "pipelines.workers": 3,
    "crawler.report": 4,
    "crawler.demo": 4,
    "crawler.cli": 5,
    "feedcensus": 5,
}
#: Parts that must never import Scrapy or Twisted (the pure core, the report, the demo web).
NO_SCRAPY = (
    "schemas",
    "pipelines.document",
    "pipelines.dataset",
    "crawler.fetch",
    "crawler.archive",
    "crawler.report",
    "crawler.demo",
    "feedcensus",
)


def part_of(module: str) -> str | None:
    best = None
    for part in LAYERS:
        if (module == part or module.startswith(part + ".")) and (best is None or len(part) > len(best)):
            best = part
    return best


def modules() -> list[tuple[str, Path]]:
    found = []
    for top in ("schemas", "pipelines", "crawler", "feedcensus"):
        for path in sorted((REPO / top).rglob("*.py")):
            rel = path.relative_to(REPO).with_suffix("")
            name = ".".join(rel.parts).removesuffix(".__init__")
            found.append((name, path))
    return found


def imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


MODULES = [(name, path) for name, path in modules() if part_of(name) is not None]


def test_every_module_belongs_to_a_layer() -> None:
    orphans = [name for name, _ in modules() if part_of(name) is None and name not in ("crawler", "pipelines")]
    assert orphans == [], "add these to LAYERS here and to docs/architecture.md"


@pytest.mark.parametrize(("name", "path"), MODULES, ids=[name for name, _ in MODULES])
def test_imports_run_downwards_only(name: str, path: Path) -> None:
    own = part_of(name)
    assert own is not None
    upward = []
    for imported in imports(path):
        target = part_of(imported)
        if target is not None and LAYERS[target] > LAYERS[own]:
            upward.append(f"{imported} (layer {LAYERS[target]})")
        if own.startswith("pipelines") and imported.split(".")[0] == "crawler":
            upward.append(f"{imported} (pipelines never import crawler)")
    assert upward == [], f"{name} (layer {LAYERS[own]}) imports upwards"


PURE = [(name, path) for name, path in MODULES if part_of(name) in NO_SCRAPY]


@pytest.mark.parametrize(("name", "path"), PURE, ids=[name for name, _ in PURE])
def test_the_pure_core_never_imports_scrapy_or_twisted(name: str, path: Path) -> None:
    frameworks = [i for i in imports(path) if i.split(".")[0] in ("scrapy", "twisted")]
    assert frameworks == []


def test_the_architecture_doc_lists_every_layer() -> None:
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    for part in LAYERS:
        path = re.escape(part.replace(".", "/"))
        assert re.search(rf"`{path}(/|\.py)?`", doc), f"docs/architecture.md does not name {part}"


def test_every_setting_of_ours_is_in_the_readme_table() -> None:
    import crawler.settings as project

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ours = [name for name in dir(project) if name.startswith(("FEEDCENSUS_", "AUTODISCOVERY_"))]
    assert ours, "no settings found"
    missing = [name for name in ours if f"| `{name}` |" not in readme]
    assert missing == [], "add a row to the README's settings table"
