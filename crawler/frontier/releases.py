"""When a worker's leases end: :class:`ReleaseBook`, the bookkeeping between a dataset commit and the release
of the URLs its ``fetch_log`` rows name (plain data, no Redis and no Scrapy: :class:`FrontierWorker` feeds it
and sends the releases).

A URL's release settles it (the queue skips it from then on), so every row its reading made must be committed
first: the ``duplicate`` rows of the requests its page made are written when those are pushed, which may be
after the page's own commit was taken (the page's row goes out before the requests its links make). So a URL
is released only once the scraper is done with its response, and once a later commit is done that was taken
after that (every request the response made was pushed before that take), or once nothing is buffered nor in
flight.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from pipelines.dataset.claims import url_key
from schemas.vocab import Outcome, Via

if TYPE_CHECKING:
    from pipelines.dataset.commits import Batch


class ReleaseBook:
    """The URLs of committed rows whose leases wait to end, by commit. :meth:`committed` runs on the dataset's
    writer thread, the rest on the reactor thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: (commit seq, URLs) committed since the last heartbeat (appended on the writer thread), and before it.
        self._fresh: list[tuple[int, list[str]]] = []
        self._aliases: dict[str, list[str]] = {}  # a row's URL -> more URLs its commit releases
        self._ready: list[tuple[int, list[str]]] = []
        self._last_seq = 0  # the latest commit's
        #: commit seq -> the URLs whose responses the scraper was still reading when that batch was taken
        #: (their requests may not have reached the scheduler yet, so their ``duplicate`` rows are not in it)
        self._busy_at: dict[int, frozenset[str]] = {}

    def alias(self, url: str, urls: Iterable[str]) -> None:
        """When the row of ``url`` is committed, release ``urls`` too (a redirect chain dropped as a duplicate)."""
        with self._lock:
            self._aliases.setdefault(url, []).extend(urls)

    def committed(self, batch: Batch) -> None:
        """A dataset commit is done: its ``fetch_log`` rows' URLs (and their aliases) may be released, a web
        archive's record as ``archive <url>``, the key it was leased under (``crawler.requests.lease_key``).

        Not the URL of a plain duplicate row (a page named a URL already requested): that request was
        never queued nor leased, and the URL's lease, if this worker holds one, is the request being
        fetched, which its own row releases. (A duplicate at the end of a redirect chain names the
        chain's first URL, which this worker leased: that one is released.)"""
        urls: list[str] = []
        for row in batch.tables.get("fetch_log") or ():
            url, final_url = row.get("url"), row.get("final_url")
            if row.get("outcome") == Outcome.DUPLICATE and url == final_url:
                continue
            archived = row.get("discovered_via") == Via.ARCHIVE  # leased as "archive <url>" (lease_key)
            urls += [url_key(u, archived) for u in dict.fromkeys((url, final_url)) if isinstance(u, str) and u]
        with self._lock:
            for url in list(urls):
                urls += self._aliases.pop(url, ())
            self._fresh.append((batch.seq, urls))
            self._last_seq = max(self._last_seq, batch.seq)

    def taking(self, seq: int, busy: frozenset[str]) -> None:
        """The dataset takes batch ``seq`` while the scraper still reads the responses of ``busy``."""
        with self._lock:
            self._busy_at[seq] = busy

    def take(self, *, staged: bool, settled: bool, busy_now: frozenset[str]) -> list[str]:
        """The committed URLs whose leases may end now (see the module's docstring); they leave the book.

        ``staged``: only the commits already seen at the previous call with ``staged``; ``settled``: nothing is
        buffered nor being committed; ``busy_now``: the responses the scraper reads now."""
        go: list[str] = []
        with self._lock:
            candidates = self._ready if staged else self._ready + self._fresh
            wait: list[tuple[int, list[str]]] = []
            for seq, urls in candidates:
                later = [b for s, b in self._busy_at.items() if seq < s <= self._last_seq]
                ok = [u for u in urls if u not in busy_now and (settled or any(u not in b for b in later))]
                go += ok
                if len(ok) < len(urls):
                    wait.append((seq, [u for u in urls if u not in ok]))
            self._ready, self._fresh = (wait + self._fresh, []) if staged else (wait, [])
            oldest = min((seq for seq, _ in self._ready + self._fresh), default=self._last_seq)
            self._busy_at = {s: b for s, b in self._busy_at.items() if s > oldest}
        return go
