"""The network-safety downloader middleware: the thin Scrapy component around ``crawler.fetch.netsafety``.

``NetworkSafetyMiddleware`` refuses requests the crawl must not make:
non-http(s) schemes, over-long URLs, and URLs found in fetched content that
point at (or resolve to) loopback, private, link-local or cloud-metadata
addresses, unless their host is one the user named in the inputs. The
decisions are ``crawler.fetch.netsafety``'s, which is pure.

This check comes early (before robots.txt is asked for), so most refusals cost no
connection. The check that holds whatever DNS answers next is made at connect time
by the reactor's resolver (``crawler.handlers.guard``): this middleware gives it the
crawl's policy at the crawl's first request (installing it on the reactor if the
crawl runs where no resolver was installed), and refuses to build (one line) where
that guard would not hold: another resolver or download handler for http(s), or a
proxy the user did not allow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.request import getproxies

from scrapy.exceptions import CannotResolveHostError
from scrapy.utils.misc import load_object
from twisted.internet import error as tx_error

from crawler.fetch.netsafety import (
    DEFAULT_MAX_URL_LENGTH,
    addresses_reason,
    check_request_url,
    needs_resolution,
    proxy_hosts,
    proxy_refusal,
)
from crawler.handlers.guard import GuardedHTTPDownloadHandler, GuardedResolver, GuardPolicy, installed_guard
from crawler.outcomes import RefusedRequest
from crawler.requests import NamesInputHosts, SpiderRole

if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Self

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

#: Download handlers for http(s) that reach no network: a replay serves what the archive holds.
_OFFLINE_HANDLERS = ("crawler.handlers.warc.WarcReplayHandler",)


class NetworkGuardError(Exception):
    """The crawl is set up so that the network guard cannot hold; the message says how, on one line."""


def guard_problem(settings: BaseSettings, proxies: dict[str, str]) -> str | None:
    """Why the network guard would not hold with these settings and ``proxies``; None when it holds.

    Checked once, when the middleware is built, so ``scrapy crawl`` and scrapyd refuse as ``feedcensus crawl`` does.
    """
    allow_private = settings.getbool("FEEDCENSUS_ALLOW_PRIVATE_NETWORKS")
    if allow_private:
        return None
    handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
    for scheme in ("http", "https"):
        path = handlers.get(scheme)
        if path is None:  # the scheme is off: nothing is fetched with it
            continue
        name = path if isinstance(path, str) else f"{path.__module__}.{path.__qualname__}"
        if name in _OFFLINE_HANDLERS:
            continue
        try:
            handler = load_object(path) if isinstance(path, str) else path
        except (ImportError, NameError, ValueError) as exc:
            return f"DOWNLOAD_HANDLERS[{scheme!r}] is {name}, which cannot be loaded: {type(exc).__name__}: {exc}"
        if not (isinstance(handler, type) and issubclass(handler, GuardedHTTPDownloadHandler)):
            return (
                f"DOWNLOAD_HANDLERS[{scheme!r}] is {name}, which may connect without the network guard; "
                "use crawler.handlers.guard.GuardedHTTPDownloadHandler (or a subclass), or --allow-private-networks"
            )
        if not _is_guard(settings["TWISTED_DNS_RESOLVER"]):
            return (
                f"TWISTED_DNS_RESOLVER is {settings['TWISTED_DNS_RESOLVER']}, which does not judge the addresses "
                "it gives; use crawler.handlers.guard.GuardedResolver, or --allow-private-networks"
            )
    return proxy_refusal(proxies, allow_private=False, allow_proxy=settings.getbool("FEEDCENSUS_ALLOW_PROXY"))


def _is_guard(path: Any) -> bool:
    """Whether the resolver setting names the guard (or a subclass); False for one that cannot be loaded."""
    try:
        resolver = load_object(path) if isinstance(path, str) else path
    except (ImportError, NameError, ValueError):
        return False
    return isinstance(resolver, type) and issubclass(resolver, GuardedResolver)


def used_proxies(settings: BaseSettings) -> dict[str, str]:
    """The proxies Scrapy's HttpProxyMiddleware would take from the environment (none when it is off)."""
    if not settings.getbool("HTTPPROXY_ENABLED"):
        return {}
    return {k: v for k, v in getproxies().items() if k in ("http", "https")}


class NetworkSafetyMiddleware:
    """Refuses what ``crawler.fetch.netsafety`` says the crawl must not fetch; resolves names first.

    A refused request fails with :class:`RefusedRequest` before any connection
    is made, so the spider's errback records it (``refused``,
    ``unsupported_scheme`` or ``invalid_url``). A name that is not an input host
    is resolved through the reactor's resolver; the guard there judges the
    answer the connection then uses, however long after.
    """

    def __init__(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.crawler = crawler
        self._names_hosts = SpiderRole[NamesInputHosts](NamesInputHosts)
        self.allow_private = settings.getbool("FEEDCENSUS_ALLOW_PRIVATE_NETWORKS")
        self.max_length = settings.getint("FEEDCENSUS_MAX_URL_LENGTH", DEFAULT_MAX_URL_LENGTH)
        proxies = used_proxies(settings)
        problem = guard_problem(settings, proxies)
        if problem is not None:
            raise NetworkGuardError(problem)
        self.proxy_hosts = proxy_hosts(proxies)  # allowed: the user named them, as inputs name hosts
        self.guarded = not self.allow_private and _is_guard(settings["TWISTED_DNS_RESOLVER"])
        self.guard: GuardedResolver | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def trusted_hosts(self) -> Collection[str]:
        """The hosts the user named in the inputs (trusted on any address); none for a spider that names none."""
        spider = self._names_hosts.of(self.crawler.spider)
        return (spider.input_hosts or ()) if spider is not None else ()

    def _attach_guard(self) -> None:
        """Give the reactor's guard this crawl's policy, at the first request (the reactor runs by then).

        ``CrawlerProcess`` installs the resolver ``TWISTED_DNS_RESOLVER`` names; a ``CrawlerRunner`` (a
        notebook, a program that runs its own reactor) installs none, so the guard is installed here: a
        crawl whose settings name the guard never runs without it.
        """
        guard = installed_guard()
        if guard is None:
            from twisted.internet import reactor

            guard = GuardedResolver.from_crawler(self.crawler, reactor)
            guard.install_on_reactor()
        guard.policy = GuardPolicy(allow_private=self.allow_private, trusted=self.trusted_hosts, extra=self.proxy_hosts)
        self.guard = guard

    async def process_request(self, request: Request) -> None:
        if self.guarded and self.guard is None:
            self._attach_guard()
        trusted = self.trusted_hosts()
        refusal = check_request_url(
            request.url, trusted_hosts=trusted, allow_private=self.allow_private, max_length=self.max_length
        )
        if refusal is not None:
            self.crawler.stats.inc_value(f"netsafety/{refusal.outcome}")
            raise RefusedRequest(refusal.reason, outcome=refusal.outcome)
        name = needs_resolution(request.url, trusted_hosts=trusted, allow_private=self.allow_private)
        if name is None:
            return
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import reactor

        try:
            address = await maybe_deferred_to_future(reactor.resolve(name))  # type: ignore[arg-type]
        except (
            tx_error.DNSLookupError,
            tx_error.TimeoutError,
            OSError,
        ) as exc:  # the download would fail the same way; say so once
            guard = installed_guard()
            why = guard.refusal(name) if guard is not None else None
            if why is not None:
                self.crawler.stats.inc_value("netsafety/refused")
                raise RefusedRequest(why) from None
            raise CannotResolveHostError(f"{name}: {type(exc).__name__}") from None
        why = addresses_reason(name, [address])
        if why:
            self.crawler.stats.inc_value("netsafety/refused")
            raise RefusedRequest(f"refused: {why} (found in content; --allow-private-networks allows it)")
