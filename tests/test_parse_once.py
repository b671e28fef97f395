"""A document is parsed once: what the recover-mode parse logs says what a strict parse would have raised.

``pipelines.document.feedparse._parse_strict`` reads every document with a recover-mode parser and takes
its verdict from the parser's error log, instead of a strict parse followed, for a document that is
not well-formed, by a second, recovering one. That is only right if the two ways agree. The reference
here is the two-parse way written out with lxml alone: a strict parse (its exception's first line is
the error), then a recover-mode parse for the tree (of the document with its surrogate references
rewritten, as the project's recovery does). On every not-well-formed document of the corpus,
the edge cases below and some well-formed ones, the verdict, the first error and the tree must be the
reference's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import etree

from pipelines.document.feedparse import _one_line, _parse_xml
from pipelines.document.xmlrefs import fix_surrogate_refs, safe_parser

EDGE_CASES = {
    "empty": b"",
    "blank": b"   \n",
    "one angle": b"<",
    "NUL bytes": b"\x00\x00\x00",
    "HTML": b"<html><body><p>not a feed",
    "declaration only": b"<?xml version='1.0'?>",
    "undeclared entity": b"<rss><channel><title>a &nbsp; b</title></channel></rss>",
    "unclosed": b"<rss><channel><title>x</channel></rss>",
    "undefined prefix": b"<rss xmlns:x='urn:x'><y:channel/></rss>",
    "bad UTF-8": b"<rss><channel><title>\xff\xfe</title></channel></rss>",
    "surrogate refs, broken": b"<rss><channel><title>&#55357;&#56832;</title><x></channel></rss>",
    "text node over 10 MB": b"<rss><channel><description>" + b"x" * 10_500_000 + b"</description></channel></rss>",
}


def reference(body: bytes) -> tuple[bool, str | None, bytes | None]:
    """(well-formed, first error, tree) the two-parse way, for a document read as UTF-8 or as it declares."""
    try:
        root = etree.fromstring(body, safe_parser())
        return True, None, etree.tostring(root.getroottree())
    except (etree.LxmlError, ValueError) as exc:
        error = _one_line(exc)  # the project's one-line form of the exception: the message, its position once
    try:
        # surrogate references rewritten first, as the project always does before recovering
        recovered = etree.fromstring(fix_surrogate_refs(body), safe_parser(recover=True))
    except (etree.LxmlError, ValueError):
        recovered = None
    return False, error, None if recovered is None else etree.tostring(recovered.getroottree())


def ours(body: bytes) -> tuple[bool, str | None, bytes | None]:
    root, well_formed, error, _encoding = _parse_xml(body, None)
    return well_formed, error, None if root is None else etree.tostring(root.getroottree())


def corpus_documents(corpus: Path) -> Iterator[tuple[str, bytes]]:
    for folder in ("benchmark_feeds", "feedparser_tests", "validator_cases"):
        for path in sorted((corpus / folder).rglob("*")):
            if path.is_file() and path.suffix in (".xml", ".rss", ".rdf", ".atom", ""):
                yield str(path.relative_to(corpus)), path.read_bytes()


def plain_utf8(body: bytes) -> bool:
    """Whether lxml reads the document as UTF-8 with no charset forced: the case the reference covers."""
    head = body[:200].lower()
    return not body.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00", b"\xef\xbb\xbf")) and (
        b"encoding" not in head or b"utf-8" in head
    )


@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_agree_with_strict_then_recover(name: str) -> None:
    body = EDGE_CASES[name]
    well_formed, error, tree = ours(body)
    expected = reference(body)
    assert (well_formed, error, tree) == expected


def test_corpus_documents_agree_with_strict_then_recover(corpus: Path) -> None:
    checked = not_well_formed = 0
    for name, body in corpus_documents(corpus):
        if not plain_utf8(body):  # documents in other charsets take the fallbacks the reference leaves out
            continue
        well_formed, error, tree = ours(body)
        expected = reference(body)
        assert (well_formed, error, tree) == expected, name
        checked += 1
        not_well_formed += not well_formed
    assert checked > 1000 and not_well_formed > 100, (checked, not_well_formed)
