"""Rows the schema checks (issue #38): every row a code path builds has exactly its table's columns.

``schemas/rowtypes.py`` writes each table's row as a TypedDict; the first test keeps it equal to
``schemas/tables.py``. The row builders annotate their dicts with those types (mypy checks them),
and the tests below call every builder on real inputs (the corpus feeds, the discovery test pages, a
crawl of the demo web) and check each row's keys and value types against the table. The dataset
writer refuses a row with an unknown key or without a non-nullable value, with a one-line error.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from crawler.extensions.workers import worker_row
from crawler.fetch.discovery import read_page
from pipelines.dataset.commits import DatasetWriter
from pipelines.dataset.state import SeenItem
from pipelines.document.process import document_rows
from pipelines.document.rows import Carried, TableRows, carried_rows, fetch_row, link_rows, mark_novelty, page_rows
from pipelines.document.sites import site_of
from schemas.items import FeedDocument, FetchRecord, PageLinks
from schemas.rowtypes import ROW_TYPES, RowError, check_rows
from schemas.tables import PARTITION_KEY, TABLES, arrow_schema, decode_rows
from tests.conftest import crawl_demo, read_table

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
DISCOVERY_PAGES = Path(__file__).parent / "data" / "discovery"


def python_type(arrow: pa.DataType) -> Any:
    """The Python type a row holds for a column of this Arrow type."""
    if pa.types.is_string(arrow):
        return str
    if pa.types.is_integer(arrow):
        return int
    if pa.types.is_boolean(arrow):
        return bool
    if pa.types.is_timestamp(arrow):
        return datetime
    if pa.types.is_list(arrow):
        return list[python_type(arrow.value_type)]  # type: ignore[misc]
    raise AssertionError(f"no Python type for {arrow}")


def test_each_row_type_has_exactly_its_tables_columns_and_types() -> None:
    assert set(ROW_TYPES) == set(TABLES)
    for table, fields in TABLES.items():
        hints = typing.get_type_hints(ROW_TYPES[table])
        assert set(hints) == {f.name for f in fields}, table
        for f in fields:
            want = python_type(f.type)
            assert hints[f.name] == (want | None if f.nullable else want), f"{table}.{f.name}"


def fits(value: Any, want: Any) -> bool:
    """Whether ``value`` is of the row type ``want`` (``X``, ``X | None``, ``list[X]``)."""
    if isinstance(want, types.UnionType):
        return any(fits(value, arm) for arm in typing.get_args(want))
    if want is type(None):
        return value is None
    if typing.get_origin(want) is list:
        (inner,) = typing.get_args(want)
        return isinstance(value, list) and all(fits(v, inner) for v in value)
    if want is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, want)


def assert_rows_fit(table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Every row has exactly ``table``'s columns, each value of its column's type."""
    hints = typing.get_type_hints(ROW_TYPES[table])
    for row in rows:
        assert set(row) == set(hints), f"{table}: extra {set(row) - set(hints)}, missing {set(hints) - set(row)}"
        wrong = {k: v for k, v in row.items() if not fits(v, hints[k])}
        assert wrong == {}, f"{table} values of the wrong type"


def corpus_documents(corpus: Path) -> list[Path]:
    """The benchmark feeds and every 20th of feedparser's test documents (broken ones included)."""
    feeds = sorted(p for p in (corpus / "benchmark_feeds").iterdir() if p.is_file())
    tests = sorted(p for p in (corpus / "feedparser_tests").rglob("*") if p.is_file())[::20]
    if not feeds:
        pytest.skip(f"no corpus at {corpus}")
    return feeds + tests


def feed_document(body: bytes, **changes: Any) -> FeedDocument:
    doc = FeedDocument(
        url="http://127.0.0.1:8000/feed",
        final_url="http://127.0.0.1:8000/feed.xml",
        status=200,
        headers={"content-type": "application/rss+xml", "etag": '"e"', "server": "test"},
        body=body,
        discovered_via="seed",
        source="seeds.txt",
        depth=0,
        fetched_at=NOW,
    )
    return replace(doc, **changes)


def test_every_row_of_the_corpus_feeds_fits_its_table(corpus: Path) -> None:
    tables: dict[str, int] = {}
    for path in corpus_documents(corpus):
        rows, _ = document_rows(feed_document(path.read_bytes()), NOW, job_id="J", content_hash="h")
        for table, table_rows in rows.rows.items():
            assert_rows_fit(table, table_rows)
            tables[table] = tables.get(table, 0) + len(table_rows)
        # as a worker sends them: the batches have the table's schema, and read back the same rows
        encoded = TableRows(rows={t: list(r) for t, r in rows.rows.items()})
        encoded.encode(("items", "element_usage", "conformance"))
        for table, batch in encoded.encoded.items():
            assert decode_rows(table, batch).to_pylist() == rows.rows[table]
    assert set(tables) == {"feeds", "items", "element_usage", "conformance", "fetch_log"}
    assert min(tables.values()) > 100


def test_rows_of_incremental_crawls_fit_their_tables(corpus: Path) -> None:
    body = next(p for p in corpus_documents(corpus) if b"<item" in p.read_bytes()).read_bytes()
    rows, _ = document_rows(feed_document(body), NOW, job_id="B", content_hash="h")
    items = rows.rows["items"]
    seen = {items[0]["identity"]: SeenItem(first_seen_job="A", content_hash="old")}
    mark_novelty(rows, seen)
    assert items[0]["first_seen_job"] == "A" and items[0]["is_new"] is False and items[0]["is_changed"] is True
    assert_rows_fit("items", items)
    assert_rows_fit("feeds", rows.rows["feeds"])
    previous = rows.rows["feeds"][0]
    record = FetchRecord(url=previous["url"], outcome="not_modified", status=304, fetched_at=NOW, depth=0)
    for headers in ({"etag": '"f"', "cache-control": "max-age=60"}, None):
        carried = carried_rows(Carried(previous["url"], previous, record, headers))
        assert_rows_fit("feeds", carried.rows["feeds"])
        assert_rows_fit("fetch_log", carried.rows["fetch_log"])
        assert carried.rows["feeds"][0]["changed"] is False


def test_fetch_log_rows_of_every_kind_of_record_fit() -> None:
    records = [
        FetchRecord(url="http://127.0.0.1:1/x", outcome="http_error", fetched_at=NOW),
        FetchRecord(
            url="http://127.0.0.1:1/x", outcome="feed", final_url="http://127.0.0.1:1/y", status=200, error=None,
            source="s", discovered_via="seed", depth=1, content_type="text/xml", bytes=10, fetched_at=NOW,
            retry_after="120", next_due=NOW, due_hint="ttl", due_reason="r", warc_filename="a.warc.gz",
            warc_record_offset=0, warc_record_length=5, server="s", x_powered_by="p", content_language="en",
        ),
    ]  # fmt: skip
    rows = [fetch_row(rec) for rec in records]
    assert_rows_fit("fetch_log", rows)
    assert rows[0]["site"] == site_of("http://127.0.0.1:1/x")


def test_links_and_pages_rows_of_the_discovery_pages_fit() -> None:
    pages = sorted(DISCOVERY_PAGES.glob("*.html"))
    assert pages
    links = 0
    for path in pages:
        found = read_page(path.read_bytes(), "http://127.0.0.1:8000/" + path.name)
        page = PageLinks(
            page_url="http://127.0.0.1:8000/" + path.name,
            links=found.links,
            followed=[True] * len(found.links),
            requested_url="http://127.0.0.1:8000/" + path.name,
            facts=found.facts,
            fetched_at=NOW,
        )
        assert_rows_fit("links", link_rows(page))
        assert_rows_fit("pages", page_rows(page))
        links += len(found.links)
    assert links > 0


def test_the_workers_row_fits() -> None:
    stats = {"finish_reason": "finished", "downloader/request_count": 3, "feedcensus/outcome/feed": 1}
    row = worker_row("host:12:abc", stats, started=NOW, finished=NOW, frontier=None)
    assert_rows_fit("workers", [row])


def test_a_real_crawl_writes_every_table_with_its_schema(tmp_path: Path, demo_server: object) -> None:
    """Every code path of a crawl (feeds in the workers, pages, robots.txt, dead ends, the workers row,
    a second job's carried feeds) goes through the writer's check: a refused row would stop the job."""
    out = crawl_demo(tmp_path, demo_server, "A")
    crawl_demo(tmp_path, demo_server, "B")
    for table in TABLES:
        arrow = read_table(out, table)
        assert arrow.num_rows > 0, table
        assert arrow.schema.names == [*arrow_schema(table).names, PARTITION_KEY], table
        for field in arrow_schema(table):
            assert arrow.schema.field(field.name).type == field.type, f"{table}.{field.name}"
    assert set(read_table(out, "feeds").column("changed").to_pylist()) == {True, False}  # job B carried some


# --- the writer refuses what does not fit ------------------------------------------------------------


def usage_row(**changes: Any) -> dict[str, Any]:
    return {"feed_url": "http://127.0.0.1/f", "scope": "item", "element": "title", "count": 1,
            "items_with": 1, "defined": True, **changes}  # fmt: skip


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({**usage_row(), "itmes_with": 1}, "element_usage row has no such column: itmes_with (a misspelled key?)"),
        ({k: v for k, v in usage_row().items() if k != "count"}, "element_usage row has no value for count"),
        (usage_row(scope=None), "element_usage row has no value for scope, which may not be null"),
    ],
    ids=["misspelled", "missing", "null"],
)
def test_the_dataset_writer_refuses_a_row_that_does_not_fit(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    writer = DatasetWriter(str(tmp_path / "out"), "J")
    with pytest.raises(RowError) as refused:
        writer.write_many({"element_usage": [usage_row(), row], "fetch_log": []})
    assert str(refused.value).startswith(message)
    assert "\n" not in str(refused.value)
    assert writer.pending == 0  # nothing of the call was buffered
    writer.write("element_usage", [usage_row(), {"feed_url": "x", "scope": "s", "element": "e", "count": 2}])
    assert writer.pending == 2  # a nullable column left out is fine: it is written as null


def test_a_worker_refuses_to_encode_a_row_that_does_not_fit() -> None:
    rows = TableRows(rows={"element_usage": [usage_row(defnied=True)]})
    with pytest.raises(RowError, match="defnied"):
        rows.encode(["element_usage"])


def test_an_unknown_table_is_refused_by_name() -> None:
    with pytest.raises(RowError, match="no table 'feed'"):
        check_rows("feed", [{"url": "x"}])
