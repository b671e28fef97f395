"""Which URLs the crawl may fetch: pure decisions over strings and addresses.

The crawl fetches only ``http`` and ``https``. URLs the user named in the inputs
are trusted; URLs found in fetched content (autodiscovery hrefs, OPML outlines and
includes, redirects, channel links) are not: a page on the public web must not be
able to make the crawler reach the machine it runs on, its network, or a cloud
metadata service. So, unless ``--allow-private-networks`` is given, a request whose
host is not one named in the inputs is refused when the host

* is a name that is local by definition (``localhost``, ``*.localhost``) or names a
  cloud metadata service (``metadata.google.internal``, ``instance-data``...), or
* is an address literal, in any spelling ``inet_aton`` accepts (``127.1``,
  ``2130706433``, ``0x7f.0.0.1``, ``[::ffff:127.0.0.1]``...), that is not globally
  routable: loopback, private, link-local (``169.254.169.254``), shared
  (``100.64.0.0/10``), reserved, multicast, unspecified; IPv6 addresses that embed an
  IPv4 address (mapped, 6to4, NAT64, Teredo) are judged by the embedded one, or
* resolves to such an address (:func:`addresses_reason`). The crawl judges every
  answer where the connection gets its address (``crawler.handlers.guard``: the
  reactor's resolver), so the address checked is the address connected to, whatever
  the DNS cache holds and however the name is spelled.

A proxy resolves the names it is asked for itself, out of the guard's sight:
:func:`proxy_refusal` says so, and the crawl refuses to start with one configured
unless the user allows it.

Nothing here does I/O and nothing raises on bad input.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Collection, Iterable, Mapping
from urllib.parse import unquote, urlsplit

from crawler.fetch.urls import DEFAULT_MAX_URL_LENGTH, Refusal, check_url
from schemas.vocab import Outcome

__all__ = [
    "DEFAULT_MAX_URL_LENGTH",
    "METADATA_HOSTS",
    "Refusal",
    "address_reason",
    "addresses_reason",
    "check_request_url",
    "host_address",
    "needs_resolution",
    "normalise_host",
    "private_reason",
    "proxy_hosts",
    "proxy_refusal",
]

#: Names of cloud metadata services (their addresses are link-local or private anyway).
METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.internal",
        "metadata.platformequinix.com",
    }
)

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
#: What inet_aton would read as an IPv4 address: 1-4 parts of decimal, octal or hex digits.
_INET_ATON = re.compile(r"^(0[xX][0-9a-fA-F]*|[0-9]+)(\.(0[xX][0-9a-fA-F]*|[0-9]+)){0,3}\.?$")


def normalise_host(host: str) -> str:
    """Percent-decoded (as a browser's URL parser does), lower-cased, without brackets or a trailing dot."""
    h = host.strip()
    if "%" in h and not h.startswith("["):
        h = unquote(h, errors="replace")
    return h.strip("[]").lower().rstrip(".")


def host_key(host: str) -> str:
    """``host`` as the guard compares names: :func:`normalise_host`, then IDNA's ASCII form (``bücher.de``
    and ``xn--bcher-kva.de`` are one host); a name IDNA cannot encode is kept as it is."""
    h = normalise_host(host)
    if h.isascii():
        return h
    try:
        return h.encode("idna").decode("ascii")
    except UnicodeError:
        return h


def host_address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a host literal stands for, in any spelling a resolver accepts, or None for a name."""
    h = normalise_host(host)
    if not h:
        return None
    if "%" in h:  # an IPv6 zone id: fe80::1%eth0
        h = h.split("%", 1)[0]
    try:
        return ipaddress.ip_address(h)
    except ValueError:
        pass
    if _INET_ATON.match(h):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(h.rstrip(".")))
        except (OSError, ValueError):
            return None
    return None


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_reason(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why an address is off-limits (loopback, private...), or None when it is globally routable."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_v4(ip)
        if inner is not None:
            why = address_reason(inner)
            return f"embeds {inner}, {why}" if why else None
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address (cloud metadata lives there)"
    if ip.is_unspecified:
        return "the unspecified address"
    if ip.is_multicast:
        return "a multicast address"
    if ip.is_private:
        return "a private-network address"
    if ip.is_reserved or not ip.is_global:
        return "a reserved or non-global address"
    return None


def private_reason(host: str) -> str | None:
    """Why ``host`` is off-limits for URLs found in content, judged without DNS; None if it may be fine.

    None for an ordinary name: whether it resolves to a private address is
    :func:`addresses_reason`'s question.
    """
    h = normalise_host(host)
    if not h:
        return "empty host"
    if h == "localhost" or h.endswith(".localhost") or h in METADATA_HOSTS:
        return f"{h} is a local or cloud-metadata host name"
    ip = host_address(h)
    if ip is None:
        return None
    why = address_reason(ip)
    return f"{h} is {why}" if why else None


def addresses_reason(host: str, addresses: Iterable[str]) -> str | None:
    """Why a name that resolved to ``addresses`` is off-limits (any one off-limits address is enough)."""
    for a in addresses:
        ip = host_address(str(a))
        if ip is None:
            continue
        why = address_reason(ip)
        if why:
            return f"{normalise_host(host)} resolves to {ip}, {why}"
    return None


def check_request_url(
    url: str,
    *,
    trusted_hosts: Collection[str] = (),
    allow_private: bool = False,
    max_length: int = DEFAULT_MAX_URL_LENGTH,
) -> Refusal | None:
    """A :class:`Refusal` when ``url`` must not be fetched, judged without DNS; None otherwise.

    First :func:`crawler.fetch.urls.check_url` (scheme, host, length), then the
    private-network rule. ``trusted_hosts``: hosts named in the inputs
    (lower-case), which may be private.
    """
    try:
        refused = check_url(url, max_length)
        if refused is not None:
            return refused
        host = urlsplit(url).hostname or ""
        if allow_private or normalise_host(host) in trusted_hosts:
            return None
        why = private_reason(host)
        if why:
            return Refusal(Outcome.REFUSED, f"refused: {why} (found in content; --allow-private-networks allows it)")
        return None
    except Exception as exc:  # never raise on odd input; the refusal records what went wrong
        return Refusal(Outcome.INVALID_URL, f"cannot check URL: {type(exc).__name__}")


def needs_resolution(url: str, *, trusted_hosts: Collection[str] = (), allow_private: bool = False) -> str | None:
    """The host name to resolve before ``url`` may be fetched, or None (a literal, trusted, or allowed)."""
    if allow_private:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    h = normalise_host(host)
    if h in trusted_hosts or host_address(h) is not None:
        return None
    return h


#: The schemes the crawl fetches, whose proxies (``http_proxy``, ``https_proxy``) it would use.
_PROXIED = ("http", "https")


def proxy_hosts(proxies: Mapping[str, str]) -> frozenset[str]:
    """The hosts of the proxies the crawl would send its ``http``/``https`` requests to (``host_key`` form)."""
    hosts = set()
    for scheme in _PROXIED:
        url = proxies.get(scheme)
        if not url:
            continue
        try:
            host = urlsplit(url if "//" in url else f"http://{url}").hostname
        except ValueError:
            continue
        if host:
            hosts.add(host_key(host))
    return frozenset(hosts)


def proxy_refusal(proxies: Mapping[str, str], *, allow_private: bool, allow_proxy: bool) -> str | None:
    """One line refusing a configured proxy while the guard is on; None when there is none or it is allowed.

    ``proxies``: scheme -> proxy URL, as ``urllib.request.getproxies()`` reads them from the environment.
    A proxy resolves the names it is asked for itself, so the guard sees the proxy's address and never the
    address a name found in content leads to.
    """
    if allow_private or allow_proxy:
        return None
    named = [f"{scheme}_proxy={proxies[scheme]}" for scheme in _PROXIED if proxies.get(scheme)]
    if not named:
        return None
    shown = ", ".join(redacted_proxy(n) for n in named)
    return (
        f"a proxy is configured ({shown}): the proxy resolves the names the crawl asks for, so the network "
        "guard cannot see the addresses they lead to; unset it, or allow it with -s FEEDCENSUS_ALLOW_PROXY=true "
        "(names are then still checked, their addresses are not)"
    )


def redacted_proxy(text: str) -> str:
    """A proxy setting with any password in its URL replaced by ``***``."""
    return re.sub(r"(//[^:/@\s]*:)[^@/\s]*@", r"\1***@", text)
