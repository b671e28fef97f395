"""Name what went wrong with a request: a fetch_log outcome and a one-line reason.

Every way Scrapy 2.19 reports a failed download maps to one outcome:

=====================  ==========================================================
outcome                raised as
=====================  ==========================================================
``http_error``         ``HttpError`` (4xx/5xx left after retries; status kept)
``too_large``          ``DownloadCancelledError`` "larger than download max size"
                       (Content-Length or bytes received over DOWNLOAD_MAXSIZE);
                       ``IgnoreRequest`` from HttpCompressionMiddleware "exceeded
                       DOWNLOAD_MAXSIZE ... during decompression" (gzip/deflate/br bombs)
``timeout``            ``DownloadTimeoutError`` (DOWNLOAD_TIMEOUT: covers a server that
                       never answers, drips bytes or never closes), Twisted timeouts
``redirect_loop``      ``IgnoreRequest`` "max redirections reached" (REDIRECT_MAX_TIMES);
                       loops back to a URL already requested are recorded by the writer
``robots_denied``      ``IgnoreRequest`` "Forbidden by robots.txt"
``refused``            :class:`RefusedRequest` from the network-safety middleware
``unsupported_scheme`` :class:`RefusedRequest`, ``UnsupportedURLSchemeError``
``invalid_url``        :class:`RefusedRequest` (over-long URL, no host), ``ValueError``
``network_error``      DNS failures, refused or reset connections, truncated bodies
                       (``ResponseDataLossError``: wrong Content-Length, early close),
                       undecodable Content-Encoding, anything else
=====================  ==========================================================
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
    UnsupportedURLSchemeError,
)
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet import error as tx_error
from twisted.web import _newclient

if TYPE_CHECKING:
    from twisted.python.failure import Failure

#: Every outcome classify_exception can return.
FAILURE_OUTCOMES = (
    "http_error",
    "too_large",
    "timeout",
    "redirect_loop",
    "robots_denied",
    "refused",
    "unsupported_scheme",
    "invalid_url",
    "network_error",
)


class RefusedRequest(IgnoreRequest):
    """Raised by the network-safety middleware: a URL the crawl will not fetch."""

    def __init__(self, reason: str, outcome: str = "refused") -> None:
        super().__init__(reason)
        self.outcome = outcome


def one_line(text: object, limit: int = 300) -> str:
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _text(exc: BaseException) -> str:
    return one_line(exc) or type(exc).__name__


def classify_failure(failure: Failure) -> tuple[str, int | None, str]:
    """(outcome, HTTP status or None, one-line error) for a failed request."""
    return classify_exception(failure.value)


def classify_exception(exc: BaseException) -> tuple[str, int | None, str]:
    """(outcome, HTTP status or None, one-line error) for the exception a request failed with."""
    try:
        return _classify(exc)
    except Exception as inner:  # an exception whose str() raises: still a row
        return "network_error", None, f"{type(exc).__name__} ({type(inner).__name__} describing it)"


def _classify(exc: BaseException) -> tuple[str, int | None, str]:
    if isinstance(exc, HttpError):
        response = getattr(exc, "response", None)
        status = getattr(response, "status", None)
        return "http_error", status, f"HTTP {status}"
    if isinstance(exc, RefusedRequest):
        return exc.outcome, None, one_line(exc) or "refused"
    if isinstance(exc, IgnoreRequest):
        msg = str(exc)
        low = msg.lower()
        if "robots.txt" in low:
            return "robots_denied", None, "forbidden by robots.txt"
        if "redirection" in low:
            return "redirect_loop", None, one_line(msg)
        if "download_maxsize" in low or "max size" in low:
            return "too_large", None, one_line(msg)
        return "refused", None, one_line(msg or type(exc).__name__)
    if isinstance(exc, DownloadCancelledError):
        msg = str(exc)
        if "max size" in msg.lower() or not msg:
            return "too_large", None, one_line(msg or "download cancelled: over DOWNLOAD_MAXSIZE")
        return "network_error", None, one_line(f"download cancelled: {msg}")
    if isinstance(exc, (DownloadTimeoutError, tx_error.TimeoutError, tx_error.TCPTimedOutError)):
        return "timeout", None, one_line(exc) or "download timed out"
    if isinstance(exc, (CannotResolveHostError, tx_error.DNSLookupError)):
        return "network_error", None, one_line(f"DNS lookup failed: {exc}")
    if isinstance(exc, (DownloadConnectionRefusedError, tx_error.ConnectionRefusedError)):
        return "network_error", None, "connection refused"
    if isinstance(exc, UnsupportedURLSchemeError):
        return "unsupported_scheme", None, one_line(exc) or "unsupported URL scheme"
    if isinstance(exc, ResponseDataLossError):
        return "network_error", None, one_line(f"truncated body (fewer bytes than Content-Length): {exc}")
    if isinstance(exc, (DownloadFailedError, _newclient.ResponseFailed, tx_error.ConnectionLost)):
        msg = _text(exc)
        if "ConnectionLost" in msg or "ConnectionDone" in msg or "ConnectionLost" in type(exc).__name__:
            return "network_error", None, one_line(f"connection closed or reset mid-response: {msg}")
        return "network_error", None, one_line(f"{type(exc).__name__}: {msg}")
    if isinstance(exc, (zlib.error, EOFError)) or type(exc).__name__ in ("BadGzipFile", "error"):
        return "network_error", None, one_line(f"cannot decode the Content-Encoding: {type(exc).__name__}: {exc}")
    if isinstance(exc, tx_error.ConnectionDone):
        return "network_error", None, "connection closed before a response"
    if isinstance(exc, ValueError):
        return "invalid_url", None, one_line(f"{type(exc).__name__}: {exc}")
    return "network_error", None, one_line(f"{type(exc).__name__}: {exc}")
