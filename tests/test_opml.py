"""Tests for crawler.fetch.opml.parse_opml: literal documents, hostile input and the real OPML corpus."""

from __future__ import annotations

import csv
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawler.fetch.opml import OpmlDocument, Outline, parse_opml

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "opml"
PLENARY = CORPUS / "plenaryapp+awesome-rss-feeds"
LISTPARSER = CORPUS / "listparser_tests" / "kurtmckee+listparser" / "tests" / "files"

needs_corpus = pytest.mark.skipif(not (CORPUS / "manifest.tsv").is_file(), reason=f"OPML corpus not found at {CORPUS}")


def feeds(doc: OpmlDocument) -> list[Outline]:
    return [outline for outline in doc.outlines if outline.xml_url is not None]


# --------------------------------------------------------------------------- literal documents

OPML_1 = b"""<?xml version="1.0" encoding="ISO-8859-1"?>
<opml version="1.0">
  <head><title>  My   subscriptions </title></head>
  <body>
    <outline text="Scripting News" title="Scripting News!" type="RSS"
             xmlUrl="http://www.scripting.com/rss.xml" htmlUrl="http://www.scripting.com/"/>
    <outline text="Caf\xe9" type="rss" xmlUrl="http://cafe.example/feed"/>
  </body>
</opml>
"""


def test_opml_1_with_declared_latin1() -> None:
    doc = parse_opml(OPML_1, "http://lists.example/subs.opml")
    assert doc.ok and doc.well_formed and not doc.recovered
    assert doc.version == "1.0"
    assert doc.title == "My subscriptions"
    assert doc.outlines == [
        Outline(
            xml_url="http://www.scripting.com/rss.xml",
            html_url="http://www.scripting.com/",
            title="Scripting News!",
            text="Scripting News",
            type="rss",
            categories=(),
            path=(),
            line=6,  # the sourceline of a start tag spread over lines is its last line
        ),
        Outline(
            xml_url="http://cafe.example/feed",
            html_url=None,
            title="Café",
            text="Café",
            type="rss",
            categories=(),
            path=(),
            line=7,
        ),
    ]
    assert doc.warnings == []


OPML_2_NESTED = b"""<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0">
  <head><title>Nested</title><dateCreated>Mon, 01 Jan 2024 00:00:00 GMT</dateCreated></head>
  <body>
    <outline text="Tech">
      <outline title="Web" text="web folder">
        <outline text="A" xmlurl="feeds/a.xml" category="/Tech/Web, news ,,"/>
        <outline text="B" XMLURL="//cdn.example/b.rss"/>
      </outline>
      <outline>
        <outline text="C" xmlUrl="   " htmlUrl="/c/"/>
      </outline>
    </outline>
    <outline text="Top" xmlUrl="https://top.example/feed" isComment="false"/>
    <outline text="Only text, no URL"/>
  </body>
</opml>
"""


def test_opml_2_nesting_paths_relative_urls_and_attribute_case() -> None:
    doc = parse_opml(OPML_2_NESTED, "https://lists.example/dir/subs.opml")
    assert doc.ok and doc.well_formed
    assert doc.version == "2.0" and doc.title == "Nested"
    summary = [(o.title, o.xml_url, o.html_url, o.path, o.categories, o.line) for o in doc.outlines]
    assert summary == [
        ("A", "https://lists.example/dir/feeds/a.xml", None, ("Tech", "Web"), ("/Tech/Web", "news"), 7),
        ("B", "https://cdn.example/b.rss", None, ("Tech", "Web"), (), 8),
        # a blank xmlUrl is absent; the unlabeled folder does not appear in the path
        ("C", None, "https://lists.example/c/", ("Tech",), (), 11),
        ("Top", "https://top.example/feed", None, (), (), 14),
    ]


def test_relative_urls_without_base_are_kept_as_written() -> None:
    doc = parse_opml(b'<opml version="2.0"><body><outline xmlUrl="feeds/a.xml"/></body></opml>')
    assert [o.xml_url for o in doc.outlines] == ["feeds/a.xml"]


def test_file_uri_base() -> None:
    doc = parse_opml(b'<opml><body><outline xmlUrl="a.xml"/></body></opml>', "file:///srv/lists/x.opml")
    assert doc.outlines[0].xml_url == "file:///srv/lists/a.xml"


def test_feed_pseudo_scheme_and_other_schemes() -> None:
    body = b"""<opml version="2.0"><body>
      <outline xmlUrl="feed://example.com/rss"/>
      <outline xmlUrl="FEED:https://example.com/atom"/>
      <outline xmlUrl="feed:http://example.com/x"/>
      <outline xmlUrl="javascript:alert(1)"/>
      <outline xmlUrl="data:text/xml,&lt;rss/&gt;"/>
      <outline xmlUrl="ftp://example.com/feed.xml"/>
    </body></opml>"""
    doc = parse_opml(body, "https://base.example/")
    assert [o.xml_url for o in doc.outlines] == [
        "http://example.com/rss",
        "https://example.com/atom",
        "http://example.com/x",
        "javascript:alert(1)",
        "data:text/xml,<rss/>",
        "ftp://example.com/feed.xml",
    ]
    noted = [w for w in doc.warnings if "kept as written" in w]
    assert len(noted) == 3 and noted[0].startswith("line 5: xmlUrl with scheme 'javascript:'")


def test_includes_are_absolute_deduplicated_and_links_to_pages_are_pages() -> None:
    body = b"""<opml version="2.0"><body>
      <outline type="include" text="sub" url="sub/list.opml"/>
      <outline type="INCLUDE" url=" https://lists.example/dir/sub/list.opml "/>
      <outline type="link" text="more" url="/other.OPML?page=2#x"/>
      <outline type="link" text="a page" url="https://example.org/about"/>
      <outline type="include"/>
      <outline type="link" text="feed too" url="x.opml" xmlUrl="https://example.net/rss"/>
    </body></opml>"""
    doc = parse_opml(body, "https://lists.example/dir/main.opml")
    assert doc.includes == [
        "https://lists.example/dir/sub/list.opml",
        "https://lists.example/other.OPML?page=2#x",
        "https://lists.example/dir/x.opml",
    ]
    assert [(o.type, o.xml_url, o.html_url) for o in doc.outlines] == [
        ("link", None, "https://example.org/about"),
        ("link", "https://example.net/rss", None),
    ]


def test_unescaped_ampersands_are_recovered_with_their_attributes() -> None:
    body = b"""<?xml version="1.0"?>
<opml version="1.0"><head><title>News & Views</title></head><body>
<outline text="Q&A" xmlUrl="http://example.com/rss?a=1&b=2"/>
<outline text="Fish &amp; Chips &#38; more" xmlUrl="http://example.com/fish?x=1&amp;y=2"/>
<outline text="caf&eacute; &nosuch; &copy" xmlUrl="http://example.com/cafe"/>
</body></opml>"""
    doc = parse_opml(body)
    assert doc.ok and not doc.well_formed and doc.recovered
    assert doc.title == "News & Views"
    assert [(o.text, o.xml_url) for o in doc.outlines] == [
        ("Q&A", "http://example.com/rss?a=1&b=2"),
        ("Fish & Chips & more", "http://example.com/fish?x=1&y=2"),
        ("café &nosuch; &copy", "http://example.com/cafe"),
    ]
    assert "line 2: unescaped '&' escaped" in doc.warnings
    assert "line 3: unescaped '&' escaped" in doc.warnings
    assert "line 5: HTML entity turned into a character reference" in doc.warnings
    assert "line 5: undefined entity '&nosuch;' kept as text" in doc.warnings


def test_raw_quotes_and_markup_inside_attribute_values_keep_the_xml_url() -> None:
    body = b"""<opml version="1.0"><body>
<outline text="The "Daily" News" description="<p>Hi <a href="https://x.example" rel="x">x</a> & bye</p>" xmlUrl="https://daily.example/rss" type="rss" />
<outline text="Next" xmlUrl="https://next.example/rss" />
</body></opml>"""
    doc = parse_opml(body)
    assert doc.recovered
    assert [(o.text, o.xml_url, o.line) for o in doc.outlines] == [
        ('The "Daily" News', "https://daily.example/rss", 2),
        ("Next", "https://next.example/rss", 3),
    ]
    assert "line 2: quotes or '<' inside an outline attribute value escaped" in doc.warnings


def test_wrong_encoding_declaration_and_control_characters() -> None:
    body = '<?xml version="1.0" encoding="utf-8"?>\n<opml version="2.0"><body>\n<outline text="Caf\u00e9\x01" xmlUrl="http://x.example/"/></body></opml>'
    doc = parse_opml(body.encode("cp1252"))
    assert doc.ok and doc.recovered
    assert doc.outlines[0].text == "Café"
    assert any("decoded as cp1252" in w for w in doc.warnings)
    assert "1 characters not allowed in XML removed" in doc.warnings


def test_utf16_with_bom_and_misplaced_declaration() -> None:
    text = '<?xml version="1.0" encoding="UTF-16"?><opml version="2.0"><body><outline xmlUrl="http://\u00fc.example/"/></body></opml>'
    assert parse_opml(text.encode("utf-16")).outlines[0].xml_url == "http://\u00fc.example/"
    late = b'\n\n  <?xml version="1.0"?>\n<opml><body><outline xmlUrl="http://a.example/"/></body></opml>'
    doc = parse_opml(late)
    assert not doc.well_formed and [o.line for o in doc.outlines] == [4]


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b"", "empty document"),
        (b" \r\n\t ", "empty document"),
        (b"\xef\xbb\xbf", "empty document"),
        (b"just some text & more", "not an OPML document: no XML element found"),
        (b"\x00\xff\xfe garbage \x80\x81", "not an OPML document: no XML element found"),
        (
            b"<!DOCTYPE html><html><head><title>x</title><meta charset=utf-8></head><body><p>hi<br></body></html>",
            "not an OPML document: root element is <html>",
        ),
        (b'<?xml version="1.0"?><rss version="2.0"><channel/></rss>', "not an OPML document: root element is <rss>"),
        (b'{"feeds": ["http://x/"]}', "not an OPML document: no XML element found"),
    ],
)
def test_not_opml(body: bytes, error: str) -> None:
    doc = parse_opml(body)
    assert doc.error == error and not doc.ok
    assert doc.outlines == [] and doc.includes == []


def test_depth_bomb_is_cut_with_a_warning() -> None:
    depth = 100_000
    body = b'<opml version="2.0"><body>' + b'<outline text="x" xmlUrl="http://a/">' * depth
    body += b"</outline>" * depth + b"</body></opml>"
    started = time.perf_counter()
    doc = parse_opml(body)
    assert time.perf_counter() - started < 10
    assert doc.ok
    assert len(doc.outlines) == 50
    assert len(doc.outlines[-1].path) == 49
    assert any("Excessive depth" in w for w in doc.warnings)  # libxml2's own limit, 256 levels
    assert any(
        re.fullmatch(r"line 1: outline nesting deeper than 50 cut \(\d+ outlines skipped\)", w) for w in doc.warnings
    )


def test_max_depth_parameter() -> None:
    body = b'<opml><body><outline text="a"><outline text="b"><outline text="c" xmlUrl="http://c/"/></outline>'
    body += b'</outline><outline text="d" xmlUrl="http://d/"/></body></opml>'
    assert [o.xml_url for o in parse_opml(body).outlines] == ["http://c/", "http://d/"]
    doc = parse_opml(body, max_depth=2)
    assert [o.xml_url for o in doc.outlines] == ["http://d/"]
    assert doc.warnings == ["line 1: outline nesting deeper than 2 cut (1 outlines skipped)"]


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE opml [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
 <!ENTITY xxe SYSTEM "file:///etc/passwd">
]>
<opml version="2.0"><head><title>&lol9;&xxe;</title></head><body>
<outline text="&lol9;" title="&lol3;" xmlUrl="http://example.com/&lol2;"/>
</body></opml>"""


def test_billion_laughs_and_external_entities_are_not_expanded() -> None:
    doc = parse_opml(BILLION_LAUGHS)
    assert doc.ok
    assert doc.title == "&lol9;&xxe;"
    [outline] = doc.outlines
    assert (outline.text, outline.title, outline.xml_url) == ("&lol9;", "&lol3;", "http://example.com/&lol2;")
    assert outline.line == 16  # the blanked internal subset kept its lines
    assert "DOCTYPE declares 11 entities: declarations ignored, references kept as text" in doc.warnings


def test_moderate_entity_in_well_formed_document_is_not_expanded_either() -> None:
    body = b'<!DOCTYPE opml [<!ENTITY e "expanded">]><opml><body><outline text="&e;" xmlUrl="http://x/"/></body></opml>'
    doc = parse_opml(body)
    assert doc.well_formed and not doc.recovered
    assert doc.outlines[0].text == "&e;"


def test_concatenated_documents_and_junk_after_root() -> None:
    body = b'<opml><body><outline xmlUrl="http://a/"/></body></opml>\n<opml><body><outline xmlUrl="http://b/"/></body></opml>'
    doc = parse_opml(body)
    assert [o.xml_url for o in doc.outlines] == ["http://a/", "http://b/"]
    assert "2 concatenated <opml> documents: outlines of all of them kept" in doc.warnings
    doc = parse_opml(b'<opml><body><outline xmlUrl="http://a/"/></body></opml>\n<script>x</script> trailing')
    assert [o.xml_url for o in doc.outlines] == ["http://a/"]
    assert "line 2: 1 element(s) after the <opml> root ignored" in doc.warnings


def test_namespaced_opml_and_missing_body() -> None:
    body = b'<opml xmlns="http://opml.org/spec2" version="2.0"><outline xmlUrl="http://a/"/></opml>'
    assert [o.xml_url for o in parse_opml(body).outlines] == ["http://a/"]


@pytest.mark.parametrize(
    "body",
    [
        b"<",
        b"<opml",
        b"<opml><body><outline xmlUrl='",
        b"<?xml version='1.0' encoding='x-no-such-encoding'?><opml/>",
        b"<?xml version='1.0' encoding='utf-16'?><opml/>",
        b"\xff\xfe<\x00",
        b"<opml><body><outline xmlUrl='http://[::1'/></body></opml>",
        b"<opml><body><outline <outline <outline/></body></opml>",
        b"<opml><![CDATA[ & ]]><!-- & --><body/></opml>",
        bytes(range(256)) * 4,
    ],
)
def test_never_raises(body: bytes) -> None:
    doc = parse_opml(body, "http://[bad")
    assert isinstance(doc, OpmlDocument)
    assert all("\n" not in w for w in doc.warnings)
    assert doc.error is None or "\n" not in doc.error


# --------------------------------------------------------------------------- the real corpus


def _manifest() -> list[dict[str, str]]:
    with (CORPUS / "manifest.tsv").open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


@needs_corpus
def test_plenary_lists_find_every_xml_url_outline_of_the_manifest() -> None:
    rows = [row for row in _manifest() if row["local_file"].startswith("plenaryapp+awesome-rss-feeds/")]
    assert len(rows) == 118
    short: list[str] = []
    total = 0
    for row in rows:
        path = CORPUS / row["local_file"]
        doc = parse_opml(path.read_bytes(), path.as_uri())
        assert doc.ok, (row["local_file"], doc.error)
        found = len(feeds(doc))
        total += found
        if found < int(row["xmlurl_outlines"]):
            short.append(f"{row['local_file']}: {found} < {row['xmlurl_outlines']}")
        assert doc.well_formed == (row["wellformed"] == "yes"), row["local_file"]
        urls = [o.xml_url for o in feeds(doc)]
        assert all(u is not None and u.startswith(("http://", "https://")) for u in urls), row["local_file"]
    assert short == []
    assert total == 1572  # the manifest's sum; strict parsing alone finds 296, lxml recover=True alone 1554


@needs_corpus
def test_plenary_nested_list_has_folder_paths() -> None:
    path = PLENARY / "countries" / "with_category" / "Australia.opml"
    doc = parse_opml(path.read_bytes(), path.as_uri())
    assert doc.recovered and doc.version == "1.0" and doc.title == "Export from Plenary"
    assert len(doc.outlines) == 16 and {o.path for o in doc.outlines} == {("Australia",)}
    kusa = [o for o in doc.outlines if o.title == "KUSA - News"]
    assert kusa[0].xml_url == "http://rssfeeds.9news.com/kusa/home&x=1" and kusa[0].line == 23
    assert "line 23: unescaped '&' escaped" in doc.warnings


@needs_corpus
def test_every_listparser_case_parses_without_raising() -> None:
    files = sorted(p for p in LISTPARSER.rglob("*") if p.is_file())
    assert len(files) == 110
    by_file = {row["local_file"]: row for row in _manifest()}
    for path in files:
        doc = parse_opml(path.read_bytes(), "http://lists.example/list.opml")
        row = by_file[str(path.relative_to(CORPUS))]
        assert len(feeds(doc)) == int(row["xmlurl_outlines"]), path
        if "/rdf/" in str(path):  # FOAF/RDF lists: listparser reads them, we do not
            assert doc.error == "not an OPML document: root element is <rdf:RDF>", path
        elif path.name == "unknown-namespace.xml":
            assert doc.error == "not an OPML document: root element is <weirdo:namespac>"
        else:
            assert doc.ok, (path, doc.error)


def _feed(doc: OpmlDocument) -> Outline:
    [outline] = feeds(doc)
    return outline


# (file, what listparser's Eval lines say, translated to our API)
LISTPARSER_CASES: list[tuple[str, Callable[[OpmlDocument], bool]]] = [
    ("opml/outline_xmlUrl.xml", lambda d: _feed(d).xml_url == "http://domain/feed"),
    ("opml/outline_xmlUrl-miscapitalized.xml", lambda d: _feed(d).xml_url == "http://domain/feed"),
    ("opml/outline_xmlUrl-whitespace.xml", lambda d: _feed(d).xml_url == "http://domain/feed"),
    ("opml/outline_xmlUrl-empty.xml", lambda d: d.outlines == []),
    ("opml/outline_text.xml", lambda d: _feed(d).title == "feedname"),
    ("opml/outline_text-whitespace.xml", lambda d: _feed(d).text == "feedname"),
    ("opml/outline_title-text_missing.xml", lambda d: _feed(d).title == "feedname"),
    ("opml/outline_title-text_missing-whitespace.xml", lambda d: _feed(d).title == "feedname"),
    # listparser lets @text win; our contract is "title attribute, else text"
    ("opml/outline_text-overrides_title.xml", lambda d: (_feed(d).title, _feed(d).text) == ("title", "text")),
    ("opml/outline_type-case_insensitive.xml", lambda d: _feed(d).type == "rss"),
    ("opml/outline_type-link.xml", lambda d: _feed(d).type == "link" and d.includes == []),
    ("opml/outline_type-pie.xml", lambda d: _feed(d).type == "pie"),
    ("opml/outline_type-missing.xml", lambda d: _feed(d).type is None),
    # we never deduplicate outlines (the crawler deduplicates URLs)
    ("opml/outline-duplication-1.xml", lambda d: [o.xml_url for o in d.outlines] == ["http://domain/feed"] * 2),
    ("opml/head_title.xml", lambda d: d.title == "listtitle"),
    ("opml/head_title-whitespace.xml", lambda d: d.title == "listtitle"),
    ("opml/head-empty_tags.xml", lambda d: d.title is None),
    ("opml/opml_version-1.xml", lambda d: d.version == "1.0"),
    ("opml/opml_version-11.xml", lambda d: d.version == "1.1"),
    ("opml/opml_version-2.xml", lambda d: d.version == "2.0"),
    ("opml/opml_version-missing.xml", lambda d: d.version is None and d.ok),
    ("opml/opml_version-unknown.xml", lambda d: d.version == "OPML:TNG" and d.ok),
    ("opml/include/outline_url.xml", lambda d: d.includes == ["http://domain.com/sublist/"]),
    ("opml/include/outline_url-whitespace.xml", lambda d: d.includes == ["http://domain.com/sublist/"]),
    ("opml/include/outline_type-case_insensitive.xml", lambda d: len(d.includes) == 1),
    ("opml/include/outline_type-no_url.xml", lambda d: d.ok and d.includes == [] and d.outlines == []),
    ("opml/link/outline_url.xml", lambda d: d.includes == ["http://domain.com/sublist.opml"]),
    ("opml/link/outline_url-whitespace.xml", lambda d: d.includes == ["http://domain.com/sublist.opml"]),
    ("opml/link/outline_type-no_url.xml", lambda d: d.ok and d.includes == [] and d.outlines == []),
    ("opml/categories/hier-1-single.xml", lambda d: _feed(d).path == ("grouping",)),
    ("opml/categories/hier-2-nested.xml", lambda d: _feed(d).path == ("grouping1", "grouping2")),
    ("opml/categories/hier-3-whitespace.xml", lambda d: _feed(d).path == ("grouping",)),
    ("opml/categories/hier-5-title.xml", lambda d: _feed(d).path == ("wordpress",)),
    ("opml/categories/cats-1-single_standalone.xml", lambda d: _feed(d).categories == ("/root",)),
    ("opml/categories/cats-3-multiple.xml", lambda d: _feed(d).categories == ("/root1/node1", "/root2/node2")),
    ("opml/categories/cats-4-bad.xml", lambda d: len(_feed(d).categories) == 3),
    ("opml/categories/tags-2-multiple.xml", lambda d: _feed(d).categories == ("tag1", "tag2")),
    ("opml/categories/tags-3-cats_mixed.xml", lambda d: _feed(d).categories == ("news", "sports", "/news/sports")),
    (
        "opml/opportunities/opml-htmlUrl.xml",
        lambda d: [(o.xml_url, o.html_url, o.title) for o in d.outlines] == [(None, "http://domain/", "opportunity")],
    ),
    ("opml/opportunities/opml-htmlUrl-empty.xml", lambda d: d.outlines == []),
    (
        "opml/opportunities/opml-htmlUrl-miscapitalized.xml",
        lambda d: [o.html_url for o in d.outlines] == ["http://domain/"],
    ),
    (
        "malformed/html-entity-attribute.xml",
        lambda d: [o.title for o in d.outlines] == ["archæology", "archæology"] and d.recovered,
    ),
    ("malformed/html-entity-text-1.xml", lambda d: d.title == "archæology"),
    ("malformed/undefined-entity-attribute.xml", lambda d: d.ok and len(d.outlines) == 1),
    (
        "malformed/concatenated-documents.xml",
        lambda d: [o.xml_url for o in d.outlines] == ["http://domain/feed1", "http://domain/feed2"],
    ),
    (
        "malformed/end-element-missing.xml",
        lambda d: (_feed(d).xml_url, _feed(d).title) == ("https://domain/feed", "malformed") and d.recovered,
    ),
    ("malformed/end-element-unexpected.xml", lambda d: _feed(d).xml_url == "https://domain/feed"),
    ("malformed/xmlns-without-value.xml", lambda d: d.title == "xmlns without attribute"),
    ("rdf/version.xml", lambda d: d.error == "not an OPML document: root element is <rdf:RDF>"),
]


@needs_corpus
@pytest.mark.parametrize(("name", "check"), LISTPARSER_CASES, ids=[name for name, _ in LISTPARSER_CASES])
def test_listparser_expectations(name: str, check: Callable[[OpmlDocument], bool]) -> None:
    path = LISTPARSER / name
    assert "Eval:" in path.read_text(encoding="utf-8")
    doc = parse_opml(path.read_bytes())
    assert check(doc), doc


_TEMPLATE = b'<?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body><outline text="a" xmlUrl="http://a/"><outline type="include" url="b.opml"/></outline></body></opml>'


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400), cut=st.integers(min_value=0, max_value=len(_TEMPLATE)))
def test_property_never_raises(data: bytes, cut: int) -> None:
    for body in (data, _TEMPLATE[:cut] + data + _TEMPLATE[cut:]):
        doc = parse_opml(body, "http://lists.example/x.opml")
        assert (doc.error is None) == doc.ok
        assert len(doc.includes) == len(set(doc.includes))


def test_one_outline_with_a_broken_ipv6_url_does_not_lose_the_list() -> None:
    body = (
        b'<opml version="2.0"><body><outline type="link" url="http://[::1"/>'
        b'<outline text="a" xmlUrl="http://a.example/feed"/></body></opml>'
    )
    doc = parse_opml(body, "file:///list.opml")
    assert doc.ok, doc.error
    assert [o.xml_url for o in doc.outlines if o.xml_url] == ["http://a.example/feed"]
