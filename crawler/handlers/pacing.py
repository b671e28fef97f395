"""A request is sent when its start is due, once its connection is up, not only when it was started.

In a distributed job the frontier spaces the starts of a host's requests by the host's delay, and a worker
starts a request only within a quarter of the delay of the start reserved for it (crawler/downloader.py). What
the host sees is when each request arrives, and between the start and the request leaving a worker may take a
while: it needs a connection, and a new TCP connection takes two or three turns of the worker's event loop. In
a busy worker (a quarter of a core, its document worker beside it) that was 122 ms at the median and 241 ms at
the 90th percentile (benchmarks/RESULTS.md, section 13), so a request could arrive at the host a few
milliseconds before or after the one another worker started a delay later. A far worker's TLS handshake does
the same on the open web.

:class:`PacedConnectionPool` is the HTTP handler's connection pool. Once a request's connection is up it asks
the downloader (:meth:`crawler.downloader.PoliteDownloader.connected`) whether the request may be sent now or
must wait for a start reserved again; it holds the connection meanwhile (the downloader keeps that short).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred
from twisted.web.client import HTTPConnectionPool

if TYPE_CHECKING:
    from scrapy import Request

__all__ = ["PacedConnectionPool"]


class PacedConnectionPool(HTTPConnectionPool):
    """Twisted's pool of HTTP connections, which hands a connection to its request once the request's start is
    due (``paced(request)``: the seconds it waits; 0 now)."""

    def __init__(self, reactor: Any, paced: Callable[[Request], float]) -> None:
        super().__init__(reactor, persistent=True)  # type: ignore[no-untyped-call]  # Twisted's
        self._paced = paced
        #: The request whose connection is asked for next: the handler sets it just before the agent asks.
        self.requesting: Request | None = None

    def getConnection(self, key: Any, endpoint: Any) -> Deferred[Any]:  # Twisted's name
        request, self.requesting = self.requesting, None
        connecting: Deferred[Any] = super().getConnection(key, endpoint)
        if request is None:
            return connecting
        return connecting.addCallback(self._when_due, request)

    def _when_due(self, connection: Any, request: Request) -> Any:
        try:
            wait = self._paced(request)
        except BaseException:
            connection.transport.loseConnection()  # nobody will use it: the download fails with the error
            raise
        if wait <= 0:
            return connection
        # Cancelled (the download's timeout): the connection, which nobody will use, is closed, and the timer stopped.
        due: Deferred[Any] = Deferred(lambda _: connection.transport.loseConnection())
        timer = self._reactor.callLater(wait, due.callback, None)

        def stop_timer(result: Any) -> Any:
            if timer.active():
                timer.cancel()
            return result

        due.addBoth(stop_timer)
        return due.addCallback(lambda _: self._when_due(connection, request))  # the start may be late again
