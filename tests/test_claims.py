"""The keys a distributed job's rows are claimed by (pipelines/dataset/claims.py), as pure functions.

``feedcensus commoncrawl --live`` keeps two fetches of one URL in one job: a web archive's copy of a feed
and the live fetch of the same URL. They must be two keys, or one copy's rows drop the other's.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from pipelines.dataset.claims import (
    commit_keys,
    fetch_key,
    keep_rows,
    keep_winners,
    page_keys,
    winning_commits,
)
from schemas.tables import arrow_schema

FEED = "http://site.example/feed.xml"
PAGE = "http://site.example/"


def table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    """``rows`` as an Arrow table of ``name``'s schema (missing columns null)."""
    schema = arrow_schema(name)
    return pa.Table.from_pylist([{f.name: r.get(f.name) for f in schema} for r in rows], schema=schema)


def log_row(url: str, via: str, outcome: str = "feed", **more: Any) -> dict[str, Any]:
    return {"url": url, "final_url": url, "outcome": outcome, "discovered_via": via, "source": PAGE, **more}


def test_an_archived_copy_and_a_live_fetch_of_one_url_have_two_keys() -> None:
    archived, live = log_row(FEED, "archive"), log_row(FEED, "archive-link")
    assert fetch_key(archived) == f"archive {FEED}"
    assert fetch_key(live) == FEED
    assert commit_keys([archived, live, live]) == [f"archive {FEED}", FEED]
    assert fetch_key(log_row(FEED, "archive", "robots")) == f"robots {FEED}"
    duplicate = fetch_key(log_row(FEED, "archive-link", "duplicate"))
    assert duplicate not in (FEED, f"archive {FEED}")


def test_a_commit_holding_both_copies_drops_only_the_one_another_commit_holds() -> None:
    """Both copies of a feed in one commit, the archived one claimed by another commit first: its feeds,
    items, element_usage and conformance rows go, the live copy's stay (``items.archived`` says whose)."""
    drop = {f"archive {FEED}"}
    feeds = table("feeds", [{"url": FEED, "discovered_via": v} for v in ("archive", "archive-link")])
    assert keep_rows("feeds", feeds, drop, {}).column("discovered_via").to_pylist() == ["archive-link"]
    items = table("items", [{"feed_url": FEED, "position": n, "archived": n < 3} for n in range(8)])
    assert keep_rows("items", items, drop, {}).column("position").to_pylist() == [3, 4, 5, 6, 7]
    usage = table("element_usage", [{"feed_url": FEED, "element": "title", "archived": a} for a in (True, False)])
    assert keep_rows("element_usage", usage, drop, {}).column("archived").to_pylist() == [False]
    checks = table("conformance", [{"feed_url": FEED, "rule": "r", "archived": a} for a in (False, True)])
    assert keep_rows("conformance", checks, drop, {}).column("archived").to_pylist() == [False]
    # Files before schema 1.9 have no archived column: their rows read as the live copy's.
    old = items.drop_columns(["archived"])
    assert keep_rows("items", old, drop, {}).num_rows == 8
    assert keep_rows("items", old, {FEED}, {}).num_rows == 0


def test_a_pages_rows_have_its_fetch_log_rows_key() -> None:
    """An archived page's pages and links rows go with its archive key; a redirected live page's with the
    URL it was requested as."""
    moved = "http://site.example/old"
    log = [
        log_row(PAGE, "archive", "page"),
        {"url": moved, "final_url": PAGE + "new", "outcome": "page", "discovered_via": "url"},
        log_row(FEED, "archive-link", "duplicate"),
    ]
    keys = page_keys(log)
    assert keys == {PAGE: f"archive {PAGE}", PAGE + "new": moved}
    pages = table("pages", [{"page_url": PAGE, "url": PAGE}, {"page_url": PAGE + "new", "url": moved}])
    links = table("links", [{"page_url": PAGE, "href": FEED}, {"page_url": PAGE + "new", "href": FEED}])
    assert keep_rows("pages", pages, {f"archive {PAGE}"}, keys).column("url").to_pylist() == [moved]
    assert keep_rows("links", links, {moved}, keys).column("page_url").to_pylist() == [PAGE]
    assert keep_rows("links", links, {PAGE}, keys).num_rows == 2  # the live key of the URL is not the page's


def test_readers_keep_each_copy_from_its_own_first_commit() -> None:
    """Two commits both hold the archived copy (a record fetched twice); only the second holds the live
    fetch. A reader keeps the archived copy from the first commit and the live one from the second."""
    first = [log_row(FEED, "archive")]
    second = [log_row(FEED, "archive"), log_row(FEED, "archive-link")]
    winners = winning_commits([("c1", first), ("c2", second)])
    assert winners == {f"archive {FEED}": "c1", FEED: "c2"}
    feeds = table("feeds", [{"url": FEED, "discovered_via": v} for v in ("archive", "archive-link")])
    kept = keep_winners("feeds", "c2", feeds, winners)
    assert kept.column("discovered_via").to_pylist() == ["archive-link"]
    assert keep_winners("feeds", "c1", feeds.slice(0, 1), winners).num_rows == 1
    log = table("fetch_log", second)
    assert keep_winners("fetch_log", "c2", log, winners).column("discovered_via").to_pylist() == ["archive-link"]
    items = table("items", [{"feed_url": FEED, "position": 0, "archived": a} for a in (True, False)])
    assert keep_winners("items", "c2", items, winners).column("archived").to_pylist() == [False]
