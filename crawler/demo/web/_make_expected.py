"""Write ``EXPECTED.json``, the ground truth of the demo web, next to this script.

Run ``python crawler/demo/web/_make_expected.py`` after changing a file under ``site/``;
``tests/test_webserver.py`` fails when EXPECTED.json is stale.

What is hand-written here, from the autodiscovery specs and the fixtures: the feed links each page
advertises (PAGES), the outcome of each dead end (DEAD_ENDS) and the feeds each OPML list names
(OPML, cross-checked against the files). What is computed from the fixture files with lxml: each
feed's format, version, well-formedness, item count and element tallies, and the Content-Type the
server sends. Element names follow ``schemas.namespaces.element_name``.

The files are read as written, ``{{DATE-N:FORMAT}}`` placeholders kept (``crawler/demo/dates.py``):
nothing recorded here is a date, so EXPECTED.json is the same whatever the demo day.
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lxml import etree

HERE = Path(__file__).resolve().parent
SITE = HERE / "site"
sys.path.insert(0, str(HERE.parents[2]))

from crawler.demo.webserver import demo_web  # noqa: E402
from schemas.namespaces import ATOM03_NS, ATOM_NS, RDF_NS, element_name  # noqa: E402

RSS10_NS = "http://purl.org/rss/1.0/"
RSS090_NS = "http://my.netscape.com/rdf/simple/0.9/"


def _link(href: str, rel: str, type_: str, title: str | None, href_raw: str, *, in_head: bool = True) -> dict[str, Any]:
    """One feed link. ``followed``: the default crawl requests every link on the demo pages, the one in a
    ``<body>`` too (``FEEDCENSUS_FOLLOW_BODY_LINKS``; with ``--head-only`` only those with ``in_head``)."""
    return {
        "href": href,
        "href_raw": href_raw,
        "rel": rel,
        "type": type_,
        "title": title,
        "in_head": in_head,
        "followed": True,
    }


#: Page path -> feed links it advertises, in document order. ``href`` is the resolved URL's path
#: (all on the demo server); ``href_raw``, ``rel``, ``type`` are the attribute values after HTML
#: entity decoding, case and spaces kept; ``href_raw`` keeps the {{BASE}} / {{HOST}} placeholders.
PAGES: dict[str, dict[str, Any]] = {
    "/blog-a/": {
        "title": "Alpha Blog",
        "about": "plain HTML5: absolute RSS 2.0 link, root-relative Atom link; stylesheet, icon, hreflang text/html "
        "alternate and canonical are not feed links; a rel=alternate <a> in the body is not a link element",
        "links": [
            _link(
                "/blog-a/feed.xml", "alternate", "application/rss+xml", "Alpha Blog (RSS)", "{{BASE}}/blog-a/feed.xml"
            ),
            _link("/blog-a/atom.xml", "alternate", "application/atom+xml", "Alpha Blog (Atom)", "/blog-a/atom.xml"),
        ],
    },
    "/news-b/": {
        "title": "Bravo News",
        "about": "HTML 4.01 in capitals: LINK REL=ALTERNATE unquoted, rel='alternate feed' extra token, "
        "type with '; charset=utf-8', single-quoted RDF link; relative hrefs",
        "links": [
            _link("/news-b/rss091.xml", "ALTERNATE", "application/rss+xml", "Bravo headlines", "rss091.xml"),
            _link(
                "/news-b/rss092.xml",
                "alternate feed",
                "application/rss+xml; charset=utf-8",
                "Bravo (RSS 0.92)",
                "rss092.xml",
            ),
            _link("/news-b/rss10.rdf", "alternate", "application/rdf+xml", "Bravo (RDF)", "rss10.rdf"),
        ],
    },
    "/mag-c/": {
        "title": "Charlie Magazine",
        "about": "<base href> makes 'main.rss' resolve under /mag-c/feeds/; protocol-relative Atom href with "
        "rel=ALTERNATE and type ' Application/Atom+XML ' (spaces, mixed case); text/html, oEmbed JSON "
        "and OpenSearch links are not feeds",
        "links": [
            _link("/mag-c/feeds/main.rss", "alternate", "application/rss+xml", "Charlie Magazine", "main.rss"),
            _link(
                "/mag-c/atom03.xml",
                "ALTERNATE",
                " Application/Atom+XML ",
                "Charlie (Atom 0.3 mirror)",
                "//{{HOST}}/mag-c/atom03.xml",
            ),
        ],
    },
    "/podcast-d/": {
        "title": "Delta Podcast",
        "about": "XHTML syntax served as text/html: numeric character references in rel and type "
        "(&#65;lternate, application/atom&#43;xml), a query-only relative href '?format=atom', and a "
        "feed link element inside the body (in_head false)",
        "links": [
            _link(
                "/podcast-d/podcast.rss",
                "alternate",
                "application/rss+xml",
                "Delta Podcast (audio)",
                "{{BASE}}/podcast-d/podcast.rss",
            ),
            _link(
                "/podcast-d/?format=atom", "Alternate", "application/atom+xml", "Delta Podcast (Atom)", "?format=atom"
            ),
            _link(
                "/podcast-d/episodes.rss",
                "alternate",
                "application/rss+xml",
                "Episode notes",
                "episodes.rss",
                in_head=False,
            ),
        ],
    },
    "/shop-e/": {
        "title": "Echo Shop",
        "about": "advertises no feed: 'alternate stylesheet' text/css, hreflang alternate without type, "
        "application/json alternate, icon, canonical",
        "links": [],
    },
    "/lab-f/": {
        "title": "Foxtrot Lab",
        "about": "every feed link is a dead end: robots-denied, 404, 410, HTML served as RSS, redirect loop",
        "links": [
            _link(
                "/private/feed.xml",
                "alternate",
                "application/rss+xml",
                "Lab notes (members only)",
                "/private/feed.xml",
            ),
            _link("/lab-f/missing.xml", "alternate", "application/rss+xml", "Old lab feed", "/lab-f/missing.xml"),
            _link("/lab-f/gone.xml", "alternate", "application/atom+xml", "Retired feed", "/lab-f/gone.xml"),
            _link("/lab-f/notafeed.rss", "alternate", "application/rss+xml", "Newsletter", "/lab-f/notafeed.rss"),
            _link("/loop/a", "alternate", "application/rss+xml", "Mirror", "{{BASE}}/loop/a"),
        ],
    },
}

#: URL path -> what fetching it must give. ``outcome`` uses the fetch_log vocabulary where one
#: fits; ``redirect`` means the fetch ends at ``final`` (a feed); ``error`` means any outcome but
#: feed / page / opml (a redirect loop may surface as http_error, network_error or duplicate).
DEAD_ENDS: dict[str, dict[str, Any]] = {
    "/lab-f/missing.xml": {"status": 404, "outcome": "http_error", "linked_from": ["/lab-f/", "/lists/main.opml"]},
    "/lab-f/gone.xml": {"status": 410, "outcome": "http_error", "linked_from": ["/lab-f/"]},
    "/broken-g/": {"status": 500, "outcome": "http_error", "linked_from": ["seeds.txt"]},
    "/blog-a/rss": {
        "status": 301,
        "outcome": "redirect",
        "location": "{{BASE}}/blog-a/feed.xml",
        "final": "/blog-a/feed.xml",
        "linked_from": ["/lists/main.opml"],
    },
    "/loop/a": {"status": 302, "outcome": "error", "location": "/loop/b", "linked_from": ["/lab-f/"]},
    "/loop/b": {"status": 302, "outcome": "error", "location": "{{BASE}}/loop/a", "linked_from": ["/loop/a"]},
    "/lab-f/notafeed.rss": {
        "status": 200,
        "outcome": "not_feed",
        "content_type": "application/rss+xml",
        "linked_from": ["/lab-f/"],
    },
    "/private/feed.xml": {
        "status": 200,
        "outcome": "robots_denied",
        "note": "robots.txt disallows /private/: a polite crawl never requests it (server hits stay 0)",
        "linked_from": ["/lab-f/"],
    },
}

#: OPML path -> version, well-formedness and the URLs it names, in document order.
OPML: dict[str, dict[str, Any]] = {
    "/lists/main.opml": {
        "version": "2.0",
        "well_formed": True,
        "feeds": [
            "/blog-a/rss",
            "/podcast-d/podcast.rss",
            "/mag-c/rss090.rdf",
            "/news-b/rss091.xml",
            "/news-b/rss10.rdf",
            "/lab-f/missing.xml",
        ],
        "html_only": ["/shop-e/"],
        "includes": ["/lists/more.opml"],
    },
    "/lists/more.opml": {
        "version": "1.0",
        "well_formed": False,
        "note": "an unescaped '&' in a text attribute; recover mode still reads every outline",
        "feeds": ["/mag-c/atom03.xml", "/news-b/rss092.xml"],
        "html_only": [],
        "includes": ["/lists/main.opml"],
    },
}

#: Feed path -> the file that is served there.
FEED_FILES: dict[str, str] = {
    "/blog-a/feed.xml": "blog-a/feed.xml",
    "/blog-a/atom.xml": "blog-a/atom.xml",
    "/news-b/rss091.xml": "news-b/rss091.xml",
    "/news-b/rss092.xml": "news-b/rss092.xml",
    "/news-b/rss10.rdf": "news-b/rss10.rdf",
    "/mag-c/feeds/main.rss": "mag-c/feeds/main.rss",
    "/mag-c/atom03.xml": "mag-c/atom03.xml",
    "/mag-c/rss090.rdf": "mag-c/rss090.rdf",
    "/podcast-d/podcast.rss": "podcast-d/podcast.rss",
    "/podcast-d/?format=atom": "podcast-d/atom.xml",
    "/podcast-d/episodes.rss": "podcast-d/episodes.rss",
}


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _ns(tag: str) -> str:
    return tag[1:].split("}", 1)[0] if tag.startswith("{") else ""


def _parser(*, recover: bool = False) -> etree.XMLParser:
    """The parser of every fixture: no entities resolved, nothing fetched."""
    return etree.XMLParser(recover=recover, resolve_entities=False, no_network=True)


def _well_formed(data: bytes) -> bool:
    try:
        etree.fromstring(data, _parser())
    except etree.XMLSyntaxError:
        return False
    return True


#: (format, version, the channel element, the item elements) of one feed's root.
Shape = tuple[str, str, etree._Element, list[etree._Element]]


def _found(element: etree._Element | None, what: str) -> etree._Element:
    if element is None:
        raise ValueError(f"not a feed: no {what}")
    return element


def _rss_shape(root: etree._Element) -> Shape:
    channel = _found(root.find("channel"), "channel")
    return "rss", root.get("version", ""), channel, channel.findall("item")


def _rdf_shape(root: etree._Element) -> Shape:
    ns = next(_ns(c.tag) for c in root if isinstance(c.tag, str) and _local(c.tag) == "channel")
    channel = _found(root.find(f"{{{ns}}}channel"), "channel")
    return "rdf", {RSS10_NS: "1.0", RSS090_NS: "0.90"}[ns], channel, root.findall(f"{{{ns}}}item")


def _atom_shape(root: etree._Element) -> Shape:
    ns = _ns(str(root.tag))
    return "atom", "1.0" if ns == ATOM_NS else "0.3", root, root.findall(f"{{{ns}}}entry")


#: Root element -> how to read the feed's shape.
SHAPES: dict[str, Callable[[etree._Element], Shape]] = {
    "rss": _rss_shape,
    f"{{{RDF_NS}}}RDF": _rdf_shape,
    f"{{{ATOM_NS}}}feed": _atom_shape,
    f"{{{ATOM03_NS}}}feed": _atom_shape,
}


def _channel_elements(fmt: str, root: etree._Element, channel: etree._Element) -> collections.Counter[str]:
    item_tags = {"item", "entry"}
    channel_elements = collections.Counter(
        element_name(c.tag) for c in channel if isinstance(c.tag, str) and _local(c.tag) not in item_tags
    )
    if fmt == "rdf":
        # RSS 1.0 / 0.90 put image and textinput beside the channel; one the channel does not
        # name itself is part of the channel all the same (the census counts it there).
        beside = collections.Counter(
            element_name(c.tag) for c in root if isinstance(c.tag, str) and _local(c.tag) not in {"channel", "item"}
        )
        for name, n in beside.items():
            channel_elements.setdefault(name, n)
    return channel_elements


def _item_tallies(items: list[etree._Element]) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """(items having each element, occurrences of each element)."""
    with_each: collections.Counter[str] = collections.Counter()
    occurrences: collections.Counter[str] = collections.Counter()
    for item in items:
        names = [element_name(c.tag) for c in item if isinstance(c.tag, str)]
        occurrences.update(names)
        with_each.update(set(names))
    return with_each, occurrences


def _title(channel: etree._Element) -> str | None:
    ns = _ns(str(channel.tag))
    title = channel.find(f"{{{ns}}}title" if ns else "title")
    return (title.text or "").strip() if title is not None else None


def feed_facts(data: bytes) -> dict[str, Any]:
    """Format, version, well-formedness, item count and element tallies of one feed document."""
    well_formed = _well_formed(data)
    root = etree.fromstring(data, _parser(recover=True))
    shape = SHAPES.get(str(root.tag))
    if shape is None:
        raise ValueError(f"not a feed: {root.tag}")
    fmt, version, channel, items = shape(root)
    channel_elements = _channel_elements(fmt, root, channel)
    with_each, occurrences = _item_tallies(items)
    return {
        "format": fmt,
        "version": version,
        "well_formed": well_formed,
        "title": _title(channel),
        "item_count": len(items),
        "channel_elements": dict(sorted(channel_elements.items())),
        "item_elements": dict(sorted(with_each.items())),
        "item_element_counts": dict(sorted(occurrences.items())),
    }


def opml_urls(data: bytes) -> dict[str, list[str]]:
    """xmlUrl / htmlUrl-only / include URLs of an OPML document, as paths, in document order."""
    root = etree.fromstring(data, _parser(recover=True))
    feeds, html_only, includes = [], [], []
    for outline in root.iter("outline"):
        if outline.get("type") == "include":
            includes.append(outline.get("url", "").replace("{{BASE}}", ""))
        elif outline.get("xmlUrl"):
            feeds.append(outline.get("xmlUrl", "").replace("{{BASE}}", ""))
        elif outline.get("htmlUrl"):
            html_only.append(outline.get("htmlUrl", "").replace("{{BASE}}", ""))
    return {"feeds": feeds, "html_only": html_only, "includes": includes}


def linked_from(path: str) -> list[str]:
    sources = [page for page, spec in PAGES.items() if any(link["href"] == path for link in spec["links"])]
    sources += [opml for opml, spec in OPML.items() if path in spec["feeds"]]
    sources += [src for src, spec in DEAD_ENDS.items() if spec.get("final") == path]
    return sources


def build() -> dict[str, Any]:
    web = demo_web()
    feeds: dict[str, Any] = {}
    for path, file in FEED_FILES.items():
        route = web.get(path)
        assert route is not None, path
        facts = feed_facts((SITE / file).read_bytes())
        feeds[path] = {"content_type": route.headers.get("Content-Type"), **facts, "linked_from": linked_from(path)}
    for path, spec in OPML.items():
        found = opml_urls((SITE / path.lstrip("/")).read_bytes())
        for key in ("feeds", "html_only", "includes"):
            if found[key] != spec[key]:
                raise SystemExit(f"{path}: hand-written {key} {spec[key]} != file {found[key]}")
    seeds = [
        line.strip().replace("{{BASE}}", "")
        for line in (HERE / "seeds.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    return {
        "_about": "Ground truth of the demo web (crawler/demo/web/README.md). Generated by _make_expected.py: "
        "edit that script, not this file. Paths are on the demo server ({{BASE}} = its base URL).",
        "seeds": seeds,
        "expected_feeds": sorted(feeds),
        "pages": PAGES,
        "feeds": feeds,
        "dead_ends": DEAD_ENDS,
        "opml": OPML,
    }


def render() -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    (HERE / "EXPECTED.json").write_text(render(), encoding="utf-8")
    print(f"wrote {HERE / 'EXPECTED.json'}")
