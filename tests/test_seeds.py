"""Tests for crawler.fetch.seeds: seeds files with comments, junk lines, duplicates and BOMs."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from crawler.fetch.seeds import SeedProblem, read_seeds, read_seeds_file
from crawler.fetch.urls import check_url

SEEDS = """\
# sites to crawl
https://example.com/

example.org
example.net/blog   # a trailing comment
  HTTP://WWW.Example.EDU/Path/To?q=1#Top
//cdn.example.io/x
localhost:8080/feeds
http://127.0.0.1:8000/
http://[::1]:8080/
https://example.com/#fragment
https://example.com/page#anchor
"""


def test_urls_comments_blank_lines_and_normalisation() -> None:
    seeds, problems = read_seeds(SEEDS)
    assert seeds == [
        "https://example.com/",
        "http://example.org/",
        "http://example.net/blog",
        "http://www.example.edu/Path/To?q=1#Top",
        "http://cdn.example.io/x",
        "http://localhost:8080/feeds",
        "http://127.0.0.1:8000/",
        "http://[::1]:8080/",
        "https://example.com/page#anchor",
    ]
    assert problems == [SeedProblem(11, "https://example.com/#fragment", "duplicate of line 2")]


def test_junk_lines_are_reported_with_line_numbers() -> None:
    text = "\n".join(
        [
            "https://ok.example/",  # 1
            "http://has space.example/",  # 2
            "ftp://files.example/",  # 3
            "javascript:alert(1)",  # 4
            "feed://example.com/rss",  # 5
            "https://",  # 6
            "http://bad\x07host.example/",  # 7
            "justaword",  # 8
            "http://a..b.example/",  # 9
            "http://example.com:99999/",  # 10
            "https:example.com",  # 11
            "x" * 9000,  # 12
            "http://ex<ample.com/",  # 13
            "https://ok.example",  # 14 (same as line 1 once normalised)
            "mailto:someone@example.com",  # 15
        ]
    )
    seeds, problems = read_seeds(text)
    assert seeds == ["https://ok.example/"]
    reasons = {p.line: p.reason for p in problems}
    assert reasons == {
        2: "whitespace inside the URL",
        3: "only http and https are fetched, not ftp:",
        4: "only http and https are fetched, not javascript:",
        5: "only http and https are fetched, not feed:",
        6: "URL has no host",
        7: "control character U+0007",
        8: "no dot in host 'justaword'",
        9: "invalid host 'a..b.example'",
        10: "not a URL: Port out of range 0-65535",
        11: "no '//' after the scheme",
        12: "line longer than 8 KB",
        13: "invalid host 'ex<ample.com'",
        14: "duplicate of line 1",
        15: "only http and https are fetched, not mailto:",
    }
    by_line = {p.line: p for p in problems}
    assert by_line[7].text == "http://bad\\x07host.example/"
    assert len(by_line[12].text) == 100 and by_line[12].text.endswith("...")
    assert all("\n" not in p.reason for p in problems)


def test_hash_inside_url_is_not_a_comment_but_after_space_is() -> None:
    seeds, problems = read_seeds("https://a.example/#x\n# whole line\n\t# indented comment\nb.example#y # c\n")
    assert seeds == ["https://a.example/#x", "http://b.example/#y"]
    assert problems == []


def test_crlf_and_bom_in_text() -> None:
    seeds, problems = read_seeds("\ufeffexample.com\r\n\r\nexample.org\r\nexample.com/\r\n")
    assert seeds == ["http://example.com/", "http://example.org/"]
    assert problems == [SeedProblem(4, "example.com/", "duplicate of line 1")]


def test_empty_input() -> None:
    assert read_seeds("") == ([], [])
    assert read_seeds("\n  \n# only comments\n") == ([], [])


def test_read_seeds_file_utf8_bom_and_bad_bytes(tmp_path: Path) -> None:
    path = tmp_path / "seeds.txt"
    path.write_bytes(codecs.BOM_UTF8 + b"https://caf\xc3\xa9.example/\nhttps://bad\xff.example/\n# done\n")
    seeds, problems = read_seeds_file(path)
    assert seeds == ["https://café.example/"]
    assert problems == [SeedProblem(2, "https://bad\ufffd.example/", "undecodable bytes (U+FFFD) in the line")]


def test_read_seeds_file_utf16(tmp_path: Path) -> None:
    path = tmp_path / "seeds16.txt"
    path.write_bytes("example.com\nexample.org\n".encode("utf-16"))
    assert read_seeds_file(str(path)) == (["http://example.com/", "http://example.org/"], [])


def test_read_seeds_file_missing_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_seeds_file(tmp_path / "nope.txt")
    with pytest.raises(IsADirectoryError):
        read_seeds_file(tmp_path)


@pytest.mark.parametrize("line", ["ftp://example.com/", "mailto:someone@example.com", "https://", "http://[::1/x"])
def test_seed_problems_use_the_crawls_url_messages(line: str) -> None:
    """A seed line and a request with the same fault get the same words (crawler.fetch.urls)."""
    _, problems = read_seeds(line)
    refusal = check_url(line)
    assert refusal is not None and [p.reason for p in problems] == [refusal.reason]


def _reference_reason(line: str) -> str | None:
    """The character rules as written for any line (the slow path), for comparing with the ASCII fast path."""
    import unicodedata

    for char in line:
        if unicodedata.category(char) in ("Cc", "Cf"):
            return f"control character U+{ord(char):04X}"
    if any(char.isspace() for char in line):
        return "whitespace inside the URL"
    return None


def test_ascii_lines_get_the_same_character_verdicts_as_any_line() -> None:
    # Every ASCII character, at the start, middle and end of a URL: the fast path names the same
    # first control character, or the same white space, as the character-by-character rules.
    for code in range(128):
        if chr(code) in "\n\r":  # they end the line
            continue
        for line in (
            f"{chr(code)}http://a.example/",
            f"http://a{chr(code)}b.example/",
            f"http://a.example/{chr(code)}",
        ):
            _, problems = read_seeds(line + "\n")
            expected = _reference_reason(line.strip())
            if line.strip() != line:
                continue  # white space at either end is trimmed, not judged
            if expected is not None:
                assert [p.reason for p in problems] == [expected], repr(line)
            else:  # neither rule refuses it, so no control-character or white-space reason may come
                assert not [p for p in problems if p.reason.startswith(("control", "whitespace"))], repr(line)
    # Two control characters: the first one is named.
    assert [p.reason for p in read_seeds("http://a\x7fb\x01.example/")[1]] == ["control character U+007F"]


def test_ipv4_hosts_are_told_as_python_tells_them() -> None:
    import ipaddress
    import itertools

    from crawler.fetch.seeds import _IPV4

    octets = ["0", "00", "01", "9", "10", "99", "100", "199", "200", "249", "250", "255", "256", "2555", "", "1a"]
    for parts in itertools.chain(itertools.product(octets, repeat=4), itertools.product(octets[:6], repeat=3)):
        host = ".".join(parts)
        try:
            ipaddress.IPv4Address(host)
            is_ip = True
        except ValueError:
            is_ip = False
        assert bool(_IPV4.fullmatch(host)) == is_ip, host
    assert read_seeds("http://10.0.0.1/\nhttp://[::1]/\nhttp://01.2.3.4/\n")[0] == [
        "http://10.0.0.1/",
        "http://[::1]/",
        "http://01.2.3.4/",  # not an IP to Python: a name with dots, accepted as before
    ]


def test_hosts_read_with_the_seeds_are_the_hosts_of_the_urls_the_crawl_can_request() -> None:
    from crawler.fetch.urls import DEFAULT_MAX_URL_LENGTH, requestable_host

    hosts: set[str] = set()
    too_long = "http://long.example/" + "x" * (8 * 1024 - 16)  # within a line's 8 KB, over the URL limit with 'http://'
    extra = "http://user:pw@Mixed.Example:8080/a\nhttp://[fe80::1%ETH0]/\n"  # the zone is lower-cased in the URL too
    seeds, _ = read_seeds(SEEDS + extra + too_long[len("http://") :] + "\n", hosts)
    assert len(seeds[-1]) > DEFAULT_MAX_URL_LENGTH
    assert hosts == {h.lower() for u in seeds if (h := requestable_host(u))}  # as read_inputs had them
    assert "long.example" not in hosts and {"mixed.example", "::1", "127.0.0.1", "fe80::1%eth0"} <= hosts
