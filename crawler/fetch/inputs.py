"""Reading what the user asked to crawl: seeds files, OPML lists and URLs, as plain data.

:func:`read_inputs` turns the ``--seeds``, ``--opml`` and ``--url`` values into
the URLs to request (each with its :class:`FetchContext`), the OPML lists read
from disk, one ``input_error`` record per input that cannot be used, and the
hosts the user named (which the network-safety middleware allows even when
they are private). No Scrapy here: the spider turns the result into requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from crawler.fetch.opml import OpmlDocument, parse_opml
from crawler.fetch.seeds import SeedProblem, read_seeds, read_seeds_file
from crawler.fetch.urls import requestable_host
from crawler.fetch.words import counted
from schemas.items import FetchContext, FetchRecord
from schemas.vocab import Expect, Outcome, Via


def one_line(text: object, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class LocalOpml:
    """An OPML list read from disk (not fetched): its path and what it holds."""

    path: str
    document: OpmlDocument


@dataclass(slots=True)
class Inputs:
    """Everything the inputs name, in the order given: seeds, then OPML URLs, then ``--url`` values."""

    #: URLs to request, each with the context it was given in.
    requests: list[tuple[str, FetchContext]] = field(default_factory=list)
    #: OPML lists read from local files (their outlines are expanded by the spider).
    local_opml: list[LocalOpml] = field(default_factory=list)
    #: One ``input_error`` record per input that cannot be used.
    problems: list[FetchRecord] = field(default_factory=list)
    #: Hosts named in the inputs, lower-cased.
    hosts: set[str] = field(default_factory=set)

    def take(self) -> Inputs:
        """What these inputs hold, as a new object; this one is left empty. The command that read them
        gives them to the spider this way, so that only the spider's ``start()`` holds the lists (about
        280 bytes a seed, measured: 280 MB for a million) while Scrapy keeps the spider's arguments to the end."""
        taken = Inputs(self.requests, self.local_opml, self.problems, self.hosts)
        self.requests, self.local_opml, self.problems, self.hosts = [], [], [], set()
        return taken

    @property
    def count(self) -> int:
        """How many inputs there were: URLs, local lists and unusable entries."""
        return len(self.requests) + len(self.local_opml) + len(self.problems)


#: The seed lines left out that the crawl warns about one by one; the rest are counted in one more line.
SHOWN_SEED_PROBLEMS = 5


def seed_warnings(problems: Iterable[FetchRecord], shown: int = SHOWN_SEED_PROBLEMS) -> list[str]:
    """The warnings for the seeds left out: the first ``shown`` (where and why), then one line counting the
    rest (996 junk lines beside one good URL printed 996 warnings). Every one has its fetch_log row."""
    lines: list[str] = []
    rest = 0
    for rec in problems:
        if rec.discovered_via != Via.SEED or not rec.error:
            continue
        if len(lines) < shown:
            lines.append(f"{rec.error}: {rec.url!r}")
        else:
            rest += 1
    if rest:
        lines.append(f"and {counted(rest, 'more seed line')} left out (fetch_log has each, outcome input_error)")
    return lines


def _input_error(url: str, error: str, source: str, via: Via) -> FetchRecord:
    return FetchRecord(url=url, outcome=Outcome.INPUT_ERROR, error=error, source=source, discovered_via=via, depth=0)


def _read_seeds(path: str, inputs: Inputs, hosts: set[str]) -> None:
    try:
        urls, problems = read_seeds_file(path, hosts)
    except OSError as exc:
        inputs.problems.append(_input_error(path, one_line(f"cannot read seeds file: {exc}"), path, Via.SEED))
        return
    _add_seeds(path, (urls, problems), inputs)


def _add_seeds(path: str, read: tuple[list[str], list[SeedProblem]], inputs: Inputs) -> None:
    urls, problems = read
    ctx = FetchContext(via=Via.SEED, source=path, depth=0, kind=Expect.PAGE)
    inputs.requests.extend((u, ctx) for u in urls)
    for p in problems:
        inputs.problems.append(_input_error(p.text, f"{path}:{p.line}: {p.reason}", path, Via.SEED))


def _read_opml(item: str, inputs: Inputs) -> None:
    if "://" in item and not item.startswith("file://"):
        inputs.requests.append((item, FetchContext(via=Via.OPML, source="input", depth=0, kind=Expect.OPML)))
        return
    path = Path(item.removeprefix("file://"))
    try:
        body = path.read_bytes()
    except OSError as exc:
        inputs.problems.append(_input_error(str(path), one_line(f"cannot read OPML file: {exc}"), str(path), Via.OPML))
        return
    inputs.local_opml.append(LocalOpml(str(path), parse_opml(body, path.resolve().as_uri())))


def _named_urls(inputs: Inputs, first: int) -> Iterator[str]:
    """The URLs the inputs name from request ``first`` on (the seeds before it told their hosts as read)."""
    yield from (u for u, _ in inputs.requests[first:])
    for local in inputs.local_opml:
        for outline in local.document.outlines:
            yield from (u for u in (outline.xml_url, outline.html_url) if u)


def read_inputs(
    seed_files: Iterable[str],
    opml_inputs: Iterable[str],
    urls: Iterable[str],
    seed_lists: Iterable[tuple[str, Sequence[str]]] = (),
) -> Inputs:
    """Read every input; problems are records, never exceptions.

    ``seed_lists`` are seeds already read, each named by the file they came from (a replay gives
    a crawl's seeds again when the file is gone): checked as a seeds file's lines are.
    """
    inputs = Inputs()
    seed_hosts: set[str] = set()
    for path in seed_files:
        _read_seeds(path, inputs, seed_hosts)
    for name, lines in seed_lists:
        _add_seeds(name, read_seeds("\n".join(lines), seed_hosts), inputs)
    seeds = len(inputs.requests)
    for item in opml_inputs:
        _read_opml(item, inputs)
    url_ctx = FetchContext(via=Via.URL, source="input", depth=0, kind=Expect.ANY)
    inputs.requests.extend((u, url_ctx) for u in urls)
    inputs.hosts = seed_hosts | {host.lower() for u in _named_urls(inputs, seeds) if (host := requestable_host(u))}
    return inputs
