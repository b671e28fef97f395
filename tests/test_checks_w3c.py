"""The checks read as the W3C Feed Validator reads them where it was measured on real feeds (issue 40).

Each case is a literal document (``tests.test_checks.doc``); the validator's own
cases for the same messages are run by ``tests/test_validator_cases.py``, and
``benchmarks/bench_w3c_agreement.py`` compares the two on real feeds.
"""

from __future__ import annotations

import json

import pytest

from pipelines.document.checks import RULES
from pipelines.document.checks.item import relative_reference
from tests.conftest import run_cli
from tests.test_checks import doc, rules_of, run

ITUNES = 'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'
MEDIA = 'xmlns:media="http://search.yahoo.com/mrss/"'

# (rule, document, expected to fire)
CASES: list[tuple[str, str, bool]] = [
    # rules of RSS 2.x alone: not on RSS 0.91 / 0.92 documents (the validator reports none of them there)
    ("item-missing-guid", doc(item_guid=None), True),
    ("item-missing-guid", doc(item_guid=None, version='version="0.91"'), False),
    ("item-missing-guid", doc(item_guid=None, version='version="0.92"'), False),
    ("item-missing-guid", doc(item_guid=None, version=""), True),  # no version: read as 2.0
    ("missing-atom-self-link", doc(self_link=""), True),
    ("missing-atom-self-link", doc(self_link="", version='version="0.92"'), False),
    ("version-not-2-0", doc(version='version="0.91"'), False),
    ("version-not-2-0", doc(version='version="0.92"'), False),
    ("version-not-2-0", doc(version='version="2.1"'), True),
    # rules of every version still run on 0.9x
    ("url-not-absolute", doc(version='version="0.91"', item_link="<link>/1991/05/02/nolan.htm</link>"), True),
    # ContainsRelRef: content:encoded too, and #fragment, //host, empty values are relative
    ("description-relative-url", doc(item='<content:encoded>&lt;a href="/about"&gt;x&lt;/a&gt;</content:encoded>'), True),
    ("description-relative-url", doc(item='<content:encoded><![CDATA[<img alt="" src="pic.png">]]></content:encoded>'), True),
    ("description-relative-url", doc(item='<content:encoded><![CDATA[<a href="http://x.example/">x</a>]]></content:encoded>'), False),
    ("description-relative-url", doc(item_description='<description><![CDATA[<a href="#top">up</a>]]></description>'), True),
    ("description-relative-url", doc(item_description='<description><![CDATA[<img src="//cdn.example/p.png">]]></description>'), True),
    ("description-relative-url", doc(item_description='<description><![CDATA[<a href="">x</a>]]></description>'), True),
    ("description-relative-url", doc(item_description="<description><![CDATA[<a href='mailto:x@example.com'>x</a>]]></description>"), False),
    ("description-relative-url", doc(item_description='<description><![CDATA[<a href="a b">x</a>]]></description>'), False),  # InvalidUriChar
    ("description-relative-url", doc(item_description='<description><![CDATA[<a class="x" href="/a">x</a>]]></description>'), False),
    # UndefinedElement: namespaces whose vocabulary is closed, markup in text elements, a lower-case textinput
    ("namespace-undefined-element", doc(item="<dc:modified>2007-10-15</dc:modified>"), True),
    ("namespace-undefined-element", doc(item="<dc:creator>Joe Bob</dc:creator><dc:rights>(c)</dc:rights>"), False),
    ("namespace-undefined-element", doc(channel="<content:encoded>x</content:encoded>"), True),
    ("namespace-undefined-element", doc(item="<content:encoded>x</content:encoded>"), False),
    ("namespace-undefined-element", doc(item="<slash:hitparade>1,2</slash:hitparade>"), True),
    ("namespace-undefined-element", doc(item="<slash:hit_parade>1,2</slash:hit_parade>"), False),
    ("namespace-undefined-element", doc(channel=f'<itunes:link {ITUNES} rel="image">x</itunes:link>'), True),
    ("namespace-undefined-element", doc(channel=f"<itunes:duration {ITUNES}>1:00</itunes:duration>"), True),
    ("namespace-undefined-element", doc(item=f"<itunes:duration {ITUNES}>1:00</itunes:duration>"), False),
    ("namespace-undefined-element", doc(channel=f"<itunes:complete {ITUNES}>yes</itunes:complete>"), False),  # Apple's
    ("namespace-undefined-element", doc(channel=f"<media:hitparade {MEDIA}>x</media:hitparade>"), True),
    ("namespace-undefined-element", doc(channel=f'<media:community {MEDIA}><media:starRating average="4"/></media:community>'), False),
    ("namespace-undefined-element", doc(channel='<atom:whatever>x</atom:whatever>'), False),  # Atom: open
    ("namespace-undefined-element", doc(channel='<foo:bar xmlns:foo="http://foo.example/">x</foo:bar>'), False),
    ("text-element-has-children", doc(item="<pubDate><time>Mon, 15 Oct 2007 14:10:00 GMT</time></pubDate>"), True),
    ("undefined-element", doc(channel="<textinput><title>t</title></textinput>"), True),
    ("text-element-has-children", doc(item='<dc:creator><rdf:Description xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">J</rdf:Description></dc:creator>'), True),
    ("text-element-has-children", doc(item="<dc:creator>Joe Bob Briggs</dc:creator>"), False),
    # iTunes attributes and the owner's address
    ("itunes-missing-attribute", doc(channel=f'<itunes:category {ITUNES}/>'), True),
    ("itunes-missing-attribute", doc(channel=f'<itunes:category {ITUNES} text="Arts"><itunes:category/></itunes:category>'), True),
    ("itunes-missing-attribute", doc(channel=f'<itunes:category {ITUNES} text="Arts"><itunes:category text="Design"/></itunes:category>'), False),
    ("itunes-missing-attribute", doc(item=f'<itunes:image {ITUNES}>http://x.example/a.jpg</itunes:image>'), True),
    ("itunes-missing-attribute", doc(item=f'<itunes:image {ITUNES} href="http://x.example/a.jpg"/>'), False),
    ("itunes-owner-email-invalid", doc(channel=f"<itunes:owner {ITUNES}><itunes:name>N</itunes:name><itunes:email></itunes:email></itunes:owner>"), True),
    ("itunes-owner-email-invalid", doc(channel=f"<itunes:owner {ITUNES}><itunes:email>me</itunes:email></itunes:owner>"), True),
    ("itunes-owner-email-invalid", doc(channel=f"<itunes:owner {ITUNES}><itunes:email>me@example.com</itunes:email></itunes:owner>"), False),
    ("itunes-owner-missing-email", doc(channel=f"<itunes:owner {ITUNES}><itunes:name>N</itunes:name></itunes:owner>"), True),
    ("duplicate-namespace-element", doc(channel=f"<itunes:explicit {ITUNES}>no</itunes:explicit><itunes:explicit {ITUNES}>no</itunes:explicit>"), True),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "text", "fires"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_as_the_validator_reads_it(rule: str, text: str, fires: bool) -> None:
    assert (rule in rules_of(text)) is fires


@pytest.mark.parametrize(
    ("html", "ref"),
    [
        ('<a href="/a">', "/a"),
        ("<A HREF='page.html'>", "page.html"),
        ("<a href=bare>", "bare"),
        ('<img width="1" src="&#47;p.png">', "/p.png"),  # decoded
        ('<a href="">', "(empty)"),
        ('<a href="https://x.example/">', None),
        ('<a href="javascript:void(0)">', None),
        ("no markup", None),
    ],
)
def test_relative_reference(html: str, ref: str | None) -> None:
    assert relative_reference(html + "x</a>") == ref


def test_missing_elements_name_the_validators_leaf_messages() -> None:
    """The validator emits MissingTitle / MissingLink / MissingDescription, not MissingElement, for these."""
    assert {"MissingTitle", "MissingLink", "MissingDescription"} <= set(RULES["channel-missing-required"].w3c)
    assert {"MissingTitle", "MissingLink", "MissingElement"} <= set(RULES["image-missing-required"].w3c)
    assert {"MissingTitle", "MissingLink", "MissingDescription", "MissingElement"} <= set(
        RULES["text-input-missing-required"].w3c
    )
    assert "channel-missing-required" in rules_of(doc(description=None))


def test_rules_say_which_versions_they_apply_to() -> None:
    out = run_cli("rules", "--json")
    assert out.returncode == 0, out.stderr
    versions = {rule["id"]: rule["versions"] for rule in map(json.loads, out.stdout.splitlines())}
    assert {r for r, v in versions.items() if v == "2.x"} == {
        "item-missing-guid",
        "missing-atom-self-link",
        "character-data-not-hex",
    }
    assert set(versions.values()) == {"any", "2.x"}


def test_text_element_has_children_names_the_child() -> None:
    """The example is the child the validator reports as undefined (UndefinedElement{parent:pubDate,element:time})."""
    findings = run(doc(item="<pubDate><time>x</time></pubDate>"))
    assert [f.example for f in findings if f.rule == "text-element-has-children"] == ["time"]
