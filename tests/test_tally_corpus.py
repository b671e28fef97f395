"""parse_feed over real material.

* Every feed in ``benchmark_feeds`` parses, and its channel and item tallies
  equal an independent count made here with the standard library's
  ``xml.etree.ElementTree``.
* Every document in feedparser's test suite goes through ``parse_feed``
  without raising or hanging; the slowest file is recorded, not asserted on.
"""

from __future__ import annotations

import csv
import signal
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipelines.document.checks import check_feed
from pipelines.document.feedparse import ParsedFeed, parse_feed
from schemas.namespaces import ATOM03_NS, ATOM_NS, RDF_NS, URI_TO_PREFIX, element_name

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
BENCHMARK = CORPUS / "benchmark_feeds"
FEEDPARSER = CORPUS / "feedparser_tests"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"shared corpus not found at {CORPUS}")


def _manifest(folder: Path) -> dict[str, dict[str, str]]:
    if not (folder / "manifest.tsv").is_file():
        return {}
    with open(folder / "manifest.tsv", newline="", encoding="utf-8") as fh:
        return {Path(row["local_file"]).name: row for row in csv.DictReader(fh, delimiter="\t")}


BENCH_MANIFEST = _manifest(BENCHMARK)
BENCH_FILES = sorted(p.name for p in BENCHMARK.iterdir() if p.name != "manifest.tsv") if BENCHMARK.is_dir() else []


# --------------------------------------------------------------------------- the independent count


def _own_namespace(root_tag: str) -> str:
    """The namespace a document writes bare: a namespaced <rss>'s, or an Atom feed's that has no fixed prefix.

    Atom 1.0 and 0.3 have one (atom:, atom03:), so their elements are written
    prefixed like any namespaced element; only a draft or unknown namespace is bare.
    """
    if not root_tag.startswith("{"):
        return ""
    uri, _, local = root_tag[1:].partition("}")
    if local == "rss" or (local == "feed" and uri not in URI_TO_PREFIX):
        return uri
    return ""


def _name(tag: str, own: str) -> str:
    if own and tag.startswith("{" + own + "}"):
        return tag.split("}", 1)[1]
    return element_name(tag)


def _attr_names(el: ET.Element, name: str, own: str) -> list[str]:
    out = []
    for key, value in el.attrib.items():
        if key == "rel" and (name == "link" or name.endswith(":link")):
            out.append(f"{name}@rel={value.strip()}")
        else:
            out.append(f"{name}@{_name(key, own)}")
    return out


def _channel_level(root: ET.Element, own: str, rdf: bool) -> list[ET.Element]:
    """The elements at channel scope of an RSS or RDF document (see independent_tally).

    The children of <channel>, then every other child of the root; in RDF only
    those that are not items and whose name the channel does not already have.
    """
    channel = next((el for el in root if _name(el.tag, own) == "channel"), None)
    level = list(channel) if channel is not None else []
    in_channel = {_name(el.tag, own) for el in level}
    for el in root:
        if el is channel:
            continue
        name = _name(el.tag, own)
        if not rdf or (name != "item" and name not in in_channel):
            level.append(el)
    return level


def _tally_channel(level: list[ET.Element], own: str, item_name: str) -> tuple[Counter[str], list[ET.Element]]:
    """(count of each element and attribute name at channel scope, the items found there)."""
    channel_counts: Counter[str] = Counter()
    items = []
    for el in level:
        name = _name(el.tag, own)
        channel_counts[name] += 1
        channel_counts.update(_attr_names(el, name, own))
        if name == item_name:
            items.append(el)
    return channel_counts, items


def _tally_items(items: list[ET.Element], own: str) -> tuple[Counter[str], Counter[str]]:
    """(count of each element and attribute name in the items, number of items having each name)."""
    item_counts: Counter[str] = Counter()
    items_with: Counter[str] = Counter()
    for item in items:
        names = []
        for el in item:
            name = _name(el.tag, own)
            names.append(name)
            names.extend(_attr_names(el, name, own))
        item_counts.update(names)
        items_with.update(set(names))
    return item_counts, items_with


def independent_tally(body: bytes) -> tuple[Counter[str], Counter[str], Counter[str], int]:
    """(channel counts, item counts, items having each name, number of items) with ElementTree.

    Channel scope: the children of the Atom feed or of the RSS channel; in
    RSS also every other child of <rss> (items written outside the channel
    included); in RDF the root-level siblings of the channel except the items,
    and only those whose name the channel does not already have.
    """
    root = ET.fromstring(body)
    own = _own_namespace(root.tag)
    root_name = _name(root.tag, own)
    local = root.tag.rpartition("}")[2]
    atom = local == "feed" and root.tag.startswith(("{" + ATOM_NS, "{" + ATOM03_NS, "feed"))
    rdf = root.tag == f"{{{RDF_NS}}}RDF"
    item_name = root_name.removesuffix("feed") + "entry" if atom else "item"  # atom:entry, atom03:entry, entry
    assert atom or local == "rss" or rdf, root.tag
    level = list(root) if atom else _channel_level(root, own, rdf)
    channel_counts, items = _tally_channel(level, own, item_name)
    if rdf:
        items.extend(el for el in root if _name(el.tag, own) == "item")
    item_counts, items_with = _tally_items(items, own)
    return channel_counts, item_counts, items_with, len(items)


def _scope(feed: ParsedFeed, scope: str) -> dict[str, tuple[int, int | None]]:
    return {u.element: (u.count, u.items_with) for u in feed.usage if u.scope == scope}


# --------------------------------------------------------------------------- benchmark_feeds


@pytest.mark.skipif(not BENCH_FILES, reason="benchmark_feeds not found")
@pytest.mark.parametrize("name", BENCH_FILES)
def test_benchmark_feed_tally_matches_elementtree(name: str) -> None:
    body = (BENCHMARK / name).read_bytes()
    feed = parse_feed(body, f"https://example.com/{name}")
    assert not (feed.error or "").startswith("internal error"), feed.error
    assert feed.format in ("rss", "rdf", "atom"), feed.error
    expected_well_formed = BENCH_MANIFEST.get(name, {}).get("wellformed", "yes") == "yes"
    if not expected_well_formed:
        # ElementTree cannot count a document that is not well-formed: we must flag it, and not crash
        assert feed.well_formed is False and feed.error
        return
    assert feed.well_formed, feed.error
    assert feed.error is None

    channel_counts, item_counts, items_with, n_items = independent_tally(body)
    assert _scope(feed, "channel") == {k: (v, None) for k, v in channel_counts.items()}
    assert _scope(feed, "item") == {k: (v, items_with[k]) for k, v in item_counts.items()}
    assert len(feed.items) == n_items
    if feed.format == "atom":  # the feed's own elements carry their prefix; a bare name is not Atom's
        assert "atom:entry" in channel_counts or "entry" not in channel_counts
    if feed.format == "rdf":
        assert "item" not in channel_counts and channel_counts.get("image", 0) <= 1
    manifest_items = BENCH_MANIFEST.get(name, {}).get("items")
    if manifest_items:
        assert len(feed.items) == int(manifest_items)
    # every usage row is well-formed data
    for u in feed.usage:
        assert u.count > 0 and (u.items_with is None) == (u.scope != "item")
        assert u.items_with is None or 0 < u.items_with <= min(u.count, len(feed.items))


@pytest.mark.skipif(not BENCH_FILES, reason="benchmark_feeds not found")
def test_benchmark_feeds_formats_match_manifest() -> None:
    seen: Counter[tuple[str, str | None]] = Counter()
    expected: Counter[tuple[str, str | None]] = Counter()
    names = {
        "RSS 2.0": ("rss", "2.0"),
        "Atom 1.0": ("atom", "1.0"),
        "RSS 1.0": ("rdf", "1.0"),
        "RSS (no version)": ("rss", ""),
    }
    for name in BENCH_FILES:
        row = BENCH_MANIFEST.get(name)
        if row is None or row["format"] not in names:
            continue
        expected[names[row["format"]]] += 1
        feed = parse_feed((BENCHMARK / name).read_bytes())
        seen[(feed.format, feed.version)] += 1
    assert seen == expected


# --------------------------------------------------------------------------- feedparser's test documents

FP_MANIFEST: dict[str, dict[str, str]] = {}
if (FEEDPARSER / "manifest.tsv").is_file():
    with open(FEEDPARSER / "manifest.tsv", newline="", encoding="utf-8") as _fh:
        FP_MANIFEST = {row["local_file"]: row for row in csv.DictReader(_fh, delimiter="\t")}

HANG_GUARD_SECONDS = 20


class Hang(Exception):
    pass


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """Turn a hang into a failure (SIGALRM, main thread only); not a timing assertion."""

    def _raise(signum: int, frame: object) -> None:
        raise Hang(f"parse_feed ran for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.skipif(not (FEEDPARSER / "tests").is_dir(), reason="feedparser_tests not found")
def test_every_feedparser_document_goes_through(record_property: Callable[[str, object], None]) -> None:
    files = sorted(p for p in (FEEDPARSER / "tests").rglob("*") if p.is_file())
    assert len(files) > 2000
    problems: list[str] = []
    timings: list[tuple[float, str]] = []
    formats: Counter[str] = Counter()
    for path in files:
        rel = path.relative_to(FEEDPARSER).as_posix()
        header = FP_MANIFEST.get(rel, {}).get("http_headers", "")
        key, _, value = header.partition(":")
        headers = {key.strip(): value.strip()} if value else None
        start = time.perf_counter()
        with hang_guard(HANG_GUARD_SECONDS):
            feed = parse_feed(path.read_bytes(), "http://example.com/feed.xml", headers)
        timings.append((time.perf_counter() - start, rel))
        formats[feed.format] += 1
        if (feed.error or "").startswith("internal error"):
            problems.append(f"{rel}: {feed.error}")
        # feedparser's well-formed cases are well-formed feeds to us too; CDF is not a format we read
        if (
            rel.startswith("tests/wellformed/")
            and "cdf" not in rel
            and (feed.format == "unknown" or not feed.well_formed)
        ):
            problems.append(f"{rel}: {feed.format} well_formed={feed.well_formed} {feed.error}")
        for item in feed.items:
            if item.pub_date is not None and item.pub_date.utcoffset() is None:
                problems.append(f"{rel}: naive date")
    timings.sort()
    slowest = timings[-1]
    record_property("slowest_file", f"{slowest[1]} {slowest[0]:.3f}s")
    print(f"\nslowest: {slowest[1]} {slowest[0]:.3f}s; formats {dict(formats)}")
    assert problems == []
    assert formats["rss"] > 500 and formats["atom"] > 500 and formats["rdf"] > 10


# --------------------------------------------------------------------------- the fast path changes nothing


def _results(feed: ParsedFeed) -> tuple[object, ...]:
    return (feed.format, feed.version, feed.well_formed, feed.error, feed.encoding, feed.title, feed.link)


def _same_with_notes(body: bytes, headers: dict[str, str] | None) -> list[str]:
    """Differences between parse_feed/check_feed with and without the parser's notes (none expected)."""
    plain = parse_feed(body, "http://example.com/feed.xml", headers)
    noted = parse_feed(body, "http://example.com/feed.xml", headers, with_notes=True)
    problems = []
    if _results(noted) != _results(plain) or (noted.language, noted.self_url) != (plain.language, plain.self_url):
        problems.append("feed fields")
    if noted.items != plain.items:
        problems.append("items")
    if noted.usage != plain.usage:
        problems.append("usage")
    if plain.root is not None:
        now = datetime(2025, 6, 1, tzinfo=UTC)
        expected = check_feed(plain.root, format=plain.format, body=body, now=now)
        found = check_feed(noted.root, format=noted.format, body=body, now=now, notes=noted.notes)
        if found != expected:
            problems.append("findings")
    return problems


@pytest.mark.skipif(not BENCH_FILES, reason="benchmark_feeds not found")
def test_benchmark_feeds_same_results_with_notes() -> None:
    lifted = 0
    problems = []
    for name in BENCH_FILES:
        body = (BENCHMARK / name).read_bytes()
        problems += [f"{name}: {p}" for p in _same_with_notes(body, None)]
        noted = parse_feed(body, with_notes=True)
        if noted.notes is not None and noted.root is not None:
            lifted += any(noted.notes.MARK in text for text in noted.root.itertext())
    assert problems == []
    assert lifted > 50  # the fast path was taken: most of these feeds carry large CDATA sections


@pytest.mark.skipif(not (FEEDPARSER / "tests").is_dir(), reason="feedparser_tests not found")
def test_feedparser_documents_same_results_with_notes() -> None:
    problems = []
    for path in sorted(p for p in (FEEDPARSER / "tests").rglob("*") if p.is_file()):
        rel = path.relative_to(FEEDPARSER).as_posix()
        header = FP_MANIFEST.get(rel, {}).get("http_headers", "")
        key, _, value = header.partition(":")
        headers = {key.strip(): value.strip()} if value else None
        problems += [f"{rel}: {p}" for p in _same_with_notes(path.read_bytes(), headers)]
    assert problems == []
