"""Value rules several elements share: e-mail addresses (3.3), URLs (3.4) and integers.

Only the ``scheme:`` syntax of a URL is checked, not that the scheme is
IANA-registered.
"""

from __future__ import annotations

import re

from pipelines.document.checks.context import Acc, Element

__all__ = ["check_email", "check_url", "email_problem", "has_scheme", "is_integer", "positive_int"]

_SCHEME_RE = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:")
_NOT_URL_CHARS_RE = re.compile(r"[^\x21-\x7e]")
_INT_RE = re.compile(r"\s*\+?\d+\s*\Z")
_EMAIL_REAL_NAME_RE = re.compile(r"\s*[^\s@()<>\",;:]+@[^\s@()<>\",;:]+\.[^\s@()<>\",;:]+ \([^()]*\S[^()]*\)\s*\Z")
_EMAIL_BARE_RE = re.compile(r"\s*[^\s@()<>\",;:]+@[^\s@()<>\",;:]+\s*\Z")
_EMAIL_ANY_RE = re.compile(r"[^\s@()<>\",;:]+@[^\s@()<>\",;:]+")


def is_integer(value: str) -> bool:
    """Digits, optionally signed "+", optionally surrounded by white space."""
    return _INT_RE.match(value) is not None


def positive_int(value: str) -> int | None:
    """The value as an integer when :func:`is_integer`, else None (0 included: callers decide)."""
    return int(value) if _INT_RE.match(value) is not None else None


def has_scheme(value: str) -> bool:
    """Begins with a URI scheme and ":" (an absolute URL or URN)."""
    return _SCHEME_RE.match(value) is not None


# ---------------------------------------------------------------- 3.4 URLs


def check_url(acc: Acc, scope: str, text: str, el: Element | None = None, rule: str = "url-not-absolute") -> None:
    """3.4 on a link, url, docs or comments element (or a URL attribute, under its own ``rule``).

    ``rule`` when the value does not begin with a URI scheme, else
    ``url-not-ascii`` when it has non-ASCII characters or spaces (an IRI not
    converted to a URL).
    """
    if _SCHEME_RE.match(text) is None:
        acc.add(rule, scope, text or "(empty)")
    elif _NOT_URL_CHARS_RE.search(text.strip()) is not None:
        acc.add("url-not-ascii", scope, text)


# ---------------------------------------------------------------- 3.3 e-mail addresses


def email_problem(value: str) -> str | None:
    """Which of the exclusive 3.3 rules the value breaks, if any."""
    if _EMAIL_REAL_NAME_RE.match(value) is not None:
        return None
    if _EMAIL_BARE_RE.match(value) is not None:
        return "email-missing-real-name"
    if _EMAIL_ANY_RE.search(value) is not None:
        return "email-format"
    return "email-missing"


def check_email(acc: Acc, scope: str, text: str, el: Element) -> None:
    """3.3 on author, managingEditor or webMaster: "username@hostname.tld (Real Name)"."""
    rule = email_problem(text)
    if rule is not None:
        acc.add(rule, scope, (text or "(empty)") if rule == "email-missing" else text)
