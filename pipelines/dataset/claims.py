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
  an input's ``input_error``) have their outcome, URL, final URL and source joined (and
  ``archive-link`` when an archived page named it), so a page read twice keeps one reading's rows,
  and two pages naming a URL keep a row each.
- ``feeds``, ``items``, ``element_usage`` and ``conformance`` rows have their feed's key: its URL
  (``feeds.url``, the feed's ``fetch_log.url``), archived or not (``feeds.discovered_via``, the
  others' ``archived``). ``pages`` rows have their page's (``pages.url``, as requested, and
  ``archived``), ``links`` rows their page's too (``page_url`` is the page after redirects: mapped
  through the ``pages`` rows of the same commit, which the page's rows share). ``workers`` rows are
  one per process: never dropped. Rows of files before schema 1.9 (no ``archived``) read as live.
- Readers of a job some key of which has rows in two commits (:func:`winning_commits`) keep each key's
  rows from one commit; ``links`` rows, which do not name the URL their page was requested as, go by
  their page's URL after redirects (:data:`FINAL`).

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
#: Marks a page's URL after redirects in :func:`winning_commits` (``links.page_url`` names it).
FINAL: Final = "final "
#: The tables whose rows are a feed's, by the column naming the feed's URL.
FEED_URL: Final[Mapping[str, str]] = {
    "feeds": "url",
    "items": "feed_url",
    "element_usage": "feed_url",
    "conformance": "feed_url",
}
#: The tables whose rows are a page's.
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
        parts = (outcome, url, str(row.get("final_url") or ""), str(row.get("source") or ""))
        # archive-link: named by an archived page, which a live page at the same URL is not
        return SEP.join((*parts, "archive-link") if row.get("discovered_via") == Via.ARCHIVE_LINK else parts)
    if outcome == ROBOTS:
        return f"{ROBOTS} {url}"
    return url_key(url, row.get("discovered_via") == Via.ARCHIVE)


def commit_keys(fetch_log: Iterable[Mapping[str, Any]]) -> list[str]:
    """The keys a commit claims: those of its ``fetch_log`` rows, each once, in order (every other row
    of a fetch travels in the commit of its ``fetch_log`` row)."""
    return list(dict.fromkeys(fetch_key(row) for row in fetch_log))


def page_keys(pages: Iterable[Mapping[str, Any]]) -> dict[tuple[str, bool], str]:
    """(``page_url``, ``archived``) -> the page's key (``url`` as requested), of a commit's ``pages`` rows."""
    return {
        (str(r["page_url"]), bool(r.get("archived"))): url_key(str(r["url"]), bool(r.get("archived")))
        for r in pages
        if r.get("page_url") and r.get("url")
    }


def _archived(table: str, arrow: pa.Table) -> list[bool]:
    """Whether each row of ``arrow`` (of ``table``) is of a web archive's copy (false in files before 1.9)."""
    if table == "feeds":
        return [v == Via.ARCHIVE for v in arrow.column("discovered_via").to_pylist()]
    if "archived" not in arrow.column_names:
        return [False] * arrow.num_rows
    return [bool(v) for v in arrow.column("archived").to_pylist()]


def row_keys(table: str, arrow: pa.Table, pages: Mapping[tuple[str, bool], str]) -> list[str | None] | None:
    """The key of each row of ``arrow`` (rows of ``table``: see the module's docstring), None for a row
    without one; None for a table whose rows have no keys (``workers``). ``pages``: :func:`page_keys` of
    the commit. ``fetch_log`` rows have theirs from :func:`fetch_key`."""
    if table not in FEED_URL and table not in PAGE_TABLES:
        return None
    archived = _archived(table, arrow)
    column = FEED_URL.get(table) or ("url" if table == "pages" else "page_url")
    urls = arrow.column(column).to_pylist()
    if table == "links":
        return [None if u is None else pages.get((u, a), url_key(u, a)) for u, a in zip(urls, archived, strict=True)]
    return [None if u is None else url_key(u, a) for u, a in zip(urls, archived, strict=True)]


def keep_rows(table: str, arrow: pa.Table, drop: set[str], pages: Mapping[tuple[str, bool], str]) -> pa.Table:
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
            url = row.get("final_url") or row.get("url")
            if url and row.get("outcome") not in BOOKKEEPING | {ROBOTS}:  # links name a page after redirects
                winners.setdefault(FINAL + url_key(str(url), row.get("discovered_via") == Via.ARCHIVE), commit)
    return winners


def keep_winners(table: str, commit: str, arrow: pa.Table, winners: Mapping[str, str]) -> pa.Table:
    """The rows of ``arrow`` (of ``table``, from ``commit``) whose key's rows are this commit's (or whose key
    no ``fetch_log`` row has, as ``workers`` rows). ``links`` rows go by their page's URL after redirects."""
    keys: list[str | None] | None
    if table == "fetch_log":
        keys = [fetch_key(r) for r in arrow.select(list(CLAIM_COLUMNS)).to_pylist()]
    elif table == "links":
        urls = arrow.column("page_url").to_pylist()
        keys = [
            None if u is None else FINAL + url_key(u, a) for u, a in zip(urls, _archived(table, arrow), strict=True)
        ]
    else:
        keys = row_keys(table, arrow, {})
    if keys is None:
        return arrow
    mask = [k is None or winners.get(k, commit) == commit for k in keys]
    return arrow if all(mask) else arrow.filter(pa.array(mask, type=pa.bool_()))
