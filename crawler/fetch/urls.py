"""Which URLs the crawl can request at all: one check, one set of messages.

The crawl requests absolute ``http`` and ``https`` URLs that have a host and
are at most ``max_length`` characters long (``FEEDCENSUS_MAX_URL_LENGTH``,
``DEFAULT_MAX_URL_LENGTH`` by default; 0 means no limit). Everything else is a
:class:`UrlFault`, and each fault has one ``fetch_log`` outcome and one message
(:func:`refusal`), whoever finds it:

* :func:`check_url` judges a URL string: the spider for its inputs and OPML
  outlines, ``netsafety.check_request_url`` for every request;
* :func:`url_faults` judges a URL already split into scheme, host and length:
  autodiscovery, which resolves hrefs with its own RFC 3986 parser, reports
  each fault as a link reason (``href-too-long``...);
* the seeds reader uses the messages of :func:`refusal` for the same faults.

The length is checked before the URL is split, so a huge URL costs nothing.
Whether a host is on a private network is not judged here (``netsafety``).
Pure: no I/O, never raises on a string.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from crawler.fetch.urirefs import host_and_port
from schemas.vocab import Outcome

__all__ = [
    "DEFAULT_MAX_URL_LENGTH",
    "FAULT_OUTCOME",
    "FETCHED_SCHEMES",
    "Refusal",
    "UrlFault",
    "check_url",
    "not_a_url",
    "port_ok",
    "refusal",
    "requestable_host",
    "too_long",
    "url_faults",
]

#: URLs longer than this are not requested (``FEEDCENSUS_MAX_URL_LENGTH``'s default; Scrapy's ``URLLENGTH_LIMIT``).
DEFAULT_MAX_URL_LENGTH = 8192

#: The only schemes the crawl fetches.
FETCHED_SCHEMES = ("http", "https")

#: Longest reason written for a URL that cannot be split.
_MAX_REASON = 300


class UrlFault(StrEnum):
    """Why a URL cannot be requested."""

    TOO_LONG = "too-long"
    NOT_A_URL = "not-a-url"  # urlsplit refuses it (a bad IPv6 literal...)
    UNSUPPORTED_SCHEME = "unsupported-scheme"
    NO_HOST = "no-host"
    BAD_PORT = "bad-port"  # a port that is not a number from 0 to 65535 (a Request for it cannot be made)


#: The ``fetch_log`` outcome each fault is recorded as.
FAULT_OUTCOME: dict[UrlFault, Outcome] = {
    UrlFault.TOO_LONG: Outcome.INVALID_URL,
    UrlFault.NOT_A_URL: Outcome.INVALID_URL,
    UrlFault.UNSUPPORTED_SCHEME: Outcome.UNSUPPORTED_SCHEME,
    UrlFault.NO_HOST: Outcome.INVALID_URL,
    UrlFault.BAD_PORT: Outcome.INVALID_URL,
}


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a URL is not fetched: a fetch_log ``outcome`` and a one-line ``reason``."""

    outcome: Outcome  # refused, unsupported_scheme or invalid_url
    reason: str


def too_long(length: int, max_length: int) -> bool:
    """Whether a URL of ``length`` characters is over ``max_length`` (0: no limit)."""
    return bool(max_length) and length > max_length


def url_faults(
    scheme: str | None, host: str | None, length: int, max_length: int, port: str = ""
) -> tuple[UrlFault, ...]:
    """The faults of a split URL, in the order :func:`check_url` reports them.

    The host and ``port`` (as written after the host's colon; empty without one) are judged only for
    an http(s) URL: ``mailto:x`` is an unsupported scheme, not a URL without a host.
    """
    faults: list[UrlFault] = []
    if too_long(length, max_length):
        faults.append(UrlFault.TOO_LONG)
    if (scheme or "").lower() not in FETCHED_SCHEMES:
        faults.append(UrlFault.UNSUPPORTED_SCHEME)
    elif not host:
        faults.append(UrlFault.NO_HOST)
    elif port and not port_ok(port):
        faults.append(UrlFault.BAD_PORT)
    return tuple(faults)


def port_ok(port: str) -> bool:
    """Whether a URL's port, as written, is one a request can be made for: ASCII digits, at most 65535
    (empty: the scheme's default). What ``urlsplit(url).port`` and Scrapy's ``Request`` accept."""
    return port.isascii() and port.isdigit() and int(port) <= 65535


def refusal(fault: UrlFault, *, scheme: str = "", length: int = 0, max_length: int = 0) -> Refusal:
    """The outcome and the message for ``fault`` (``not_a_url`` for :attr:`UrlFault.NOT_A_URL` with its detail)."""
    return Refusal(FAULT_OUTCOME[fault], _MESSAGES[fault](scheme.lower(), length, max_length))


def not_a_url(error: ValueError) -> Refusal:
    """The refusal of a URL ``urlsplit`` cannot read, with its error on one line."""
    detail = " ".join(str(error).split())
    return Refusal(FAULT_OUTCOME[UrlFault.NOT_A_URL], f"not a URL: {detail}"[:_MAX_REASON])


def check_url(url: str, max_length: int = DEFAULT_MAX_URL_LENGTH) -> Refusal | None:
    """A :class:`Refusal` when ``url`` cannot be requested at all; None when it can."""
    return _checked(url, max_length)[0]


def requestable_host(url: str, max_length: int = DEFAULT_MAX_URL_LENGTH) -> str | None:
    """The host of ``url`` when it can be requested (``urlsplit``'s ``hostname``: lower-cased but for an IPv6
    zone); None when :func:`check_url` refuses it."""
    problem, host = _checked(url, max_length)
    return host if problem is None else None


def _checked(url: str, max_length: int) -> tuple[Refusal | None, str | None]:
    """check_url's answer and the URL's host (the URL split once for both)."""
    if not isinstance(url, str):
        return Refusal(Outcome.INVALID_URL, "URL is not a string"), None
    if too_long(len(url), max_length):  # before splitting: a huge URL costs nothing
        return refusal(UrlFault.TOO_LONG, length=len(url), max_length=max_length), None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:
        return not_a_url(exc), None
    faults = url_faults(parts.scheme, host, len(url), max_length, host_and_port(parts.netloc)[1])
    return (refusal(faults[0], scheme=parts.scheme) if faults else None), host


def _too_long_message(_scheme: str, length: int, max_length: int) -> str:
    return f"URL longer than {max_length} characters ({length})"


def _not_a_url_message(_scheme: str, _length: int, _max_length: int) -> str:
    return "not a URL"


def _scheme_message(scheme: str, _length: int, _max_length: int) -> str:
    what = f"{scheme}:" if scheme else "a URL without a scheme"
    return f"only http and https are fetched, not {what}"


def _no_host_message(_scheme: str, _length: int, _max_length: int) -> str:
    return "URL has no host"


def _bad_port_message(_scheme: str, _length: int, _max_length: int) -> str:
    return "URL has a port that is not a number from 0 to 65535"


_MESSAGES = {
    UrlFault.TOO_LONG: _too_long_message,
    UrlFault.NOT_A_URL: _not_a_url_message,
    UrlFault.UNSUPPORTED_SCHEME: _scheme_message,
    UrlFault.NO_HOST: _no_host_message,
    UrlFault.BAD_PORT: _bad_port_message,
}
