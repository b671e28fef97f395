"""A request is sent when its start is due, once its connection is up, not only when it was started.

In a distributed job the frontier spaces the starts of a host's requests by the host's delay, and a worker
starts a request only within a quarter of the delay of the start reserved for it (crawler/downloader.py). What
the host sees is when each request arrives, and between the start and the request leaving a worker may take a
while: it needs a connection, and a new TCP connection takes two or three turns of the worker's event loop. In
a busy worker (a quarter of a core, its document worker beside it) that was 122 ms at the median and 241 ms at
the 90th percentile (benchmarks/RESULTS.md, section 13), so a request could arrive at the host a few
milliseconds before or after the one another worker started a delay later.

:class:`PacedConnectionPool` is the HTTP handler's connection pool. Once a request's connection is up it asks
the downloader (:meth:`crawler.downloader.PoliteDownloader.connected`) whether the request may be sent now or
must wait for a start reserved again. It holds the connection meanwhile, up to :data:`HOLD_MAX`; a longer wait
closes it, and the request connects again when its start comes; so does one whose connection the server closed
while it was held (a server closes a connection idle for a while: the scale web's after 5 s, a kept-alive one
counted from its last answer). The check is made when the TCP connection is up: an HTTPS connection's TLS
handshake comes after it, and its time is not covered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred
from twisted.web.client import HTTPConnectionPool

if TYPE_CHECKING:
    from scrapy import Request

__all__ = ["HOLD_MAX", "PacedConnectionPool"]

#: Seconds a connection is held idle at its host for its request's start, at most: a server may close a
#: connection that sends nothing (the scale web's do after 5 s). A longer wait closes it, and the request
#: connects again when its start comes.
HOLD_MAX = 2.0


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
        return connecting.addCallback(self._when_due, request, key, endpoint)

    def _when_due(self, connection: Any, request: Request, key: Any, endpoint: Any) -> Any:
        try:
            wait = self._paced(request)
        except BaseException:
            _close(connection)  # nobody will use it: the download fails with the error
            raise
        if wait <= 0:
            return connection
        if wait > HOLD_MAX:  # not held idle at the host that long: closed, and made again when the start comes
            _close(connection)
            return self._after(wait, lambda: super(PacedConnectionPool, self).getConnection(key, endpoint))
        return self._after(wait, lambda: self._held(connection, request, key, endpoint), lambda: _close(connection))

    def _held(self, connection: Any, request: Request, key: Any, endpoint: Any) -> Any:
        """A connection held for its request's start, now due: checked again (the start may be late again),
        or another one if the server closed it meanwhile (an idle connection)."""
        if not _open(connection):
            return super().getConnection(key, endpoint)
        return self._when_due(connection, request, key, endpoint)

    def _after(
        self, wait: float, then: Callable[[], Any], cancelled: Callable[[], None] | None = None
    ) -> Deferred[Any]:
        """What ``then()`` gives, ``wait`` seconds from now. Cancelled first (the download's timeout): the timer is
        stopped, and ``cancelled()`` called."""
        due: Deferred[Any] = Deferred(lambda _: cancelled() if cancelled is not None else None)
        timer = self._reactor.callLater(wait, due.callback, None)

        def stop_timer(result: Any) -> Any:
            if timer.active():
                timer.cancel()
            return result

        due.addBoth(stop_timer)
        return due.addCallback(lambda _: then())


def _open(connection: Any) -> bool:
    """Whether a connection can still send a request (Twisted's state of an idle one; a kept-alive one comes from
    the pool wrapped, as ``_RetryingHTTP11ClientProtocol``, whose protocol is ``_clientProtocol``)."""
    protocol = getattr(connection, "_clientProtocol", connection)
    return getattr(protocol, "state", "QUIESCENT") == "QUIESCENT"


def _close(connection: Any) -> None:
    """Close a connection nobody will use (see :func:`_open`); never raises."""
    protocol = getattr(connection, "_clientProtocol", connection)
    transport = getattr(protocol, "transport", None)
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.loseConnection()
