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
    "pipelines.reflexive": 3,
    "pipelines.parquet": 3,
    "crawler.report": 4,
    "crawler.demo": 4,
    "crawler.cli": 5,
    "feedcensus": 5,
}
#: The rooms of the Scrapy layer (3), and the rooms each may import besides its own. The kit is what every
#: component shares (outcomes, stats, fingerprints, setting checks, and the request builder with the
#: Protocols through which the others know the spider); the services are the Scrapy extensions, every one
#: in crawler/extensions/ but the frontier's worker, part of the one adapter over scrapy-redis. The
#: components (downloading, middlewares, spider, item pipelines) use the kit and the services; only the
#: middlewares also reach the download handlers they install. Nobody imports the spider.
ROOMS: dict[str, str] = {
    "crawler.outcomes": "kit",
    "crawler.stats": "kit",
    "crawler.fingerprint": "kit",
    "crawler.settingchecks": "kit",
    "crawler.requests": "kit",
    "crawler.settings": "kit",
    "crawler.extensions": "services",
    "crawler.frontier": "services",
    "crawler.downloader": "downloading",
    "crawler.handlers": "downloading",
    "crawler.middlewares": "middlewares",
    "crawler.spiders": "spider",
    "pipelines.feed": "item pipelines",
    "pipelines.reflexive": "item pipelines",
    "pipelines.parquet": "item pipelines",
}
MAY_IMPORT: dict[str, tuple[str, ...]] = {
    "kit": (),
    "services": ("kit",),
    "downloading": ("kit", "services"),
    "middlewares": ("kit", "services", "downloading"),
    "spider": ("kit", "services"),
    "item pipelines": ("kit", "services"),
}
#: Where the Scrapy extensions live (the classes components find with ``crawler.get_extension``).
EXTENSION_HOMES = ("crawler.extensions", "crawler.frontier")
#: The dataset's hook lists: only crawler/extensions/dataset.py touches them; others call ``add_hook``.
HOOK_LISTS = ("on_take", "before_commit", "after_commit", "before_close", "_hooks")
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
        if own in ("pipelines.document", "pipelines.dataset") and imported.split(".")[0] == "crawler":
            upward.append(f"{imported} (the pure core never imports crawler)")
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


SCRAPY_LAYER = [(name, path) for name, path in MODULES if part_of(name) in ROOMS]


@pytest.mark.parametrize(("name", "path"), SCRAPY_LAYER, ids=[name for name, _ in SCRAPY_LAYER])
def test_rooms_of_the_scrapy_layer_import_only_what_they_may(name: str, path: Path) -> None:
    own = part_of(name)
    assert own is not None
    room = ROOMS[own]
    wrong = []
    for imported in imports(path):
        target = part_of(imported)
        if target is None or target not in ROOMS or ROOMS[target] == room:
            continue
        if ROOMS[target] not in MAY_IMPORT[room]:
            wrong.append(f"{imported} ({ROOMS[target]})")
    assert wrong == [], f"{name} ({room}) may import only {', '.join(MAY_IMPORT[room]) or 'its own room'}"


def test_every_room_has_its_rules() -> None:
    assert set(ROOMS.values()) == set(MAY_IMPORT)
    assert {part for part, layer in LAYERS.items() if layer == 3} == set(ROOMS), "put every layer-3 part in a room"


def _imported_from(tree: ast.AST) -> dict[str, str]:
    """name -> the module it was imported from, for every ``from M import name`` of a module."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                found[alias.asname or alias.name] = node.module
    return found


@pytest.mark.parametrize(("name", "path"), MODULES, ids=[name for name, _ in MODULES])
def test_extensions_live_in_one_place(name: str, path: Path) -> None:
    """Every class a component finds with ``crawler.get_extension(X)`` is defined under crawler/extensions/
    (or is the frontier's worker)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    origin = _imported_from(tree)
    elsewhere = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get_extension":
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Name):
                home = origin.get(arg.id, name)  # a class of this module itself when not imported
                if not any(home == h or home.startswith(h + ".") for h in EXTENSION_HOMES):
                    elsewhere.append(f"{arg.id} (from {home})")
    assert elsewhere == []


def test_the_settings_list_extensions_from_their_one_place() -> None:
    import crawler.settings as project

    ours = [path for path in project.EXTENSIONS if not path.startswith("scrapy.")]
    assert ours
    assert [p for p in ours if not p.startswith(EXTENSION_HOMES)] == []
    assert [p for p in project.ITEM_PIPELINES if not p.startswith("pipelines.")] == []


@pytest.mark.parametrize(("name", "path"), MODULES, ids=[name for name, _ in MODULES])
def test_only_the_dataset_touches_its_hook_lists(name: str, path: Path) -> None:
    """Hooks are added with ``Dataset.add_hook`` under a role of ``HOOK_ROLES``, which fixes their order."""
    if name == "crawler.extensions.dataset":
        return
    from crawler.extensions.dataset import HOOK_ROLES

    tree = ast.parse(path.read_text(encoding="utf-8"))
    touched = [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in HOOK_LISTS]
    assert touched == [], "use Dataset.add_hook(point, role, hook)"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_hook":
            role = node.args[1] if len(node.args) > 1 else None
            assert isinstance(role, ast.Constant) and role.value in HOOK_ROLES, ast.unparse(node)


#: Who may import the dataset's writer: only the Dataset extension creates one, and every row goes through its
#: methods. (The frontier's worker reaches ``Dataset.writer`` for the commit protocol, without importing it.)
WRITER_HOLDERS = ("crawler.extensions.dataset",)


@pytest.mark.parametrize(("name", "path"), SCRAPY_LAYER, ids=[name for name, _ in SCRAPY_LAYER])
def test_one_way_to_write_rows(name: str, path: Path) -> None:
    if name in WRITER_HOLDERS:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    writers = [
        f"{n.module}.{a.name}"
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and n.module in ("pipelines.dataset.store", "pipelines.dataset.commits")
        for a in n.names
        if a.name == "DatasetWriter"
    ]
    assert writers == [], "write rows through crawler.extensions.dataset.Dataset"
    assert "pyarrow.parquet" not in imports(path), "write rows through crawler.extensions.dataset.Dataset"
