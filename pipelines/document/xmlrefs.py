"""XML safety shared by the feed and OPML parsers: one locked-down parser, and
repairing character references libxml2 lets through broken.

``safe_parser`` never expands entities, loads a DTD, touches the network or
lifts libxml2's size limits (``huge_tree``); comments and processing
instructions are dropped while parsing.


``&#55357;&#56832;`` (an emoji written as two UTF-16 halves, common in real
feeds) and lone halves such as ``&#xD800;`` are not XML characters. In
recover mode libxml2 keeps them as invalid UTF-8 in the tree, and reading
the text then raises ``UnicodeDecodeError``, losing the whole document. This
rewrites them before a recover-mode parse: a high+low pair becomes the one
character it encodes, a lone half becomes U+FFFD. Only ASCII-compatible
bytes are touched (in UTF-16/32 the pattern cannot match).
"""

from __future__ import annotations

import re

from lxml import etree

_REF = re.compile(rb"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));")
_SURROGATE_HINT = re.compile(rb"&#(?:[xX]0*[dD][89a-fA-F][0-9a-fA-F]{2}|0*5[5-7][0-9]{3});")


def _value(m: re.Match[bytes]) -> int:
    return int(m.group(1), 16) if m.group(1) else int(m.group(2))


def fix_surrogate_refs(body: bytes) -> bytes:
    """``body`` with surrogate character references replaced (unchanged, same object, when there are none)."""
    if b"&#" not in body or not _SURROGATE_HINT.search(body):
        return body
    out: list[bytes] = []
    pos = 0
    pending_high: re.Match[bytes] | None = None
    for m in _REF.finditer(body):
        value = _value(m)
        if 0xDC00 <= value <= 0xDFFF and pending_high is not None and pending_high.end() == m.start():
            code = 0x10000 + ((_value(pending_high) - 0xD800) << 10) + (value - 0xDC00)
            out.append(body[pos : pending_high.start()])
            out.append(b"&#x%X;" % code)
            pos = m.end()
            pending_high = None
            continue
        if pending_high is not None:  # a high half not followed by a low half
            out.append(body[pos : pending_high.start()])
            out.append(b"&#xFFFD;")
            pos = pending_high.end()
            pending_high = None
        if 0xD800 <= value <= 0xDBFF:
            pending_high = m
        elif 0xDC00 <= value <= 0xDFFF:
            out.append(body[pos : m.start()])
            out.append(b"&#xFFFD;")
            pos = m.end()
    if pending_high is not None:
        out.append(body[pos : pending_high.start()])
        out.append(b"&#xFFFD;")
        pos = pending_high.end()
    out.append(body[pos:])
    return b"".join(out)


def safe_parser(*, encoding: str | None = None, recover: bool = False) -> etree.XMLParser:
    """A new lxml parser with every dangerous feature off (not thread-safe: one per thread)."""
    return etree.XMLParser(
        encoding=encoding,
        recover=recover,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )
