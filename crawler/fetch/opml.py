"""Read OPML subscription lists: a pure function over bytes that never raises.

``parse_opml(body, url)`` returns an :class:`OpmlDocument` holding every feed
outline (``xmlUrl``) and page-only outline (``htmlUrl`` without ``xmlUrl``),
flattened in document order with the folder path that led to it, plus the
OPML documents it asks to include.

Design decisions
----------------
* **Strict first, then repair.** The bytes are parsed strictly (lxml, no DTD
  loading, no network, no entity substitution). When that fails, the text is
  decoded and repaired (:mod:`crawler.fetch.opmlrepair`) before a ``recover=True`` parse, because libxml2's own
  recovery drops whole attributes that contain a bare ``&`` (the most common
  fault in real OPML lists). The repairs, each reported in ``warnings``:

  - bytes that do not match the declared encoding are decoded with the first
    encoding that works (BOM, declaration, UTF-8, windows-1252, latin-1);
  - a bare ``&`` that does not start an entity or character reference is
    escaped to ``&amp;``;
  - HTML named entities (``&eacute;``, ``&nbsp;``...) become character
    references; unknown names are kept literally (``&foo;`` -> text ``&foo;``);
  - characters XML 1.0 forbids (C0 controls, U+FFFE/U+FFFF) are removed;
  - an XML declaration that is not at the very start is dropped;
  - the document is wrapped in a private element so that junk or a second
    ``<opml>`` after the root is not fatal: the outlines of every top-level
    ``<opml>`` are kept, anything else after the root is ignored.

  What libxml2 still reports during the recover parse goes to ``warnings``
  too ("line N: ..."), since content near those lines may be lost.
* **No entity expansion.** libxml2 expands internal entities in attribute
  values even with ``resolve_entities=False``, so a document whose DOCTYPE
  declares entities is always read through the repair path with its internal
  subset blanked out: references to those entities stay literal text
  (``&lol9;``); ``well_formed`` still tells whether the original was.
* **gzip.** A body that starts with gzip's magic bytes (``1f 8b``: a ``.opml.gz``
  file, or one served without ``Content-Encoding``) is decompressed first, to at
  most ``MAX_GUNZIPPED_BYTES`` (32 MiB, the crawl's ``DOWNLOAD_MAXSIZE``); more,
  or data that is not valid gzip, is an ``error`` saying so (it was read as XML:
  "root element is <‹ÿ>").
* **Depth.** libxml2 refuses more than 256 levels (a warning; what follows is
  lost); outlines deeper than ``max_depth`` are skipped with a warning saying
  how many. The walk is iterative: no recursion errors.
* **URLs.** ``xmlUrl``/``htmlUrl``/``url`` are read case-insensitively
  (``xmlURL``, ``xmlurl``...) and stripped. Relative URLs are resolved against
  ``url`` (the OPML's own URL or ``file://`` URI); without a base they are kept
  as written. The ``feed:`` pseudo-scheme is turned into http(s):
  ``feed://host/p`` -> ``http://host/p``, ``feed:https://host/p`` ->
  ``https://host/p``. Any other non-http(s) scheme (``javascript:``,
  ``file:``, ``data:``...) is kept exactly as written, with a warning: the
  crawler refuses such URLs with a recorded reason.
* **Includes.** ``type="include"`` outlines (their ``url``) and
  ``type="link"`` outlines whose ``url`` path ends in ``.opml`` are listed in
  ``includes``, absolute and deduplicated (first occurrence wins). A
  ``type="link"`` outline pointing at anything else is a page: its ``url``
  serves as ``html_url`` when it has no ``htmlUrl``.
* **Labels.** ``title`` is the ``title`` attribute, else ``text``; ``path``
  holds the labels (same rule) of the ancestor outlines, outermost first;
  ancestors without any label are left out. Labels, ``text`` and the head
  title are stripped, with runs of whitespace collapsed. ``categories`` splits the
  ``category`` attribute on commas, strips each part and keeps it as written
  (``/a/b`` paths are not split); parts made only of ``/`` are dropped.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit

from lxml import etree

from crawler.fetch.opmlrepair import (
    WRAPPER,
    decode,
    drop_entity_declarations,
    log_parser_errors,
    one_line,
    repair,
    wrap,
)
from pipelines.document.xmlrefs import fix_surrogate_refs, safe_parser

__all__ = ["OpmlDocument", "Outline", "parse_opml"]

#: The most a gzip-compressed OPML body may decompress to (the crawl's DOWNLOAD_MAXSIZE).
MAX_GUNZIPPED_BYTES = 32 * 1024 * 1024
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class Outline:
    """One feed outline (``xml_url`` set) or page-only outline (only ``html_url``)."""

    xml_url: str | None
    html_url: str | None
    title: str | None
    text: str | None
    type: str | None
    categories: tuple[str, ...]
    path: tuple[str, ...]
    line: int | None  # lxml sourceline: for a start tag spread over lines, the line it ends on


@dataclass(slots=True)
class OpmlDocument:
    """The result of :func:`parse_opml`; ``error`` is set when the input is not OPML at all."""

    version: str | None = None
    title: str | None = None
    outlines: list[Outline] = field(default_factory=list)
    includes: list[str] = field(default_factory=list)
    well_formed: bool = False
    recovered: bool = False
    warnings: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# --------------------------------------------------------------------------- parsing


def _parser(*, recover: bool) -> etree.XMLParser:
    # The recover parse reads text this module has already decoded and re-encoded as UTF-8.
    return safe_parser(encoding="utf-8" if recover else None, recover=recover)


_ENTITY_DECL_MARKERS = tuple(
    "<!ENTITY".encode(enc) for enc in ("ascii", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be")
)


def parse_opml(body: bytes, url: str = "", *, max_depth: int = 50) -> OpmlDocument:
    """Parse an OPML document; never raises (see the module docstring for the rules)."""
    try:
        return _parse(body, url, max_depth)
    except Exception as exc:  # a last guard: the contract is to never raise on any bytes
        return OpmlDocument(error=f"OPML parser failure: {type(exc).__name__}: {one_line(str(exc))}")


def _parse(body: bytes, url: str, max_depth: int) -> OpmlDocument:
    body = bytes(body)
    if body.startswith(_GZIP_MAGIC):
        body, problem = gunzip(body, MAX_GUNZIPPED_BYTES)
        if problem is not None:
            return OpmlDocument(error=problem)
    if not body.strip(b" \t\r\n\x00\xef\xbb\xbf\xfe\xff"):
        return OpmlDocument(error="empty document")
    doc, tops = _read_tree(body)
    opmls = [el for el in tops if _local(el).lower() == "opml"]
    if not opmls:
        doc.error = _not_opml(tops)
        return doc
    _note_ignored_elements(tops, opmls, doc.warnings)
    version = opmls[0].get("version")
    doc.version = version.strip() if version is not None else None
    for opml in opmls:
        _read_opml(opml, url, max_depth, doc)
    return doc


def gunzip(data: bytes, limit: int) -> tuple[bytes, str | None]:
    """gzip ``data`` decompressed (every member), or ``b""`` and why it cannot be: not valid gzip, cut
    short, or more than ``limit`` bytes decompressed (never more than ``limit + 1`` are held)."""
    out = bytearray()
    rest = data
    try:
        while rest.startswith(_GZIP_MAGIC):
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out += d.decompress(rest, limit + 1 - len(out))
            if len(out) > limit:
                return b"", f"gzip-compressed, and more than {limit // 2**20} MiB decompressed"
            if not d.eof:
                return b"", "gzip-compressed, but cut short"
            rest = d.unused_data
    except zlib.error as exc:
        return b"", f"gzip-compressed, but cannot be decompressed: {one_line(str(exc))}"
    return bytes(out), None


def _read_tree(body: bytes) -> tuple[OpmlDocument, list[etree._Element]]:
    """The document so far (well-formedness, repair warnings) and its top-level elements: strict, else repaired."""
    has_entity_decls = any(marker in body for marker in _ENTITY_DECL_MARKERS)
    root, strict_error = _strict_parse(body)
    if root is not None and not has_entity_decls:
        return OpmlDocument(well_formed=True), [root]
    doc = OpmlDocument(well_formed=strict_error is None, recovered=strict_error is not None)
    if strict_error is not None:
        doc.warnings.append(f"not well-formed XML ({strict_error}); parsed in recover mode")
    return doc, _recover(body, has_entity_decls, doc)


def _strict_parse(body: bytes) -> tuple[etree._Element | None, str | None]:
    """The root element, or None and why the bytes are not well-formed."""
    try:
        return etree.fromstring(body, _parser(recover=False)), None
    except etree.XMLSyntaxError as exc:
        return None, one_line(str(exc))
    except ValueError as exc:  # e.g. an unknown encoding declaration
        return None, one_line(str(exc))


def _recover(body: bytes, has_entity_decls: bool, doc: OpmlDocument) -> list[etree._Element]:
    """The top-level elements of the decoded, repaired and wrapped document, parsed with ``recover=True``."""
    text = decode(body, doc.warnings)
    if has_entity_decls:
        text = drop_entity_declarations(text, doc.warnings)
    wrapped = wrap(repair(text, doc.warnings))
    parser = _parser(recover=True)
    try:
        wrapper = etree.fromstring(fix_surrogate_refs(wrapped.encode("utf-8", "surrogatepass")), parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        wrapper = None
        doc.warnings.append(f"recover parse failed: {one_line(str(exc))}")
    log_parser_errors(parser, doc.warnings)
    if wrapper is None:
        return []
    if _tag_name(wrapper) != WRAPPER:  # the wrapper itself was lost
        return [wrapper]
    return [el for el in wrapper if isinstance(el.tag, str)]


def _not_opml(tops: list[etree._Element]) -> str:
    if not tops:
        return "not an OPML document: no XML element found"
    return f"not an OPML document: root element is <{_tag_name(tops[0])}>"


def _note_ignored_elements(tops: list[etree._Element], opmls: list[etree._Element], warnings: list[str]) -> None:
    """Warn about what is around the ``<opml>`` roots: junk before, more roots, other elements after."""
    if tops[0] is not opmls[0]:
        warnings.append(f"line {tops[0].sourceline}: <{_tag_name(tops[0])}> before the <opml> root ignored")
    if len(opmls) > 1:
        warnings.append(f"{len(opmls)} concatenated <opml> documents: outlines of all of them kept")
    ignored = [el for el in tops[tops.index(opmls[0]) :] if el not in opmls]
    if ignored:
        warnings.append(f"line {ignored[0].sourceline}: {len(ignored)} element(s) after the <opml> root ignored")


def _read_opml(opml: etree._Element, base: str, max_depth: int, doc: OpmlDocument) -> None:
    """Add the head title (the first one found) and every outline of one ``<opml>`` element to ``doc``."""
    if doc.title is None:
        doc.title = _head_title(opml)
    body = _child(opml, "body")
    container = body if body is not None else opml
    seen_includes = set(doc.includes)
    # iterative depth-first walk in document order: (element, depth, ancestor labels)
    stack: list[tuple[etree._Element, int, tuple[str, ...]]] = [
        (el, 1, ()) for el in reversed(_outline_children(container))
    ]
    cut_lines: list[int] = []
    cut_count = 0
    while stack:
        el, depth, path = stack.pop()
        title = _read_outline(el, path, base, doc, seen_includes)
        children = _outline_children(el)
        if not children:
            continue
        if depth >= max_depth:
            cut_lines.append(_line(el) or 0)
            cut_count += _descendant_outlines(el)
            continue
        child_path = (*path, title) if title else path
        stack.extend((child, depth + 1, child_path) for child in reversed(children))
    if cut_count:
        doc.warnings.append(
            f"line {cut_lines[0]}: outline nesting deeper than {max_depth} cut ({cut_count} outlines skipped)"
        )


def _head_title(opml: etree._Element) -> str | None:
    head = _child(opml, "head")
    title_el = _child(head, "title") if head is not None else None
    return _clean(_text_content(title_el)) if title_el is not None else None


def _read_outline(
    el: etree._Element, path: tuple[str, ...], base: str, doc: OpmlDocument, seen_includes: set[str]
) -> str | None:
    """Record one outline (a feed, a page, an include) in ``doc``; returns its label for its children's path."""
    attrs = _attributes(el)
    text = _clean(attrs.get("text"))
    title = _clean(attrs.get("title")) or text
    otype = _clean(attrs.get("type"))
    otype = otype.lower() if otype else None
    line = _line(el)
    xml_url = _url(attrs.get("xmlurl"), base, line, "xmlUrl", doc.warnings)
    html_url = _url(attrs.get("htmlurl"), base, line, "htmlUrl", doc.warnings)
    link_url = _url(attrs.get("url"), base, line, "url", doc.warnings)
    if link_url is not None:
        html_url = _read_link(otype, link_url, html_url, doc, seen_includes)
    if xml_url is not None or html_url is not None:
        doc.outlines.append(
            Outline(
                xml_url=xml_url,
                html_url=html_url,
                title=title,
                text=text,
                type=otype,
                categories=_categories(attrs.get("category")),
                path=path,
                line=line,
            )
        )
    return title


def _read_link(otype: str | None, link_url: str, html_url: str | None, doc: OpmlDocument, seen: set[str]) -> str | None:
    """An outline's ``url``: an include is listed once; a ``type="link"`` page serves as ``html_url``; returns that."""
    if otype == "include" or (otype == "link" and _path_of(link_url).lower().endswith(".opml")):
        if link_url not in seen:
            seen.add(link_url)
            doc.includes.append(link_url)
    elif otype == "link" and html_url is None:
        return link_url
    return html_url


# --------------------------------------------------------------------------- helpers over elements


def _path_of(url: str) -> str:
    """The path of a URL; for one ``urlsplit`` refuses (a broken IPv6 literal), all before ``?`` or ``#``."""
    try:
        return urlsplit(url).path
    except ValueError:
        return url.split("#", 1)[0].split("?", 1)[0]


def _local(el: etree._Element) -> str:
    tag = el.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def _tag_name(el: etree._Element) -> str:
    local = _local(el)
    return f"{el.prefix}:{local}" if el.prefix else local


def _child(el: etree._Element, name: str) -> etree._Element | None:
    for child in el:
        if isinstance(child.tag, str) and _local(child).lower() == name:
            return child
    return None


def _outline_children(el: etree._Element) -> list[etree._Element]:
    return [child for child in el if isinstance(child.tag, str) and _local(child).lower() == "outline"]


def _descendant_outlines(el: etree._Element) -> int:
    """How many outlines ``el`` holds at any depth."""
    return sum(1 for sub in el.iter() if isinstance(sub.tag, str) and _local(sub) == "outline") - 1


def _line(el: etree._Element) -> int | None:
    line = el.sourceline
    return line if isinstance(line, int) else None


def _text_content(el: etree._Element) -> str:
    return "".join(part for part in el.itertext() if isinstance(part, str))  # lxml gives str; the stubs allow bytes


def _attributes(el: etree._Element) -> dict[str, str]:
    """Attribute names lower-cased (namespace dropped); the first non-blank value of a name wins."""
    out: dict[str, str] = {}
    for key, value in el.attrib.items():
        if not isinstance(key, str) or not isinstance(value, str):  # lxml gives str; the stubs allow bytes
            continue
        name = key.rpartition("}")[2].lower()
        if name not in out or (not out[name].strip() and value.strip()):
            out[name] = value
    return out


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value or None


def _categories(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    parts = (part.strip() for part in value.split(","))
    return tuple(part for part in parts if part.replace("/", "").strip())


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def _url(value: str | None, base: str, line: int | None, attr: str, warnings: list[str]) -> str | None:
    """Absolute http(s) URL, or the raw value for other schemes; None when absent or blank."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if value[:5].lower() == "feed:":
        rest = value[5:]
        if rest.startswith("//"):
            value = "http:" + rest
        elif rest[:7].lower() == "http://" or rest[:8].lower() == "https://":
            value = rest
    match = _SCHEME.match(value)
    if match:
        scheme = match.group(1).lower()
        if scheme in ("http", "https"):
            return value.replace(" ", "%20")
        warnings.append(f"line {line}: {attr} with scheme '{scheme}:' kept as written")
        return value
    if base:
        try:
            return urljoin(base, value).replace(" ", "%20")
        except ValueError:  # e.g. an invalid IPv6 literal in the base or the value
            warnings.append(f"line {line}: {attr} could not be resolved against the base; kept as written")
    return value
