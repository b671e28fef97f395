"""Name what went wrong with a request: a fetch_log outcome and a one-line reason."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet import error as tx_error

if TYPE_CHECKING:
    from twisted.python.failure import Failure


class RefusedRequest(IgnoreRequest):
    """Raised by the network-safety middleware: a URL the crawl will not fetch."""

    def __init__(self, reason: str, outcome: str = "refused") -> None:
        super().__init__(reason)
        self.outcome = outcome


def one_line(text: object, limit: int = 300) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def classify_failure(failure: Failure) -> tuple[str, int | None, str]:
    """(outcome, HTTP status or None, one-line error) for a failed request."""
    exc = failure.value
    if isinstance(exc, HttpError):
        status = exc.response.status
        return "http_error", status, f"HTTP {status}"
    if isinstance(exc, RefusedRequest):
        return exc.outcome, None, one_line(exc)
    if isinstance(exc, IgnoreRequest):
        msg = str(exc)
        if "robots.txt" in msg:
            return "robots_denied", None, "forbidden by robots.txt"
        if "redirection" in msg:
            return "redirect_loop", None, one_line(msg)
        if "DOWNLOAD_MAXSIZE" in msg or "max size" in msg.lower():
            return "too_large", None, one_line(msg)
        return "refused", None, one_line(msg or type(exc).__name__)
    if isinstance(exc, DownloadCancelledError):
        return "too_large", None, one_line(exc or "download cancelled: over DOWNLOAD_MAXSIZE")
    if isinstance(exc, (DownloadTimeoutError, tx_error.TimeoutError, tx_error.TCPTimedOutError)):
        return "timeout", None, one_line(exc or "download timed out")
    if isinstance(exc, (CannotResolveHostError, tx_error.DNSLookupError)):
        return "network_error", None, one_line(f"DNS lookup failed: {exc}")
    if isinstance(exc, (DownloadConnectionRefusedError, tx_error.ConnectionRefusedError)):
        return "network_error", None, "connection refused"
    if isinstance(exc, (ResponseDataLossError, DownloadFailedError)):
        return "network_error", None, one_line(f"{type(exc).__name__}: {exc}")
    return "network_error", None, one_line(f"{type(exc).__name__}: {exc}")
