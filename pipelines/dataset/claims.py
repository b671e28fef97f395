"""Which rows stand for what: the keys a distributed job's commits claim, so each row lands once.

A distributed job's processes may fetch a URL twice (a worker that died holding it, a Redis that
lost its last writes): exactly one process's rows for it may be committed. Every row belongs to
one *key*, and a commit claims its keys in the frontier before it publishes its files
(``crawler.frontier``); a key another commit claimed first has its rows dropped from this one.

- A ``fetch_log`` row of a fetch (a feed, a page, a failure...) has its URL as requested as key:
  the URL its request was queued and leased under, so a key is also what the queue skips once
  settled. A web archive's record (``discovered_via`` ``archive``: ``feedcensus commoncrawl``) has
  ``archive <url>`` (:func:`url_key`): the archived copy of a URL and a live fetch of it
  (``commoncrawl --live``) are two fetches of the job, each with its own rows. A ``robots`` row has
  ``robots <url>``: each process fetches a host's robots.txt for its own politeness, the job keeps
  one row for it.
- Bookkeeping rows a page's reading writes about the URLs it names (``duplicate``, ``not_due``, and
  an input's ``input_error``) have their outcome, URL, final URL and source joined, so a page read
  twice keeps one reading's rows, and two pages naming a URL keep a row each.
- ``feeds``, ``items``, ``element_usage`` and ``conformance`` rows have their feed's key: its URL
  (``feeds.url``, the feed's ``fetch_log.url``), archived or not (``feeds.discovered_via``, the
  others' ``archived``). ``pages`` and ``links`` rows have their page's key: that of the ``fetch_log``
  row of the same commit whose final URL is their ``page_url`` (the page after redirects).
  ``workers`` rows are one per process: never dropped.

Pure functions over rows and Arrow tables; no Scrapy, no Redis.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import pyarrow as pa

from schemas.vocab import Via

#: ``fetch_log`` outcomes that record what a page (or an input list) named, not a fetch of the URL.
BOOKKEEPING: Final = frozenset({"duplicate", "not_due", "input_error"})
ROBOTS: Final = "robots"
#: Starts the key of a web archive's record: ``archive <url>`` (:func:`url_key`).
ARCHIVED: Final = "archive "
#: Joins the parts of a bookkeeping key (never in a URL: it is a control character).
SEP: Final = "\x1f"
#: The ``fetch_log`` columns a row's key is made of.
CLAIM_COLUMNS: Final = ("url", "final_url", "outcome", "source", "discovered_via")
#: Marks a page's URL after redirects in :func:`winning_commits` (``pages`` and ``links`` rows name it).
FINAL: Final = "final "
#: The tables whose rows are a feed's, by the column naming the feed's URL.
FEED_URL: Final[Mapping[str, str]] = {
    "feeds": "url",
    "items": "feed_url",
    "element_usage": "feed_url",
    "conformance": "feed_url",
}
#: The tables whose rows are a page's (``page_url``: the page after redirects).
PAGE_TABLES: Final = frozenset({"pages", "links"})
#: The tables whose rows have keys (the others' are never dropped).
KEYED_TABLES: Final = frozenset({"fetch_log", *FEED_URL, *PAGE_TABLES})


def url_key(url: str, archived: bool) -> str:
    """The key of the rows of one fetch of ``url``: ``archive <url>`` for a web archive's record of it."""
    return ARCHIVED + url if archived else url


def fetch_key(row: Mapping[str, Any]) -> str:
    """The key of one ``fetch_log`` row (see the module's docstring)."""
    outcome = str(row.get("outcome") or "")
    url = str(row.get("url") or "")
    if outcome in BOOKKEEPING:
        return SEP.join((outcome, url, str(row.get("final_url") or ""), str(row.get("source") or "")))
    if outcome == ROBOTS:
        return f"{ROBOTS} {url}"
    return url_key(url, row.get("discovered_via") == Via.ARCHIVE)


def commit_keys(fetch_log: Iterable[Mapping[str, Any]]) -> list[str]:
    """The keys a commit claims: those of its ``fetch_log`` rows, each once, in order (every other row
    of a fetch travels in the commit of its ``fetch_log`` row)."""
    return list(dict.fromkeys(fetch_key(row) for row in fetch_log))


def page_keys(fetch_log: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """A commit's pages after redirects (``fetch_log.final_url``, else ``url``) -> their keys
    (:func:`fetch_key`), for its ``pages`` and ``links`` rows (``page_url``). A page's row names it
    first; other fetches (a feed link that answered HTML) only when no page's row does."""
    rows = [r for r in fetch_log if r.get("url") and r.get("outcome") not in BOOKKEEPING | {ROBOTS}]
    keys: dict[str, str] = {}
    for row in sorted(rows, key=lambda r: r.get("outcome") != "page"):
        keys.setdefault(str(row.get("final_url") or row["url"]), fetch_key(row))
    return keys


def row_keys(table: str, arrow: pa.Table, pages: Mapping[str, str]) -> list[str | None] | None:
    """The key of each row of ``arrow`` (rows of ``table``: see the module's docstring), None for a row
    without one; None for a table whose rows have no keys (``workers``). ``pages``: :func:`page_keys` of
    the commit. ``fetch_log`` rows have theirs from :func:`fetch_key`."""
    names = set(arrow.column_names)
    if table in FEED_URL:
        urls = arrow.column(FEED_URL[table]).to_pylist()
        if table == "feeds":
            archived = [v == Via.ARCHIVE for v in arrow.column("discovered_via").to_pylist()]
        else:  # files before schema 1.9 have no ``archived``: read as false
            archived = arrow.column("archived").to_pylist() if "archived" in names else [False] * len(urls)
        return [None if u is None else url_key(u, bool(a)) for u, a in zip(urls, archived, strict=True)]
    if table in PAGE_TABLES:  # a page's rows without its fetch_log row here: by the URL they name
        fallback = arrow.column("url" if table == "pages" else "page_url").to_pylist()
        return [
            None if v is None else pages.get(v, f)
            for v, f in zip(arrow.column("page_url").to_pylist(), fallback, strict=True)
        ]
    return None


def keep_rows(table: str, arrow: pa.Table, drop: set[str], pages: Mapping[str, str]) -> pa.Table:
    """``arrow`` (rows of ``table``) without the rows whose key is in ``drop``.

    ``fetch_log`` is filtered as dicts by :func:`fetch_key` before it becomes Arrow; ``workers`` never is.
    """
    if not drop or arrow.num_rows == 0:
        return arrow
    keys = row_keys(table, arrow, pages)
    if keys is None:
        return arrow
    return arrow.filter(pa.array([k not in drop for k in keys], type=pa.bool_()))


def commit_of(part_name: str) -> str:
    """The commit a writer's part file belongs to: ``part-<seq>-<token>.parquet`` -> ``<seq>-<token>``."""
    return part_name.removeprefix("part-").removesuffix(".parquet")


def winning_commits(fetch_logs: Iterable[tuple[str, Iterable[Mapping[str, Any]]]]) -> dict[str, str]:
    """The one rule readers keep duplicates by: each key's rows are those of the first commit, in the order
    given (commits as published), whose ``fetch_log`` rows have the key. ``fetch_logs``: (commit, rows).

    A job written by this version has no key in two commits of two writers (docs/distributed.md, "Exactly
    once"); this is for one written before, or a worker taken for dead that published after all."""
    winners: dict[str, str] = {}
    for commit, rows in fetch_logs:
        for row in rows:
            winners.setdefault(fetch_key(row), commit)
            if row.get("outcome") == "page" and row.get("url"):  # pages and links name the page after redirects
                winners.setdefault(FINAL + str(row.get("final_url") or row["url"]), commit)
    return winners


def keep_winners(table: str, commit: str, arrow: pa.Table, winners: Mapping[str, str]) -> pa.Table:
    """The rows of ``arrow`` (of ``table``, from ``commit``) whose key's rows are this commit's (or whose key
    no ``fetch_log`` row has, as ``workers`` rows). A page's rows go by its URL after redirects (:data:`FINAL`)."""
    keys: list[str | None] | None
    if table == "fetch_log":
        keys = [fetch_key(r) for r in arrow.select(list(CLAIM_COLUMNS)).to_pylist()]
    elif table in PAGE_TABLES:
        keys = [None if v is None else FINAL + v for v in arrow.column("page_url").to_pylist()]
    else:
        keys = row_keys(table, arrow, {})
    if keys is None:
        return arrow
    mask = [k is None or winners.get(k, commit) == commit for k in keys]
    return arrow if all(mask) else arrow.filter(pa.array(mask, type=pa.bool_()))
