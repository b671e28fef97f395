"""One sniffer for the crawl and ``lint``: what the crawl calls a feed is what ``parse_feed`` reads as one.

The crawl decides from a response's first bytes (:func:`pipelines.document.sniff.sniff`)
whether it is a feed; ``lint`` parses the whole document (:func:`parse_feed`). Every file
of the shared corpus must get the same answer from both, and a real feed that starts with
a stray ``<!DOCTYPE html>`` (benchmark feed ``ad1318939eb69cf1``) must reach the ``feeds``
table whether it comes from ``--url`` or from an OPML ``xmlUrl``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.document.feedparse import parse_feed
from pipelines.document.sniff import Sniffed, sniff
from schemas.vocab import FeedFormat
from tests.conftest import QUICK_CRAWL, read_table, run_cli

CORPUS_SETS = ("benchmark_feeds", "feedparser_tests", "opml", "validator_cases")
#: Files of the corpus that are not documents.
NOT_DOCUMENTS = frozenset({"manifest.tsv", "README.md"})
DOCTYPE_FEED = "ad1318939eb69cf1"  # Atom, 75 entries, "<!DOCTYPE html>" before <feed>


def corpus_files(corpus: Path) -> list[Path]:
    files = [
        p
        for name in CORPUS_SETS
        for p in sorted((corpus / name).rglob("*"))
        if p.is_file() and p.name not in NOT_DOCUMENTS
    ]
    assert len(files) > 3000, f"the corpus looks incomplete: {len(files)} files"
    return files


def test_sniff_and_parse_feed_agree_on_every_corpus_file(corpus: Path) -> None:
    """Sniffed FEED exactly when parse_feed recognises a format, for every file of every set."""
    disagree = []
    feeds = 0
    for path in corpus_files(corpus):
        body = path.read_bytes()
        sniffed = sniff(body)
        parsed = parse_feed(body)
        is_feed = parsed.format != FeedFormat.UNKNOWN
        feeds += is_feed
        if (sniffed == Sniffed.FEED) != is_feed:
            disagree.append(f"{path.relative_to(corpus)}: sniff={sniffed}, parse_feed={parsed.format} ({parsed.error})")
    assert not disagree, f"{len(disagree)} disagreements:\n" + "\n".join(disagree)
    assert feeds > 3000  # the walk did read the feeds


def test_no_benchmark_feed_is_sniffed_as_anything_else(corpus: Path) -> None:
    """Every real feed is a feed by its bytes, whatever Content-Type a server sends with it."""
    for path in corpus_files(corpus):
        if path.parent.name != "benchmark_feeds":
            continue
        body = path.read_bytes()
        for ctype in (None, "text/html; charset=utf-8", "application/octet-stream"):
            assert sniff(body, ctype) == Sniffed.FEED, (path.name, ctype)


def test_the_doctype_feed_is_a_feed_for_both(corpus: Path) -> None:
    body = (corpus / "benchmark_feeds" / DOCTYPE_FEED).read_bytes()
    assert b"<!DOCTYPE html>" in body[:200]
    assert sniff(body) == Sniffed.FEED
    parsed = parse_feed(body)
    assert (parsed.format, len(parsed.items)) == (FeedFormat.ATOM, 75)


def test_the_doctype_feed_is_crawled_as_a_feed_from_url_and_from_opml(corpus: Path, tmp_path: Path) -> None:
    """Served on 127.0.0.1, the feed gives a feeds row (atom, 75 items) both ways, and no not_feed."""
    from crawler.demo.routes import Route, Web
    from crawler.demo.webserver import WebServer

    body = (corpus / "benchmark_feeds" / DOCTYPE_FEED).read_bytes()
    web = Web()
    # The same bytes at two URLs: one given with --url, one listed in an OPML list.
    web.add("/direct/feed", Route(body=body, headers={"Content-Type": "text/html; charset=utf-8"}))
    web.add("/listed/feed", Route(body=body, headers={"Content-Type": "application/atom+xml"}))
    with WebServer(web) as server:
        base = server.url
        opml = (
            '<?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body>'
            f'<outline text="doctype feed" type="rss" xmlUrl="{server.url}/listed/feed"/>'
            "</body></opml>"
        )
        web.add("/list.opml", Route(body=opml.encode(), headers={"Content-Type": "text/x-opml"}))
        out = tmp_path / "out"
        proc = run_cli(
            "crawl", "--url", f"{server.url}/direct/feed", "--opml", f"{server.url}/list.opml",
            "--out", str(out), "--job-id", "doctype", "--no-reflexive", *QUICK_CRAWL,
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = {row["url"]: row for row in read_table(out, "fetch_log").to_pylist()}
    for path in ("/direct/feed", "/listed/feed"):
        row = log[f"{base}{path}"]
        assert (row["outcome"], row["error"]) == ("feed", None), row
    feeds = {row["url"]: row for row in read_table(out, "feeds").to_pylist()}
    for path, via in (("/direct/feed", "url"), ("/listed/feed", "opml")):
        feed = feeds.get(f"{base}{path}")
        assert feed is not None, f"{path} ({via}) has no feeds row: {sorted(feeds)}"
        assert (feed["format"], feed["version"], feed["item_count"], feed["discovered_via"]) == ("atom", "1.0", 75, via)
    assert read_table(out, "items").num_rows == 150


@pytest.mark.parametrize("name", ["always_strip_doctype.xml"])
def test_an_xhtml_doctype_before_rss_is_rss(corpus: Path, name: str) -> None:
    body = (corpus / "feedparser_tests" / "tests" / "illformed" / name).read_bytes()
    assert parse_feed(body).format == FeedFormat.RSS
    assert sniff(body) == Sniffed.FEED
