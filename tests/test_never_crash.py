"""Never crash: random and mutated bytes into every reader of untrusted input.

Property-based (hypothesis): the OPML reader, the autodiscovery function, the
feed parser and sniffer, the seeds reader and the URL-safety check each return
a result (an error carried in it, at worst) for any input, and never raise.
Mutations start from real documents (the demo web, plus a few corpus files
when the shared corpus is present) and splice in the bytes that break parsers:
truncation, NULs, stray markup, entities, DOCTYPEs, odd encodings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from crawler.demo.webserver import demo_site_root
from crawler.fetch.discovery import decode_html, discover
from crawler.fetch.netsafety import check_request_url, host_address, private_reason
from crawler.fetch.opml import OpmlDocument, parse_opml
from crawler.fetch.seeds import read_seeds
from crawler.outcomes import FAILURE_OUTCOMES, classify_exception
from pipelines.document.feedparse import ParsedFeed, parse_feed
from pipelines.document.sniff import sniff

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def _seed_documents() -> list[bytes]:
    docs = [p.read_bytes() for p in sorted(demo_site_root().rglob("*")) if p.is_file() and p.suffix != ".css"]
    for folder, n in (("benchmark_feeds", 6), ("opml", 6), ("feedparser_tests", 12)):
        d = CORPUS / folder
        if d.is_dir():
            files = sorted(
                p for p in d.rglob("*") if p.is_file() and p.suffix in (".xml", ".opml", ".rss", ".atom", ".rdf")
            )
            step = max(1, len(files) // n)
            docs += [p.read_bytes()[:20000] for p in files[::step][:n]]
    return docs


DOCS = _seed_documents()

NASTY = [
    b"\x00",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\x00\x00\xfe\xff",
    b"<",
    b">",
    b"&",
    b"&nbsp;",
    b"&#xD800;",
    b"&#0;",
    b"&#99999999999;",
    b"]]>",
    b"<![CDATA[",
    b"<!--",
    b"<?xml version='1.0' encoding='utf-16'?>",
    b'<?xml version="1.0" encoding="x-unknown"?>',
    b'<!DOCTYPE rss [<!ENTITY a "&a;">]>',
    b'<!DOCTYPE x SYSTEM "file:///etc/passwd">',
    b'<!ENTITY % p SYSTEM "http://127.0.0.1:9/x">%p;',
    b"<outline " * 50,
    b"<div>" * 300,
    b'<link rel="alternate" type="application/rss+xml" href="',
    b"<base href='javascript:x'>",
    b"\xc3\x28",
    b"\xed\xa0\x80",
    b"\r",
    b"\x1b[31m",
    "é☃𝄞".encode(),
    "é".encode("latin-1"),
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    doc = bytearray(draw(st.sampled_from(DOCS)))
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["insert", "delete", "flip", "truncate", "nasty"]))
        pos = draw(st.integers(0, max(0, len(doc))))
        if kind == "insert":
            doc[pos:pos] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "delete":
            del doc[pos : pos + draw(st.integers(1, 64))]
        elif kind == "flip" and doc:
            i = min(pos, len(doc) - 1)
            doc[i] ^= draw(st.integers(1, 255))
        elif kind == "truncate":
            del doc[pos:]
        else:
            doc[pos:pos] = draw(st.sampled_from(NASTY))
    return bytes(doc)


any_bytes = st.one_of(st.binary(max_size=2000), mutated())
headers = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {
            "content-type": st.sampled_from(
                [
                    "text/html",
                    "text/html; charset=utf-16",
                    "application/rss+xml; charset=bogus",
                    'text/xml; charset="iso-8859-1"',
                    "",
                ]
            )
        }
    ),
)
FAST = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@FAST
@given(body=any_bytes)
def test_opml_reader_never_raises(body: bytes) -> None:
    doc = parse_opml(body, "http://127.0.0.1/list.opml")
    assert isinstance(doc, OpmlDocument)
    assert doc.ok or doc.error
    for outline in doc.outlines:
        for u in (outline.xml_url, outline.html_url):
            assert u is None or isinstance(u, str)


# Regression: CPython 3.11 re raised SystemError in discovery's body fast path on these.
@FAST
@example(body=b"<html><body>hi<title></title><", hdrs=None, follow=False)
@example(body=b"\x00<title></title><", hdrs=None, follow=False)
@given(body=any_bytes, hdrs=headers, follow=st.booleans())
def test_discovery_never_raises(body: bytes, hdrs: dict[str, str] | None, follow: bool) -> None:
    links = discover(body, "http://127.0.0.1/page.html", hdrs, follow_body=follow)
    assert isinstance(links, list)
    for link in links:
        if link.followable:
            assert link.href and link.href.startswith(("http://", "https://"))
    text, encoding = decode_html(body, hdrs)
    assert isinstance(text, str) and encoding


@FAST
@given(body=any_bytes, hdrs=headers)
def test_feed_parser_never_raises(body: bytes, hdrs: dict[str, str] | None) -> None:
    parsed = parse_feed(body, "http://127.0.0.1/feed.xml", hdrs)
    assert isinstance(parsed, ParsedFeed)
    assert parsed.format in ("rss", "atom", "rdf", "unknown")
    if parsed.format == "unknown" or not parsed.well_formed:
        assert parsed.error
    assert sniff(body, (hdrs or {}).get("content-type")) in ("feed", "opml", "html", "other")


@pytest.mark.parametrize(
    "title",
    ["Smile &#55357;&#56832;", "Lone &#xD800; half", "Low &#xDC00;"],
)
def test_surrogate_character_references_do_not_lose_the_feed(title: str) -> None:
    body = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>' + title + "</title>"
        "<item><title>x</title></item></channel></rss>"
    ).encode()
    parsed = parse_feed(body, "http://127.0.0.1/feed.xml")
    assert parsed.format == "rss" and parsed.well_formed is False
    assert len(parsed.items) == 1
    assert parsed.title is not None and parsed.title.split()[0] == title.split()[0]


def test_surrogate_character_references_do_not_lose_the_opml_list() -> None:
    body = (
        b'<?xml version="1.0"?><opml version="2.0"><body>'
        b'<outline text="Smile &#55357;&#56832;" xmlUrl="http://a.example/f"/>'
        b'<outline xmlUrl="http://b.example/f"/></body></opml>'
    )
    doc = parse_opml(body, "http://127.0.0.1/list.opml")
    assert doc.ok, doc.error
    assert [o.xml_url for o in doc.outlines] == ["http://a.example/f", "http://b.example/f"]


@FAST
@given(text=st.one_of(st.text(max_size=500), st.binary(max_size=500).map(lambda b: b.decode("latin-1"))))
def test_seeds_reader_never_raises(text: str) -> None:
    urls, problems = read_seeds(text)
    lines = text.split("\n")
    for p in problems:
        assert 1 <= p.line <= max(1, len(lines)) and p.reason
    for u in urls:
        assert u.startswith(("http://", "https://"))


@FAST
@given(
    url=st.one_of(
        st.text(max_size=300),
        st.builds(lambda h, p: f"http://{h}/{p}", st.text(max_size=60), st.text(max_size=60)),
        st.builds(lambda h: f"http://[{h}]/", st.text(alphabet="0123456789abcdef:.%", max_size=50)),
    ),
    allow=st.booleans(),
)
def test_url_safety_never_raises(url: str, allow: bool) -> None:
    refusal = check_request_url(url, allow_private=allow)
    assert refusal is None or refusal.outcome in ("refused", "unsupported_scheme", "invalid_url")
    host = url.split("//", 1)[-1].split("/", 1)[0]
    private_reason(host)
    host_address(host)


@pytest.mark.parametrize(
    "exc", [ValueError(), KeyError("x"), OSError(104, "Connection reset by peer"), Exception("\n\n"), MemoryError()]
)
def test_classify_never_raises(exc: BaseException) -> None:
    outcome, _, error = classify_exception(exc)
    assert outcome in FAILURE_OUTCOMES and error and "\n" not in error
