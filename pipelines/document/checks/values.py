"""Value rules several elements share: e-mail addresses (3.3), URLs (3.4), integers and language codes.

Only the ``scheme:`` syntax of a URL is checked, not that the scheme is
IANA-registered.
"""

from __future__ import annotations

import re

from pipelines.document.checks.context import Acc, Element

__all__ = ["check_email", "check_url", "email_problem", "has_scheme", "is_integer", "is_language", "positive_int"]

_SCHEME_RE = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:")
_NOT_URL_CHARS_RE = re.compile(r"[^\x21-\x7e]")
#: A URL neither 3.4 rule finds fault with, in one match: a scheme, then only printable ASCII to the end.
_GOOD_URL_RE = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:[\x21-\x7e]*\s*\Z")
_INT_RE = re.compile(r"\s*\+?\d+\s*\Z")
_EMAIL_REAL_NAME_RE = re.compile(r"\s*[^\s@()<>\",;:]+@[^\s@()<>\",;:]+\.[^\s@()<>\",;:]+ \([^()]*\S[^()]*\)\s*\Z")
_EMAIL_BARE_RE = re.compile(r"\s*[^\s@()<>\",;:]+@[^\s@()<>\",;:]+\s*\Z")
_EMAIL_ANY_RE = re.compile(r"[^\s@()<>\",;:]+@[^\s@()<>\",;:]+")
_LANG_RE = re.compile(r"\s*([A-Za-z]{1,8})((?:-[A-Za-z0-9]{1,8})*)\s*\Z")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: ISO 639-1 codes (plus the withdrawn iw, in, ji, mo, sh still seen in RSS language lists).
_ISO639_1 = _words(
    """aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv
    dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii
    ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk
    ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc
    sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve
    vi vo wa wo xh yi yo za zh zu iw in ji mo sh"""
)


def is_integer(value: str) -> bool:
    """Digits, optionally signed "+", optionally surrounded by white space."""
    return _INT_RE.match(value) is not None


def positive_int(value: str) -> int | None:
    """The value as an integer when :func:`is_integer`, else None (0 included: callers decide)."""
    return int(value) if _INT_RE.match(value) is not None else None


def has_scheme(value: str) -> bool:
    """Begins with a URI scheme and ":" (an absolute URL or URN)."""
    return _SCHEME_RE.match(value) is not None


def is_language(text: str) -> bool:
    """An ISO 639 code (two letters from the list, or any three letters), or an RFC 1766 i- / x- tag."""
    m = _LANG_RE.match(text)
    if m is None:
        return False
    primary = m.group(1).lower()
    return (
        primary in _ISO639_1
        or (len(primary) == 3 and primary.isalpha())
        or (primary in ("i", "x") and bool(m.group(2)))
    )


# ---------------------------------------------------------------- 3.4 URLs


def check_url(acc: Acc, scope: str, text: str, el: Element | None = None, rule: str = "url-not-absolute") -> None:
    """3.4 on a link, url, docs or comments element (or a URL attribute, under its own ``rule``).

    ``rule`` when the value does not begin with a URI scheme, else
    ``url-not-ascii`` when it has non-ASCII characters or spaces (an IRI not
    converted to a URL).
    """
    if _GOOD_URL_RE.match(text) is not None:
        return  # the common case, decided at once
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
