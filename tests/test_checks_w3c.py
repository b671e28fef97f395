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
from tests.test_checks import doc, rules_of

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
