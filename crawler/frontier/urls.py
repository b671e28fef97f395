"""Redis URLs: their credentials kept out of what is shown, logged and put on a command line
(:func:`display_url`, :func:`shareable_url`, :func:`has_password`), and scrubbed from error messages
(:func:`_scrub`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Final
from urllib.parse import SplitResult, parse_qsl, unquote, urlencode, urlsplit, urlunsplit

_SECRET_PARAMS = frozenset({"password", "pass", "auth", "token", "username", "user"})
_PASSWORD_PARAMS = frozenset({"password", "pass", "auth", "token"})
#: Where a frontier's Redis password may come from instead of its URL (kept out of ``ps`` and logs).
PASSWORD_ENV: Final = "FEEDCENSUS_REDIS_PASSWORD"


@dataclass(frozen=True)
class _UrlParts:
    """A Redis URL split around its credentials."""

    parts: SplitResult
    host: str  # the netloc without the user info
    user: str | None  # None when the URL has no user info
    password: str | None  # None when the user info has no ':'
    query: list[tuple[str, str]]


def _split(url: str) -> _UrlParts | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    userinfo, at, host = parts.netloc.rpartition("@")
    user, colon, password = userinfo.partition(":")
    return _UrlParts(
        parts,
        host,
        user if at else None,
        password if colon else None,
        parse_qsl(parts.query, keep_blank_values=True),
    )


def _join(url: _UrlParts, userinfo: str | None, query: list[tuple[str, str]]) -> str:
    netloc = f"{userinfo}@{url.host}" if userinfo else url.host
    return urlunsplit((url.parts.scheme, netloc, url.parts.path, urlencode(query, safe="*"), ""))


def display_url(url: str) -> str:
    """``url`` with its credentials replaced by ``***`` (user info, and password in the query)."""
    split = _split(url)
    if split is None:
        return "<unreadable redis URL>"
    userinfo = None
    if split.user is not None:
        userinfo = f"{split.user}:***" if split.password is not None else "***"
    query = [(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in split.query]
    return _join(split, userinfo, query)


def shareable_url(url: str) -> str:
    """``url`` without its password (in the user info or the query): what a command line may show.

    The password then comes from ``FEEDCENSUS_REDIS_PASSWORD`` (:data:`PASSWORD_ENV`).
    """
    split = _split(url)
    if split is None:
        return "<unreadable redis URL>"
    return _join(split, split.user, [(k, v) for k, v in split.query if k.lower() not in _PASSWORD_PARAMS])


def has_password(url: str) -> bool:
    """Whether ``url`` carries a password (then ``ps`` shows it to every user of the machine)."""
    split = _split(url)
    if split is None:
        return False
    return bool(split.password) or any(k.lower() in _PASSWORD_PARAMS for k, _ in split.query)


def _secrets_of(url: str) -> list[str]:
    """Every credential written in ``url``, raw and unquoted, and the one in the environment (to scrub from messages)."""
    split = _split(url)
    if split is None:
        return [url]
    found = [v for k, v in split.query if k.lower() in _SECRET_PARAMS]
    if split.user is not None:
        found += [split.parts.netloc.rpartition("@")[0], split.password or ""]
    found += [unquote(s) for s in found]
    found.append(os.environ.get(PASSWORD_ENV) or "")
    return sorted({s for s in found if s}, key=len, reverse=True)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _scrub(message: str, secrets_: list[str]) -> str:
    for secret in secrets_:
        message = message.replace(secret, "***")
    return _one_line(message)
