"""A replay's inputs: what the crawl that wrote the archive was given, read from its request records.

Pure. ``crawl --warc`` writes each request's fetch context into its request record
(``Feedcensus-Context``). The crawl's own inputs are the requests at depth 0 that came from a
seeds file (``via`` seed, ``source`` the file), an ``--opml`` URL (``via`` opml) or a ``--url``
(``via`` url), not made by a redirect (no ``Feedcensus-Redirected-From``): deduplicated, in
archive order, they go to the spider as seeds, OPML URLs and URLs again. Two more cases:

* **A seeds file** is given to the spider as a file, and its path is the ``source`` of its rows.
  When the file the archive names still exists and lists every seed the archive holds for it, it is
  given again (the rows are then the crawl's, its unusable lines and its seeds that got no answer
  included); otherwise the seeds are given as a list named by that file (:attr:`ReplayInputs.seed_lists`).
* **A local OPML list** is read from disk, not fetched, so it has no record; its outlines are
  requests at depth 1 whose ``source`` is its path. It is given again when it is still there.

An archive without feedcensus fields (Common Crawl, another crawler) has no such facts: every URL
with a response record is an input, as ``--url`` (the content decides what it is), except
``/robots.txt``, which the crawl asks for itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from crawler.archive.read import ArchivedRequest, ArchiveIndex
from crawler.fetch.seeds import read_seeds_file
from schemas.vocab import Via

#: The ``via`` of a depth-1 request that names a local OPML list as its ``source``.
_OUTLINE_VIA = frozenset({Via.OPML, Via.OPML_PAGE, Via.INCLUDE})


@dataclass
class ReplayInputs:
    """What a replay gives the spider: seeds files, seed lists, OPML inputs and URLs."""

    #: Seeds files given again as they are (the crawl's own files, still on disk).
    seed_files: list[str] = field(default_factory=list)
    #: Seeds whose file is gone: (the file the crawl named, its seeds in archive order), given as they are.
    seed_lists: list[tuple[str, list[str]]] = field(default_factory=list)
    #: OPML inputs: URLs, and local lists still on disk.
    opml: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.seed_files) + len(self.seed_lists) + len(self.opml) + len(self.urls)


def _context(request: ArchivedRequest) -> dict[str, object] | None:
    if request.context is None:
        return None
    try:
        value = json.loads(request.context)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _is_local(source: object) -> bool:
    return isinstance(source, str) and bool(source) and "://" not in source


def archive_inputs(index: ArchiveIndex) -> ReplayInputs:
    """The inputs of the crawl that wrote ``index``'s archives (or, for a foreign archive, its URLs)."""
    if index.foreign:
        return ReplayInputs(urls=[u for u in index.responses if urlsplit(u).path != "/robots.txt"])
    seeds: dict[str, list[str]] = {}
    opml: dict[str, None] = {}
    urls: dict[str, None] = {}
    for request in index.requests:
        ctx = _context(request)
        if ctx is not None and request.redirected_from is None:
            _note_input(request.url, ctx, seeds, opml, urls)
    inputs = ReplayInputs(opml=list(opml), urls=list(urls))
    for source, listed in seeds.items():
        if source and lists_all(source, listed):
            inputs.seed_files.append(source)
        else:
            inputs.seed_lists.append((source, listed))
    return inputs


def _note_input(
    url: str, ctx: Mapping[str, object], seeds: dict[str, list[str]], opml: dict[str, None], urls: dict[str, None]
) -> None:
    """Add the input an archived request stands for (a seed, an OPML list or outline, a URL), if it is one."""
    via, source, depth = ctx.get("via"), ctx.get("source"), ctx.get("depth")
    if depth == 0 and via == Via.SEED:
        listed = seeds.setdefault(str(source or ""), [])
        if url not in listed:
            listed.append(url)
    elif depth == 0 and via == Via.OPML:
        opml[url] = None
    elif depth == 0 and via == Via.URL:
        urls[url] = None
    elif depth == 1 and via in _OUTLINE_VIA and _is_local(source) and os.path.isfile(str(source)):
        opml[str(source)] = None


def lists_all(path: str, urls: Iterable[str]) -> bool:
    """Whether the seeds file at ``path`` can be read and lists every one of ``urls``."""
    try:
        listed, _ = read_seeds_file(path)
    except OSError:
        return False
    return set(urls) <= set(listed)
