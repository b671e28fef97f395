"""The network guard at connect time: the address judged is the address connected to.

A check made before the download (``crawler.middlewares.netsafety``) looks a name
up, and the download then looks it up again when it connects. The two answers
agree only while the same DNS cache entry is there: a name that answers a public
address first and ``127.0.0.1`` next (DNS rebinding), a spelling the check reads
one way and the connection another (a trailing dot), the cache turned off or an
entry evicted between the two, and the connection reaches what the check refused.

So the guard sits where the connection gets its address:

* :class:`GuardedResolver` is the reactor's resolver (``TWISTED_DNS_RESOLVER``).
  Every answer it gives, from its cache or from a lookup, is judged by
  :func:`crawler.fetch.netsafety.addresses_reason` before anything can connect to
  it. An answer that is not globally routable, for a name the inputs did not name,
  fails the lookup; the refusal and its reason are kept by name.
* :class:`GuardedHTTPDownloadHandler` is Scrapy's HTTP/1.1 handler for ``http`` and
  ``https``; a download whose lookup the guard refused fails with
  :class:`~crawler.outcomes.RefusedRequest` and that reason (Twisted's connection
  code reports any failed lookup as "no results", so the reason is looked up by name),
  so the request is not retried and its row says ``refused`` and why.

Which names are trusted (the input hosts) and whether private networks are allowed
is the crawl's :class:`GuardPolicy`, given to the resolver by the network-safety
middleware when the crawl starts. Until then every name is judged untrusted.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.exceptions import CannotResolveHostError
from scrapy.resolver import CachingThreadedResolver
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.error import DNSLookupError
from twisted.python.failure import Failure

from crawler.fetch.netsafety import addresses_reason, host_key
from crawler.handlers.pacing import PacedConnectionPool
from crawler.outcomes import RefusedRequest

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Self

    from scrapy import Request
    from scrapy.http import Response
    from twisted.internet.base import ReactorBase
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)

__all__ = ["GuardPolicy", "GuardedHTTPDownloadHandler", "GuardedResolver", "installed_guard"]

#: How many refusals are kept by name for the download handler to tell why (oldest dropped first).
_REFUSALS_KEPT = 10_000


def _no_hosts() -> Collection[str]:
    return ()


@dataclass
class GuardPolicy:
    """What the guard lets through: the hosts named in the inputs, or everything (``allow_private``).

    ``trusted`` is called on every judged answer (the spider's input hosts change once, when
    its inputs are read); ``extra`` are hosts trusted besides them (an allowed proxy's).
    """

    allow_private: bool = False
    trusted: Callable[[], Collection[str]] = _no_hosts
    extra: frozenset[str] = frozenset()
    _seen: tuple[Collection[str] | None, int] = field(default=(None, -1), repr=False)
    _keys: frozenset[str] = field(default=frozenset(), repr=False)

    def trusts(self, name: str) -> bool:
        if self.allow_private:
            return True
        key = host_key(name)
        return key in self.extra or key in self._trusted_keys()

    def _trusted_keys(self) -> frozenset[str]:
        hosts = self.trusted()
        if hosts is not self._seen[0] or len(hosts) != self._seen[1]:  # normalised once per change, not per lookup
            self._keys = frozenset(host_key(h) for h in hosts)
            self._seen = (hosts, len(hosts))
        return self._keys


class GuardRefused(DNSLookupError):
    """A lookup the guard refused: the name resolved to an address the crawl must not reach."""


class GuardedResolver(CachingThreadedResolver):
    """Scrapy's caching resolver, judging every answer it gives before anything connects to it."""

    def __init__(self, reactor: ReactorBase, cache_size: int, timeout: float, *, allow_private: bool) -> None:
        super().__init__(reactor, cache_size, timeout)
        self.policy = GuardPolicy(allow_private=allow_private)
        self._refusals: OrderedDict[str, str] = OrderedDict()

    @classmethod
    def from_crawler(cls, crawler: Any, reactor: ReactorBase) -> Self:
        # Scrapy passes its CrawlerProcess here: the resolver is the reactor's, made before any crawler.
        settings = crawler.settings
        cache_size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        return cls(
            reactor,
            cache_size,
            settings.getfloat("DNS_TIMEOUT"),
            allow_private=settings.getbool("FEEDCENSUS_ALLOW_PRIVATE_NETWORKS"),
        )

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:  # Twisted's name
        return (
            super()
            .getHostByName(name, timeout)
            .addCallbacks(self._judge, self._failed, callbackArgs=(name,), errbackArgs=(name,))
        )

    def _failed(self, failure: Failure, name: str) -> Failure:
        """A lookup that failed on its own (no such name, a timeout): an earlier refusal no longer explains it."""
        if self._refusals and not isinstance(failure.value, GuardRefused):
            self._refusals.pop(host_key(name), None)
        return failure

    def _judge(self, address: str, name: str) -> str:
        if self.policy.trusts(name):
            return address
        why = addresses_reason(name, [address])
        if why is None:
            if self._refusals:  # a name that rebinds back to a public address is no longer refused
                self._refusals.pop(host_key(name), None)
            return address
        reason = f"refused: {why} (found in content; --allow-private-networks allows it)"
        key = host_key(name)
        self._refusals[key] = reason
        self._refusals.move_to_end(key)
        while len(self._refusals) > _REFUSALS_KEPT:
            self._refusals.popitem(last=False)
        raise GuardRefused(reason)

    def refusal(self, host: str) -> str | None:
        """Why the guard last refused ``host``'s address, or None if it never did."""
        return self._refusals.get(host_key(host))


def installed_guard() -> GuardedResolver | None:
    """The reactor's resolver when it is the guard; None when another resolver is installed."""
    from twisted.internet import reactor

    resolver = getattr(reactor, "resolver", None)
    return resolver if isinstance(resolver, GuardedResolver) else None


class GuardedHTTPDownloadHandler(HTTP11DownloadHandler):
    """Scrapy's HTTP/1.1 download handler; a download whose address the guard refused fails as refused.

    Its connection pool sends a request once its connection is up and its start is due
    (crawler/handlers/pacing.py): in a distributed job, the start the frontier reserved for it."""

    def __init__(self, crawler: Any) -> None:
        super().__init__(crawler)
        from twisted.internet import reactor

        pool = PacedConnectionPool(reactor, self._connected)
        pool.maxPersistentPerHost = self._pool.maxPersistentPerHost  # as Scrapy set up its own pool
        pool._factory = self._pool._factory
        self._pool = self._paced_pool = pool
        self._downloader_connected: Callable[[Request], float] | None = None

    def _connected(self, request: Request) -> float:
        """The seconds ``request`` waits, now that it is connected, before it is sent (the downloader's word)."""
        if self._downloader_connected is None:
            downloader = getattr(self._crawler.engine, "downloader", None)
            self._downloader_connected = getattr(downloader, "connected", None) or (lambda _: 0.0)
        return self._downloader_connected(request)

    async def download_request(self, request: Request) -> Response:
        self._paced_pool.requesting = request  # the agent asks the pool for its connection before the first await
        try:
            return await super().download_request(request)
        except (CannotResolveHostError, DNSLookupError):
            guard = installed_guard()
            host = urlparse_cached(request).hostname or ""
            reason = guard.refusal(host) if guard is not None else None
            if reason is None:
                raise
            raise RefusedRequest(reason) from None
