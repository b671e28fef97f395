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
``not_archived``       :class:`~crawler.archive.read.NotArchived` (a replay: no record of
                       the URL, or of its host, in the archives)
``network_error``      DNS failures, refused or reset connections, truncated bodies
                       (``ResponseDataLossError``: wrong Content-Length, early close),
                       undecodable Content-Encoding, a replay's unreadable WARC record
                       (:class:`~crawler.archive.read.BadRecord`), anything else
=====================  ==========================================================

The code is the same table: ``_RULES`` maps exception types to one small
handler each, tried in order (subclasses first), so a new failure is one row.
The outcome names are ``schemas.vocab.Outcome``; ``FAILURE_OUTCOMES`` is
re-exported from there for callers.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import NamedTuple

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
from twisted.python.failure import Failure
from twisted.web import _newclient

from crawler.archive.read import BadRecord, NotArchived
from crawler.fetch.inputs import one_line
from schemas.vocab import FAILURE_OUTCOMES, Outcome

__all__ = [
    "FAILURE_OUTCOMES",
    "RefusedRequest",
    "classify_exception",
    "classify_failure",
    "one_line",
]

#: (outcome, HTTP status or None, one-line error): one fetch_log row's verdict.
Classified = tuple[str, int | None, str]
Handler = Callable[[BaseException], Classified]


class RefusedRequest(IgnoreRequest):
    """Raised by the network-safety middleware: a URL the crawl will not fetch."""

    def __init__(self, reason: str, outcome: str = Outcome.REFUSED) -> None:
        super().__init__(reason)
        self.outcome = outcome


def _text(exc: BaseException) -> str:
    """The exception on one line. Twisted's ``ResponseFailed`` (and Scrapy's ``DownloadFailedError`` made
    from one) hold a list of Failures, whose text is their reprs: each is told by its own type and message."""
    for holder in (exc, exc.__cause__):
        reasons = getattr(holder, "reasons", None)
        if isinstance(reasons, list) and reasons and all(isinstance(r, Failure) for r in reasons):
            return "; ".join(_own(r.value) for r in reasons)
    return one_line(exc) or type(exc).__name__


def _own(exc: BaseException | None) -> str:
    text = one_line(exc) if exc is not None else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def classify_failure(failure: Failure) -> Classified:
    """(outcome, HTTP status or None, one-line error) for a failed request."""
    if failure.value is None:  # Twisted's typing allows it; Scrapy never makes one
        return Outcome.NETWORK_ERROR, None, "NoneType: None"
    return classify_exception(failure.value)


def classify_exception(exc: BaseException) -> Classified:
    """(outcome, HTTP status or None, one-line error) for the exception a request failed with."""
    try:
        return _classify(exc)
    # A true boundary, and not silent: the exception can be of any type, and
    # describing it calls its own __str__, which may raise anything. The request
    # still gets a fetch_log row, whose error names both exceptions.
    except Exception as inner:
        return Outcome.NETWORK_ERROR, None, f"{type(exc).__name__} ({type(inner).__name__} describing it)"


# --- one small handler per kind of failure -----------------------------------


def _http_error(exc: BaseException) -> Classified:
    response = getattr(exc, "response", None)
    status = getattr(response, "status", None)
    return Outcome.HTTP_ERROR, status, f"HTTP {status}"


def _refused_request(exc: BaseException) -> Classified:
    outcome = exc.outcome if isinstance(exc, RefusedRequest) else Outcome.REFUSED
    return outcome, None, one_line(exc) or "refused"


#: IgnoreRequest says why only in its message: (words in it, outcome, the error
#: to record or None for the message itself); the first match wins.
_IGNORE_REASONS: tuple[tuple[tuple[str, ...], Outcome, str | None], ...] = (
    (("robots.txt",), Outcome.ROBOTS_DENIED, "forbidden by robots.txt"),
    (("redirection",), Outcome.REDIRECT_LOOP, None),
    (("download_maxsize", "max size"), Outcome.TOO_LARGE, None),
)


def _ignored_request(exc: BaseException) -> Classified:
    msg = str(exc)
    low = msg.lower()
    for words, outcome, error in _IGNORE_REASONS:
        if any(word in low for word in words):
            return outcome, None, error or one_line(msg)
    return Outcome.REFUSED, None, one_line(msg or type(exc).__name__)


def _download_cancelled(exc: BaseException) -> Classified:
    msg = str(exc)
    if "max size" in msg.lower() or not msg:
        return Outcome.TOO_LARGE, None, one_line(msg or "download cancelled: over DOWNLOAD_MAXSIZE")
    return Outcome.NETWORK_ERROR, None, one_line(f"download cancelled: {msg}")


def _connection_failed(exc: BaseException) -> Classified:
    msg = _text(exc)
    name = type(exc).__name__
    if "ConnectionLost" in msg or "ConnectionDone" in msg or "ConnectionLost" in name:
        return Outcome.NETWORK_ERROR, None, one_line(f"connection closed or reset mid-response: {msg}")
    return Outcome.NETWORK_ERROR, None, one_line(f"{name}: {msg}")


def _own_text(outcome: Outcome, default: str) -> Handler:
    """The exception's own message, or ``default`` when it has none."""

    def handle(exc: BaseException) -> Classified:
        return outcome, None, one_line(exc) or default

    return handle


def _described(outcome: Outcome, template: str) -> Handler:
    """``template`` filled with the exception (``{exc}``) and its type's name (``{name}``)."""

    def handle(exc: BaseException) -> Classified:
        return outcome, None, one_line(template.format(exc=exc, name=type(exc).__name__))

    return handle


def _fixed(outcome: Outcome, message: str) -> Handler:
    """Always the same message: the exception's own says nothing more."""

    def handle(exc: BaseException) -> Classified:
        return outcome, None, message

    return handle


class _Rule(NamedTuple):
    """Exceptions of ``types`` (or whose type is named one of ``names``) are classified by ``handler``."""

    types: tuple[type[BaseException], ...]
    handler: Handler
    names: frozenset[str] = frozenset()

    def matches(self, exc: BaseException) -> bool:
        return isinstance(exc, self.types) or type(exc).__name__ in self.names


#: Exception type -> outcome. The order matters (subclasses before their bases:
#: HttpError and RefusedRequest are IgnoreRequests); the first rule that matches wins.
_RULES: tuple[_Rule, ...] = (
    _Rule((HttpError,), _http_error),
    _Rule((NotArchived,), _own_text(Outcome.NOT_ARCHIVED, "not in the archive")),
    _Rule((BadRecord,), _own_text(Outcome.NETWORK_ERROR, "unreadable WARC record")),
    _Rule((RefusedRequest,), _refused_request),
    _Rule((IgnoreRequest,), _ignored_request),
    _Rule((DownloadCancelledError,), _download_cancelled),
    _Rule(
        (DownloadTimeoutError, tx_error.TimeoutError, tx_error.TCPTimedOutError),
        _own_text(Outcome.TIMEOUT, "download timed out"),
    ),
    _Rule(
        (CannotResolveHostError, tx_error.DNSLookupError),
        _described(Outcome.NETWORK_ERROR, "DNS lookup failed: {exc}"),
    ),
    _Rule(
        (DownloadConnectionRefusedError, tx_error.ConnectionRefusedError),
        _fixed(Outcome.NETWORK_ERROR, "connection refused"),
    ),
    _Rule((UnsupportedURLSchemeError,), _own_text(Outcome.UNSUPPORTED_SCHEME, "unsupported URL scheme")),
    _Rule(
        (ResponseDataLossError,),
        _described(Outcome.NETWORK_ERROR, "truncated body (fewer bytes than Content-Length): {exc}"),
    ),
    _Rule((DownloadFailedError, _newclient.ResponseFailed, tx_error.ConnectionLost), _connection_failed),
    _Rule(
        (zlib.error, EOFError),
        _described(Outcome.NETWORK_ERROR, "cannot decode the Content-Encoding: {name}: {exc}"),
        names=frozenset({"BadGzipFile", "error"}),
    ),
    _Rule((tx_error.ConnectionDone,), _fixed(Outcome.NETWORK_ERROR, "connection closed before a response")),
    _Rule((ValueError,), _described(Outcome.INVALID_URL, "{name}: {exc}")),
)

#: Anything no rule names.
_FALLBACK: Handler = _described(Outcome.NETWORK_ERROR, "{name}: {exc}")


def _classify(exc: BaseException) -> Classified:
    for rule in _RULES:
        if rule.matches(exc):
            return rule.handler(exc)
    return _FALLBACK(exc)
