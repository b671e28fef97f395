"""RFC 3986 URI references: split, resolve against a base, join back, with two browser habits.

Autodiscovery resolves hrefs with this instead of ``urllib.parse.urljoin``
because it must say exactly what the specs and browsers do:

* resolution is RFC 3986 section 5.2 (dot segments removed in linear time);
  ``http:feed`` on an http page is read as a relative reference (the RFC's
  "non-strict" mode, for http/https only, as browsers do);
* :func:`clean_url` does what a browser's URL parser does first: strip leading
  and trailing C0 controls and spaces, remove tabs and newlines;
* the result gets scheme-based normalisation only: lowercase scheme, ``/`` for
  an empty http(s) path. Hosts and escapes are not rewritten.

A scheme that is not a valid scheme (``a b:c``) makes the reference a relative
path. Pure and total: no function here raises on a string.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from crawler.fetch.htmltokens import ascii_lower

__all__ = [
    "SPECIAL_SCHEMES",
    "UriParts",
    "base_parts",
    "clean_url",
    "hierarchical",
    "host_and_port",
    "is_uri_reference",
    "remove_dot_segments",
    "resolve",
    "split",
    "strip_url",
    "unsplit",
]

_URI_PARTS = re.compile(r"(?:([^:/?#]+):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?\Z", re.DOTALL)
_REL_PARTS = re.compile(r"(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?\Z", re.DOTALL)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
_URI_CHARS = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*\Z")
_URL_STRIP = "".join(chr(c) for c in range(0x21))
_URL_REMOVE = str.maketrans("", "", "\t\n\r")

#: The schemes resolved non-strictly and given '/' for an empty path.
SPECIAL_SCHEMES = ("http", "https")


class UriParts(NamedTuple):
    """The five components of RFC 3986 section 3; None where the component is absent."""

    scheme: str | None
    authority: str | None
    path: str
    query: str | None
    fragment: str | None


def split(uri: str) -> UriParts:
    """The components of a URI reference (RFC 3986 appendix B)."""
    m = _URI_PARTS.match(uri)
    assert m is not None  # every part is optional
    scheme, authority, path, query, fragment = m.groups()
    if scheme is not None and not _SCHEME.match(scheme):  # 'a b:c' is a relative path, not a scheme
        r = _REL_PARTS.match(uri)
        assert r is not None
        authority, path, query, fragment = r.groups()
        scheme = None
    return UriParts(scheme, authority, path, query, fragment)


def is_uri_reference(value: str) -> bool:
    """Whether ``value`` is a syntactically valid RFC 3986 URI reference (allowed characters, good escapes, one '#')."""
    return _URI_CHARS.match(value) is not None and value.count("#") <= 1


def remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4, linear in the length of the path."""
    if "." not in path:
        return path
    out: list[str] = []
    i, n = 0, len(path)
    while i < n:
        if path.startswith("../", i):
            i += 3
        elif path.startswith("./", i) or path.startswith("/./", i):
            i += 2
        elif path.startswith("/.", i) and i + 2 == n:
            out.append("/")
            i = n
        elif path.startswith("/../", i):
            i += 3
            if out:
                out.pop()
        elif path.startswith("/..", i) and i + 3 == n:
            if out:
                out.pop()
            out.append("/")
            i = n
        elif (path.startswith(".", i) and i + 1 == n) or (path.startswith("..", i) and i + 2 == n):
            i = n
        else:
            j = path.find("/", i + 1)
            if j < 0:
                j = n
            out.append(path[i:j])
            i = j
    return "".join(out)


def hierarchical(parts: UriParts) -> bool:
    """Whether relative references can be resolved against ``parts`` (a scheme and an authority or an absolute path)."""
    return parts.scheme is not None and (parts.authority is not None or parts.path.startswith("/"))


def resolve(ref: str, base: UriParts | None) -> UriParts | None:
    """RFC 3986 5.2.2 (with the non-strict same-scheme rule for http/https); None without a usable base."""
    r = split(ref)
    scheme = _own_scheme(r, base)
    if scheme is not None:
        target = UriParts(scheme, r.authority, remove_dot_segments(r.path), r.query, r.fragment)
    elif base is None:
        return None
    else:
        target = _relative_target(r, base)
    if target.scheme in SPECIAL_SCHEMES and target.authority is not None and target.path == "":
        return target._replace(path="/")
    return target


def _own_scheme(r: UriParts, base: UriParts | None) -> str | None:
    """The reference's scheme, lower-cased; None when it has none or uses the base's http(s) scheme non-strictly."""
    if r.scheme is None:
        return None
    scheme = ascii_lower(r.scheme)
    if base is not None and r.authority is None and scheme == base.scheme and scheme in SPECIAL_SCHEMES:
        return None
    return scheme


def _relative_target(r: UriParts, base: UriParts) -> UriParts:
    """RFC 3986 5.2.2 for a reference without (its own) scheme."""
    if r.authority is not None:
        return UriParts(base.scheme, r.authority, remove_dot_segments(r.path), r.query, r.fragment)
    if r.path == "":
        query = r.query if r.query is not None else base.query
        return UriParts(base.scheme, base.authority, base.path, query, r.fragment)
    if r.path.startswith("/"):
        path = r.path
    elif base.authority is not None and base.path == "":
        path = "/" + r.path
    else:
        path = base.path[: base.path.rfind("/") + 1] + r.path
    return UriParts(base.scheme, base.authority, remove_dot_segments(path), r.query, r.fragment)


def unsplit(parts: UriParts) -> str:
    """RFC 3986 5.3: the components joined back into a URI reference."""
    scheme, authority, path, query, fragment = parts
    out = [f"{scheme}:" if scheme is not None else ""]
    if authority is not None:
        out.append("//" + authority)
    out.append(path)
    if query is not None:
        out.append("?" + query)
    if fragment is not None:
        out.append("#" + fragment)
    return "".join(out)


def strip_url(value: str) -> str:
    """Leading and trailing C0 controls and spaces removed (the first step of a browser's URL parser)."""
    return value.strip(_URL_STRIP)


def clean_url(value: str) -> str:
    """What a browser's URL parser reads: outer C0/space stripped, tabs and newlines removed."""
    return value.strip(_URL_STRIP).translate(_URL_REMOVE)


def base_parts(url: str, base_href: str | None) -> UriParts | None:
    """The base URI of a page at ``url``: its ``<base href>`` resolved against ``url`` when usable, else ``url``.

    None when neither is an absolute hierarchical URI (nothing to resolve relative references against).
    """
    page: UriParts | None = None
    if isinstance(url, str):
        parts = split(clean_url(url))
        if hierarchical(parts):
            page = UriParts(ascii_lower(parts.scheme or ""), parts.authority, parts.path, parts.query, None)
    if base_href is not None:
        resolved = resolve(clean_url(base_href), page)
        if resolved is not None and hierarchical(resolved):
            return resolved
    return page


def host_and_port(authority: str | None) -> tuple[str, str]:
    """The host of an authority (userinfo removed, IPv6 brackets kept) and its port as written (after the
    host's colon); '' for either one it lacks."""
    if authority is None:
        return "", ""
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        end = hostport.find("]") + 1
        return hostport[:end], hostport[end:].partition(":")[2]
    host, _, port = hostport.partition(":")
    return host, port
