"""crawler.fetch.netsafety: which URLs found in content the crawl refuses, decided without I/O."""

from __future__ import annotations

import ipaddress

import pytest
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
)

from crawler.fetch.netsafety import (
    Refusal,
    address_reason,
    addresses_reason,
    check_request_url,
    host_address,
    needs_resolution,
    normalise_host,
    private_reason,
)
from crawler.fetch.urls import UrlFault, check_url, url_faults
from crawler.outcomes import FAILURE_OUTCOMES, RefusedRequest, classify_exception
from schemas.vocab import Outcome

PRIVATE_HOSTS = [
    "127.0.0.1",
    "127.0.0.2",
    "127.1",  # inet_aton shorthand
    "2130706433",  # 127.0.0.1 as one number
    "0x7f.0.0.1",
    "0177.0.0.1",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",  # cloud metadata
    "100.100.100.200",  # Alibaba metadata, shared address space
    "0.0.0.0",
    "[::1]",
    "::1",
    "[::ffff:127.0.0.1]",
    "[::ffff:a9fe:a9fe]",  # mapped 169.254.169.254
    "[2002:7f00:1::]",  # 6to4 around 127.0.0.1
    "[64:ff9b::a00:1]",  # NAT64 around 10.0.0.1
    "[fe80::1]",
    "[fc00::1]",
    "[fd00:ec2::254]",  # AWS metadata over IPv6
    "localhost",
    "LOCALHOST.",
    "foo.localhost",
    "bücher.localhost",
    "xn--bcher-kva.localhost",
    "%6c%6fcalhost",  # percent-encoded host, decoded as browsers do
    "%31%32%37.0.0.1",
    "metadata.google.internal",
    "instance-data",
    "224.0.0.1",
    "240.0.0.1",
]

PUBLIC_HOSTS = ["example.com", "93.184.216.34", "8.8.8.8", "[2606:4700:4700::1111]", "xn--bcher-kva.example", "1.1.1.1"]


@pytest.mark.parametrize("host", PRIVATE_HOSTS)
def test_private_hosts_have_a_reason(host: str) -> None:
    why = private_reason(host)
    assert why, host
    netloc = f"[{host}]" if ":" in host and not host.startswith("[") else host
    refusal = check_request_url(f"http://{netloc}:8080/feed.xml")
    assert refusal is not None and refusal.outcome == "refused", host
    assert "--allow-private-networks" in refusal.reason


@pytest.mark.parametrize("host", PUBLIC_HOSTS)
def test_public_hosts_pass(host: str) -> None:
    assert private_reason(host) is None, host
    assert check_request_url(f"https://{host}/feed.xml") is None


def test_input_hosts_and_the_switch_allow_private_targets() -> None:
    url = "http://127.0.0.2:8080/feed.xml"
    refusal = check_request_url(url)
    assert refusal is not None
    assert refusal == Refusal(Outcome.REFUSED, refusal.reason)
    assert check_request_url(url, trusted_hosts={"127.0.0.2"}) is None
    assert check_request_url(url, trusted_hosts={"127.0.0.1"}) is not None
    assert check_request_url(url, allow_private=True) is None
    # A trusted name is trusted as written, case and trailing dot aside.
    assert check_request_url("http://LocalHost./x", trusted_hosts={"localhost"}) is None


@pytest.mark.parametrize(
    ("url", "outcome"),
    [
        ("file:///etc/passwd", "unsupported_scheme"),
        ("ftp://example.com/feed.xml", "unsupported_scheme"),
        ("data:text/xml,<rss/>", "unsupported_scheme"),
        ("javascript:alert(1)", "unsupported_scheme"),
        ("gopher://127.0.0.1:6379/_INFO", "unsupported_scheme"),
        ("//example.com/feed", "unsupported_scheme"),
        ("http:///feed", "invalid_url"),
        ("http://[::1/feed", "invalid_url"),
        ("http://example.com/" + "a" * 9000, "invalid_url"),
    ],
)
def test_only_http_and_https_of_sane_length(url: str, outcome: str) -> None:
    # Even a user-allowed private network does not open other schemes or huge URLs.
    refusal = check_request_url(url, allow_private=True)
    assert refusal is not None and refusal.outcome == outcome, url
    assert "\n" not in refusal.reason and len(refusal.reason) <= 300


def test_url_length_limit_is_a_parameter() -> None:
    url = "http://example.com/" + "a" * 100
    assert check_request_url(url, max_length=50) is not None
    assert check_request_url(url, max_length=8192) is None


@pytest.mark.parametrize(
    ("url", "outcome", "reason"),
    [
        ("ftp://example.com/f", "unsupported_scheme", "only http and https are fetched, not ftp:"),
        ("JavaScript:alert(1)", "unsupported_scheme", "only http and https are fetched, not javascript:"),
        ("//example.com/feed", "unsupported_scheme", "only http and https are fetched, not a URL without a scheme"),
        ("http:///feed", "invalid_url", "URL has no host"),
        ("http://[::1/feed", "invalid_url", "not a URL: Invalid IPv6 URL"),
        ("http://example.com/" + "a" * 30, "invalid_url", "URL longer than 40 characters (49)"),
    ],
)
def test_one_url_check_one_set_of_messages(url: str, outcome: str, reason: str) -> None:
    """The request check is crawler.fetch.urls.check_url, with the same words, before the private-network rule."""
    assert check_url(url, 40) == Refusal(Outcome(outcome), reason)
    assert check_request_url(url, max_length=40) == Refusal(Outcome(outcome), reason)
    assert check_request_url(url, max_length=40, allow_private=True) == Refusal(Outcome(outcome), reason)


def test_url_faults_of_split_urls() -> None:
    assert url_faults("https", "example.com", 10, 8192) == ()
    assert url_faults("HTTP", "example.com", 10, 8192) == ()
    assert url_faults("mailto", None, 10, 8192) == (UrlFault.UNSUPPORTED_SCHEME,)  # no host question for mailto:
    assert url_faults("http", "", 10, 8192) == (UrlFault.NO_HOST,)
    assert url_faults("http", None, 9000, 8192) == (UrlFault.TOO_LONG, UrlFault.NO_HOST)
    assert url_faults("http", "h", 9000, 0) == ()  # 0: no limit


def test_host_address_reads_every_spelling() -> None:
    assert host_address("2130706433") == ipaddress.IPv4Address("127.0.0.1")
    assert host_address("0x7f000001") == ipaddress.IPv4Address("127.0.0.1")
    assert host_address("[::1]") == ipaddress.IPv6Address("::1")
    assert host_address("fe80::1%eth0") == ipaddress.IPv6Address("fe80::1")
    assert host_address("example.com") is None
    assert host_address("1.2.3.4.5") is None
    assert host_address("") is None
    assert normalise_host("[::1]") == "::1"
    assert normalise_host("Example.COM.") == "example.com"


def test_addresses_a_name_resolved_to() -> None:
    assert addresses_reason("feeds.example", ["93.184.216.34"]) is None
    why = addresses_reason("sneaky.example", ["93.184.216.34", "10.1.2.3"])
    assert why is not None and "sneaky.example resolves to 10.1.2.3" in why
    assert addresses_reason("x.example", ["not an address"]) is None
    assert address_reason(ipaddress.ip_address("169.254.169.254")) is not None
    assert address_reason(ipaddress.ip_address("2606:4700::1")) is None


def test_which_names_need_resolving() -> None:
    assert needs_resolution("http://feeds.example/x") == "feeds.example"
    assert needs_resolution("http://feeds.example/x", trusted_hosts={"feeds.example"}) is None
    assert needs_resolution("http://feeds.example/x", allow_private=True) is None
    assert needs_resolution("http://10.0.0.1/x") is None  # a literal is judged without DNS
    assert needs_resolution("not a url") is None


@pytest.mark.parametrize(
    ("exc", "outcome"),
    [
        (
            DownloadCancelledError("Received 2000001 bytes which is larger than download max size (2000000)"),
            "too_large",
        ),
        (IgnoreRequest("Ignored <200 x> ... exceeded DOWNLOAD_MAXSIZE (1000 B) during decompression."), "too_large"),
        (DownloadTimeoutError("Getting http://x took longer than 2.0 seconds."), "timeout"),
        (IgnoreRequest("max redirections reached"), "redirect_loop"),
        (IgnoreRequest("Forbidden by robots.txt"), "robots_denied"),
        (RefusedRequest("refused: 10.0.0.1 is private"), "refused"),
        (RefusedRequest("only http", outcome="unsupported_scheme"), "unsupported_scheme"),
        (CannotResolveHostError("nope.invalid"), "network_error"),
        (ResponseDataLossError("lost"), "network_error"),
        (DownloadFailedError("[<twisted.python.failure.Failure ConnectionLost>]"), "network_error"),
        (DownloadCancelledError("shutting down"), "network_error"),
        (RuntimeError("who knows"), "network_error"),
    ],
)
def test_classify_exception(exc: BaseException, outcome: str) -> None:
    got, status, error = classify_exception(exc)
    assert got == outcome
    assert got in FAILURE_OUTCOMES
    assert status is None
    assert error and "\n" not in error


def test_host_key_is_one_spelling_per_host() -> None:
    from crawler.fetch.netsafety import host_key

    assert host_key("Example.ORG.") == host_key("example.org") == "example.org"
    assert host_key("ex%61mple.org") == "example.org"
    assert host_key("BÜCHER.de") == host_key("xn--bcher-kva.de") == "xn--bcher-kva.de"
    assert host_key("[::1]") == "::1"
    assert host_key("a..b\udcff") == "a..b\udcff"  # IDNA cannot encode it: kept, never raises


def test_a_proxy_is_named_redacted_and_refused_unless_allowed() -> None:
    from crawler.fetch.netsafety import proxy_hosts, proxy_refusal

    proxies = {"http": "http://user:pa%40ss@Proxy.Corp:3128", "https": "10.0.0.5:8080", "ftp": "ftp://x:21"}
    assert proxy_hosts(proxies) == {"proxy.corp", "10.0.0.5"}
    line = proxy_refusal(proxies, allow_private=False, allow_proxy=False)
    assert line is not None and "\n" not in line
    assert "http_proxy=http://user:***@Proxy.Corp:3128" in line and "https_proxy=10.0.0.5:8080" in line
    assert "pa%40ss" not in line and "ftp" not in line
    assert proxy_refusal(proxies, allow_private=False, allow_proxy=True) is None
    assert proxy_refusal(proxies, allow_private=True, allow_proxy=False) is None
    assert proxy_refusal({"ftp": "ftp://x"}, allow_private=False, allow_proxy=False) is None
    assert proxy_refusal({}, allow_private=False, allow_proxy=False) is None


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({}, None),
        ({"DOWNLOAD_HANDLERS": {"https": "scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler"}}, "'http'"),
        (
            {"DOWNLOAD_HANDLERS": {"http": None, "https": "scrapy.core.downloader.handlers.http2.H2DownloadHandler"}},
            "'https'",
        ),
        ({"DOWNLOAD_HANDLERS": {"http": "scrapy.core.downloader.handlers._httpx.HttpxDownloadHandler"}}, "httpx"),
        ({"TWISTED_DNS_RESOLVER": "scrapy.resolver.CachingHostnameResolver"}, "TWISTED_DNS_RESOLVER"),
        ({"TWISTED_DNS_RESOLVER": "no.such.Resolver"}, "TWISTED_DNS_RESOLVER"),
        ({"DOWNLOAD_HANDLERS": {"http": "no.such.Handler"}}, "cannot be loaded"),
        # Not one the guard knows: a third-party handler may resolve names its own way. Refused, not assumed safe.
        (
            {
                "DOWNLOAD_HANDLERS": {
                    "http": "crawler.handlers.guard.GuardedHTTPDownloadHandler",
                    "https": "scrapy.core.downloader.handlers.datauri.DataURIDownloadHandler",
                }
            },
            "'https'",
        ),
        (
            {
                "TWISTED_DNS_RESOLVER": "scrapy.resolver.CachingHostnameResolver",
                "FEEDCENSUS_ALLOW_PRIVATE_NETWORKS": True,
            },
            None,
        ),
        (
            {
                "DOWNLOAD_HANDLERS": {
                    "http": "crawler.handlers.warc.WarcReplayHandler",
                    "https": "crawler.handlers.warc.WarcReplayHandler",
                },
                "TWISTED_DNS_RESOLVER": "crawler.handlers.warc.ArchiveResolver",
            },
            None,
        ),
    ],
)
def test_settings_the_guard_would_not_hold_with_are_named(overrides: dict[str, object], words: str | None) -> None:
    from scrapy.settings import Settings

    import crawler.settings as project
    from crawler.middlewares.netsafety import guard_problem

    settings = Settings()
    settings.setmodule(project, priority="project")
    settings.update(overrides, priority="cmdline")
    problem = guard_problem(settings, {})
    if words is None:
        assert problem is None
    else:
        assert problem is not None and words in problem and "\n" not in problem
