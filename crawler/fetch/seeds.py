"""Read a seeds file: one site URL a line, with comments, blank lines and junk reported by line.

Rules (``read_seeds``):

* ``#`` starts a comment when it begins the (stripped) line or follows
  whitespace (``https://example.com/ # my blog``); a ``#`` inside a URL
  (``https://example.com/#top``) is part of it. Blank lines are skipped;
  surrounding whitespace is trimmed; a leading BOM is ignored.
* A line without a scheme (``example.com``, ``example.com/blog``,
  ``//example.com``) gets ``http://``: a site that only serves https redirects
  http to it, while an http-only site does not answer https at all.
* Accepted URLs are returned with the scheme and host lower-cased and an empty
  path written as ``/``; everything else is kept as written.
* Reported as :class:`SeedProblem` (1-based line, the line shortened, a
  one-line reason) and left out: lines over 8 KB, control characters,
  undecodable bytes (U+FFFD after decoding),
  whitespace inside the URL, schemes other than http/https, no host, a host
  with characters a host name cannot have, a host without a dot (except
  ``localhost``, IPv4 and bracketed IPv6 literals), an invalid port, and
  duplicates: the first occurrence wins, later ones get ``duplicate of line N``
  (compared after the normalisation above, ignoring any ``#fragment``).
* An unsupported scheme, a missing host and a URL ``urlsplit`` refuses are
  reported with the crawl's one set of URL messages (``crawler.fetch.urls``),
  the same words a refused request gets in ``fetch_log``.
"""

from __future__ import annotations

import codecs
import ipaddress
import os
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from crawler.fetch.urls import DEFAULT_MAX_URL_LENGTH, FETCHED_SCHEMES, UrlFault, not_a_url, refusal, too_long

__all__ = ["SeedProblem", "read_seeds", "read_seeds_file"]

MAX_LINE_BYTES = 8 * 1024
_SHOWN_CHARS = 100

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")
_HOST_PORT = re.compile(r"^[^/:?#]+:\d+(?:[/?#]|$)")  # 'example.com:8080/x' has no scheme
_COMMENT = re.compile(r"(?:^|\s)#")
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
#: What ipaddress.ip_address takes as IPv4: four decimal octets, no leading zeros.
_IPV4 = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}")
#: The ASCII control characters (Unicode category Cc; no ASCII character is in Cf).
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_BAD_HOST_CHARS = re.compile(r"[\s<>\"{}|\\^`%,;'()*!$&=+~]")


@dataclass(frozen=True, slots=True)
class SeedProblem:
    """A line of a seeds file that was left out, and why."""

    line: int
    text: str
    reason: str


def read_seeds(text: str, hosts: set[str] | None = None) -> tuple[list[str], list[SeedProblem]]:
    """Return the seed URLs in file order (duplicates dropped) and the problems found.

    ``hosts``: the host of every seed returned that the crawl can request (not longer than
    ``DEFAULT_MAX_URL_LENGTH``) is added to it, as read while checking the line (not split again).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    seeds: list[str] = []
    problems: list[SeedProblem] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if len(line.encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
            problems.append(SeedProblem(number, _shorten(line), f"line longer than {MAX_LINE_BYTES // 1024} KB"))
            continue
        comment = _COMMENT.search(line)
        if comment:
            line = line[: comment.start()]
        line = line.strip()
        if not line:
            continue
        url, reason, host = _check(line)
        if url is None:
            problems.append(SeedProblem(number, _shorten(line), reason))
            continue
        key = url.partition("#")[0]
        if key in first_line:
            problems.append(SeedProblem(number, _shorten(line), f"duplicate of line {first_line[key]}"))
            continue
        first_line[key] = number
        seeds.append(url)
        if hosts is not None and not too_long(len(url), DEFAULT_MAX_URL_LENGTH):
            hosts.add(host.lower())  # urlsplit lower-cases a host but not an IPv6 zone (the request's is)
    return seeds, problems


def read_seeds_file(path: str | os.PathLike[str], hosts: set[str] | None = None) -> tuple[list[str], list[SeedProblem]]:
    """Read a seeds file (UTF-8, BOM allowed; undecodable bytes replaced); OSError propagates. ``hosts``: as
    :func:`read_seeds`."""
    with open(path, "rb") as handle:
        data = handle.read()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text = data.decode("utf-16", "replace")
    else:
        text = data.decode("utf-8-sig", "replace")
    return read_seeds(text, hosts)


def _check(line: str) -> tuple[str | None, str, str]:
    """The normalised URL, or None and the reason it is refused; and the URL's host (lower-cased)."""
    if line.isascii():  # nearly every line: one regex search instead of a Python loop over its characters
        control = _ASCII_CONTROL.search(line)
        if control is not None:
            return None, f"control character U+{ord(control.group()):04X}", ""
        if " " in line:  # the only ASCII white space that is not a control character
            return None, "whitespace inside the URL", ""
    else:
        for char in line:
            if unicodedata.category(char) in ("Cc", "Cf"):
                return None, f"control character U+{ord(char):04X}", ""
        if "\ufffd" in line:
            return None, "undecodable bytes (U+FFFD) in the line", ""
        if any(char.isspace() for char in line):
            return None, "whitespace inside the URL", ""
    scheme_match = _SCHEME.match(line)
    if line.startswith("//"):
        line = "http:" + line
    elif scheme_match is None or _HOST_PORT.match(line):
        line = "http://" + line
    else:
        scheme = scheme_match.group(1).lower()
        if scheme not in FETCHED_SCHEMES:
            return None, refusal(UrlFault.UNSUPPORTED_SCHEME, scheme=scheme).reason, ""
        if not line[len(scheme) + 1 :].startswith("//"):
            return None, "no '//' after the scheme", ""
    try:
        parts = urlsplit(line)
        port = parts.port
    except ValueError as exc:
        return None, not_a_url(exc).reason, ""
    host = parts.hostname
    if not host:
        return None, refusal(UrlFault.NO_HOST).reason, ""
    reason = _host_problem(host)
    if reason:
        return None, reason, ""
    if port == 0:
        return None, "invalid port 0", ""
    netloc = parts.netloc
    at = netloc.rfind("@") + 1
    netloc = netloc[:at] + netloc[at:].lower()
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", parts.query, parts.fragment)), "", host


def _host_problem(host: str) -> str | None:
    if host == "localhost":
        return None
    if _IPV4.fullmatch(host):
        return None
    if ":" in host:  # an IPv6 literal (urlsplit took its brackets off)
        try:
            ipaddress.ip_address(host)
            return None
        except ValueError:
            pass
    if _BAD_HOST_CHARS.search(host):
        return f"invalid host '{_shorten(host)}'"
    if "." not in host.strip("."):
        return f"no dot in host '{_shorten(host)}'"
    if ".." in host or host.startswith((".", "-")):
        return f"invalid host '{_shorten(host)}'"
    return None


def _shorten(text: str) -> str:
    shown = "".join(f"\\x{ord(ch):02x}" if unicodedata.category(ch) == "Cc" else ch for ch in text)
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 3] + "..."
