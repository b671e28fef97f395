"""The census spider: inputs in, feed documents and fetch records out.

Inputs are seed sites (pages to run autodiscovery on), OPML lists (local
files or URLs) and plain URLs (a feed, a page or a list: the content
decides). Every response is sniffed: feeds go to the item pipelines as
``FeedDocument``; OPML is expanded into more requests; HTML is left to the
``AutodiscoveryMiddleware``, which runs after this spider. Every input and
every request ends in exactly one ``FetchRecord`` (or, for a feed, a
``fetch_log`` row written by the feed pipeline).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy import Request, Spider

from crawler.extensions.resume import resume_state
from crawler.fetch.netsafety import DEFAULT_MAX_URL_LENGTH
from crawler.fetch.opml import OpmlDocument, parse_opml
from crawler.fetch.seeds import read_seeds_file
from crawler.outcomes import classify_failure, one_line
from pipelines.document.feedparse import sniff
from schemas.items import FeedDocument, FetchRecord

if TYPE_CHECKING:
    from scrapy.http import Response
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)


def as_list(value: str | Iterable[str] | None) -> list[str]:
    """Spider arguments arrive as one string from ``-a`` or as lists from the CLI."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v for v in (p.strip() for p in value.split("\n")) if v]
    return [v for v in value if v]


def check_url(url: str, max_length: int = DEFAULT_MAX_URL_LENGTH) -> tuple[str, str] | None:
    """(outcome, reason) when ``url`` cannot be requested, None when it can."""
    if len(url) > max_length:
        return "invalid_url", f"URL longer than {max_length} characters"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return "invalid_url", one_line(f"not a URL: {exc}")
    if parts.scheme.lower() not in ("http", "https"):
        return "unsupported_scheme", f"only http and https are fetched, not {parts.scheme or 'a URL without scheme'}:"
    if not parts.hostname:
        return "invalid_url", "URL has no host"
    return None


class CensusSpider(Spider):
    name = "census"

    def __init__(
        self,
        seeds: str | Iterable[str] | None = None,
        opml: str | Iterable[str] | None = None,
        url: str | Iterable[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.seed_files = as_list(seeds)
        self.opml_inputs = as_list(opml)
        self.urls = as_list(url)
        #: Hosts named in the inputs: allowed even when private (see NetworkSafetyMiddleware).
        self.input_hosts: set[str] = set()

    # --- start ---------------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        inputs: list[tuple[str, str, str]] = []  # (url, via, source)
        records: list[FetchRecord] = []
        for path in self.seed_files:
            try:
                urls, problems = read_seeds_file(path)
            except OSError as exc:
                records.append(
                    FetchRecord(
                        url=path,
                        outcome="input_error",
                        error=one_line(f"cannot read seeds file: {exc}"),
                        source=path,
                        discovered_via="seed",
                        depth=0,
                    )
                )
                continue
            inputs.extend((u, "seed", path) for u in urls)
            for p in problems:
                logger.warning("%s:%d: %s: %r", path, p.line, p.reason, p.text)
                records.append(
                    FetchRecord(
                        url=p.text,
                        outcome="input_error",
                        error=f"{path}:{p.line}: {p.reason}",
                        source=path,
                        discovered_via="seed",
                        depth=0,
                    )
                )
        local_opml: list[tuple[str, OpmlDocument]] = []
        for item in self.opml_inputs:
            if "://" in item and not item.startswith("file://"):
                inputs.append((item, "opml", "input"))
                continue
            path = Path(item[7:] if item.startswith("file://") else item)
            try:
                body = path.read_bytes()
            except OSError as exc:
                records.append(
                    FetchRecord(
                        url=str(path),
                        outcome="input_error",
                        error=one_line(f"cannot read OPML file: {exc}"),
                        source=str(path),
                        discovered_via="opml",
                        depth=0,
                    )
                )
                continue
            local_opml.append((str(path), parse_opml(body, path.resolve().as_uri())))
        inputs.extend((u, "url", "input") for u in self.urls)

        for u, _, _ in inputs:
            host = urlsplit(u).hostname if check_url(u) is None else None
            if host:
                self.input_hosts.add(host.lower())
        for _, doc in local_opml:
            for outline in doc.outlines:
                for u in (outline.xml_url, outline.html_url):
                    if u and check_url(u) is None and (host := urlsplit(u).hostname):
                        self.input_hosts.add(host.lower())

        self.crawler.stats.set_value("feedcensus/inputs", len(inputs) + len(local_opml) + len(records))
        state = resume_state(self.crawler)
        done = state.done if state else set()
        for rec in records:
            if rec.url not in done:
                self.crawler.stats.inc_value(f"feedcensus/outcome/{rec.outcome}")
                yield rec
        for path, doc in local_opml:
            if path not in done:
                yield self._opml_record(path, None, doc, "opml", path, 0, bytes_=None)
            for out in self._expand_opml(doc, path, depth=0, include_depth=0):
                yield out
        for u, via, source in inputs:
            kind = {"seed": "page", "opml": "opml", "url": "any"}[via]
            if (req := self.request(u, via=via, source=source, depth=0, kind=kind)) is not None:
                yield req
        if state is not None:
            # Everything the interrupted run scheduled; the duplicate filter drops what it wrote.
            for entry in state.journal:
                fc = entry.get("fc") or {}
                yield Request(
                    entry["url"],
                    callback=self.parse,
                    errback=self.on_error,
                    meta={"fc": fc},
                    priority=-int(fc.get("depth") or 0),
                )

    # --- requests ------------------------------------------------------------------

    def request(
        self, url: str, *, via: str, source: str | None, depth: int, kind: str, **extra: Any
    ) -> Request | FetchRecord:
        """A request carrying its context, or the FetchRecord saying why there is none."""
        problem = check_url(url, self.settings.getint("FEEDCENSUS_MAX_URL_LENGTH"))
        if problem is not None:
            outcome, reason = problem
            self.crawler.stats.inc_value(f"feedcensus/outcome/{outcome}")
            state = resume_state(self.crawler)
            if state is not None and url in state.done:
                return None
            return FetchRecord(url=url, outcome=outcome, error=reason, source=source, discovered_via=via, depth=depth)
        meta = {"fc": {"via": via, "source": source, "depth": depth, "kind": kind, **extra}}
        return Request(url, callback=self.parse, errback=self.on_error, meta=meta, priority=-depth)

    # --- responses -----------------------------------------------------------------

    def parse(self, response: Response, **_: Any) -> Iterator[Any]:
        ctx = response.meta.get("fc") or {"via": "url", "source": None, "depth": 0, "kind": "any"}
        redirects = response.meta.get("redirect_urls") or []
        url = redirects[0] if redirects else response.url
        ctype = response.headers.get(b"Content-Type", b"").decode("latin-1") or None
        body = response.body
        kind = sniff(body, ctype)
        depth = ctx["depth"]
        if kind == "feed":
            yield FeedDocument(
                url=url,
                final_url=response.url,
                status=response.status,
                headers={
                    k.decode("latin-1").lower(): b", ".join(v).decode("latin-1") for k, v in response.headers.items()
                },
                body=body,
                discovered_via=ctx["via"],
                source=ctx["source"],
                depth=depth,
                check_reflexive=ctx["via"] in ("url", "opml") and self.settings.getbool("FEEDCENSUS_REFLEXIVE"),
            )
            return
        record = FetchRecord(
            url=url,
            outcome="page",
            final_url=response.url,
            status=response.status,
            source=ctx["source"],
            discovered_via=ctx["via"],
            depth=depth,
            content_type=ctype,
            bytes=len(body),
        )
        if kind == "opml":
            doc = parse_opml(body, response.url)
            yield self._opml_record(
                url,
                response.url,
                doc,
                ctx["via"],
                ctx["source"],
                depth,
                bytes_=len(body),
                status=response.status,
                ctype=ctype,
            )
            if doc.ok:
                yield from self._expand_opml(doc, response.url, depth=depth, include_depth=ctx.get("include_depth", 0))
            return
        if kind == "html":
            response.meta["fc_html"] = True  # the autodiscovery middleware takes it from here
            record.html = True
            if ctx["kind"] == "feed":
                # A feed link or xmlUrl that leads to a page: the link is broken, but the page may advertise feeds.
                record.outcome = "not_feed"
                record.error = one_line(f"expected a feed, got an HTML page ({ctype or 'no Content-Type'})")
        else:
            record.outcome = "not_feed"
            head = body[:40].decode("latin-1", "replace")
            record.error = one_line(f"not a feed, page or OPML list ({ctype or 'no Content-Type'}; starts {head!r})")
        self.crawler.stats.inc_value(f"feedcensus/outcome/{record.outcome}")
        yield record

    def on_error(self, failure: Failure) -> Iterator[FetchRecord]:
        request = failure.request  # type: ignore[attr-defined]
        ctx = request.meta.get("fc") or {}
        outcome, status, error = classify_failure(failure)
        redirects = request.meta.get("redirect_urls") or []
        self.crawler.stats.inc_value(f"feedcensus/outcome/{outcome}")
        response = getattr(failure.value, "response", None)
        yield FetchRecord(
            url=redirects[0] if redirects else request.url,
            outcome=outcome,
            final_url=request.url,
            status=status,
            error=error,
            source=ctx.get("source"),
            discovered_via=ctx.get("via"),
            depth=ctx.get("depth"),
            content_type=response.headers.get(b"Content-Type", b"").decode("latin-1") or None
            if response is not None
            else None,
            bytes=len(response.body) if response is not None else None,
        )

    # --- OPML ----------------------------------------------------------------------

    def _opml_record(
        self,
        url: str,
        final_url: str | None,
        doc: OpmlDocument,
        via: str,
        source: str | None,
        depth: int,
        *,
        bytes_: int | None,
        status: int | None = None,
        ctype: str | None = None,
    ) -> FetchRecord:
        if doc.ok:
            outcome = "opml"
            error = None
            if doc.recovered or doc.warnings:
                error = one_line(f"recovered: {'; '.join(doc.warnings[:3])}" if doc.warnings else "recovered")
                logger.warning("OPML %s is not well-formed, recovered %d outlines: %s", url, len(doc.outlines), error)
        else:
            outcome, error = "not_feed", one_line(doc.error)
        self.crawler.stats.inc_value(f"feedcensus/outcome/{outcome}")
        return FetchRecord(
            url=url,
            outcome=outcome,
            final_url=final_url,
            status=status,
            error=error,
            source=source,
            discovered_via=via,
            depth=depth,
            content_type=ctype,
            bytes=bytes_,
        )

    def _expand_opml(self, doc: OpmlDocument, source: str, *, depth: int, include_depth: int) -> Iterator[Any]:
        pages = self.settings.getbool("FEEDCENSUS_OPML_PAGES")
        out: list[Request | FetchRecord | None] = []
        for outline in doc.outlines:
            if outline.xml_url:
                out.append(self.request(outline.xml_url, via="opml", source=source, depth=depth + 1, kind="feed"))
            if outline.html_url and (pages or not outline.xml_url):
                out.append(self.request(outline.html_url, via="opml-page", source=source, depth=depth + 1, kind="page"))
        max_includes = self.settings.getint("FEEDCENSUS_OPML_MAX_INCLUDE_DEPTH")
        for inc in doc.includes:
            if include_depth >= max_includes:
                self.crawler.stats.inc_value("feedcensus/outcome/refused")
                out.append(
                    FetchRecord(
                        url=inc,
                        outcome="refused",
                        error=f"OPML include deeper than {max_includes}",
                        source=source,
                        discovered_via="include",
                        depth=depth + 1,
                    )
                )
            else:
                out.append(
                    self.request(
                        inc, via="include", source=source, depth=depth + 1, kind="opml", include_depth=include_depth + 1
                    )
                )
        yield from (o for o in out if o is not None)
