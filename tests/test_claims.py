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
    # The archived page and a live page at its URL both named the feed: two readings, two rows.
    assert fetch_key(log_row(FEED, "autodiscovery", "duplicate")) != duplicate


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


def test_a_pages_rows_have_its_key_and_tell_an_archived_copy_from_a_live_one() -> None:
    """An archived page and a live fetch that answered a page at the same URL (a feed link now leading to the
    home page): each copy's pages and links rows go with its own key; a redirected page's links with the URL
    it was requested as."""
    moved = "http://site.example/old"
    pages_rows = [
        {"page_url": PAGE, "url": PAGE, "archived": True},
        {"page_url": PAGE, "url": FEED, "archived": False},  # the live feed link redirected to the page
        {"page_url": PAGE + "new", "url": moved, "archived": False},
    ]
    keys = page_keys(pages_rows)
    assert keys == {(PAGE, True): f"archive {PAGE}", (PAGE, False): FEED, (PAGE + "new", False): moved}
    pages = table("pages", pages_rows)
    links = table("links", [{"page_url": r["page_url"], "href": FEED, "archived": r["archived"]} for r in pages_rows])
    assert keep_rows("pages", pages, {f"archive {PAGE}"}, keys).column("url").to_pylist() == [FEED, moved]
    assert keep_rows("links", links, {f"archive {PAGE}"}, keys).column("archived").to_pylist() == [False, False]
    assert keep_rows("links", links, {FEED}, keys).column("page_url").to_pylist() == [PAGE, PAGE + "new"]
    assert keep_rows("links", links, {moved}, keys).column("page_url").to_pylist() == [PAGE, PAGE]
    assert keep_rows("links", links, {PAGE}, keys).num_rows == 3  # the live key of the URL is no page's here


def test_readers_keep_each_copy_from_its_own_first_commit() -> None:
    """Two commits both hold the archived copy (a record fetched twice); only the second holds the live
    fetch. A reader keeps the archived copy from the first commit and the live one from the second."""
    first = [log_row(FEED, "archive")]
    second = [log_row(FEED, "archive"), log_row(FEED, "archive-link")]
    winners = winning_commits([("c1", first), ("c2", second)])
    assert {k: v for k, v in winners.items() if not k.startswith("final ")} == {f"archive {FEED}": "c1", FEED: "c2"}
    feeds = table("feeds", [{"url": FEED, "discovered_via": v} for v in ("archive", "archive-link")])
    kept = keep_winners("feeds", "c2", feeds, winners)
    assert kept.column("discovered_via").to_pylist() == ["archive-link"]
    assert keep_winners("feeds", "c1", feeds.slice(0, 1), winners).num_rows == 1
    log = table("fetch_log", second)
    assert keep_winners("fetch_log", "c2", log, winners).column("discovered_via").to_pylist() == ["archive-link"]
    items = table("items", [{"feed_url": FEED, "position": 0, "archived": a} for a in (True, False)])
    assert keep_winners("items", "c2", items, winners).column("archived").to_pylist() == [False]


def test_readers_keep_a_pages_rows_from_the_commit_its_fetch_won() -> None:
    """A page fetched in two commits (an archived page read twice; a live link that answered a page,
    not_feed): its pages and links rows are read from the first commit only, each copy apart."""
    first = [log_row(PAGE, "archive", "page"), log_row(FEED, "archive-link", "not_feed", final_url=PAGE)]
    second = [log_row(PAGE, "archive", "page"), log_row(FEED, "archive-link", "not_feed", final_url=PAGE)]
    winners = winning_commits([("c1", first), ("c2", second)])
    pages = table("pages", [{"page_url": PAGE, "url": u, "archived": a} for u, a in ((PAGE, True), (FEED, False))])
    links = table("links", [{"page_url": PAGE, "href": FEED, "archived": a} for a in (True, False)])
    assert keep_winners("pages", "c1", pages, winners).num_rows == 2
    assert keep_winners("links", "c1", links, winners).num_rows == 2
    assert keep_winners("pages", "c2", pages, winners).num_rows == 0
    assert keep_winners("links", "c2", links, winners).num_rows == 0
    mixed = winning_commits([("c1", first[:1]), ("c2", second[1:])])  # each copy won by another commit
    assert keep_winners("links", "c2", links, mixed).column("archived").to_pylist() == [False]
