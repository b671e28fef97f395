"""The site a URL belongs to: the registrable domain of its host, by the Public Suffix List.

``site_of(url)`` is what ``fetch_log.site`` and ``pages.site`` hold: the
host's public suffix plus one label (``a.b.example.co.uk`` -> ``example.co.uk``),
the unit the survey counts sites in (mnot's feed-survey "Sites", with its
``get_site``). A pure function; it never raises.

Where it lives: ``pipelines/document`` (layer 1), not ``crawler/fetch``
(layer 2), because ``pipelines.document.rows.fetch_row`` computes the column for
every ``fetch_log`` row, and layer 1 cannot import layer 2. The fetch side
imports it from here (downwards).

Decisions, written down once:

* The list is the ``publicsuffixlist`` package's bundled copy of the Public
  Suffix List, read from disk once, on first use: no network (the package's
  updater is a separate command the crawl never runs), and the same answer on
  every machine with the same package version.
* Private suffixes count (``only_icann=False``): ``x.blogspot.com``,
  ``y.github.io`` and ``z.substack.com`` are sites of their own. Each is a
  different publisher on a shared host, which is what the survey means by a
  site (the peer reads the list with its private section too, so the counts
  agree); with ICANN suffixes only, every Blogger blog would be one site.
* A host is lower-cased, a trailing dot dropped, and an internationalised name
  is compared and returned in its ASCII (punycode) form, encoded with Python's
  ``idna`` codec (IDNA 2003) as w3lib encodes the hosts Scrapy requests, so the
  site of a URL as written and of the URL as requested are the same string.
* An IP literal is its own site, in the standard text form
  (``ipaddress``: ``[::1]`` -> ``::1``, ``[2001:DB8::0:1]`` -> ``2001:db8::1``).
* A host with one label (``localhost``, an intranet name) and a host that is
  itself a public suffix (``co.uk``, ``github.io``) are their own site: the
  list gives them no registrable domain, but they still name one publisher.
  Unknown top-level domains count as one-label suffixes (the list's default
  rule ``*``).
* None when there is no host (``mailto:``, a path, a file name), or the host
  cannot be a domain name: empty labels (``a..b``), characters outside letters,
  digits, ``-`` and ``_`` (a space, ``%``, ``*``), a name IDNA rejects, or a
  URL ``urllib`` cannot split (``http://[::1``). Label lengths are not
  checked: an over-long label names no reachable host, but still one site.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import urlsplit

from publicsuffixlist import PublicSuffixList

__all__ = ["site_of"]

#: An ASCII host name: dot-separated labels of letters, digits, '-' and '_' (underscores occur in real
#: hosts, and resolvers accept them); anything else (spaces, '%', '*', empty labels) is no domain name.
_HOST_NAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*")


@functools.cache
def _psl() -> PublicSuffixList:
    # Parsed on first use, not at import (it takes a while): the spider and the CLI import rows.py.
    return PublicSuffixList(only_icann=False)


def site_of(url: str | None) -> str | None:
    """The registrable domain of ``url``'s host (see the module docstring); None without a usable host."""
    if not url or not isinstance(url, str):
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:  # an unbalanced '[' or a bad port
        return None
    return _site_of_host(host) if host else None


@functools.lru_cache(maxsize=65536)
def _site_of_host(host: str) -> str | None:
    # A crawl meets the same hosts again and again: the cache keeps the IDNA and list work to once a host.
    host = host.rstrip(".")
    ip = _ip_text(host)
    if ip is not None:
        return ip
    ascii_host = _ascii(host)
    if ascii_host is None or _HOST_NAME.fullmatch(ascii_host) is None:
        return None
    return _psl().privatesuffix(ascii_host) or ascii_host


def _ip_text(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def _ascii(host: str) -> str | None:
    if host.isascii():
        return host.lower()
    try:
        return host.encode("idna").decode("ascii").lower()
    except UnicodeError:  # an empty or over-long label, a character IDNA 2003 prohibits
        return None
