from __future__ import annotations

import pytest

from pipelines.document.xmlrefs import fix_surrogate_refs


@pytest.mark.parametrize(
    ("raw", "fixed"),
    [
        (b"Smile &#55357;&#56832;!", b"Smile &#x1F600;!"),
        (b"&#xD83D;&#xDE00;", b"&#x1F600;"),
        (b"lone &#xD800; high", b"lone &#xFFFD; high"),
        (b"lone &#56320; low", b"lone &#xFFFD; low"),
        (b"&#xD800;&#xD800;&#xDC00;", b"&#xFFFD;&#x10000;"),
        (b"end &#xD800;", b"end &#xFFFD;"),
        (b"&#55357; &#56832;", b"&#xFFFD; &#xFFFD;"),
        (b"plain &#233; &amp; &#x41;", b"plain &#233; &amp; &#x41;"),
    ],
)
def test_fix_surrogate_refs(raw: bytes, fixed: bytes) -> None:
    assert fix_surrogate_refs(raw) == fixed


def test_untouched_bodies_are_returned_as_is() -> None:
    body = b"<rss>&#233;</rss>"
    assert fix_surrogate_refs(body) is body
