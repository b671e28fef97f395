"""Which rows stand for what: the keys a distributed job's commits claim, so each row lands once.

A distributed job's processes may fetch a URL twice (a worker that died holding it, a Redis that
lost its last writes): exactly one process's rows for it may be committed. Every row belongs to
one *key*, and a commit claims its keys in the frontier before it publishes its files
(``crawler.frontier``); a key another commit claimed first has its rows dropped from this one.

- A ``fetch_log`` row of a fetch (a feed, a page, a failure...) has its URL as requested as key:
  the URL its request was queued and leased under, so a key is also what the queue skips once
  settled. A ``robots`` row has ``robots <url>``: each process fetches a host's robots.txt for its
  own politeness, the job keeps one row for it.
- Bookkeeping rows a page's reading writes about the URLs it names (``duplicate``, ``not_due``, and
  an input's ``input_error``) have their outcome, URL, final URL and source joined, so a page read
  twice keeps one reading's rows, and two pages naming a URL keep a row each.
- ``feeds``, ``items``, ``element_usage`` and ``conformance`` rows have their feed's URL
  (``feeds.url``, the feed's ``fetch_log.url``), ``pages`` rows their URL, ``links`` rows their page's
  URL as requested (``page_url`` is the page after redirects: mapped through the ``pages`` rows of
  the same commit, which the page's rows share). ``workers`` rows are one per process: never dropped.

Pure functions over rows and Arrow tables; no Scrapy, no Redis.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import pyarrow as pa

#: ``fetch_log`` outcomes that record what a page (or an input list) named, not a fetch of the URL.
BOOKKEEPING: Final = frozenset({"duplicate", "not_due", "input_error"})
ROBOTS: Final = "robots"
#: Joins the parts of a bookkeeping key (never in a URL: it is a control character).
SEP: Final = "\x1f"
#: The ``fetch_log`` columns a row's key is made of.
CLAIM_COLUMNS: Final = ("url", "final_url", "outcome", "source")
#: Marks a page's URL after redirects in :func:`winning_commits` (``links.page_url`` names it).
FINAL: Final = "final "
#: The column whose value is a row's key (through :func:`page_keys` for ``links``), by table.
KEY_COLUMN: Final[Mapping[str, str]] = {
    "feeds": "url",
    "items": "feed_url",
    "element_usage": "feed_url",
    "conformance": "feed_url",
    "pages": "url",
    "links": "page_url",
}


def fetch_key(row: Mapping[str, Any]) -> str:
    """The key of one ``fetch_log`` row (see the module's docstring)."""
    outcome = str(row.get("outcome") or "")
    url = str(row.get("url") or "")
    if outcome in BOOKKEEPING:
        return SEP.join((outcome, url, str(row.get("final_url") or ""), str(row.get("source") or "")))
    if outcome == ROBOTS:
        return f"{ROBOTS} {url}"
    return url


def commit_keys(fetch_log: Iterable[Mapping[str, Any]]) -> list[str]:
    """The keys a commit claims: those of its ``fetch_log`` rows, each once, in order (every other row
    of a fetch travels in the commit of its ``fetch_log`` row)."""
    return list(dict.fromkeys(fetch_key(row) for row in fetch_log))


def page_keys(pages: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """``pages.page_url`` (after redirects) -> ``pages.url`` (as requested) of a commit's page rows."""
    return {str(r["page_url"]): str(r["url"]) for r in pages if r.get("page_url") and r.get("url")}


def keep_rows(table: str, arrow: pa.Table, drop: set[str], pages: Mapping[str, str]) -> pa.Table:
    """``arrow`` (rows of ``table``) without the rows whose key is in ``drop``.

    ``fetch_log`` is filtered as dicts by :func:`fetch_key` before it becomes Arrow; ``workers`` never is.
    """
    column = KEY_COLUMN.get(table)
    if not drop or column is None or arrow.num_rows == 0:
        return arrow
    values = arrow.column(column).to_pylist()
    if table == "links":
        values = [pages.get(v, v) if v is not None else None for v in values]
    mask = pa.array([v not in drop for v in values], type=pa.bool_())
    return arrow.filter(mask)


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
            if row.get("outcome") == "page" and row.get("final_url"):  # links name the page after redirects
                winners.setdefault(FINAL + str(row["final_url"]), commit)
    return winners


def keep_winners(table: str, commit: str, arrow: pa.Table, winners: Mapping[str, str]) -> pa.Table:
    """The rows of ``arrow`` (of ``table``, from ``commit``) whose key's rows are this commit's (or whose key
    no ``fetch_log`` row has, as ``workers`` rows)."""
    if table == "fetch_log":
        rows = arrow.select(list(CLAIM_COLUMNS)).to_pylist()
        mask = [winners.get(fetch_key(r), commit) == commit for r in rows]
    elif table in KEY_COLUMN:
        values = arrow.column(KEY_COLUMN[table]).to_pylist()
        prefix = FINAL if table == "links" else ""
        mask = [v is None or winners.get(prefix + v, commit) == commit for v in values]
    else:
        return arrow
    return arrow if all(mask) else arrow.filter(pa.array(mask, type=pa.bool_()))
