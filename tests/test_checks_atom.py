"""The Atom 1.0 rules (RFC 4287, ``source = "atom"``) on small literal Atom documents.

The validator's own Atom cases are run by ``tests/test_validator_cases.py``
(``test_atom_cases_agree``).
"""

from __future__ import annotations

import pytest
from lxml import etree

from pipelines.document.checks import RULES, check_feed
from pipelines.document.checks.atom import is_rfc3339
from pipelines.document.checks.atom_html import style_problems, unsafe_in_html
from pipelines.document.checks.atom_iri import normal_form

ENTRY = (
    "<entry><title>Atom-Powered Robots Run Amok</title><link href='http://example.org/2003/12/13/atom03'/>"
    "<id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id><updated>2003-12-13T18:30:02Z</updated>"
    "<summary>Some text.</summary></entry>"
)
AUTHOR = "<author><name>John Doe</name></author>"


def feed(
    *,
    head: str = "<title>Example Feed</title><link href='http://example.org/'/><link rel='self' href='http://example.org/feed'/>",
    id_: str | None = "<id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>",
    updated: str | None = "<updated>2003-12-13T18:30:02Z</updated>",
    author: str = AUTHOR,
    entry: str = ENTRY,
    extra: str = "",
) -> str:
    parts = (head, id_ or "", updated or "", author, extra, entry)
    return '<feed xmlns="http://www.w3.org/2005/Atom">' + "".join(parts) + "</feed>"


def findings(text: str) -> set[tuple[str, str, str | None]]:
    body = text.encode()
    return {(f.rule, f.scope, f.example) for f in check_feed(etree.fromstring(body), format="atom", body=body)}


def rules(text: str) -> set[str]:
    return {rule for rule, _, _ in findings(text)}


# (rule, failing document, passing document)
CASES: list[tuple[str, str, str]] = [
    ("atom-missing-required", feed(id_=None), feed()),
    ("atom-missing-required", feed(author="", entry=ENTRY), feed(author="", entry=ENTRY.replace("</entry>", AUTHOR + "</entry>"))),
    ("atom-missing-required", feed(author="<author><uri>http://x.example/</uri></author>"), feed()),
    ("atom-duplicate-element", feed(extra="<title>again</title>"), feed(extra="<category term='a'/><category term='b'/>")),
    ("atom-duplicate-element", feed(author="<author><name>a</name><name>b</name></author>"), feed()),
    ("atom-undefined-element", feed(extra="<published>2003-12-13T18:30:02Z</published>"), feed()),
    ("atom-undefined-element", feed(extra="<subtitle>a <b>bold</b> move</subtitle>"), feed(extra="<subtitle type='xhtml'><div xmlns='http://www.w3.org/1999/xhtml'>a <b>bold</b></div></subtitle>")),
    ("atom-undefined-element", feed(extra="<pubDate xmlns=''>Sat, 13 Dec 2003 18:30:02 GMT</pubDate>"), feed()),
    ("atom-id-not-iri", feed(id_="<id>/blog/feed.xml</id>"), feed(id_="<id>tag:example.org,2003:feed</id>")),
    ("atom-id-invalid", feed(id_="<id>tag:example.org:2003:feed</id>"), feed(id_="<id>tag:example.org,2003:feed</id>")),
    ("atom-id-invalid", feed(id_="<id>urn:x:</id>"), feed(id_="<id>urn:isbn:0451450523</id>")),
    ("atom-date-invalid", feed(updated="<updated>2003-12-13 18:30:02</updated>"), feed(updated="<updated>2003-12-13T18:30:02.25+01:00</updated>")),
    ("atom-missing-attribute", feed(extra="<link rel='related'/>"), feed(extra="<link rel='related' href='http://example.org/r'/>")),
    ("atom-missing-attribute", feed(extra="<category label='x'/>"), feed(extra="<category term='x'/>")),
    ("atom-type-invalid", feed(extra="<subtitle type='text/plain'>x</subtitle>"), feed(extra="<subtitle type='html'>&lt;b&gt;x</subtitle>")),
    ("atom-type-invalid", feed(extra="<link rel='related' type='' href='http://example.org/r'/>"), feed(extra="<link rel='related' type='text/html; charset=utf-8' href='http://example.org/r'/>")),
    ("atom-type-invalid", feed(entry=ENTRY.replace("</entry>", "<content type='html' src='http://example.org/c'/></entry>")), feed(entry=ENTRY.replace("</entry>", "<content type='image/png' src='http://example.org/c.png'/></entry>"))),
    ("atom-type-invalid", feed(entry=ENTRY.replace("</entry>", "<content type='multipart/alternative'>x</content></entry>")), feed(entry=ENTRY.replace("</entry>", "<content type='text/plain'>x</content></entry>"))),
    ("atom-xhtml-div-missing", feed(extra="<rights type='xhtml'>(c) 2003</rights>"), feed(extra="<rights type='xhtml'><div xmlns='http://www.w3.org/1999/xhtml'>(c) 2003</div></rights>")),
    ("atom-xhtml-div-missing", feed(extra="<rights type='xhtml'><div>(c)</div></rights>"), feed()),  # div not XHTML's
    ("atom-email-invalid", feed(author="<author><name>J</name><email>John Doe &lt;jdoe@example.com&gt;</email></author>"), feed(author="<author><name>J</name><email>jdoe@example.com</email></author>")),
    ("atom-alternate-duplicate", feed(extra="<link rel='alternate' href='http://example.org/2'/>"), feed(extra="<link rel='alternate' hreflang='fr' href='http://example.org/fr'/>")),
    ("atom-element-blank", feed(extra="<subtitle></subtitle>"), feed(extra="<subtitle> </subtitle>")),
    ("atom-element-blank", feed(author="<author><name> </name></author>"), feed()),
    ("atom-element-blank", feed(extra="<category term=''/>"), feed(extra="<category term='x'/>")),
    ("atom-attribute-blank", feed(extra="<subtitle type=''>x</subtitle>"), feed(extra="<subtitle type='text'>x</subtitle>")),
    ("atom-attribute-blank", feed(extra="<link rel='' href='http://example.org/r'/>"), feed(extra="<link rel='related' title='R' href='http://example.org/r'/>")),
    ("atom-value-whitespace", feed(id_="<id> urn:isbn:0451450523 </id>"), feed(id_="<id>urn:isbn:0451450523</id>")),
    ("atom-value-whitespace", feed(extra="<icon>\n http://example.org/i.png</icon>"), feed(extra="<icon>http://example.org/i.png</icon>")),
    ("atom-self-link-missing", feed(head="<title>T</title><link href='http://example.org/'/>"), feed(head="<title>T</title><link rel='http://www.iana.org/assignments/relation/self' href='http://example.org/f'/>")),
    ("atom-entry-id-duplicate", feed(entry=ENTRY + ENTRY.replace("2003-12-13T18:30:02Z", "2003-12-14T18:30:02Z")), feed(entry=ENTRY + ENTRY.replace("aaaa-80da", "bbbb-80da").replace("2003-12-13T18:30:02Z", "2003-12-14T18:30:02Z"))),
    ("atom-entry-updated-duplicate", feed(entry=ENTRY + ENTRY.replace("aaaa-80da", "bbbb-80da")), feed(entry=ENTRY + ENTRY.replace("aaaa-80da", "bbbb-80da").replace("2003-12-13T18:30:02Z", "2003-12-14T18:30:02Z"))),
    ("atom-summary-missing", feed(entry=ENTRY.replace("<summary>Some text.</summary>", "<content type='image/png' src='http://example.org/a.png'/>")), feed(entry=ENTRY.replace("</entry>", "<content type='image/png' src='http://example.org/a.png'/></entry>"))),
    ("atom-summary-missing", feed(entry=ENTRY.replace("<summary>Some text.</summary>", "<content type='image/png'>iVBORw0KGgo=</content>")), feed(entry=ENTRY.replace("<summary>Some text.</summary>", "<content type='text/plain'>Some text.</content>"))),
    ("atom-content-or-alternate-missing", feed(entry=ENTRY.replace("<link href='http://example.org/2003/12/13/atom03'/>", "")), feed(entry=ENTRY.replace("<link href='http://example.org/2003/12/13/atom03'/>", "<content>Text.</content>"))),
    ("atom-textual-content-missing", feed(entry=ENTRY.replace("<summary>Some text.</summary>", "")), feed(entry=ENTRY.replace("<summary>Some text.</summary>", "<content>Text.</content>"))),
    ("atom-id-not-canonical", feed(id_="<id>HTTP://Example.org:80/a/./b/%7euser</id>"), feed(id_="<id>http://example.org/a/b/~user?</id>")),
    ("atom-id-not-canonical", feed(id_="<id>http://example.org</id>"), feed(id_="<id>http://example.org/#</id>")),
    ("atom-iri-invalid-char", feed(id_="<id>http://example.org/a b</id>"), feed(id_="<id>http://example.org/a%20b</id>")),
    ("atom-iri-invalid-char", feed(extra="<link rel='related' href=' http://example.org/r'/>"), feed(extra="<link rel='related' href='http://[FEDC:BA98::3210]/r'/>")),
    ("atom-text-contains-html", feed(extra="<subtitle>a &lt;b&gt;bold&lt;/b&gt; move</subtitle>"), feed(extra="<subtitle type='html'>a &lt;b&gt;bold&lt;/b&gt; move</subtitle>")),
    ("atom-text-contains-html", feed(extra="<subtitle>Tom&amp;nbsp;Jerry</subtitle>"), feed(extra="<subtitle>Tom &amp; Jerry, 1 &lt; 2</subtitle>")),
    ("atom-text-contains-html", feed(author="<author><name><![CDATA[<b>J</b>]]></name></author>"), feed(author="<author><name>J &amp; K</name></author>")),
    ("atom-text-contains-html", feed(extra="<link rel='related' title='&lt;i&gt;R&lt;/i&gt;' href='http://example.org/r'/>"), feed()),
    ("atom-xhtml-escaped", feed(extra="<subtitle type='xhtml'><div xmlns='http://www.w3.org/1999/xhtml'>a &lt;b&gt;b&lt;/b&gt;</div></subtitle>"), feed(extra="<subtitle type='xhtml'><div xmlns='http://www.w3.org/1999/xhtml'><i>a</i> &lt;b&gt;b&lt;/b&gt;</div></subtitle>")),
    ("atom-markup-not-escaped", feed(extra="<subtitle type='text/html' mode='escaped'><p>x</p></subtitle>"), feed(extra="<subtitle type='text/html' mode='escaped'>&lt;p&gt;x</subtitle>")),
    ("atom-html-fragment", feed(entry=ENTRY.replace("</entry>", "<content type='text/html'>&lt;p&gt;x&lt;/p&gt;</content></entry>")), feed(entry=ENTRY.replace("</entry>", "<content type='text/html'>&lt;html&gt;&lt;p&gt;x&lt;/p&gt;&lt;/html&gt;</content></entry>"))),
    ("atom-html-unsafe-element", feed(entry=ENTRY.replace("</entry>", "<content type='html'>&lt;script&gt;go()&lt;/script&gt;</content></entry>")), feed(entry=ENTRY.replace("</entry>", "<content type='html'>&lt;!-- &lt;script&gt; --&gt;&lt;p&gt;script&lt;/p&gt;</content></entry>"))),
    ("atom-html-unsafe-element", feed(entry=ENTRY.replace("</entry>", "<content type='xhtml'><div xmlns='http://www.w3.org/1999/xhtml'><iframe src='x'/></div></content></entry>")), feed(entry=ENTRY.replace("</entry>", "<content type='xhtml'><div xmlns='http://www.w3.org/1999/xhtml'><img src='x'/></div></content></entry>"))),
    ("atom-html-unsafe-attribute", feed(entry=ENTRY.replace("</entry>", "<content type='html'>&lt;a onclick='go()'&gt;x&lt;/a&gt;</content></entry>")), feed(entry=ENTRY.replace("</entry>", "<content type='html'>&lt;a title='onclick'&gt;x&lt;/a&gt;</content></entry>"))),
    ("atom-html-unsafe-style", feed(entry=ENTRY.replace("</entry>", "<content type='html'>&lt;p style='position: absolute'&gt;x</content></entry>")), feed(entry=ENTRY.replace("</entry>", "<content type='html'>&lt;p style='margin: 0 15px 0 0; color: red'&gt;x</content></entry>"))),
    ("atom-html-unsafe-style", feed(entry=ENTRY.replace("</entry>", "<summary type='xhtml'><div xmlns='http://www.w3.org/1999/xhtml'><b style='background: url(http://x.example/i)'>x</b></div></summary></entry>").replace("<summary>Some text.</summary>", "")), feed()),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "bad", "good"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_atom_rule_fails_and_passes(rule: str, bad: str, good: str) -> None:
    assert rule in rules(bad)
    assert rule not in rules(good)


def test_every_atom_rule_has_a_case() -> None:
    assert {c[0] for c in CASES} == {rule_id for rule_id, rule in RULES.items() if rule.source == "atom"}


def test_the_example_feed_of_rfc_4287_is_clean() -> None:
    assert findings(feed()) == set()


def test_missing_elements_are_named_together_and_counted_each() -> None:
    body = feed(id_=None, updated=None).encode()
    (finding,) = [f for f in check_feed(etree.fromstring(body), format="atom", body=body) if f.scope == "feed"]
    assert (finding.rule, finding.example, finding.count) == ("atom-missing-required", "atom:id, atom:updated", 2)


def test_entry_author_from_the_feed_or_the_source() -> None:
    no_author = ENTRY
    with_source = ENTRY.replace("</entry>", f"<source>{AUTHOR}</source></entry>")
    assert ("atom-missing-required", "entry", "atom:author") in findings(feed(author="", entry=no_author))
    assert "atom-missing-required" not in rules(feed(author="", entry=with_source))
    assert "atom-missing-required" not in rules(feed(entry=no_author))


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("2003-12-13T18:30:02Z", True),
        ("2003-12-13T18:30:02.25-05:00", True),
        ("2003-12-13t18:30:02z", False),
        ("2003-12-13T18:30Z", False),
        ("2003-02-30T18:30:02Z", False),
        ("2003-12-13T24:30:02Z", False),
        ("Sat, 13 Dec 2003 18:30:02 GMT", False),
    ],
)
def test_rfc3339(value: str, valid: bool) -> None:
    assert is_rfc3339(value) is valid


@pytest.mark.parametrize(
    ("style", "problems"),
    [
        ("color: red; font-weight: bold", []),
        ("margin: 0 15px 0 0", []),
        ("display: block; padding: 1em 0;", []),
        ("display: block; padding: 1em 0; ", ["display: block; padding: 1em 0; "]),  # as the validator reads it
        ("border: 1px solid rgb(0,0,0)", []),
        ("margin: 99999em", ["99999em"]),
        ("position: absolute; top: 0", ["position", "top"]),
        ("mso-list: l0 level1 lfo1", ["mso-list"]),
        ("background: url(http://example.org/x.png)", ["background: url(http://example.org/x.png)"]),
        ("width: expression(alert(1))", ["width: expression(alert(1))"]),
    ],
)
def test_style_problems(style: str, problems: list[str]) -> None:
    assert style_problems(style) == tuple(problems)


@pytest.mark.parametrize(
    ("markup", "found"),
    [
        ("<p>plain</p>", []),
        ("<?import namespace='t' implementation='x.htc'>", [("element", "?import")]),
        # an <?import counts even in a comment, and first; an element in a comment does not count
        ("<!-- <?IMPORT y --> <script>x</script>", [("element", "?import"), ("element", "script")]),
        ("<!-- <iframe src='x'> --><p>x</p>", []),
        ("<p\tonclick = 'x'>", [("attribute", "onclick")]),
        ("<a\fonmouseover=x>", [("attribute", "onmouseover")]),
        # "on" inside a word or in the text is no attribute
        ("<i xonclick=x>one on=two", []),
        ("<!-- <p onclick=x> --> <p onload=y>", [("attribute", "onload")]),
        # the longer name first; a name that only starts like an unsafe one is not one
        ("<basefont><frameset><framex><scripts>", [("element", "basefont"), ("element", "frameset")]),
        # the tag an attribute belongs to starts at the last "<" before it
        ("<p title='a<b onclick=x>'>", [("attribute", "onclick")]),
        ("<p style=position:fixed>", [("style", "position")]),
        ("<p style=''>", []),
        # a style is judged once, but reported where it stands each time
        (
            "<p style='position:fixed'><p style='position:fixed'><b style='color: red'>",
            [("style", "position"), ("style", "position")],
        ),
        # a style attribute's value is read whole: a "style=" inside it is text
        ("x style=\"<span style='position:absolute'>\"", []),
        ("<p style='a&amp;b'>", [("style", "a&b")]),
        # names in lower case only, as feeds write them (see the module's docstring)
        ("<script>x</script> <SCRIPT>y</SCRIPT>", [("element", "script")]),
    ],
)
def test_unsafe_in_html(markup: str, found: list[tuple[str, str]]) -> None:
    assert list(unsafe_in_html(markup)) == found


@pytest.mark.parametrize(
    ("uri", "normal"),
    [
        ("http://example.org/", "http://example.org/"),
        ("HTTP://EXAMPLE.ORG", "http://example.org/"),
        ("http://example.org:80/a/../b/./c", "http://example.org/b/c"),
        ("http://example.org:8080/%7Euser/%2f", "http://example.org:8080/~user/%2F"),
        ("http://example.org./caf\u00e9", "http://example.org/caf%C3%A9"),
        ("urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a", "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a"),
        ("http://example.org/%zz", None),
    ],
)
def test_normal_form(uri: str, normal: str | None) -> None:
    assert normal_form(uri) == normal
