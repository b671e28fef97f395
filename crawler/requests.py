"""The one place requests are made, and the one place their context is read back.

Every request of the census carries a :class:`~schemas.items.FetchContext` in
``meta["fc"]``: how its URL was found, from where, how deep, and what the
crawl expects there. The spider, the autodiscovery middleware, the reflexive
pipeline (through the spider) and a resumed crawl's journal all go through
:func:`make_request`, so every request has the same callbacks, the same
priority rule and a context of the same shape.

Priority is breadth-first by the census's own depth (``priority = -depth``),
the same for requests made in ``start()``, in callbacks, in middlewares and
by pipelines. Scrapy's ``DepthMiddleware`` is off (crawler/settings.py), so its
``DEPTH_PRIORITY`` does not subtract depth a second time.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

from scrapy import Request
from scrapy.http import Response

from pipelines.dataset.claims import url_key
from schemas.items import CONTEXT_META_KEY, DEFAULT_CONTEXT, FetchContext, FetchRecord, NotDue, context_from_meta


def make_request(
    url: str,
    ctx: FetchContext,
    *,
    callback: Callable[..., Any] | None,
    errback: Callable[..., Any] | None,
    priority_bias: int = 0,
    validators: Mapping[str, str] | None = None,
) -> Request:
    """A request for ``url`` found with ``ctx`` (``priority_bias`` < 0 lets it wait behind its peers).

    ``validators`` (``If-None-Match`` / ``If-Modified-Since`` from the feed's last fetch) make it a
    conditional GET; its 304 answer then reaches the callback (Scrapy's ``handle_httpstatus_list``).
    """
    meta: dict[str, Any] = {CONTEXT_META_KEY: ctx}
    if validators:
        meta["handle_httpstatus_list"] = [304]
    return Request(
        url,
        callback=callback,
        errback=errback,
        meta=meta,
        headers=dict(validators) if validators else None,
        priority=-ctx.depth + priority_bias,
    )


def archive_record_request(
    archive_url: str,
    offset: int,
    length: int,
    archived_url: str,
    ctx: FetchContext,
    *,
    callback: Callable[..., Any],
    errback: Callable[..., Any],
) -> Request:
    """A Range request for one record of a web archive (``feedcensus commoncrawl``): bytes
    ``offset`` .. ``offset + length - 1`` of the WARC file at ``archive_url``.

    ``cb_kwargs["archived"]`` names the URL the record holds, so that a failure's row is about
    that URL (the request's own URL is the WARC file's). Many records share one file URL: the
    request is not filtered as a duplicate of its neighbours.
    """
    return Request(
        archive_url,
        callback=callback,
        errback=errback,
        meta={CONTEXT_META_KEY: ctx},
        headers={"Range": f"bytes={offset}-{offset + length - 1}"},
        cb_kwargs={"archived": {"url": archived_url, "offset": offset, "length": length}},
        dont_filter=True,
        priority=-ctx.depth,
    )


def lease_key(request: Request) -> str:
    """The key a distributed job leases ``request`` under (``crawler.frontier``): its URL, or for a web
    archive's record (:func:`archive_record_request`: its URL is the WARC file's) ``archive <url>`` of the
    URL the record holds, the key of the record's ``fetch_log`` row (:func:`pipelines.dataset.claims.fetch_key`),
    so that its commit ends this record's lease alone, and a live fetch of the URL has a lease of its own."""
    archived = request.cb_kwargs.get("archived")
    url = archived.get("url") if isinstance(archived, dict) else None
    return url_key(url, True) if isinstance(url, str) and url else request.url


def parent_key(ctx: FetchContext) -> str | None:
    """The key (:func:`lease_key`) of the page or document whose reading named a URL found with ``ctx``: its
    ``source`` (that response's URL), as ``archive <url>`` when that was a web archive's record."""
    return None if ctx.source is None else url_key(ctx.source, ctx.source_archived)


def context_of(message: Request | Response) -> FetchContext:
    """The fetch context a request (or the request behind a response) was made with."""
    return context_from_meta(message.meta) or DEFAULT_CONTEXT


def has_context(request: Request) -> bool:
    """Whether the census made this request (Scrapy's own robots.txt requests carry no context)."""
    return context_from_meta(request.meta) is not None


def first_url(message: Request | Response) -> str:
    """The URL first requested: before any redirect."""
    redirects = message.meta.get("redirect_urls") or []
    return str(redirects[0]) if redirects else message.url


@runtime_checkable
class FollowsFeedLinks(Protocol):
    """What the autodiscovery middleware needs of a spider (the census spider is one): a request for a URL
    found in content, or, for a known feed that is not due, what to record instead. A middleware knows
    the spider through this, not its class, so any spider with ``follow`` gets autodiscovery."""

    def follow(
        self, url: str, ctx: FetchContext, *, priority_bias: int = 0, conditional: bool = True
    ) -> Request | FetchRecord | NotDue: ...


@runtime_checkable
class FollowsLinks(Protocol):
    """What the reflexive pipeline needs of a spider (the census spider is one): a request for a page whose
    HTML it needs, or, for a known feed that is not due, what to record instead."""

    def page(self, url: str, ctx: FetchContext) -> Request | FetchRecord | NotDue: ...


@runtime_checkable
class NamesInputHosts(Protocol):
    """A spider that names the hosts of its inputs (the census spider is one): the network-safety
    middleware trusts them, even on a private or loopback address. A spider without ``input_hosts`` has
    none."""

    @property
    def input_hosts(self) -> Collection[str] | None: ...


@runtime_checkable
class ReservesStarts(Protocol):
    """What the robots.txt middleware and the Crawl-delay extension need of a downloader that keeps a
    distributed job's delay per host (crawler/downloader.py): the start of the request robots.txt was fetched
    for is reserved with the round trip that shares robots.txt, and handed to the downloader; a host whose
    robots.txt asks for a longer delay than it has (``delay_of``) has the starts reserved with the shorter one
    dropped."""

    def start_to_reserve(self, request: Request) -> tuple[str, float] | None: ...

    def delay_of(self, key: str) -> float: ...

    def reserved(self, key: str, wait: float, at: str) -> None: ...

    def delay_raised(self, key: str) -> None: ...


R = TypeVar("R")
_UNSEEN = object()


class SpiderRole(Generic[R]):
    """Whether a crawler's spider plays a role (one of the Protocols above), asked once per spider.

    ``isinstance`` against a runtime Protocol looks up each of its members again on every call (5-12 us
    here), and the middlewares ask on every response: 1.6 % of the reactor's samples in a 5,000-site crawl.
    A spider's methods do not come and go, so the answer for the spider last asked about is kept. Name the
    role twice, as type and as class (``SpiderRole[FollowsLinks](FollowsLinks)``): mypy takes no Protocol
    where a class is expected."""

    __slots__ = ("_protocol", "_role", "_spider")

    def __init__(self, protocol: type) -> None:
        self._protocol = protocol
        self._spider: object = _UNSEEN
        self._role: R | None = None

    def of(self, spider: object) -> R | None:
        """``spider`` as the role, or None when it does not play it."""
        if spider is not self._spider:
            self._role = cast("R", spider) if isinstance(spider, self._protocol) else None
            self._spider = spider
        return self._role


def response_headers(response: Response) -> dict[str, str]:
    """A response's headers as plain text: names lower-cased, repeated headers joined with ', ' (RFC 9110 5.3)."""
    return {k.decode("latin-1").lower(): b", ".join(v).decode("latin-1") for k, v in response.headers.items()}
