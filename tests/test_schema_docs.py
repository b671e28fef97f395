"""The schema contract: docs/datasets.md matches schemas/tables.py both ways; types, metadata, versions."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.store import open_table
from schemas.tables import (
    SCHEMA_VERSION,
    TABLES,
    TIMESTAMP,
    VERSION_KEY,
    SchemaVersionError,
    arrow_schema,
    check_version,
)
from tests.conftest import run_cli

DOC = Path(__file__).resolve().parents[1] / "docs" / "datasets.md"
HEADER = ["column", "type", "nullable", "description"]


def type_name(t: pa.DataType) -> str:
    """How the doc writes an Arrow type: Arrow's own string, lists without their item field name."""
    return f"list<{type_name(t.value_type)}>" if pa.types.is_list(t) else str(t)


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def unquote(cell: str) -> str:
    return cell[1:-1] if len(cell) > 1 and cell[0] == cell[-1] == "`" else cell


def documented() -> dict[str, list[tuple[str, str, bool, str]]]:
    """{table: [(column, type, nullable, description)]} from each "## `table`" section's Markdown table."""
    tables: dict[str, list[tuple[str, str, bool, str]]] = {}
    current: str | None = None
    in_table = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if m := re.fullmatch(r"##\s+`(\w+)`\s*", line):
            current, in_table = m.group(1), False
            assert current not in tables, f"{current} documented twice"
            tables[current] = []
        elif line.startswith("#"):
            current, in_table = None, False
        elif current and line.startswith("|"):
            row = cells(line)
            if row == HEADER:
                in_table = True
            elif in_table and not set("".join(row)) <= set("-: "):
                assert len(row) == 4, f"{current}: {line!r}"
                column, type_, nullable, description = row
                assert nullable in ("yes", "no"), f"{current}.{column}: nullable is {nullable!r}"
                tables[current].append((unquote(column), unquote(type_), nullable == "yes", description))
        elif in_table and line.strip():
            in_table = False
    return tables


def test_the_doc_documents_exactly_the_tables_of_the_code() -> None:
    assert list(documented()) == list(TABLES)


@pytest.mark.parametrize("table", list(TABLES))
def test_each_documented_column_matches_the_code(table: str) -> None:
    code = [(f.name, type_name(f.type), f.nullable, f.description) for f in TABLES[table]]
    doc = documented()[table]
    assert [c[0] for c in doc] == [c[0] for c in code], "columns differ (names or order)"
    for got, want in zip(doc, code, strict=True):
        assert got == want


def test_the_doc_explains_layout_versions_and_reading() -> None:
    text = DOC.read_text(encoding="utf-8")
    for needle in (
        "job_id=<job>",
        "--job-id",
        "feedcensus.schema_version",
        "SchemaVersionError",
        "read_parquet('demo-out/feeds/**/*.parquet', hive_partitioning = 1",
        "s3://bucket/prefix?endpoint_override=",
        ".running",
        "RENAME_EXCHANGE",
    ):
        assert needle in text, needle
    assert f"now `{SCHEMA_VERSION}`" in text


# --- types analysts want -------------------------------------------------------------

COUNTS = {
    "status",
    "item_count",
    "bytes",
    "errors",
    "warnings",
    "position",
    "enclosure_length",
    "count",
    "items_with",
    "depth",
    "new_items",
    "changed_items",
    "ttl",
    "update_frequency",
}
FLAGS = {
    "content_type_ok",
    "well_formed",
    "self_url_matches",
    "guid_is_permalink",
    "defined",
    "in_head",
    "followed",
    "changed",
    "is_new",
    "is_changed",
}
LISTS = {"categories", "reasons", "skip_days"}
INT_LISTS = {"skip_hours"}  # GMT hours, numbers


@pytest.mark.parametrize("table", list(TABLES))
def test_no_everything_is_a_string_columns(table: str) -> None:
    fields = TABLES[table]
    for f in fields:
        t = f.type
        if pa.types.is_timestamp(t) or f.name.endswith("_at") or f.name == "pub_date":
            assert t == TIMESTAMP and str(t) == "timestamp[us, tz=UTC]", f.name
        if f.name in COUNTS:
            assert pa.types.is_integer(t), f.name
        if f.name in FLAGS or f.name.startswith("conforms_"):
            assert pa.types.is_boolean(t), f.name
        if f.name in INT_LISTS:
            assert type_name(t) == "list<int32>", f.name
        elif pa.types.is_list(t) or f.name in LISTS:
            assert type_name(t) == "list<string>", f.name
        assert not pa.types.is_large_string(t) and not pa.types.is_dictionary(t), f.name
    # Every table types something other than text.
    assert any(not pa.types.is_string(f.type) for f in fields)


def test_every_field_has_a_one_line_description_in_its_metadata() -> None:
    for table, fields in TABLES.items():
        schema = arrow_schema(table)
        assert schema.metadata[VERSION_KEY] == SCHEMA_VERSION.encode()
        assert len({f.name for f in fields}) == len(fields), f"{table}: a column is defined twice"
        for f in fields:
            meta = schema.field(f.name).metadata
            assert meta is not None, f"{table}.{f.name}"
            assert meta[b"description"].decode() == f.description, f"{table}.{f.name}"
            assert f.description.strip() and "\n" not in f.description and "|" not in f.description
            assert schema.field(f.name).nullable == f.nullable


# --- versions in real files ----------------------------------------------------------


def write_conformance(out: Path, job: str = "j1") -> Path:
    writer = DatasetWriter(str(out), job, batch_rows=10)
    writer.write(
        "conformance", [{"feed_url": "http://x/", "rule": "r", "severity": "error", "scope": "channel", "count": 2}]
    )
    writer.close()
    (path,) = (out / "conformance" / f"job_id={job}").glob("*.parquet")
    return path


def test_written_files_carry_the_version_and_the_descriptions(tmp_path: Path) -> None:
    path = write_conformance(tmp_path / "out")
    meta = pq.read_metadata(path)
    assert meta.metadata is not None
    assert meta.metadata[VERSION_KEY] == SCHEMA_VERSION.encode()
    assert check_version(meta.metadata, where=str(path)) == SCHEMA_VERSION
    schema = pq.read_schema(path)
    for f in TABLES["conformance"]:
        field_meta = schema.field(f.name).metadata
        assert field_meta is not None, f.name
        assert field_meta[b"description"] == f.description.encode()
        assert schema.field(f.name).type == f.type and schema.field(f.name).nullable == f.nullable
    assert open_table(str(tmp_path / "out"), "conformance", "j1").to_table().column("count").to_pylist() == [2]


def write_versioned(out: Path, version: str | None, job: str = "j2") -> None:
    schema = arrow_schema("conformance")
    metadata = {VERSION_KEY: version.encode()} if version else {b"other": b"x"}
    row = {"feed_url": "http://y/", "rule": "r", "severity": "warning", "scope": "item", "count": 1}
    directory = out / "conformance" / f"job_id={job}"
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.Table.from_pylist([row], schema=schema.with_metadata(metadata)), directory / "part-000001-x.parquet"
    )


def test_a_newer_major_version_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_conformance(out)
    write_versioned(out, "2.0")
    with pytest.raises(SchemaVersionError) as caught:
        open_table(str(out), "conformance")
    message = str(caught.value)
    assert "part-000001-x.parquet" in message
    assert f"schema version 2.0 is newer than this feedcensus reads ({SCHEMA_VERSION}); upgrade feedcensus" in message
    with pytest.raises(SchemaVersionError):
        open_table(str(out), "conformance", "j2")
    assert open_table(str(out), "conformance", "j1").count_rows() == 1  # the other run still reads


def test_a_newer_minor_version_reads_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_versioned(out, "1.9", job="minor")
    assert open_table(str(out), "conformance", "minor").to_table().column("severity").to_pylist() == ["warning"]
    write_versioned(out, None, job="bare")
    with pytest.raises(SchemaVersionError, match="not a feedcensus dataset"):
        open_table(str(out), "conformance", "bare")


def test_the_cli_reports_a_newer_dataset_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_versioned(out, "3.1")
    for table in ("feeds", "items", "element_usage", "links", "fetch_log"):
        write_versioned_table = out / table / "job_id=j2"
        write_versioned_table.mkdir(parents=True)
        pq.write_table(
            pa.Table.from_pylist([], schema=arrow_schema(table).with_metadata({VERSION_KEY: b"3.1"})),
            write_versioned_table / "part-000001-x.parquet",
        )
    proc = run_cli("survey", str(out))
    assert proc.returncode == 2, proc.stdout
    assert "schema version 3.1 is newer" in proc.stderr and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr
