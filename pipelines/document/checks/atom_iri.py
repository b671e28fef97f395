"""Atom 1.0: an ``atom:id`` in normal form (RFC 4287 4.2.6.1, by RFC 3986 section 6's normalizations).

RFC 4287 compares ids character by character, and asks (a *should*) that an
id be written in the normal form RFC 3986 section 6.2.2-6.2.3 defines, so that
two ids of one resource cannot differ in writing only. :func:`normal_form`
rewrites an absolute URI that way:

* the scheme and the host in lower case; an empty port, or the scheme's
  default port (``http:80``, ``https:443``...), left out; a host's trailing dot
  left out;
* percent-escapes in upper case (``%2f`` -> ``%2F``), an escaped unreserved
  character decoded (``%7E`` -> ``~``), a character that may not stand in
  that part escaped (a space, a non-ASCII character as its UTF-8 octets);
* a path's ``.`` and ``..`` segments resolved, an empty path after an
  authority written ``/``.

``atom-id-not-canonical`` (``NonCanonicalURI``, a warning, as the W3C Feed
Validator reports it) fires on an id whose normal form differs from it (an
empty query ``?`` or fragment ``#`` stays: RFC 3986 keeps them). An id this
cannot read (a bad percent-escape) has no normal form and fires too.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

__all__ = ["bad_iri_char", "id_not_canonical", "normal_form"]

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = "!$&'()*+,;="
#: What may stand unescaped in a path segment (RFC 3986 pchar, less the unreserved), in a query or fragment.
_SEGMENT_SAFE = frozenset(_SUB_DELIMS + ":@")
_QUERY_SAFE = frozenset(_SUB_DELIMS + ":@/?")
_PATH_SAFE = _SEGMENT_SAFE | {"/"}
#: RFC 3986 appendix B, anchored: scheme, authority, path, query, fragment.
_URI_RE = re.compile(r"([^:/?#]+):(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?\Z", re.S)
_TOKEN_RE = re.compile(r"%[0-9A-Fa-f]{2}|%|[^%]")
#: Default ports of the schemes that have one: written, they are left out of the normal form.
DEFAULT_PORTS = {"http": "80", "https": "443", "ftp": "21", "telnet": "23", "gopher": "70", "nntp": "119",
                 "news": "119", "snews": "563", "prospero": "191"}  # fmt: skip


class _Unreadable(ValueError):
    """A percent sign not followed by two hex digits, a bracket that is not an IPv6 literal's."""


#: A part that is in normal form as it stands (no escape, only characters that may stand there): most are.
_PLAIN_RE = {
    _SEGMENT_SAFE: re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@]*\Z"),
    _PATH_SAFE: re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*\Z"),
    _QUERY_SAFE: re.compile(r"[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*\Z"),
}


def _part(text: str, safe: frozenset[str]) -> str:
    """One part in normal form: escapes upper-cased, unreserved ones decoded, what may not stand there escaped."""
    if not text or _PLAIN_RE[safe].match(text):
        return text
    text = unicodedata.normalize("NFC", text)
    out = []
    for token in _TOKEN_RE.findall(text):
        if token == "%":
            raise _Unreadable(text)
        if len(token) == 3:
            char = chr(int(token[1:], 16))
            out.append(char if char in _UNRESERVED else token.upper())
        elif token in _UNRESERVED or token in safe:
            out.append(token)
        else:
            out.append(quote(token, safe=""))
    return "".join(out)


def _path(path: str) -> str:
    """An absolute path with its dot segments resolved (RFC 3986 5.2.4), each segment in normal form."""
    kept: list[str] = []
    segments = path.split("/")[1:]
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                kept.append("")
        elif segment == "..":
            if kept:
                kept.pop()
            if last:
                kept.append("")
        else:
            kept.append(segment)
    return "/" + "/".join(_part(s, _SEGMENT_SAFE) for s in kept)


def _authority(authority: str, scheme: str) -> str:
    userinfo, at, hostport = authority.rpartition("@")
    host, colon, port = hostport.rpartition(":") if not hostport.endswith("]") else (hostport, "", "")
    if not colon or (port and not port.isdigit()):
        host, port = hostport, ""
    host = host.lower()
    if host.startswith("[") != host.endswith("]"):
        raise _Unreadable(authority)
    if host.endswith(".") and "." in host[:-1]:
        host = host[:-1]
    if port and port.lstrip("0") != DEFAULT_PORTS.get(scheme, "").lstrip("0"):
        host += f":{int(port)}"
    return (userinfo + at if userinfo and userinfo != ":" else "") + host


def normal_form(uri: str) -> str | None:
    """The URI in RFC 3986's normal form (None when it cannot be read as an absolute URI)."""
    m = _URI_RE.match(uri)
    if m is None:
        return None
    scheme, authority, path, query, fragment = m.groups()
    scheme = scheme.lower()
    try:
        if authority is not None:
            out = f"{scheme}://{_authority(authority, scheme)}{_path(path) if path else '/'}"
        elif path.startswith("/"):
            out = f"{scheme}:{_path(path)}"
        else:
            out = f"{scheme}:{_part(path, _PATH_SAFE)}"
        if query is not None:
            out += "?" + _part(query, _QUERY_SAFE)
        if fragment is not None:
            out += "#" + _part(fragment, _QUERY_SAFE)
    except _Unreadable:
        return None
    return out


def id_not_canonical(value: str) -> bool:
    """An id (as written, white space included) that is not in normal form."""
    return normal_form(value.strip()) != value


#: A character an IRI may not hold as it is: an ASCII one outside RFC 3986's (a space, a quote, <, >, {, }, |...).
_BAD_CHAR_RE = re.compile(r"[^A-Za-z0-9;/?:@&=+$.\-_!~*'()%,#\x80-\U0010ffff]")
#: An IPv6 literal host, whose brackets are the only place a bracket may stand.
_IPV6_HOST_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://\[[0-9A-Fa-f:.]+\]")


def bad_iri_char(value: str) -> str | None:
    """The first character of an IRI reference that may not stand in one unescaped (None when there is none)."""
    m = _IPV6_HOST_RE.match(value)
    bad = _BAD_CHAR_RE.search(value, m.end() if m else 0)
    return None if bad is None else bad.group()
